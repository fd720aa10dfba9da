//! Trace lines (`pcp_gate::replay::parse_trace`), the JSON Lines a policy author replays:
//! no panic; an error names a line of the input; parsed lines come in order with their numbers.

use pcp_gate::replay::parse_trace;

pub fn check(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let lines = text.lines().count();
    match parse_trace(&text) {
        Err(e) => {
            assert!(e.line >= 1 && e.line <= lines, "line {} of {lines}", e.line);
            assert!(e.to_string().contains(&format!("line {}", e.line)));
        }
        Ok(parsed) => {
            let numbers: Vec<usize> = parsed.iter().map(|(n, _)| *n).collect();
            assert!(numbers.windows(2).all(|w| w[0] < w[1]), "{numbers:?}");
            assert!(numbers.iter().all(|&n| n >= 1 && n <= lines));
        }
    }
}
