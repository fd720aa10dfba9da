//! The guest's spoken answer: the clip espeak-ng makes of it, and the check on the host that
//! the compositor's recognizer, configured as in the VM, reads it right wherever it falls
//! against the model's frames, before the VM spends minutes on it.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::json;

/// The espeak-ng voice that says the Korean answer. The VM decodes with one phase, so the clip
/// must be read right at every alignment against the model's 30 ms output frames and whatever
/// Kaldi's dither draws. Measured on the host with the VM's config (2026-12-01, espeak-ng's
/// "네" at 175 wpm): the default `ko` voice was approved at 74 of 90 shifts and dithers (about
/// one VM run in six would miss), `ko+m5` at 30 of 30 and at 60 of 60 more with leads of
/// 0-1.3 s, "네" 1.45 ahead of the next reading every time.
const KOREAN: (&str, &str) = ("ko+m5", "네");

/// The English answer, in espeak-ng's American voice: Moonshine wrote "Yes." for it at every
/// shift tried (the check below runs each time).
const ENGLISH: (&str, &str) = ("en-us", "yes");

/// Shifts of the clip against the model's frames that [`check`] tries, each with two dither
/// seeds: 0 to 28 ms in 2 ms steps (the chain model's output frame is 30 ms).
const SHIFT_STEP_MS: u32 = 2;
const SHIFTS: u32 = 15;
const SEEDS: [&str; 2] = ["a", "b"];

/// The approval ("yes", or "네" with `korean`) spoken by espeak-ng as 16 kHz mono 16-bit WAV
/// with 0.1 s of silence before (the scripted user answers at once: every second of silence
/// before the answer costs the emulated CPU's recognizer several of the deadline) and 1.5 s
/// after (sox `-R`: no random dither, the same file every run).
pub fn speak(out: &Path, korean: bool) -> Result<()> {
    let (voice, text) = if korean { KOREAN } else { ENGLISH };
    let raw = out.with_extension("espeak.wav");
    let status = Command::new("espeak-ng")
        .args(["-v", voice, "-w"])
        .arg(&raw)
        .arg(text)
        .status()
        .context("cannot run espeak-ng")?;
    if !status.success() {
        bail!("espeak-ng failed ({status})");
    }
    sox(&raw, out, &["pad", "0.1", "1.5"])?;
    let _ = std::fs::remove_file(&raw);
    Ok(())
}

fn sox(from: &Path, to: &Path, effects: &[&str]) -> Result<()> {
    let status = Command::new("sox")
        .arg("-R")
        .arg(from)
        .args(["-r", "16000", "-c", "1", "-b", "16", "-e", "signed-integer"])
        .arg(to)
        .args(effects)
        .status()
        .context("cannot run sox")?;
    if !status.success() {
        bail!("sox failed on {} ({status})", from.display());
    }
    Ok(())
}

/// Runs `clip` through pcp-speech's own listening path (the `eval_voice` example) with the
/// `[speech]` section of the VM's `config`, shifted by each of the [`SHIFTS`] after 0.2 s of
/// silence, and fails unless every shift is approved. A clip the model reads right only at some
/// alignments would make the VM's voice step pass or fail by chance.
pub fn check(clip: &Path, config: &Path, work: &Path, cache: &Path) -> Result<()> {
    std::fs::create_dir_all(work).with_context(|| format!("cannot create {}", work.display()))?;
    let mut manifest = String::new();
    for shift in (0..SHIFTS).map(|s| s * SHIFT_STEP_MS) {
        let shifted = work.join(format!("shift-{shift:02}ms.wav"));
        let lead = format!("{:.3}", 0.2 + f64::from(shift) / 1000.0);
        sox(clip, &shifted, &["pad", &lead, "0"])?;
        // The runner seeds Kaldi's dither from the id: two ids, two dithers.
        for seed in SEEDS {
            let line = json!({
                "id": format!("shift-{shift:02}ms-{seed}"),
                "path": shifted.display().to_string(),
                "challenge": null,
            });
            manifest.push_str(&line.to_string());
            manifest.push('\n');
        }
    }
    let manifest_path = work.join("manifest.jsonl");
    let results_path = work.join("results.jsonl");
    std::fs::write(&manifest_path, manifest)
        .with_context(|| format!("cannot write {}", manifest_path.display()))?;
    let _ = std::fs::remove_file(&results_path);
    crate::eval_voice::run_runner(&manifest_path, &results_path, Some(config), cache)?;
    let results = crate::eval_voice::read_results(&results_path)?;
    let mut missed: Vec<String> = results
        .values()
        .filter(|r| r["answer"] != "approve")
        .map(|r| {
            format!(
                "{}: {} ({})",
                r["id"].as_str().unwrap_or("?"),
                r["answer"],
                r["judged"][0].as_str().unwrap_or("nothing judged")
            )
        })
        .collect();
    missed.sort();
    let expected = SEEDS.len() * SHIFTS as usize;
    if results.len() != expected {
        bail!(
            "the answer clip's check judged {} of {expected} shifted clips ({})",
            results.len(),
            results_path.display()
        );
    }
    if !missed.is_empty() {
        bail!(
            "the recognizer, configured as in the VM, does not approve the guest's answer \
             ({}) at {} of {expected} alignments, so the VM's voice step would pass or fail by \
             chance; pick another voice for it (`KOREAN`, `ENGLISH` in \
             xtask/src/session_test/answer.rs):\n  {}",
            clip.display(),
            missed.len(),
            missed.join("\n  ")
        );
    }
    eprintln!(
        "xtask: the guest's answer is approved at all {expected} alignments and dithers tried on \
         the host"
    );
    Ok(())
}
