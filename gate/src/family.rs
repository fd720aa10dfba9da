//! Capability families: a manifest may declare `name = "mcp.*"`, the class of every capability
//! under `mcp.` that no manifest names exactly (an agent's undeclared MCP tools). The exact
//! declaration wins; among families the longest prefix wins. A family member is the family's
//! declaration under the member's own name, so friction history, session approvals, tokens and
//! audit records stay per member.

use std::sync::Arc;

use crate::capability::{Capability, FAMILY_SUFFIX};
use crate::registry::Registry;

impl Registry {
    /// The capability `name` as the gate decides it: its own declaration, else its family's.
    pub fn lookup(&self, name: &str) -> Option<Arc<Capability>> {
        if let Some(cap) = self.get(name) {
            return Some(Arc::clone(cap));
        }
        let family = self
            .iter()
            .filter_map(|c| {
                let prefix = c.name.strip_suffix(FAMILY_SUFFIX)?;
                let rest = name.strip_prefix(prefix)?.strip_prefix('.')?;
                (!rest.is_empty()).then_some((prefix.len(), c))
            })
            .max_by_key(|(len, _)| *len)?
            .1;
        Some(Arc::new(Capability {
            name: name.to_string(),
            ..(**family).clone()
        }))
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::capability::Origin;
    use crate::types::SideEffects;

    use super::*;

    #[test]
    fn exact_declarations_win_then_the_longest_family() {
        let mut r = Registry::default();
        let text = r#"
[[capability]]
name = "mcp.*"
version = 1
side_effects = "write"
auth_level = "privileged"
description = "Run an MCP tool"
extra_params = "show"

[[capability]]
name = "mcp.github.*"
version = 1
side_effects = "destructive"
auth_level = "user"
description = "Run a GitHub MCP tool"
extra_params = "show"

[[capability]]
name = "mcp.github.get_issue"
version = 1
side_effects = "read"
auth_level = "user"
description = "Read an issue"
extra_params = "show"
"#;
        r.add_text(Path::new("m.toml"), text, Origin::User).unwrap();
        let class = |n: &str| -> Option<(String, SideEffects)> {
            r.lookup(n).map(|c| (c.name.clone(), c.side_effects))
        };
        assert_eq!(
            class("mcp.github.get_issue"),
            Some(("mcp.github.get_issue".into(), SideEffects::Read))
        );
        assert_eq!(
            class("mcp.github.delete_repo"),
            Some(("mcp.github.delete_repo".into(), SideEffects::Destructive))
        );
        assert_eq!(
            class("mcp.fs.write"),
            Some(("mcp.fs.write".into(), SideEffects::Write))
        );
        assert_eq!(class("mcp"), None);
        assert_eq!(class("mcpx.a"), None);
        assert_eq!(class("other.thing"), None);
    }
}
