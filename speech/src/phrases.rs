//! Phrase packs: per language, the phrases that mean approve, deny and cancel, plus decoy words
//! that soak up other speech (a grammar without decoys forces every sound onto an answer). Owns
//! the grammar handed to Vosk and the mapping from a transcript to an answer.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::SpeechError;

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
    decoys: Vec<String>,
}

/// One language's phrases.
#[derive(Debug, Clone)]
pub struct PhrasePack {
    language: String,
    /// Every grammar phrase (answers and decoys) → its meaning (`None` for decoys).
    phrases: HashMap<String, Option<SpokenAnswer>>,
    /// Longest phrase in words, for greedy matching.
    max_words: usize,
    grammar: Vec<String>,
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
        let file: PackFile = toml::from_str(text).map_err(|e| err(e.to_string()))?;
        if file.approve.is_empty() || file.deny.is_empty() || file.cancel.is_empty() {
            return Err(err(
                "`approve`, `deny` and `cancel` each need at least one phrase".into(),
            ));
        }
        let mut phrases = HashMap::new();
        let classes = [
            (Some(SpokenAnswer::Approve), &file.approve),
            (Some(SpokenAnswer::Deny), &file.deny),
            (Some(SpokenAnswer::Cancel), &file.cancel),
            (None, &file.decoys),
        ];
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
                if phrases.insert(phrase.clone(), meaning).is_some() {
                    return Err(err(format!("phrase `{raw}` appears more than once")));
                }
                grammar.push(phrase);
            }
        }
        let max_words = phrases
            .keys()
            .map(|p| p.split(' ').count())
            .max()
            .unwrap_or(1);
        Ok(PhrasePack {
            language: file.language,
            phrases,
            max_words,
            grammar,
        })
    }

    /// The pack's language code.
    pub fn language(&self) -> &str {
        &self.language
    }

    /// Every phrase, answers first, for `Recognizer::new_with_grammar`.
    pub fn grammar(&self) -> &[String] {
        &self.grammar
    }

    /// Every distinct word of the grammar (to check against the model's vocabulary).
    pub fn words(&self) -> Vec<&str> {
        let mut words: Vec<&str> = self.grammar.iter().flat_map(|p| p.split(' ')).collect();
        words.sort_unstable();
        words.dedup();
        words
    }

    /// What a transcript means: `Some` only when it is made of answer phrases that all agree.
    /// Any decoy in it means other speech was heard, so nothing is decided ("hello yes" is not a
    /// clear answer); "yes no" or "네 아니요" decide nothing either.
    pub fn classify(&self, transcript: &str) -> Option<SpokenAnswer> {
        let text = normalize(transcript);
        let words: Vec<&str> = text.split(' ').filter(|w| !w.is_empty()).collect();
        let mut found: Option<SpokenAnswer> = None;
        let mut i = 0;
        while i < words.len() {
            // Greedy longest match, so "never mind" is one phrase and not "never" + "mind".
            let longest = (1..=self.max_words.min(words.len() - i))
                .rev()
                .find_map(|n| {
                    let candidate = words[i..i + n].join(" ");
                    self.phrases.get(&candidate).map(|meaning| (n, *meaning))
                });
            match longest {
                Some((n, meaning)) => {
                    let answer = meaning?;
                    if found.is_some_and(|f| f != answer) {
                        return None;
                    }
                    found = Some(answer);
                    i += n;
                }
                // A word outside the grammar (only possible for text from elsewhere): skip it.
                None => i += 1,
            }
        }
        found
    }
}

/// Lowercase with single spaces, the form Vosk prints.
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
        for s in ["네", "예"] {
            assert_eq!(p.classify(s), Some(SpokenAnswer::Approve), "{s}");
        }
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
        for decoy in ko.grammar().iter().filter(|g| ko.phrases[*g].is_none()) {
            assert_eq!(ko.classify(decoy), None, "decoy {decoy}");
        }
    }

    #[test]
    fn every_pack_has_decoys_and_an_answer_first_grammar() {
        for (lang, _) in BUILTIN {
            let p = PhrasePack::load(None, lang).unwrap();
            let decoys = p.phrases.values().filter(|m| m.is_none()).count();
            assert!(decoys >= 10, "{lang} has only {decoys} decoys");
            assert!(p.phrases[&p.grammar()[0]].is_some());
        }
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
