//! What a phrase pack names and says: its answer words (the first phrase of each answer list),
//! filled into the dialog's and the question's templates, and its spoken sentences; and what a
//! challenge prompt adds to its question (the hint, or the word read aloud).

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

impl crate::config::Config {
    /// Whether prompts of the risk class named `class` (the gate's lowercase name) show a
    /// challenge word.
    pub fn challenges(&self, class: &str) -> bool {
        self.challenge.iter().any(|c| c == class)
    }

    /// What a challenge prompt adds to its question: the hint, or with `speak_challenge` the
    /// spoken form naming `word`.
    pub fn challenge_question(&self, word: &str) -> String {
        self.challenge_question_read(word, self.speak_challenge)
    }

    /// What a challenge prompt adds to its question: with `aloud` (a screen reader runs, or
    /// `speak_challenge`), the spoken form naming `word`; else the hint.
    pub fn challenge_question_read(&self, word: &str, aloud: bool) -> String {
        if aloud {
            self.challenge_spoken.replace("{word}", word)
        } else {
            self.challenge_hint.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use crate::phrases::PhrasePack;

    const PACK: &str = "language='x'\napprove=['y']\ndeny=['n']\ncancel=['c']\ndecoys=[]\n";

    #[test]
    fn the_challenge_word_is_spoken_only_when_configured_or_a_screen_reader_runs() {
        let c = Config::default();
        assert!(c.challenges("destructive") && c.challenges("system"));
        assert!(!c.challenges("routine") && !c.challenges("privileged"));
        assert!(c.speak_challenge_for_screen_readers);
        let hinted = Config {
            challenge_hint: "say yes and the word".into(),
            challenge_spoken: "say yes, {word}".into(),
            ..Config::default()
        };
        assert!(!hinted.challenge_question("기차").contains("기차"));
        // Read aloud when asked (a screen reader runs), whatever `speak_challenge` says.
        let aloud = hinted.challenge_question_read("기차", true);
        assert_eq!(aloud, "say yes, 기차");
        let spoken = Config {
            speak_challenge: true,
            ..hinted
        };
        assert_eq!(spoken.challenge_question("기차"), "say yes, 기차");
    }

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
