//! `[polkit]`: the section lives in `pcp-config` ([`pcp_config::polkit`]) so that `pcpctl
//! validate` checks it exactly as this compositor's loader does.

pub use pcp_config::polkit::{MAX_TRIES, PolkitConfig, PolkitText};
