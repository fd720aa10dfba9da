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
    /// Words left out before a transcript is read: a recognizer without a grammar writes some
    /// that nobody said (Moonshine's "You" before an answer that follows a silence). Single
    /// words, not phrases; none may be an answer, challenge or decoy phrase.
    #[serde(default)]
    ignored_words: Vec<String>,
    /// Spellings a recognizer without a grammar writes for the answers (Moonshine's "Kensel"
    /// for "cancel"), read as those answers; never put into a Vosk grammar, never named.
    #[serde(default)]
    heard_as: HeardAs,
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

/// The `[heard_as]` table of a pack: per answer, the spellings read as it.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeardAs {
    #[serde(default)]
    approve: Vec<String>,
    #[serde(default)]
    deny: Vec<String>,
    #[serde(default)]
    cancel: Vec<String>,
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
    /// Words a transcript is read without (see `ignored_words`).
    ignored: Vec<String>,
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
        check_pack(&file).map_err(err)?;
        let Grammars {
            mut phrases,
            challenge_words,
            grammar,
            challenge_grammar,
        } = grammars(&file).map_err(err)?;
        add_heard_as(&file, &mut phrases).map_err(err)?;
        let max_words = phrases
            .keys()
            .map(|p| p.split(' ').count())
            .max()
            .unwrap_or(1);
        let ignored = ignored_words(&file, &phrases).map_err(err)?;
        let (words, sentences) = spoken_parts(&mut file);
        Ok(PhrasePack {
            language: file.language,
            words,
            sentences,
            phrases,
            ignored,
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

    /// Whether `word` (lowercase) is one the pack leaves out before reading (`ignored_words`).
    pub fn is_ignored(&self, word: &str) -> bool {
        self.ignored.iter().any(|w| w == word)
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
        let words: Vec<&str> = text
            .split(' ')
            .filter(|w| !w.is_empty() && !self.ignored.iter().any(|i| i == w))
            .collect();
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

/// What a pack's phrases make: what each phrase is, the challenge words in the pack's order, the
/// grammar of a prompt without a challenge word and that of one with.
struct Grammars {
    phrases: HashMap<String, Role>,
    challenge_words: Vec<String>,
    grammar: Vec<String>,
    challenge_grammar: Vec<String>,
}

/// The checks of a pack's lists and sentences that serde cannot make; the reason when one fails.
fn check_pack(file: &PackFile) -> Result<(), String> {
    if file.approve.is_empty() || file.deny.is_empty() || file.cancel.is_empty() {
        return Err("`approve`, `deny` and `cancel` each need at least one phrase".into());
    }
    if !(1..=MAX_ANSWER_WEIGHT).contains(&file.answer_weight) {
        return Err(format!(
            "`answer_weight` = {} is outside 1..={MAX_ANSWER_WEIGHT}",
            file.answer_weight
        ));
    }
    check_pack_sentences(&file.question, &file.challenge_hint, &file.challenge_spoken)
}

/// Every phrase of the answer, challenge-word and decoy lists, checked and weighed into the two
/// grammars.
fn grammars(file: &PackFile) -> Result<Grammars, String> {
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
                return Err("an empty phrase".into());
            }
            // Quotes, brackets and backslashes would break Vosk's JSON grammar.
            if let Some(c) = phrase.chars().find(|c| "\"\\[]{}".contains(*c)) {
                return Err(format!("phrase `{raw}` has the character `{c}`"));
            }
            if meaning == Role::Challenge {
                if phrase.contains(' ') {
                    return Err(format!("challenge word `{raw}` is more than one word"));
                }
                challenge_words.push(phrase.clone());
            }
            if phrases.insert(phrase.clone(), meaning).is_some() {
                return Err(format!("phrase `{raw}` appears more than once"));
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
    Ok(Grammars {
        phrases,
        challenge_words,
        grammar,
        challenge_grammar,
    })
}

/// The `[heard_as]` spellings, read as their answers (never put into a grammar).
fn add_heard_as(file: &PackFile, phrases: &mut HashMap<String, Role>) -> Result<(), String> {
    for (answer, list) in [
        (SpokenAnswer::Approve, &file.heard_as.approve),
        (SpokenAnswer::Deny, &file.heard_as.deny),
        (SpokenAnswer::Cancel, &file.heard_as.cancel),
    ] {
        for raw in list {
            let phrase = normalize(raw);
            if phrase.is_empty() {
                return Err("an empty spelling in `heard_as`".into());
            }
            if phrases.insert(phrase, Role::Answer(answer)).is_some() {
                return Err(format!("phrase `{raw}` appears more than once"));
            }
        }
    }
    Ok(())
}

/// The words a transcript is read without: single words, none of them a phrase.
fn ignored_words(file: &PackFile, phrases: &HashMap<String, Role>) -> Result<Vec<String>, String> {
    let mut ignored = Vec::new();
    for raw in &file.ignored_words {
        let word = normalize(raw);
        if word.is_empty() || word.contains(' ') {
            return Err(format!("ignored word `{raw}` is not one word"));
        }
        if phrases.contains_key(&word) {
            return Err(format!("ignored word `{raw}` is also a phrase"));
        }
        ignored.push(word);
    }
    Ok(ignored)
}

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

/// Lowercase with single spaces, the form Vosk prints.
fn normalize(s: &str) -> String {
    s.split_whitespace()
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests;
