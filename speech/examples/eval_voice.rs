//! The runner of `cargo xtask eval-voice`: every clip of a manifest (JSON lines with `id`,
//! `path` and `challenge`) through the same listening path as live capture (WAV → resampler →
//! the recognizer and decision rules), with the model loaded once. Writes one JSON
//! line per clip: the answer, the transcript, where in the audio it was decided and how long
//! recognizing that last block took.
//!
//! A line with `then` (and `gap_ms`) is a pair: that file follows `path` after the pause, in
//! the same listening window, heard only if the first decided nothing.
//!
//! `cargo run -p pcp-speech --example eval_voice -- MANIFEST RESULTS [SPEECH_CONFIG]
//! [--denoise=on|off] [--language=CODE]`, where SPEECH_CONFIG is a TOML file with a `[speech]`
//! section (the defaults otherwise), `--denoise` sets its `denoise` key and `--language` its
//! language where it leaves it to the locale (Korean without the flag). The model is the one
//! the compositor would listen with for that language (Vosk for Korean, Moonshine for English).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use pcp_speech::listen::{Ending, round_from_wavs};
use pcp_speech::models::load_configured;
use pcp_speech::{Config, PhrasePack};
use serde_json::{Value, json};

fn main() {
    // SAFETY: the first thing the process does; no other thread exists yet.
    unsafe { pcp_speech::prepare_process() };
    if let Err(e) = run() {
        eprintln!("eval_voice: {e}");
        std::process::exit(1);
    }
}

fn config(path: Option<&Path>, language: &str) -> Result<Config, String> {
    let Some(path) = path else {
        return Ok(Config {
            parallel_phases: false,
            ..Config::for_language(language)
        });
    };
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let table: toml::Table =
        toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let section = table
        .get("speech")
        .and_then(|s| s.as_table())
        .ok_or_else(|| format!("{}: no [speech] section", path.display()))?;
    let text = toml::to_string(section).map_err(|e| e.to_string())?;
    let config =
        Config::from_toml(&text, &path.display().to_string()).map_err(|e| e.to_string())?;
    // The phases decode one after the other: each clip's seeded `rand()` draws (Kaldi's dither)
    // then come in the same order in every run, so the figures repeat exactly. On their own
    // threads (the product's default) the same draws go to the phases in the scheduler's order.
    let config = Config {
        parallel_phases: false,
        ..config
    };
    // A config that leaves the language to the locale is evaluated in the set's language,
    // whatever this machine's locale is.
    Ok(if config.language.is_empty() {
        Config {
            language: language.into(),
            ..config
        }
    } else {
        config
    })
}

/// A stable seed per clip for Kaldi's dither (libc's `rand()`), so a clip decodes the same way
/// whatever ran before it.
fn seed(id: &str) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in id.bytes() {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    h
}

fn run() -> Result<(), String> {
    let (flags, args): (Vec<String>, Vec<String>) =
        std::env::args().skip(1).partition(|a| a.starts_with("--"));
    let (Some(manifest), Some(results)) = (args.first(), args.get(1)) else {
        return Err(
            "usage: eval_voice MANIFEST RESULTS [SPEECH_CONFIG] [--denoise=on|off] \
             [--language=CODE]"
                .into(),
        );
    };
    let language = flags
        .iter()
        .find_map(|f| f.strip_prefix("--language="))
        .unwrap_or("ko");
    let mut config = config(args.get(2).map(Path::new), language)?;
    for flag in &flags {
        match flag.as_str() {
            "--denoise=on" => config.denoise = true,
            "--denoise=off" => config.denoise = false,
            f if f.starts_with("--language=") => {}
            other => return Err(format!("unknown flag `{other}`")),
        }
    }
    let model = load_configured(&config).map_err(|e| e.to_string())?;
    let phrases =
        (!config.phrases_dir.as_os_str().is_empty()).then_some(config.phrases_dir.as_path());
    let pack = Arc::new(PhrasePack::load(phrases, &config.language).map_err(|e| e.to_string())?);
    model.check_pack(&pack).map_err(|e| e.to_string())?;
    let text = std::fs::read_to_string(manifest).map_err(|e| format!("{manifest}: {e}"))?;
    let mut out = std::fs::File::create(results).map_err(|e| format!("{results}: {e}"))?;
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let started = Instant::now();
    for (n, line) in lines.iter().enumerate() {
        let clip: Value =
            serde_json::from_str(line).map_err(|e| format!("{manifest}:{}: {e}", n + 1))?;
        let id = clip["id"]
            .as_str()
            .ok_or_else(|| format!("{manifest}:{}: no id", n + 1))?;
        let path = PathBuf::from(
            clip["path"]
                .as_str()
                .ok_or_else(|| format!("{id}: no path"))?,
        );
        // SAFETY: srand has no preconditions; this program runs one recognizer at a time.
        unsafe { libc::srand(seed(id)) };
        let challenge = clip["challenge"].as_str();
        // A pair: the repeat, after a pause, in the same window.
        let then = clip["then"].as_str().map(PathBuf::from);
        let gap_ms = clip["gap_ms"].as_u64().unwrap_or(0) as u32;
        let round = round_from_wavs(
            model.as_ref(),
            pack.clone(),
            &config,
            challenge,
            &path,
            then.as_deref().map(|t| (t, gap_ms)),
        )
        .map_err(|e| format!("{id}: {e}"))?;
        let answer = match &round.ending {
            Ending::Heard(h) => h.answer.as_str(),
            _ => "none",
        };
        let line = json!({
            "id": id,
            "answer": answer,
            "transcript": round.transcript,
            "decided_ms": round.decided_at_ms,
            "compute_ms": round.decision_compute.as_secs_f64() * 1000.0,
            "ready_ms": round.ready_at_ms,
            "audio_ms": round.audio_ms,
            "judged": round.judged,
        });
        writeln!(out, "{line}").map_err(|e| format!("{results}: {e}"))?;
        if (n + 1) % 100 == 0 {
            eprintln!(
                "eval_voice: {} of {} clips ({:.0} s)",
                n + 1,
                lines.len(),
                started.elapsed().as_secs_f64()
            );
        }
    }
    Ok(())
}
