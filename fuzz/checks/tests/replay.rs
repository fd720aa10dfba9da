//! Runs the seed corpus and every kept crash input of each fuzz target through its check with
//! the ordinary test suite: a regression fails here on stable Rust, with no fuzzer.

use std::path::Path;

#[test]
fn seeds_and_regressions_pass_their_checks() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut ran = 0;
    for (target, check) in pcp_fuzz_checks::TARGETS {
        let mut seeds = 0;
        for kind in ["seeds", "regressions"] {
            let dir = fuzz.join(kind).join(target);
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut files: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
            files.sort();
            for file in files {
                let data = std::fs::read(&file).unwrap();
                let outcome = std::panic::catch_unwind(|| check(&data));
                assert!(
                    outcome.is_ok(),
                    "{target}: {} fails its check",
                    file.display()
                );
                ran += 1;
                seeds += usize::from(kind == "seeds");
            }
        }
        assert!(
            seeds > 0,
            "{target} has no seed corpus in fuzz/seeds/{target}"
        );
    }
    assert!(ran > 0);
}
