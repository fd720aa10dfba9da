//! The plugin's own sections — `[overlay]` (the dialog), `[speech]` (voice) and `[haptics]`
//! (the double tap and its cue) — each a type of its crate, with its checks and how each key
//! orders protection. The plugin applies them itself when a policy takes effect.

use crate::section::Protection::{self, *};
use crate::section::{Invalid, Section, check_placeholders};
use crate::shortcut::Shortcut;

crate::sections! {
    /// `[overlay]`, `[speech]` and `[haptics]` as the plugin runs them.
    pub struct PluginSections {
        overlay: pcp_overlay::Config,
        speech: pcp_speech::Config,
        haptics: pcp_haptics::Config,
    }
}

impl Section for pcp_overlay::Config {
    const NAME: &'static str = "overlay";
    const PROTECTION: &'static [(&'static str, Protection)] = &[
        ("guard_delay_ms", LargerRaises),
        ("guard_early_press_extension_ms", LargerRaises),
        ("guard_max_extension_ms", LargerRaises),
        ("hold_to_approve_ms", LargerRaises),
        ("hold_risks", MembersRaise),
        ("max_width", LargerRaises),
        ("font_size", LargerRaises),
        ("max_steps", LargerRaises),
        // How much of the request the dialog shows before it cuts.
        ("max_extra_params", LargerRaises),
        ("max_text_chars", LargerRaises),
        ("max_name_chars", LargerRaises),
        // Each risk class listed gets a dialog that holds the keyboard and the pointer.
        ("modal_for", MembersRaise),
        // What the dialog says and how it looks: wording and colours the user trusts.
        ("text.*", AnyChangeLowers),
        ("themes.*.*", AnyChangeLowers),
        ("theme", AnyChangeLowers),
        ("text_scale", AnyChangeLowers),
        ("system_fonts", AnyChangeLowers),
        ("extra_fonts", AnyChangeLowers),
        ("reduced_motion", AnyChangeLowers),
        ("follow_desktop_contrast", AnyChangeLowers),
        // Which input reaches the dialog, and the largest dialog that can be drawn at all.
        ("input_margin", AnyChangeLowers),
        ("focus_shortcut", AnyChangeLowers),
        ("max_buffer_pixels", AnyChangeLowers),
        // Only which package an error names.
        ("font_packages", Unrelated),
        ("margin", Unrelated),
        ("min_target", Unrelated),
        ("large_output_width", Unrelated),
    ];

    fn validate(&self) -> Result<(), Invalid> {
        let strip = |key: String| {
            key.strip_prefix("overlay.")
                .map_or(key.clone(), str::to_string)
        };
        self.validate()
            .map_err(|(key, reason)| Invalid::new(strip(key), reason))?;
        for (key, template, allowed) in self.text.templates() {
            check_placeholders(&format!("text.{key}"), template, allowed)?;
        }
        Shortcut::parse(&self.focus_shortcut)
            .map(|_| ())
            .map_err(|reason| Invalid::new("focus_shortcut", reason))
    }
}

impl Section for pcp_speech::Config {
    const NAME: &'static str = "speech";
    const PROTECTION: &'static [(&'static str, Protection)] = &[
        // `enabled = false` is "voice turned off".
        ("enabled", TrueRaises),
        ("language", AnyChangeLowers),
        ("model", AnyChangeLowers),
        ("phrases_dir", AnyChangeLowers),
        ("input_device", AnyChangeLowers),
        ("output_device", AnyChangeLowers),
        ("timeout_ms", LargerLowers),
        ("stable_partial_ms", LargerRaises),
        ("quiet_dbfs", AnyChangeLowers),
        ("quiet_final_ms", AnyChangeLowers),
        ("speak_prompt", TrueRaises),
        ("question_template", AnyChangeLowers),
        // The question itself says "yes": a shorter pause could let the listener hear it.
        ("after_prompt_ms", LargerRaises),
        // Each risk class listed needs its challenge word in a spoken approval.
        ("challenge", MembersRaise),
        // Read aloud, the word can be repeated by whatever hears the question.
        ("speak_challenge", TrueLowers),
        // The same, only while a screen reader runs.
        ("speak_challenge_for_screen_readers", TrueLowers),
        // A wider margin over every rival reading is a surer approval.
        ("approve_margin", LargerRaises),
        // What decides a spoken answer, and what the dialog says about the challenge.
        ("lead_in_ms", AnyChangeLowers),
        // The noise suppressor changes the audio every decision is made on, in either direction:
        // on the evaluation set it made answers right and non-answers approve (voice-tuning.md).
        ("denoise", AnyChangeLowers),
        ("decoder_options", AnyChangeLowers),
        ("moonshine_options", AnyChangeLowers),
        ("transcribe_after_quiet_ms", AnyChangeLowers),
        // Fewer views of an utterance agreeing is a less sure approval.
        ("moonshine_views", LargerRaises),
        ("alternatives", AnyChangeLowers),
        ("refuse_margin", AnyChangeLowers),
        ("challenge_pause_ms", AnyChangeLowers),
        ("challenge_hint", AnyChangeLowers),
        ("challenge_spoken", AnyChangeLowers),
        // When the model's memory is given back: it loads again before it listens.
        ("unload_after_s", Unrelated),
        // Capture format, tuning, the speaking voice.
        ("capture_rate", Unrelated),
        ("capture_channels", Unrelated),
        ("decoder_phases", Unrelated),
        ("parallel_phases", Unrelated),
        ("block_ms", Unrelated),
        ("queue_blocks", Unrelated),
        ("capture_buffer_ms", Unrelated),
        ("capture_reopen", Unrelated),
        ("load_at_start", Unrelated),
        ("level_interval_ms", Unrelated),
        ("voice", Unrelated),
        ("speech_rate_wpm", Unrelated),
        ("pitch", Unrelated),
        // The missed-answer cue only tells the user to repeat; the dialog says so either way.
        ("missed_earcon", Unrelated),
        ("earcon_hz", Unrelated),
        ("earcon_ms", Unrelated),
    ];

    fn validate(&self) -> Result<(), Invalid> {
        for (key, template, allowed) in self.templates() {
            check_placeholders(key, template, allowed)?;
        }
        self.validate().map_err(|e| {
            let message = match e {
                pcp_speech::SpeechError::Config(m) => m,
                other => other.to_string(),
            };
            // The speech crate names the key first, in backticks.
            let key = message.split('`').nth(1).unwrap_or_default().to_string();
            Invalid::new(key, message)
        })
    }
}

impl Section for pcp_haptics::Config {
    const NAME: &'static str = "haptics";
    const PROTECTION: &'static [(&'static str, Protection)] = &[
        // `enabled = true` lets a double tap alone confirm the capabilities that allow it.
        ("enabled", TrueLowers),
        ("device", AnyChangeLowers),
        ("touch_device", AnyChangeLowers),
        ("tap.max_interval_ms", LargerLowers),
        ("tap.min_interval_ms", LargerRaises),
        ("tap.max_tap_ms", LargerLowers),
        ("tap.max_movement_mm", LargerLowers),
        ("tap.max_distance_mm", LargerLowers),
        ("tap.arm_delay_ms", LargerRaises),
        ("tap.fallback_units_per_mm", AnyChangeLowers),
        // How strong the cue is.
        ("gain", Unrelated),
        ("cue.*", Unrelated),
    ];

    fn validate(&self) -> Result<(), Invalid> {
        let strip = |key: String| {
            key.strip_prefix("haptics.")
                .map_or(key.clone(), str::to_string)
        };
        self.validate()
            .map_err(|(key, reason)| Invalid::new(strip(key), reason))
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use pcp_gate::ProtectionFact;

    use super::*;
    use crate::{AnySection, Config, SectionGroup};

    fn refused(text: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, format!("[manifests]\ndirs = []\n{text}")).unwrap();
        match Config::<()>::load(Some(&path)) {
            Ok(_) => panic!("accepted: {text}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_bad_key_or_value_in_any_plugin_section_is_named_with_its_line_and_column() {
        for (text, line, key) in [
            ("[state]\n\n[overlay]\nmax_widht = 3\n", 6, "max_widht"),
            (
                "[overlay]\ntext_scale = 1.0\n[speech]\nlanguag = \"ko\"\n",
                6,
                "languag",
            ),
            ("[haptics]\n\ngian = 0.5\n", 5, "gian"),
            ("[haptics]\ngain = 7.0\n", 4, "[haptics] gain"),
            ("[overlay]\nmax_buffer_pixels = 0\n", 4, "max_buffer_pixels"),
            ("[overlay]\nfont_size = 0.0\n", 4, "font_size"),
            ("[overlay]\nfont_size = nan\n", 4, "font_size"),
            ("[overlay]\nmin_target = 0\n", 4, "min_target"),
            (
                "[overlay]\nfocus_shortcut = \"Hyper+a\"\n",
                4,
                "focus_shortcut",
            ),
            ("[speech]\nenabled = false\n\nblock_ms = 0\n", 6, "block_ms"),
        ] {
            let e = refused(text);
            assert!(e.contains(&format!("config.toml:{line}:")), "{text:?}: {e}");
            assert!(e.contains(key), "{text:?} names the key: {e}");
        }
    }

    #[test]
    fn a_mistyped_placeholder_is_refused_at_its_line_and_a_known_one_loads() {
        for (text, line, key) in [
            (
                "[overlay.text]\nqueued = \"{count} more\"\n",
                4,
                "text.queued: `{count}` is not one of its placeholders (it takes {n})",
            ),
            (
                "[overlay.text]\n\nasks = \"asks {action}\"\n",
                5,
                "text.asks: `{action}` is not one of its placeholders (it takes none)",
            ),
            (
                "[speech]\nquestion_template = \"{action}? say {aprove}\"\n",
                4,
                "question_template: `{aprove}`",
            ),
            (
                "[speech]\nchallenge_hint = \"say {word}\"\n",
                4,
                "challenge_hint: `{word}`",
            ),
        ] {
            let e = refused(text);
            assert!(e.contains(&format!("config.toml:{line}:")), "{text:?}: {e}");
            assert!(e.contains(key), "{text:?} names the key: {e}");
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let fine = "[manifests]\ndirs = []\n[overlay.text]\nqueued = \"{n} more {{ {} {x\"\n\
                    listening = \"say {approve}\"\n[speech]\nchallenge_spoken = \"{word}\"\n";
        std::fs::write(&path, fine).unwrap();
        Config::<()>::load(Some(&path)).unwrap_or_else(|e| panic!("{e}"));
    }

    #[test]
    fn every_text_of_the_dialog_has_its_placeholders_listed() {
        let listed: Vec<&str> = pcp_overlay::config::Strings::default()
            .templates()
            .iter()
            .map(|(key, _, _)| *key)
            .collect();
        assert_eq!(
            listed,
            pcp_gate::fields::field_paths::<pcp_overlay::config::Strings>()
        );
    }

    #[test]
    fn the_shipped_sections_load_as_written() {
        let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/config");
        let mut text = String::from("[manifests]\ndirs = []\n");
        for name in ["overlay.toml", "speech.toml", "haptics.toml"] {
            text += &std::fs::read_to_string(assets.join(name)).unwrap();
            text += "\n";
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, &text).unwrap();
        let loaded = Config::<()>::load(Some(&path)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(loaded.plugin.overlay, pcp_overlay::Config::default());
    }

    fn fact(facts: &[ProtectionFact], name: &str) -> ProtectionFact {
        let found = facts.iter().find(|f| f.name == name);
        found
            .unwrap_or_else(|| panic!("no fact {name}: {facts:?}"))
            .clone()
    }

    #[test]
    fn facts_rank_the_effective_values_by_their_order() {
        let mut overlay = pcp_overlay::Config::default();
        let before = overlay.facts();
        overlay.guard_delay_ms = 100;
        let after = overlay.facts();
        let (a, b) = (
            fact(&before, "overlay.guard_delay_ms"),
            fact(&after, "overlay.guard_delay_ms"),
        );
        assert!(b.rank < a.rank, "a shorter guard is less protection");
        assert_eq!(b.value, "100");
        let speech = pcp_speech::Config::default();
        let off = pcp_speech::Config {
            enabled: false,
            ..speech.clone()
        };
        let on = speech.facts();
        assert!(fact(&off.facts(), "speech.enabled").rank < fact(&on, "speech.enabled").rank);
        let longer = pcp_speech::Config {
            timeout_ms: speech.timeout_ms * 2,
            ..speech
        };
        let longer = fact(&longer.facts(), "speech.timeout_ms");
        assert!(longer.rank < fact(&on, "speech.timeout_ms").rank);
        let haptics = pcp_haptics::Config::default().facts();
        assert_eq!(fact(&haptics, "haptics.enabled").rank, 0, "haptics on");
        assert!(fact(&haptics, "haptics.gain").unrelated);
        assert!(fact(&haptics, "haptics.cue.pulses").unrelated);
        // A wording the user reads: any change lowers (same rank, another value).
        let text = fact(&before, "overlay.text.approve");
        assert!(!text.unrelated && text.rank == 0);
    }

    #[test]
    fn every_key_of_the_plugins_sections_has_a_protection_order() {
        let unordered = PluginSections::unordered();
        assert!(unordered.is_empty(), "{unordered:#?}");
    }
}
