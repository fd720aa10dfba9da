//! `pcp-listen` as a user runs it: a spoken answer in a WAV file heard through the real
//! recognizer and printed as one JSON line; bad input named, exit 2.

use std::process::{Command, Output};

use serde_json::Value;

fn pcp_listen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pcp-listen"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn listen_hears_a_spoken_answer_in_a_wav_file_and_names_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let spoken = dir.path().join("spoken.wav");
    let wav = dir.path().join("answer.wav");
    let status = Command::new("espeak-ng")
        .args(["-v", "ko", "-w"])
        .arg(&spoken)
        .arg("아니요")
        .status()
        .unwrap();
    assert!(status.success());
    let status = Command::new("sox")
        .arg("-R")
        .arg(&spoken)
        .args(["-r", "22050", "-c", "1", "-b", "16", "-e", "signed-integer"])
        .arg(&wav)
        .args(["pad", "0.3", "1.0"])
        .status()
        .unwrap();
    assert!(status.success());
    let o = pcp_listen(&[
        "--wav",
        wav.to_str().unwrap(),
        "--lang",
        "ko",
        "--timeout",
        "5",
    ]);
    assert!(o.status.success(), "{o:?}");
    let v: Value = serde_json::from_str(String::from_utf8_lossy(&o.stdout).trim()).unwrap();
    assert_eq!(v["answer"], "deny", "{v}");
    assert!(v["audio_ms"].as_u64().unwrap() > 0);
    assert!(v.get("decided_after_ms").is_some());

    let missing = dir.path().join("missing.wav");
    let o = pcp_listen(&["--wav", missing.to_str().unwrap(), "--lang", "ko"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing.wav"));
    let o = pcp_listen(&[
        "--wav",
        wav.to_str().unwrap(),
        "--lang",
        "ko",
        "--timeout=0",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--timeout"));

    let config = dir.path().join("config.toml");
    std::fs::write(&config, "[speech]\nlanguage = 7\n").unwrap();
    let o = pcp_listen(&[
        "--wav",
        wav.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("config.toml"),
        "{o:?}"
    );
}
