//! Phrase packs: per language, the phrases that mean approve, deny and cancel, the challenge
//! words a prompt can show, plus decoy words that soak up other speech (a grammar without decoys
//! forces every sound onto an answer). Owns the grammar handed to Vosk, the reading of a
//! transcript and the random choice of a prompt's challenge word.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::SpeechError;
use crate::sentences::check_pack_sentences;
pub use crate::sentences::{AnswerWords, PackSentences};

/// What a spoken answer means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SpokenAnswer {
    Approve,
    Deny,
    Cancel,
}

impl SpokenAnswer {
    /// The lowercase name used in JSON and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            SpokenAnswer::Approve => "approve",
            SpokenAnswer::Deny => "deny",
            SpokenAnswer::Cancel => "cancel",
        }
    }
}

/// What one transcript says, on a prompt that does or does not show a challenge word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reading {
    /// A complete answer.
    Answer(SpokenAnswer),
    /// Approval phrases on a prompt with a challenge word, the word not said (yet): it may follow
    /// after a short pause ("네, … 기차"); alone it approves nothing.
    ApproveWithoutWord,
    /// Only the prompt's challenge word: completes an approval said just before it.
    ShownWord,
    /// Anything else: other speech, a wrong challenge word, answers that disagree, nothing.
    Nothing,
}

/// The packs built into the crate, used when `[speech] phrases_dir` is empty.
const BUILTIN: &[(&str, &str)] = &[
    ("en", include_str!("../../assets/phrases/en.toml")),
    ("ko", include_str!("../../assets/phrases/ko.toml")),
];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PackFile {
    language: String,
    approve: Vec<String>,
    deny: Vec<String>,
    cancel: Vec<String>,
    #[serde(default)]
    challenge_words: Vec<String>,
    /// Phrases that approve only together with the shown challenge word; decoys elsewhere.
    #[serde(default)]
    approve_with_word: Vec<String>,
    decoys: Vec<String>,
    /// How many times each answer phrase is listed in the grammar (its prior against the
    /// decoys, each listed once).
    #[serde(default = "one")]
    answer_weight: u32,
    /// The espeak-ng voice that speaks the question (default: the language code).
    #[serde(default)]
    voice: String,
    /// The spoken question; `{action}` is the action, `{approve}`, `{deny}` and `{cancel}` the
    /// answer words (the first phrase of each list).
    #[serde(default)]
    question: String,
    /// Added to a challenge prompt's question: say the approval and the word on the dialog.
    #[serde(default)]
    challenge_hint: String,
    /// The same when the word is read aloud; `{word}` is the word.
    #[serde(default)]
    challenge_spoken: String,
}

fn one() -> u32 {
    1
}

/// The largest `answer_weight` a pack may ask for (each unit is one more grammar entry).
const MAX_ANSWER_WEIGHT: u32 = 200;

/// What a grammar phrase is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Answer(SpokenAnswer),
    /// An approval that counts only on a prompt that shows a challenge word, together with it;
    /// on any other prompt it is other speech (a decoy).
    ApproveWithWord,
    /// A challenge word (other speech unless it is the one the prompt shows).
    Challenge,
    /// A decoy: other speech.
    Decoy,
}

/// One language's phrases.
#[derive(Debug, Clone)]
pub struct PhrasePack {
    language: String,
    words: AnswerWords,
    sentences: PackSentences,
    /// Every grammar phrase → what it is.
    phrases: HashMap<String, Role>,
    /// The challenge words, in the pack's order.
    challenge_words: Vec<String>,
    /// Longest phrase in words, for greedy matching.
    max_words: usize,
    grammar: Vec<String>,
    challenge_grammar: Vec<String>,
}

impl PhrasePack {
    /// Loads `<lang>.toml` from `dir`, or the built-in pack when `dir` is `None`.
    pub fn load(dir: Option<&Path>, lang: &str) -> Result<PhrasePack, SpeechError> {
        match dir {
            Some(dir) => {
                let path = dir.join(format!("{lang}.toml"));
                let text = std::fs::read_to_string(&path).map_err(|e| SpeechError::PhrasePack {
                    source_name: path.display().to_string(),
                    reason: e.to_string(),
                })?;
                Self::parse(&text, &path.display().to_string())
            }
            None => {
                let (_, text) =
                    BUILTIN.iter().find(|(l, _)| *l == lang).ok_or_else(|| {
                        SpeechError::PhrasePack {
                            source_name: format!("built-in `{lang}`"),
                            reason: format!(
                                "no built-in pack for this language (have: {}); set `[speech] phrases_dir`",
                                BUILTIN.iter().map(|(l, _)| *l).collect::<Vec<_>>().join(", ")
                            ),
                        }
                    })?;
                Self::parse(text, &format!("built-in `{lang}`"))
            }
        }
    }

    /// Parses a pack from TOML text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<PhrasePack, SpeechError> {
        let err = |reason: String| SpeechError::PhrasePack {
            source_name: origin.into(),
            reason,
        };
        let mut file: PackFile = toml::from_str(text).map_err(|e| err(e.to_string()))?;
        if file.approve.is_empty() || file.deny.is_empty() || file.cancel.is_empty() {
            return Err(err(
                "`approve`, `deny` and `cancel` each need at least one phrase".into(),
            ));
        }
        if !(1..=MAX_ANSWER_WEIGHT).contains(&file.answer_weight) {
            return Err(err(format!(
                "`answer_weight` = {} is outside 1..={MAX_ANSWER_WEIGHT}",
                file.answer_weight
            )));
        }
        check_pack_sentences(&file.question, &file.challenge_hint, &file.challenge_spoken)
            .map_err(err)?;
        let mut phrases = HashMap::new();
        let classes = [
            (Role::Answer(SpokenAnswer::Approve), &file.approve),
            (Role::Answer(SpokenAnswer::Deny), &file.deny),
            (Role::Answer(SpokenAnswer::Cancel), &file.cancel),
            (Role::Challenge, &file.challenge_words),
            (Role::ApproveWithWord, &file.approve_with_word),
            (Role::Decoy, &file.decoys),
        ];
        let mut challenge_words = Vec::new();
        let mut challenge_grammar = Vec::new();
        let mut grammar = Vec::new();
        for (meaning, list) in classes {
            for raw in list {
                let phrase = normalize(raw);
                if phrase.is_empty() {
                    return Err(err("an empty phrase".into()));
                }
                // Quotes, brackets and backslashes would break Vosk's JSON grammar.
                if let Some(c) = phrase.chars().find(|c| "\"\\[]{}".contains(*c)) {
                    return Err(err(format!("phrase `{raw}` has the character `{c}`")));
                }
                if meaning == Role::Challenge {
                    if phrase.contains(' ') {
                        return Err(err(format!("challenge word `{raw}` is more than one word")));
                    }
                    challenge_words.push(phrase.clone());
                }
                if phrases.insert(phrase.clone(), meaning).is_some() {
                    return Err(err(format!("phrase `{raw}` appears more than once")));
                }
                // Without a challenge word, an approval that needs one is listed like a decoy.
                if meaning != Role::Challenge {
                    grammar.push(phrase.clone());
                }
                let times = match meaning {
                    Role::Answer(_) | Role::ApproveWithWord => file.answer_weight,
                    _ => 1,
                };
                for _ in 0..times {
                    challenge_grammar.push(phrase.clone());
                }
                if let Role::Answer(_) = meaning {
                    for _ in 1..times {
                        grammar.push(phrase.clone());
                    }
                }
            }
        }
        // A challenge prompt's grammar also lists every approval with every challenge word, so
        // "네 기차" is one likely sentence rather than two words joined only by back-off.
        for approve in file.approve.iter().chain(&file.approve_with_word) {
            for word in &challenge_words {
                for _ in 0..file.answer_weight {
                    challenge_grammar.push(format!("{} {word}", normalize(approve)));
                }
            }
        }
        let max_words = phrases
            .keys()
            .map(|p| p.split(' ').count())
            .max()
            .unwrap_or(1);
        let (words, sentences) = spoken_parts(&mut file);
        Ok(PhrasePack {
            language: file.language,
            words,
            sentences,
            phrases,
            challenge_words,
            max_words,
            grammar,
            challenge_grammar,
        })
    }

    /// The pack's language code.
    pub fn language(&self) -> &str {
        &self.language
    }

    /// The answer words to name on the dialog and in the question.
    pub fn answer_words(&self) -> &AnswerWords {
        &self.words
    }

    /// The pack's spoken sentences and voice, the answer words filled in.
    pub fn sentences(&self) -> &PackSentences {
        &self.sentences
    }

    /// Every phrase but the challenge words, answers first, for `Recognizer::new_with_grammar`
    /// on a prompt without a challenge word (as decoys, the challenge words would catch short
    /// answers: "예" was heard as "우유"; said on such a prompt, they are other speech all the
    /// same, spelled with decoys). Vosk estimates its grammar
    /// model from the entries, so an entry listed `n` times weighs `n`: answers are listed
    /// `answer_weight` times, everything else once.
    pub fn grammar(&self) -> &[String] {
        &self.grammar
    }

    /// The grammar of a prompt that shows a challenge word: [`Self::grammar`] plus every
    /// challenge word (another word than the shown one must be heard as itself, never forced
    /// onto the shown one) and every approval phrase followed by every challenge word.
    pub fn challenge_grammar(&self) -> &[String] {
        &self.challenge_grammar
    }

    /// Every distinct word of the grammar (to check against the model's vocabulary).
    pub fn words(&self) -> Vec<&str> {
        let mut words: Vec<&str> = self
            .challenge_grammar
            .iter()
            .flat_map(|p| p.split(' '))
            .collect();
        words.sort_unstable();
        words.dedup();
        words
    }

    /// The challenge words a prompt may show (empty when the pack has none).
    pub fn challenge_words(&self) -> &[String] {
        &self.challenge_words
    }

    /// Whether `word` is one of the pack's challenge words.
    pub fn is_challenge_word(&self, word: &str) -> bool {
        self.challenge_words.iter().any(|w| w == word)
    }

    /// A challenge word chosen uniformly at random by the operating system's generator (an app
    /// or agent must not be able to predict it); `None` when the pack has none or the generator
    /// fails, which the caller treats as "no voice step" (never as "no challenge").
    pub fn random_challenge(&self) -> Option<&str> {
        if self.challenge_words.is_empty() {
            return None;
        }
        let n = self.challenge_words.len() as u64;
        // Rejection sampling keeps the choice uniform.
        let zone = u64::MAX - (u64::MAX % n);
        let mut v = os_random_u64()?;
        while v >= zone {
            v = os_random_u64()?;
        }
        self.challenge_words
            .get((v % n) as usize)
            .map(String::as_str)
    }

    /// What a transcript says on a prompt that shows `challenge` (or none):
    /// - answer phrases that all agree, and nothing else, are that answer — except an approval
    ///   on a challenge prompt, which needs the shown word too ("네 기차"), in either order;
    ///   approval phrases without it are [`Reading::ApproveWithoutWord`];
    /// - the pack's `approve_with_word` phrases approve like that on a challenge prompt and are
    ///   other speech on any other;
    /// - a refusal (deny or cancel) needs no word, and the shown word beside it does not matter;
    /// - the shown word alone is [`Reading::ShownWord`];
    /// - any decoy, any other challenge word, answers that disagree, or nothing: `Nothing`.
    pub fn read(&self, transcript: &str, challenge: Option<&str>) -> Reading {
        let text = normalize(transcript);
        let words: Vec<&str> = text.split(' ').filter(|w| !w.is_empty()).collect();
        let mut found: Option<SpokenAnswer> = None;
        let mut shown = false;
        let mut i = 0;
        while i < words.len() {
            let longest = (1..=self.max_words.min(words.len() - i))
                .rev()
                .find_map(|n| {
                    let candidate = words[i..i + n].join(" ");
                    self.phrases.get(&candidate).map(|role| (n, *role))
                });
            match longest {
                Some((n, role @ (Role::Answer(_) | Role::ApproveWithWord))) => {
                    let answer = match role {
                        Role::Answer(answer) => answer,
                        // Only where a word is shown (and then only with it, below).
                        _ if challenge.is_some() => SpokenAnswer::Approve,
                        _ => return Reading::Nothing,
                    };
                    if found.is_some_and(|f| f != answer) {
                        return Reading::Nothing;
                    }
                    found = Some(answer);
                    i += n;
                }
                Some((n, Role::Challenge)) if challenge == Some(words[i]) && n == 1 => {
                    shown = true;
                    i += 1;
                }
                Some(_) => return Reading::Nothing,
                // A word outside the grammar (only possible for text from elsewhere): doubt.
                None => return Reading::Nothing,
            }
        }
        match (found, challenge.is_some(), shown) {
            (Some(SpokenAnswer::Approve), true, true) => Reading::Answer(SpokenAnswer::Approve),
            (Some(SpokenAnswer::Approve), true, false) => Reading::ApproveWithoutWord,
            (Some(answer), _, _) => Reading::Answer(answer),
            (None, _, true) => Reading::ShownWord,
            (None, _, false) => Reading::Nothing,
        }
    }

    /// What a transcript means on a prompt without a challenge word: `Some` only when it is made
    /// of answer phrases that all agree. Any decoy in it means other speech was heard, so nothing
    /// is decided ("hello yes" is not a clear answer); "yes no" or "네 아니요" decide nothing
    /// either.
    pub fn classify(&self, transcript: &str) -> Option<SpokenAnswer> {
        match self.read(transcript, None) {
            Reading::Answer(answer) => Some(answer),
            _ => None,
        }
    }
}

/// Eight bytes from the kernel's generator (`getrandom(2)`); `None` if it fails.
fn os_random_u64() -> Option<u64> {
    let mut bytes = [0u8; 8];
    // SAFETY: the buffer is valid for writes of its length for the whole call.
    let got = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), 0) };
    (got == bytes.len() as isize).then(|| u64::from_le_bytes(bytes))
}

/// Lowercase with single spaces, the form Vosk prints.
/// What a pack names and says: the first phrase of each answer list, and its sentences with
/// them filled in (taken out of `file`).
fn spoken_parts(file: &mut PackFile) -> (AnswerWords, PackSentences) {
    let first = |list: &[String]| list.first().map(|p| normalize(p)).unwrap_or_default();
    let words = AnswerWords {
        approve: first(&file.approve),
        deny: first(&file.deny),
        cancel: first(&file.cancel),
    };
    let take = std::mem::take;
    let written = [
        take(&mut file.voice),
        take(&mut file.question),
        take(&mut file.challenge_hint),
        take(&mut file.challenge_spoken),
    ];
    let sentences = PackSentences::of(&words, &file.language, written);
    (words, sentences)
}

fn normalize(s: &str) -> String {
    s.split_whitespace()
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_pack_maps_the_spec_phrases() {
        let p = PhrasePack::load(None, "en").unwrap();
        for s in ["yes", "yeah", "approve", "confirm", "do it", "Yes"] {
            assert_eq!(p.classify(s), Some(SpokenAnswer::Approve), "{s}");
        }
        for s in ["no", "nope", "deny", "stop"] {
            assert_eq!(p.classify(s), Some(SpokenAnswer::Deny), "{s}");
        }
        for s in ["cancel", "never mind"] {
            assert_eq!(p.classify(s), Some(SpokenAnswer::Cancel), "{s}");
        }
    }

    #[test]
    fn korean_pack_maps_the_spec_phrases() {
        let p = PhrasePack::load(None, "ko").unwrap();
        assert_eq!(p.language(), "ko");
        assert_eq!(p.classify("네"), Some(SpokenAnswer::Approve));
        // "예" sounds like the hesitation "에": without a challenge word, other speech.
        assert_eq!(p.classify("예"), None);
        for s in ["아니요", "아니"] {
            assert_eq!(p.classify(s), Some(SpokenAnswer::Deny), "{s}");
        }
        assert_eq!(p.classify("취소"), Some(SpokenAnswer::Cancel));
    }

    #[test]
    fn decoys_silence_and_contradictions_decide_nothing() {
        let p = PhrasePack::load(None, "en").unwrap();
        assert_eq!(p.classify(""), None);
        assert_eq!(p.classify("hello what"), None);
        assert_eq!(p.classify("yes no"), None);
        assert_eq!(p.classify("no cancel"), None);
        // Other speech around an answer makes it unclear; repeats of one answer are clear.
        assert_eq!(p.classify("hello yes"), None);
        assert_eq!(p.classify("yes okay"), None);
        assert_eq!(p.classify("yes yeah"), Some(SpokenAnswer::Approve));
        let ko = PhrasePack::load(None, "ko").unwrap();
        assert_eq!(ko.classify("네 아니요"), None);
        for decoy in ko
            .grammar()
            .iter()
            .filter(|g| ko.phrases[*g] == Role::Decoy)
        {
            assert_eq!(ko.classify(decoy), None, "decoy {decoy}");
        }
    }

    #[test]
    fn every_pack_has_decoys_and_an_answer_first_grammar() {
        for (lang, _) in BUILTIN {
            let p = PhrasePack::load(None, lang).unwrap();
            let decoys = p.phrases.values().filter(|m| **m == Role::Decoy).count();
            assert!(decoys >= 10, "{lang} has only {decoys} decoys");
            assert!(matches!(p.phrases[&p.grammar()[0]], Role::Answer(_)));
        }
    }

    #[test]
    fn a_challenge_approval_needs_the_shown_word_and_nothing_else() {
        let p = PhrasePack::load(None, "ko").unwrap();
        let approve = Reading::Answer(SpokenAnswer::Approve);
        let deny = Reading::Answer(SpokenAnswer::Deny);
        let cancel = Reading::Answer(SpokenAnswer::Cancel);
        let shown = Some("기차");
        assert_eq!(p.read("네 기차", shown), approve);
        assert_eq!(p.read("기차 네", shown), approve);
        assert_eq!(p.read("네", shown), Reading::ApproveWithoutWord);
        assert_eq!(p.read("네 거울", shown), Reading::Nothing, "wrong word");
        assert_eq!(p.read("네 기차 거울", shown), Reading::Nothing, "two words");
        assert_eq!(p.read("네 기차 전화", shown), Reading::Nothing, "a decoy");
        assert_eq!(p.read("기차", shown), Reading::ShownWord);
        assert_eq!(p.read("거울", shown), Reading::Nothing);
        // Refusals need no word.
        assert_eq!(p.read("아니요", shown), deny);
        assert_eq!(p.read("취소", shown), cancel);
        assert_eq!(p.read("아니요 기차", shown), deny);
        assert_eq!(p.read("", shown), Reading::Nothing);
        // Without a challenge, a challenge word is other speech.
        assert_eq!(p.read("네 기차", None), Reading::Nothing);
        assert_eq!(p.read("네", None), approve);
    }

    #[test]
    fn an_approval_that_needs_the_word_is_a_decoy_without_one() {
        let p = PhrasePack::load(None, "ko").unwrap();
        let approve = Reading::Answer(SpokenAnswer::Approve);
        let shown = Some("기차");
        // "예" approves only with the shown word, like "네" there.
        assert_eq!(p.read("예 기차", shown), approve);
        assert_eq!(p.read("기차 예", shown), approve);
        assert_eq!(p.read("네 예 기차", shown), approve);
        assert_eq!(p.read("예", shown), Reading::ApproveWithoutWord);
        assert_eq!(p.read("예 거울", shown), Reading::Nothing, "wrong word");
        assert_eq!(p.read("예 아니요", shown), Reading::Nothing, "disagreeing");
        // Without a challenge word it is other speech, alone or beside an answer.
        assert_eq!(p.read("예", None), Reading::Nothing);
        assert_eq!(p.read("예 네", None), Reading::Nothing);
        assert_eq!(p.read("예 기차", None), Reading::Nothing);
        // So the plain grammar lists it once (as a decoy), the challenge grammar as an answer,
        // and with every challenge word.
        assert_eq!(p.grammar().iter().filter(|g| *g == "예").count(), 1);
        assert!(p.challenge_grammar().iter().any(|g| g == "예 기차"));
        let pack = "language='x'\napprove=['y']\ndeny=['n']\ncancel=['c']\n\
                    approve_with_word=['ok']\nchallenge_words=['w']\ndecoys=[]\nanswer_weight=3";
        let x = PhrasePack::parse(pack, "x").unwrap();
        assert_eq!(x.grammar().iter().filter(|g| *g == "ok").count(), 1);
        assert_eq!(x.grammar().iter().filter(|g| *g == "y").count(), 3);
        assert_eq!(
            x.challenge_grammar().iter().filter(|g| *g == "ok").count(),
            3
        );
        assert_eq!(
            x.challenge_grammar()
                .iter()
                .filter(|g| *g == "ok w")
                .count(),
            3
        );
        let twice = "language='x'\napprove=['y']\ndeny=['n']\ncancel=['c']\n\
                     approve_with_word=['y']\ndecoys=[]";
        let e = PhrasePack::parse(twice, "t.toml").unwrap_err().to_string();
        assert!(e.contains("more than once"), "{e}");
    }

    #[test]
    fn challenge_words_are_chosen_from_the_pack_at_random() {
        let p = PhrasePack::load(None, "ko").unwrap();
        assert!(p.challenge_words().len() >= 5);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..400 {
            let w = p.random_challenge().unwrap();
            assert!(p.is_challenge_word(w));
            seen.insert(w.to_string());
        }
        // 400 uniform draws from 5 words miss one with probability 5 · (4/5)^400 < 1e-37.
        assert_eq!(seen.len(), p.challenge_words().len());
        let none = "language='x'\napprove=['y']\ndeny=['n']\ncancel=['c']\ndecoys=[]";
        assert_eq!(
            PhrasePack::parse(none, "x").unwrap().random_challenge(),
            None
        );
        let two = "language='x'\napprove=['y']\ndeny=['n']\ncancel=['c']\nchallenge_words=['a b']\ndecoys=[]";
        let e = PhrasePack::parse(two, "two.toml").unwrap_err().to_string();
        assert!(e.contains("more than one word"), "{e}");
    }

    #[test]
    fn bad_packs_are_rejected_with_the_reason() {
        let dup = "language='x'\napprove=['yes']\ndeny=['yes']\ncancel=['c']\ndecoys=[]";
        let e = PhrasePack::parse(dup, "dup.toml").unwrap_err().to_string();
        assert!(
            e.contains("dup.toml") && e.contains("more than once"),
            "{e}"
        );
        let quote = "language='x'\napprove=['ye\"s']\ndeny=['n']\ncancel=['c']\ndecoys=[]";
        let e = PhrasePack::parse(quote, "q.toml").unwrap_err().to_string();
        assert!(e.contains("character"), "{e}");
        let empty = "language='x'\napprove=[]\ndeny=['n']\ncancel=['c']\ndecoys=[]";
        assert!(PhrasePack::parse(empty, "e.toml").is_err());
        let e = PhrasePack::load(None, "xx").unwrap_err().to_string();
        assert!(e.contains("xx"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let e = PhrasePack::load(Some(dir.path()), "ko")
            .unwrap_err()
            .to_string();
        assert!(e.contains("ko.toml"), "{e}");
    }
}
