//! The reference compositor's own sections of the config file (`[compositor]`) and the virtual
//! output specs that `--output` and `outputs` take. They live in `pcp-config`
//! ([`pcp_config::reference`]) so that `pcpctl validate`, which links no Smithay, checks them
//! exactly as this compositor's loader does.

pub use pcp_config::reference::{CompositorConfig, OutputSpec, ReferenceSections, SpecError};
