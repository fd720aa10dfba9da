//! The voice evaluation set as data: which clips exist, what each one says, what the right answer
//! is, and the conditions it is spoken in. Everything here is deterministic (a fixed-seed
//! generator), so the same set comes out on every machine; `synth` turns a [`Clip`] into audio.
//!
//! The set is split into a **tuning** part (phrase packs and decision rules are chosen on it) and
//! a **held-out** part (only reported). Non-answer texts are split by text, so the held-out part
//! has words the tuning part never had; answers, challenge answers and other sounds are drawn
//! with separate random conditions for each part.

use serde::Serialize;

pub use super::words::*;
use super::words_en;

/// The language a set is spoken in, with its phrase pack's words and its voices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    Korean,
    English,
}

impl Language {
    /// The language code (`--language`, the phrase pack's).
    pub fn code(self) -> &'static str {
        match self {
            Language::Korean => "ko",
            Language::English => "en",
        }
    }

    pub fn parse(code: &str) -> Option<Language> {
        [Language::Korean, Language::English]
            .into_iter()
            .find(|l| l.code() == code)
    }

    /// What the set says and who says it.
    pub fn words(self) -> &'static Words {
        match self {
            Language::Korean => &KOREAN,
            Language::English => &words_en::ENGLISH,
        }
    }
}

/// One language's material: the answers (every phrase of its pack), the voices of each part,
/// the non-answers and the challenge words.
pub struct Words {
    pub answers: &'static [(&'static str, Truth)],
    /// The voices of the tuning part and of the held-out part (`espeak-ng` voice names, or
    /// `flite:NAME`, `piper:NAME`).
    pub voices: [&'static [&'static str]; 2],
    pub near_homophones: &'static [(&'static str, &'static [&'static str])],
    pub common_words: &'static [&'static str],
    pub phrases: &'static [&'static str],
    pub challenge_words: &'static [&'static str],
    /// The ranges the rate (words per minute) and pitch (0..=100) are drawn from.
    pub wpm: (u32, u32),
    pub pitch: (u32, u32),
    /// The first seed of each part's generator.
    pub seeds: [u64; 2],
    /// The prefix of every clip's id (empty for Korean, whose ids predate English).
    pub id_prefix: &'static str,
}

impl Words {
    /// The voices of `part`.
    pub fn voices_of(&self, part: Part) -> &'static [&'static str] {
        match part {
            Part::Tuning => self.voices[0],
            Part::HeldOut => self.voices[1],
        }
    }
}

/// Korean: espeak-ng's voice and its variants in both parts.
pub const KOREAN: Words = Words {
    answers: ANSWERS,
    voices: [VOICES, VOICES],
    near_homophones: NEAR_HOMOPHONES,
    common_words: COMMON_WORDS,
    phrases: PHRASES,
    challenge_words: CHALLENGE_WORDS,
    wpm: (110, 220),
    pitch: (20, 80),
    seeds: [0x7475_6e69_6e67, 0x0068_656c_646f_7574],
    id_prefix: "",
};

/// Which part of the set a clip belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Part {
    Tuning,
    HeldOut,
}

impl Part {
    pub fn name(self) -> &'static str {
        match self {
            Part::Tuning => "tuning",
            Part::HeldOut => "held-out",
        }
    }
}

/// What a clip should be decided as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Truth {
    Approve,
    Deny,
    Cancel,
    None,
}

impl Truth {
    pub const ALL: [Truth; 4] = [Truth::Approve, Truth::Deny, Truth::Cancel, Truth::None];

    pub fn name(self) -> &'static str {
        match self {
            Truth::Approve => "approve",
            Truth::Deny => "deny",
            Truth::Cancel => "cancel",
            Truth::None => "none",
        }
    }

    pub fn parse(s: &str) -> Option<Truth> {
        Truth::ALL.into_iter().find(|t| t.name() == s)
    }
}

/// What kind of clip it is (for the per-kind breakdown).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// An answer phrase on a prompt without a challenge word.
    Answer,
    /// "네, *shown word*" on a challenge prompt.
    ChallengeRight,
    /// "네, *another challenge word*" on a challenge prompt.
    ChallengeWrong,
    /// "네" alone on a challenge prompt.
    ChallengeMissing,
    /// Deny or cancel on a challenge prompt (no word needed).
    ChallengeRefuse,
    /// A word that sounds like an answer word.
    NearHomophone,
    /// A common word or short phrase.
    OtherSpeech,
    /// Digital silence or background noise alone.
    Silence,
    /// Breathing-like noise bursts.
    Breath,
    /// Tones, plucked strings, chords.
    Music,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Answer => "answer",
            Kind::ChallengeRight => "challenge-right",
            Kind::ChallengeWrong => "challenge-wrong",
            Kind::ChallengeMissing => "challenge-missing",
            Kind::ChallengeRefuse => "challenge-refuse",
            Kind::NearHomophone => "near-homophone",
            Kind::OtherSpeech => "other-speech",
            Kind::Silence => "silence",
            Kind::Breath => "breath",
            Kind::Music => "music",
        }
    }
}

/// Background noise mixed under a clip.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "lowercase", tag = "type")]
pub enum Noise {
    None,
    /// White or pink noise at `dbfs` RMS, from `offset_s` into the noise bed.
    White {
        dbfs: f32,
        offset_s: f32,
    },
    Pink {
        dbfs: f32,
        offset_s: f32,
    },
}

/// sox's `reverb` effect parameters (a small, lightly reverberant room).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Reverb {
    pub reverberance: u32,
    pub hf_damping: u32,
    pub room_scale: u32,
}

/// What is heard, before noise and reverb.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "lowercase", tag = "type")]
pub enum Source {
    /// espeak-ng speaking `text` with `voice` (e.g. `ko+f2`) at `wpm` and `pitch`.
    Speech {
        text: String,
        voice: String,
        wpm: u32,
        pitch: u32,
    },
    /// Nothing (digital silence, or only the noise bed).
    Silence,
    /// `count` breathing-like bursts (band-passed pink noise with soft edges).
    Breath {
        count: u32,
        burst_s: f32,
        centre_hz: u32,
    },
    /// A sox `synth` melody or chord (its arguments), e.g. plucked notes.
    Music { synth: Vec<String> },
}

/// One clip of the set.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Clip {
    /// Unique and stable: the file name without extension.
    pub id: String,
    pub part: Part,
    pub kind: Kind,
    pub truth: Truth,
    /// The challenge word the prompt shows, when the prompt has one.
    pub challenge: Option<String>,
    pub source: Source,
    /// Silence before and after the sound, in seconds.
    pub lead_s: f32,
    pub tail_s: f32,
    /// Gain applied to the sound, in dB (negative: quieter).
    pub gain_db: f32,
    pub noise: Noise,
    pub reverb: Option<Reverb>,
}

/// The rate every clip is written at: a common microphone rate, so the evaluation goes through
/// the same resampler as live capture.
pub const CLIP_RATE: u32 = 48_000;

/// Bumped whenever the generator's output for the same `Clip` would change.
pub const GENERATOR_VERSION: u32 = 1;

/// A small deterministic generator (SplitMix64): the same clips on every machine.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u32, hi: u32) -> u32 {
        lo + (self.next_u64() % u64::from(hi - lo + 1)) as u32
    }

    /// Uniform in `[lo, hi)`.
    pub fn float(&mut self, lo: f32, hi: f32) -> f32 {
        let unit = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        lo + (hi - lo) * unit
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[(self.next_u64() % items.len() as u64) as usize]
    }

    pub fn chance(&mut self, p: f32) -> bool {
        self.float(0.0, 1.0) < p
    }
}

/// How many clips of each kind a part has.
struct Counts {
    /// Conditions per answer phrase.
    per_answer: usize,
    /// Conditions per non-answer text.
    per_text: usize,
    challenge_right: usize,
    challenge_wrong: usize,
    challenge_missing: usize,
    challenge_refuse: usize,
    silence: usize,
    breath: usize,
    music: usize,
}

const TUNING: Counts = Counts {
    per_answer: 24,
    per_text: 2,
    challenge_right: 40,
    challenge_wrong: 30,
    challenge_missing: 30,
    challenge_refuse: 10,
    silence: 12,
    breath: 12,
    music: 12,
};

const HELD_OUT: Counts = Counts {
    per_answer: 40,
    per_text: 2,
    challenge_right: 60,
    challenge_wrong: 40,
    challenge_missing: 40,
    challenge_refuse: 20,
    silence: 16,
    breath: 16,
    music: 16,
};

/// Speaking conditions drawn for one speech clip.
fn speech(
    rng: &mut Rng,
    words: &Words,
    part: Part,
    text: &str,
) -> (Source, f32, Noise, Option<Reverb>) {
    let source = Source::Speech {
        text: text.to_string(),
        voice: rng.pick(words.voices_of(part)).to_string(),
        wpm: rng.range(words.wpm.0, words.wpm.1),
        pitch: rng.range(words.pitch.0, words.pitch.1),
    };
    let gain_db = rng.float(-18.0, -2.0);
    (source, gain_db, noise(rng), reverb(rng))
}

/// Light noise in about two clips of three: white or pink at −60 to −40 dBFS.
fn noise(rng: &mut Rng) -> Noise {
    let level = *rng.pick(&[-60.0f32, -55.0, -50.0, -45.0, -40.0]);
    let offset_s = rng.float(0.0, 50.0);
    match rng.range(0, 2) {
        0 => Noise::None,
        1 => Noise::White {
            dbfs: level,
            offset_s,
        },
        _ => Noise::Pink {
            dbfs: level,
            offset_s,
        },
    }
}

/// A small room in about one clip of three.
fn reverb(rng: &mut Rng) -> Option<Reverb> {
    rng.chance(0.33).then(|| Reverb {
        reverberance: rng.range(10, 50),
        hf_damping: rng.range(30, 70),
        room_scale: rng.range(10, 60),
    })
}

/// The non-answer texts of one part: even positions of each list go to tuning, odd to held-out,
/// so both parts have near-homophones of every answer word but never the same text.
pub fn texts_of(words: &Words, part: Part) -> Vec<(Kind, &'static str)> {
    let keep = |i: usize| i.is_multiple_of(2) == (part == Part::Tuning);
    let mut out = Vec::new();
    for (_, words) in words.near_homophones {
        for (i, w) in words.iter().enumerate() {
            if keep(i) {
                out.push((Kind::NearHomophone, *w));
            }
        }
    }
    for list in [words.common_words, words.phrases] {
        for (i, w) in list.iter().enumerate() {
            if keep(i) {
                out.push((Kind::OtherSpeech, *w));
            }
        }
    }
    out
}

/// Every clip of both parts of `language`'s set, in a fixed order.
pub fn clips(language: Language) -> Vec<Clip> {
    let words = language.words();
    let mut out = Vec::new();
    for (part, counts, seed) in [
        (Part::Tuning, &TUNING, words.seeds[0]),
        (Part::HeldOut, &HELD_OUT, words.seeds[1]),
    ] {
        part_clips(words, part, counts, &mut Rng::new(seed), &mut out);
    }
    out
}

fn part_clips(words: &Words, part: Part, counts: &Counts, rng: &mut Rng, out: &mut Vec<Clip>) {
    let prefix = match part {
        Part::Tuning => "t",
        Part::HeldOut => "h",
    };
    let prefix = format!("{}{prefix}", words.id_prefix);
    let (answers, challenge_words) = (words.answers, words.challenge_words);
    let mut push = |rng: &mut Rng,
                    kind: Kind,
                    truth: Truth,
                    challenge: Option<&str>,
                    source: Source,
                    gain_db: f32,
                    noise: Noise,
                    reverb: Option<Reverb>| {
        let id = format!("{prefix}-{}-{:04}", kind.name(), out.len());
        out.push(Clip {
            id,
            part,
            kind,
            truth,
            challenge: challenge.map(str::to_string),
            source,
            lead_s: rng.float(0.3, 1.0),
            tail_s: 2.0,
            gain_db,
            noise,
            reverb,
        });
    };
    // Answers on prompts without a challenge word; sometimes with a full stop or an exclamation
    // mark, which changes espeak-ng's intonation.
    for (text, truth) in answers {
        for _ in 0..counts.per_answer {
            let said = format!("{text}{}", rng.pick(&["", "", ".", "!"]));
            let (source, gain, noise, reverb) = speech(rng, words, part, &said);
            push(rng, Kind::Answer, *truth, None, source, gain, noise, reverb);
        }
    }
    let approvals: Vec<&str> = answers
        .iter()
        .filter(|(_, t)| *t == Truth::Approve)
        .map(|(a, _)| *a)
        .collect();
    for _ in 0..counts.challenge_right {
        let word = *rng.pick(challenge_words);
        let said = format!("{}{}{word}", rng.pick(&approvals), rng.pick(&[", ", " "]));
        let (source, gain, noise, reverb) = speech(rng, words, part, &said);
        push(
            rng,
            Kind::ChallengeRight,
            Truth::Approve,
            Some(word),
            source,
            gain,
            noise,
            reverb,
        );
    }
    for _ in 0..counts.challenge_wrong {
        let shown = *rng.pick(challenge_words);
        let others: Vec<&str> = challenge_words
            .iter()
            .copied()
            .filter(|w| *w != shown)
            .collect();
        let said = format!(
            "{}{}{}",
            rng.pick(&approvals),
            rng.pick(&[", ", " "]),
            rng.pick(&others)
        );
        let (source, gain, noise, reverb) = speech(rng, words, part, &said);
        push(
            rng,
            Kind::ChallengeWrong,
            Truth::None,
            Some(shown),
            source,
            gain,
            noise,
            reverb,
        );
    }
    for _ in 0..counts.challenge_missing {
        let shown = *rng.pick(challenge_words);
        let said = *rng.pick(&approvals);
        let (source, gain, noise, reverb) = speech(rng, words, part, said);
        push(
            rng,
            Kind::ChallengeMissing,
            Truth::None,
            Some(shown),
            source,
            gain,
            noise,
            reverb,
        );
    }
    let refusals: Vec<(&str, Truth)> = answers
        .iter()
        .filter(|(_, t)| *t != Truth::Approve)
        .copied()
        .collect();
    for _ in 0..counts.challenge_refuse {
        let shown = *rng.pick(challenge_words);
        let (text, truth) = *rng.pick(&refusals);
        let (source, gain, noise, reverb) = speech(rng, words, part, text);
        push(
            rng,
            Kind::ChallengeRefuse,
            truth,
            Some(shown),
            source,
            gain,
            noise,
            reverb,
        );
    }
    for (kind, text) in texts_of(words, part) {
        for _ in 0..counts.per_text {
            let (source, gain, noise, reverb) = speech(rng, words, part, text);
            // Half of them on a challenge prompt: neither kind of prompt may take them.
            let shown = rng.chance(0.5).then(|| *rng.pick(challenge_words));
            push(rng, kind, Truth::None, shown, source, gain, noise, reverb);
        }
    }
    for i in 0..counts.silence {
        // The first is digital silence; the rest are the noise bed alone.
        let noise = if i == 0 {
            Noise::None
        } else {
            let offset_s = rng.float(0.0, 50.0);
            let dbfs = rng.float(-62.0, -38.0);
            if i % 2 == 0 {
                Noise::White { dbfs, offset_s }
            } else {
                Noise::Pink { dbfs, offset_s }
            }
        };
        push(
            rng,
            Kind::Silence,
            Truth::None,
            None,
            Source::Silence,
            0.0,
            noise,
            None,
        );
    }
    for _ in 0..counts.breath {
        let source = Source::Breath {
            count: rng.range(1, 3),
            burst_s: rng.float(0.5, 1.2),
            centre_hz: rng.range(500, 1800),
        };
        let (gain, noise, reverb) = (rng.float(-30.0, -12.0), noise(rng), reverb(rng));
        push(
            rng,
            Kind::Breath,
            Truth::None,
            None,
            source,
            gain,
            noise,
            reverb,
        );
    }
    for _ in 0..counts.music {
        let synth = rng.pick(MUSIC).iter().map(|s| s.to_string()).collect();
        let (gain, noise, reverb) = (rng.float(-24.0, -6.0), noise(rng), reverb(rng));
        let shown = rng.chance(0.5).then(|| *rng.pick(challenge_words));
        push(
            rng,
            Kind::Music,
            Truth::None,
            shown,
            Source::Music { synth },
            gain,
            noise,
            reverb,
        );
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    const BOTH: [Language; 2] = [Language::Korean, Language::English];

    fn texts(w: &Words) -> HashSet<&'static str> {
        w.near_homophones
            .iter()
            .flat_map(|(_, w)| w.iter().copied())
            .chain(w.common_words.iter().copied())
            .chain(w.phrases.iter().copied())
            .collect()
    }

    #[test]
    fn the_set_is_deterministic_and_large_enough() {
        for language in BOTH {
            let w = language.words();
            let a = clips(language);
            assert_eq!(a, clips(language));
            let ids: HashSet<&str> = a.iter().map(|c| c.id.as_str()).collect();
            assert_eq!(ids.len(), a.len(), "ids are unique");
            let texts = texts(w);
            assert!(texts.len() >= 200, "{} non-answer texts", texts.len());
            let listed = w
                .near_homophones
                .iter()
                .map(|(_, w)| w.len())
                .sum::<usize>()
                + w.common_words.len()
                + w.phrases.len();
            assert_eq!(listed, texts.len(), "{language:?}: no text is listed twice");
            for (answer, _) in w.answers {
                assert!(!texts.contains(answer), "{answer} is an answer");
                assert!(
                    w.near_homophones.iter().any(|(a, _)| a == answer),
                    "{answer} has near-homophones"
                );
            }
            for word in w.challenge_words {
                assert!(!texts.contains(word), "{word} is a challenge word");
            }
            let held_out_non_answers = a
                .iter()
                .filter(|c| c.part == Part::HeldOut && c.truth == Truth::None)
                .count();
            assert!(
                held_out_non_answers >= 300,
                "{language:?}: {held_out_non_answers}"
            );
        }
    }

    #[test]
    fn the_parts_share_no_non_answer_text() {
        for language in BOTH {
            let w = language.words();
            let of =
                |part| -> HashSet<&str> { texts_of(w, part).into_iter().map(|t| t.1).collect() };
            let (tuning, held) = (of(Part::Tuning), of(Part::HeldOut));
            assert!(tuning.is_disjoint(&held));
            for (answer, words) in w.near_homophones {
                for part in [&tuning, &held] {
                    assert!(
                        words.iter().any(|w| part.contains(w)),
                        "both parts have near-homophones of {answer}"
                    );
                }
            }
        }
    }

    #[test]
    fn every_kind_and_condition_range_is_covered() {
        for language in BOTH {
            let w = language.words();
            let all = clips(language);
            for part in [Part::Tuning, Part::HeldOut] {
                let of: Vec<&Clip> = all.iter().filter(|c| c.part == part).collect();
                for truth in Truth::ALL {
                    assert!(of.iter().any(|c| c.truth == truth), "{part:?} {truth:?}");
                }
                let voices: HashSet<&str> = of
                    .iter()
                    .filter_map(|c| match &c.source {
                        Source::Speech { voice, .. } => Some(voice.as_str()),
                        _ => None,
                    })
                    .collect();
                let want: HashSet<&str> = w.voices_of(part).iter().copied().collect();
                assert_eq!(voices, want, "{language:?} {part:?} uses every voice");
            }
            for c in &all {
                if let Source::Speech { wpm, pitch, .. } = c.source {
                    assert!((w.wpm.0..=w.wpm.1).contains(&wpm));
                    assert!((w.pitch.0..=w.pitch.1).contains(&pitch));
                }
            }
            assert!(all.iter().any(|c| c.reverb.is_some()));
            assert!(all.iter().any(|c| matches!(c.noise, Noise::Pink { .. })));
            assert!(all.iter().any(|c| matches!(c.noise, Noise::White { .. })));
        }
    }

    #[test]
    fn every_answer_and_challenge_word_is_the_phrase_pack_s() {
        for language in BOTH {
            let w = language.words();
            let path = crate::root().join(format!("assets/phrases/{}.toml", language.code()));
            let pack: toml::Table =
                toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let list = |key: &str| -> Vec<String> {
                pack.get(key)
                    .and_then(|v| v.as_array())
                    .map(|a| {
                        a.iter()
                            .filter_map(|v| v.as_str())
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let mut phrases: Vec<String> = ["approve", "approve_with_word", "deny", "cancel"]
                .iter()
                .flat_map(|k| list(k))
                .collect();
            let mut answers: Vec<String> = w.answers.iter().map(|(a, _)| a.to_string()).collect();
            phrases.sort();
            answers.sort();
            assert_eq!(answers, phrases, "{}", path.display());
            let words: Vec<String> = w.challenge_words.iter().map(|s| s.to_string()).collect();
            assert_eq!(words, list("challenge_words"), "{}", path.display());
        }
    }

    #[test]
    fn the_korean_set_is_the_one_its_figures_were_measured_on() {
        // Its clips (and so the folder they are cached in) are unchanged by English coming in.
        let spec = serde_json::to_vec(&clips(Language::Korean)).unwrap();
        let hash = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&spec));
        // The hash of the Korean set before the English one was added.
        assert_eq!(&hash[..12], "4ce849568fe5");
    }
}
