//! The embedding guide walks through the compiled example: every Rust block of
//! `docs/embedding.md` is quoted verbatim from `examples/embed.rs`, so the two cannot drift apart.

use std::path::Path;

#[test]
fn every_code_block_of_the_guide_is_in_the_example() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("../docs/embedding.md")).unwrap();
    let example = std::fs::read_to_string(root.join("examples/embed.rs")).unwrap();
    let blocks: Vec<&str> = doc
        .split("```rust,ignore\n")
        .skip(1)
        .map(|rest| &rest[..rest.find("```\n").unwrap()])
        .collect();
    assert!(blocks.len() >= 5, "the guide quotes the example");
    for block in blocks {
        assert!(
            example.contains(block),
            "docs/embedding.md quotes code examples/embed.rs does not have:\n{block}"
        );
    }
}
