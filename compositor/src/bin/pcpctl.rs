//! `pcpctl`: the client CLI.
fn main() {}
