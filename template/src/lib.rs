//! The configurable texts' placeholders: every text a user can reword is filled by plain
//! replacement of `{name}`s, so a mistyped name would reach the user as typed. Each place that
//! reads a text (the config sections, `pcp-listen`'s own config, a phrase pack) checks it here
//! against the names it is filled with.

/// Refuses a `{name}` in `template` that is not one of `allowed`, with a reason naming it and
/// the names the text takes. Braces around anything but a name (`{ x`, `{}`, `{a-b}`) are
/// ordinary text.
pub fn check_placeholders(template: &str, allowed: &[&str]) -> Result<(), String> {
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        rest = &rest[open + 1..];
        let Some(close) = rest.find(['{', '}']) else {
            break;
        };
        let inside = &rest[..close];
        let is_name = rest[close..].starts_with('}')
            && !inside.is_empty()
            && inside
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_');
        if is_name && !allowed.contains(&inside) {
            let known = if allowed.is_empty() {
                "it takes none".to_string()
            } else {
                let names: Vec<String> = allowed.iter().map(|a| format!("{{{a}}}")).collect();
                format!("it takes {}", names.join(", "))
            };
            return Err(format!(
                "`{{{inside}}}` is not one of its placeholders ({known})"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_placeholders;

    #[test]
    fn only_the_allowed_names_pass_and_a_wrong_one_is_named() {
        assert_eq!(
            check_placeholders("{action}: {approve}?", &["action", "approve"]),
            Ok(())
        );
        assert_eq!(
            check_placeholders("{action}: {aprove}?", &["action", "approve"]),
            Err("`{aprove}` is not one of its placeholders (it takes {action}, {approve})".into())
        );
        assert_eq!(
            check_placeholders("{n} left", &[]),
            Err("`{n}` is not one of its placeholders (it takes none)".into())
        );
    }

    #[test]
    fn braces_around_anything_but_a_name_are_text() {
        for text in [
            "{}",
            "{ x }",
            "{a-b}",
            "open {",
            "{{action}",
            "a } b",
            "{{}}",
        ] {
            assert_eq!(check_placeholders(text, &["action"]), Ok(()), "{text}");
        }
        // The name after a stray brace is still checked.
        assert!(check_placeholders("{ {wrong}", &["action"]).is_err());
    }
}
