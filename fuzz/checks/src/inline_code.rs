//! Fuzz target `inline_code`: any text as Python, JavaScript, Perl, Ruby or PHP handed to its
//! interpreter in a here-document (`python3 - <<'EOF' …`), rated by `pcp_shell_risk`. No panic;
//! the level is the highest reason's and the same when asked twice; and adding a dangerous
//! statement never lowers it: the statement followed by the code is at least High, and at least
//! as high as the code alone when that code parses.
//!
//! The statement goes first: added after the code, it can be read as the rest of a quote the code
//! left open (Perl's `y]…]` takes any delimiter, and its end may be inside the statement), and
//! then it is no code at all — which is how Perl reads it too.
//!
//! An input is a byte that picks the language and the statement, then the code.

use std::path::PathBuf;

use pcp_shell_risk::{Arg, Assessment, Context, Risk, classify};

/// Each language: its interpreter and statements that are each High or Critical on their own.
const LANGUAGES: &[(&str, &[&str])] = &[
    (
        "python3",
        &[
            "import shutil; shutil.rmtree('/home/u/other')",
            "import os; os.system('rm -rf ~')",
            "import socket; socket.create_connection(('10.0.0.1', 80))",
            "exec(input())",
            "print(open('/home/u/.ssh/id_rsa').read())",
        ],
    ),
    (
        "node",
        &[
            "require('fs').rmSync('/home/u/other', {recursive: true});",
            "require('child_process').execSync('rm -rf ~');",
            "fetch('https://x.example');",
            "eval(process.argv[2]);",
        ],
    ),
    (
        "perl",
        &[
            "system('rm -rf ~');",
            "unlink '/home/u/other/x';",
            "eval $ARGV[0];",
            "print $ENV{GITHUB_TOKEN};",
        ],
    ),
    (
        "ruby",
        &[
            "system('rm -rf ~');",
            "File.delete('/home/u/other/x');",
            "eval(ARGV[0]);",
            "puts ENV.to_h;",
        ],
    ),
    (
        "php",
        &[
            "system('rm -rf ~');",
            "unlink('/home/u/other/x');",
            "eval($argv[1]);",
            "echo getenv('DB_PASSWORD');",
        ],
    ),
];

pub fn check(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let (interpreter, dangers) = LANGUAGES[usize::from(pick & 0x0f) % LANGUAGES.len()];
    let danger = dangers[usize::from(pick >> 4) % dangers.len()];
    let code = String::from_utf8_lossy(rest);
    // A line `EOF` would end the here-document early; `\r` and NUL change what the shell reads.
    if code.lines().any(|l| l.trim() == "EOF") || code.contains(['\r', '\0']) {
        return;
    }
    let ctx = Context::new("/home/u/proj", Some(PathBuf::from("/home/u")));
    let run = |code: &str| format!("{interpreter} - <<'EOF'\n{code}\nEOF\n");
    let alone = classify(&run(&code), &ctx);
    let top = alone
        .reasons
        .iter()
        .map(|r| r.risk)
        .max()
        .unwrap_or(Risk::Safe);
    assert_eq!(alone.risk, top, "the level is the highest reason's");
    assert_eq!(
        classify(&run(&code), &ctx),
        alone,
        "rated twice, rated the same"
    );
    let with = classify(&run(&format!("{danger}\n{code}")), &ctx);
    assert!(
        with.risk >= Risk::High,
        "{interpreter}: adding `{danger}` left {code:?} at {}: {}",
        with.risk,
        with.summary()
    );
    if !unparsable(&alone) {
        assert!(
            with.risk >= alone.risk,
            "{interpreter}: adding `{danger}` lowered {code:?} from {} to {}",
            alone.risk,
            with.risk
        );
    }
}

/// Whether a reason says the code (or the command) could not be parsed: its reading then may
/// change with what follows, and only the High floor holds.
fn unparsable(a: &Assessment) -> bool {
    a.reasons.iter().any(|r| {
        matches!(r.message.key(), "invalid_syntax" | "unparsable")
            || r.message
                .args
                .iter()
                .any(|(_, arg)| matches!(arg, Arg::Phrase(m) if m.key() == "why_unparsable"))
    })
}
