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
