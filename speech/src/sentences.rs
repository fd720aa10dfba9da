//! What a phrase pack names and says: its answer words (the first phrase of each answer list),
//! filled into the dialog's and the question's templates, and its spoken sentences.

/// The words the dialog and the spoken question name as the answers: the first phrase of each
/// of the pack's lists, so every word named is one the recognizer listens for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerWords {
    pub approve: String,
    pub deny: String,
    pub cancel: String,
}

impl AnswerWords {
    /// `template` with `{approve}`, `{deny}` and `{cancel}` replaced by the words.
    pub fn fill(&self, template: &str) -> String {
        template
            .replace("{approve}", &self.approve)
            .replace("{deny}", &self.deny)
            .replace("{cancel}", &self.cancel)
    }
}

/// The placeholders each sentence is filled with: the answer words everywhere, the action in
/// the question and the shown word in the spoken challenge. The same for a pack's sentences and
/// for the `[speech]` keys that override them.
pub const QUESTION_PLACEHOLDERS: &[&str] = &["action", "approve", "deny", "cancel"];
pub const CHALLENGE_HINT_PLACEHOLDERS: &[&str] = &["approve", "deny", "cancel"];
pub const CHALLENGE_SPOKEN_PLACEHOLDERS: &[&str] = &["word", "approve", "deny", "cancel"];

/// Refuses a sentence (`key`: `template`) that names a placeholder it is not filled with, with
/// the reason naming the key.
pub(crate) fn check_sentences(sentences: [(&str, &str, &[&str]); 3]) -> Result<(), String> {
    for (key, template, allowed) in sentences {
        pcp_template::check_placeholders(template, allowed)
            .map_err(|reason| format!("`{key}`: {reason}"))?;
    }
    Ok(())
}

/// Refuses a pack's sentence that names a placeholder it is not filled with.
pub(crate) fn check_pack_sentences(
    question: &str,
    challenge_hint: &str,
    challenge_spoken: &str,
) -> Result<(), String> {
    check_sentences([
        ("question", question, QUESTION_PLACEHOLDERS),
        (
            "challenge_hint",
            challenge_hint,
            CHALLENGE_HINT_PLACEHOLDERS,
        ),
        (
            "challenge_spoken",
            challenge_spoken,
            CHALLENGE_SPOKEN_PLACEHOLDERS,
        ),
    ])
}

/// What a pack says aloud, each with the answer words filled in (`{action}` and `{word}` are
/// left for the prompt).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackSentences {
    pub voice: String,
    pub question: String,
    pub challenge_hint: String,
    pub challenge_spoken: String,
}

impl PackSentences {
    /// A pack's `voice`, `question`, `challenge_hint` and `challenge_spoken` as written (empty:
    /// a neutral default), with `words` filled in; the voice defaults to the language code.
    pub(crate) fn of(
        words: &AnswerWords,
        language: &str,
        [voice, question, hint, spoken]: [String; 4],
    ) -> PackSentences {
        let or = |text: String, default: &str| {
            words.fill(if text.trim().is_empty() {
                default
            } else {
                &text
            })
        };
        PackSentences {
            voice: if voice.trim().is_empty() {
                language.to_string()
            } else {
                voice
            },
            question: or(question, "{action}. {approve} / {deny} / {cancel}?"),
            challenge_hint: or(hint, "{approve} + ?"),
            challenge_spoken: or(spoken, "{approve}, {word}."),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use crate::phrases::PhrasePack;

    const PACK: &str = "language='x'\napprove=['y']\ndeny=['n']\ncancel=['c']\ndecoys=[]\n";

    #[test]
    fn a_pack_sentence_with_a_mistyped_placeholder_is_refused_naming_it() {
        let bad = format!("{PACK}question = '{{action}}? say {{aprove}}'\n");
        let e = PhrasePack::parse(&bad, "x.toml").unwrap_err().to_string();
        assert!(
            e.contains("x.toml") && e.contains("`question`: `{aprove}` is not one of"),
            "{e}"
        );
        let bad = format!("{PACK}challenge_hint = 'say {{word}}'\n");
        let e = PhrasePack::parse(&bad, "x.toml").unwrap_err().to_string();
        assert!(e.contains("`challenge_hint`: `{word}`"), "{e}");
        let fine = format!("{PACK}challenge_spoken = '{{approve}}, {{word}} {{ }}'\n");
        let pack = PhrasePack::parse(&fine, "x.toml").unwrap();
        assert_eq!(pack.sentences().challenge_spoken, "y, {word} { }");
    }

    #[test]
    fn a_speech_config_of_its_own_checks_its_templates_too() {
        // pcp-listen reads `[speech]` without the config crate: the check is the speech
        // crate's own.
        let e = Config::from_toml("challenge_spoken = '{approve} {wrod}'", "listen.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`challenge_spoken`: `{wrod}` is not one of its placeholders"),
            "{e}"
        );
        Config::from_toml("question_template = '{action}? {approve}'", "listen.toml").unwrap();
    }
}
