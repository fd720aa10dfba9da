//! The embedding guide's example is the compiled example: `docs/embedding.md` walks through
//! `examples/embed.rs`, and the two must not drift apart.

use std::path::Path;

#[test]
fn the_embedding_example_is_the_code_in_the_document() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("../docs/embedding.md")).unwrap();
    let start = doc.find("```rust,no_run\n").unwrap() + "```rust,no_run\n".len();
    let block = &doc[start..];
    let block = &block[..block.find("```\n").unwrap()];
    let example = std::fs::read_to_string(root.join("examples/embed.rs")).unwrap();
    let code = example.split_once("\n\n").unwrap().1;
    assert_eq!(
        code, block,
        "docs/embedding.md and examples/embed.rs differ"
    );
}
