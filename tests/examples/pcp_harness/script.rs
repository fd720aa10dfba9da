//! The scripted user's file (`--user SCRIPT.toml`): for each capability name or glob, what the
//! user does when its dialog appears (approve, deny, allow until logout, say a phrase, double-tap,
//! nothing) and after how long. Every mistake is reported as `FILE:LINE:COLUMN: what`.

use std::ops::Range;
use std::path::Path;

use pcp_gate::rules::Glob;
use serde::Deserialize;
use serde_json::Value;
use toml::Spanned;

/// How long the user reads a dialog before each action when the script does not say: past the
/// default click guard (`[overlay] guard_delay_ms` plus one early-press extension).
pub const DEFAULT_DELAY_MS: u64 = 1400;

/// How long a press-and-hold approval is held when the script does not say: past the default
/// `[overlay] hold_to_approve_ms` (800).
pub const DEFAULT_HOLD_MS: u64 = 1200;

/// How long a `say` waits for the compositor to hear the phrase when the script does not say.
pub const DEFAULT_SAY_WAIT_MS: u64 = 15_000;

/// What the scripted user does, in order, once the dialog is up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Clicks Approve once the click guard is armed (holds it when the plan asks for
    /// press-and-hold).
    Approve,
    /// Clicks Deny.
    Deny,
    /// Clicks "Allow until logout" (when the dialog offers it).
    AllowSession,
    /// Speaks the answer's phrase into the microphone; the action ends when the compositor has
    /// heard an answer or after `say_wait_ms`.
    Say,
    /// Taps the touch screen twice beside the dialog (the haptic answer).
    DoubleTap,
    /// Types the answer's next `type` text into the dialog's entry (a password) and presses
    /// Enter: gives the dialog the keyboard with the focus shortcut first (the explicit act the
    /// entry needs), then waits for the front end's verdict.
    Type,
    /// Clicks the entry's account row (shown when polkitd offers several accounts): the next
    /// `type` answers as the next account. Waits until the row is drawn.
    NextAccount,
    /// Writes a PNG of every output now (with `--capture`), each a `capture` line carrying the
    /// dialog's text as drawn in it.
    Capture,
    /// Does nothing: the prompt runs to its timeout.
    Nothing,
}

impl Action {
    /// The action's name in scripts, on stdin and in the JSON lines.
    pub fn name(self) -> &'static str {
        match self {
            Action::Approve => "approve",
            Action::Deny => "deny",
            Action::AllowSession => "allow-session",
            Action::Say => "say",
            Action::DoubleTap => "double-tap",
            Action::Type => "type",
            Action::NextAccount => "next-account",
            Action::Capture => "capture",
            Action::Nothing => "nothing",
        }
    }

    /// The action named `name`, if any.
    pub fn parse(name: &str) -> Option<Action> {
        [
            Action::Approve,
            Action::Deny,
            Action::AllowSession,
            Action::Say,
            Action::DoubleTap,
            Action::Type,
            Action::NextAccount,
            Action::Capture,
            Action::Nothing,
        ]
        .into_iter()
        .find(|a| a.name() == name)
    }
}

/// What the user does for the capabilities one glob matches.
#[derive(Debug, Clone)]
pub struct Answer {
    pub capability: Glob,
    /// Globs the named parameters' values must match too (a string as it is, anything else as
    /// JSON text); a parameter the intent lacks does not match.
    pub params: Vec<(String, Glob)>,
    pub actions: Vec<Action>,
    /// The phrase `say` speaks; `{challenge}` stands for the challenge word the dialog shows.
    pub say: Option<String>,
    /// What each `type` action types, in order.
    pub typed: Vec<String>,
    pub delay_ms: u64,
}

/// A whole scripted user.
#[derive(Debug, Clone)]
pub struct Script {
    /// In file order: the first whose glob matches answers.
    pub answers: Vec<Answer>,
    pub hold_ms: u64,
    pub say_wait_ms: u64,
}

/// The placeholder a phrase uses for the dialog's challenge word.
pub const CHALLENGE: &str = "{challenge}";

impl Script {
    /// A user who does nothing at all (every prompt times out, or waits for stdin).
    pub fn idle() -> Script {
        Script {
            answers: Vec::new(),
            hold_ms: DEFAULT_HOLD_MS,
            say_wait_ms: DEFAULT_SAY_WAIT_MS,
        }
    }

    /// Reads and checks a script file.
    pub fn load(path: &Path) -> Result<Script, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read the script: {e}", path.display()))?;
        Script::parse(&text, &path.display().to_string())
    }

    /// Parses and checks script text; errors name `origin:LINE:COLUMN`.
    pub fn parse(text: &str, origin: &str) -> Result<Script, String> {
        let at = |span: Option<Range<usize>>, message: &str| match span {
            Some(span) => {
                let (line, column) = line_column(text, span.start);
                format!("{origin}:{line}:{column}: {message}")
            }
            None => format!("{origin}: {message}"),
        };
        let file: ScriptFile = toml::from_str(text).map_err(|e| at(e.span(), e.message()))?;
        let defaults = file.user.unwrap_or_default();
        let mut answers = Vec::new();
        for answer in file.answer {
            let pattern = answer.capability.get_ref();
            if pattern.trim().is_empty() {
                return Err(at(
                    Some(answer.capability.span()),
                    "`capability` is empty: give a capability name or a glob such as \"file.*\"",
                ));
            }
            let names = match answer.actions.get_ref() {
                OneOrMany::One(name) => vec![name.clone()],
                OneOrMany::Many(names) => names.clone(),
            };
            let do_span = Some(answer.actions.span());
            if names.is_empty() {
                return Err(at(do_span, "`do` is empty: give at least one action"));
            }
            let mut actions = Vec::new();
            for name in &names {
                let action = Action::parse(name).ok_or_else(|| {
                    at(
                        do_span.clone(),
                        &format!(
                            "unknown action '{name}': expected approve, deny, allow-session, \
                             say, double-tap, type, next-account, capture or nothing"
                        ),
                    )
                })?;
                actions.push(action);
            }
            if actions.contains(&Action::Nothing) && actions.len() > 1 {
                return Err(at(
                    do_span,
                    "`nothing` cannot be combined with other actions",
                ));
            }
            let says = actions.contains(&Action::Say);
            let say = match (&answer.say, says) {
                (None, true) => {
                    return Err(at(
                        do_span,
                        "the `say` action needs a `say = \"phrase\"` in the same [[answer]]",
                    ));
                }
                (Some(phrase), false) => {
                    return Err(at(
                        Some(phrase.span()),
                        "a `say` phrase without the `say` action in `do` would never be spoken",
                    ));
                }
                (Some(phrase), true) if phrase.get_ref().trim().is_empty() => {
                    return Err(at(Some(phrase.span()), "the `say` phrase is empty"));
                }
                (phrase, _) => phrase.as_ref().map(|p| p.get_ref().clone()),
            };
            let typed = typed_texts(&answer, &actions, &at, do_span.clone())?;
            let params = answer
                .params
                .unwrap_or_default()
                .into_iter()
                .map(|(name, glob)| (name, Glob::new(glob.get_ref())))
                .collect();
            answers.push(Answer {
                capability: Glob::new(pattern),
                params,
                actions,
                say,
                typed,
                delay_ms: answer
                    .delay_ms
                    .or(defaults.delay_ms)
                    .unwrap_or(DEFAULT_DELAY_MS),
            });
        }
        Ok(Script {
            answers,
            hold_ms: defaults.hold_ms.unwrap_or(DEFAULT_HOLD_MS),
            say_wait_ms: defaults.say_wait_ms.unwrap_or(DEFAULT_SAY_WAIT_MS),
        })
    }

    /// The answer for `capability` with `params`: the first whose globs all match.
    pub fn answer_for(&self, capability: &str, params: &Value) -> Option<&Answer> {
        self.answers.iter().find(|a| {
            a.capability.matches(capability)
                && a.params.iter().all(|(name, glob)| match params.get(name) {
                    Some(Value::String(text)) => glob.matches(text),
                    Some(other) => glob.matches(&other.to_string()),
                    None => false,
                })
        })
    }

    /// Whether any answer speaks (the harness then loads the voice model).
    pub fn speaks(&self) -> bool {
        self.answers
            .iter()
            .any(|a| a.actions.contains(&Action::Say))
    }
}

/// The texts of an answer's `type` actions: one a `type` action (a single text serves them
/// all), each typeable on the harness's keyboard (US layout).
fn typed_texts(
    answer: &AnswerFile,
    actions: &[Action],
    at: &impl Fn(Option<Range<usize>>, &str) -> String,
    do_span: Option<Range<usize>>,
) -> Result<Vec<String>, String> {
    let types = actions.iter().filter(|a| **a == Action::Type).count();
    let Some(texts) = &answer.typed else {
        if types > 0 {
            return Err(at(
                do_span,
                "the `type` action needs a `type = \"text\"` in the same [[answer]]",
            ));
        }
        return Ok(Vec::new());
    };
    let span = Some(texts.span());
    let texts = match texts.get_ref() {
        OneOrMany::One(text) => vec![text.clone(); types.max(1)],
        OneOrMany::Many(list) => list.clone(),
    };
    if types == 0 {
        return Err(at(
            span,
            "a `type` text without the `type` action in `do` would never be typed",
        ));
    }
    if texts.len() != types {
        return Err(at(
            span,
            &format!(
                "{} texts for {types} `type` actions: give one text, or one for each",
                texts.len()
            ),
        ));
    }
    for text in &texts {
        if let Some(c) = text.chars().find(|c| key_of(*c).is_none()) {
            return Err(at(
                span,
                &format!(
                    "{c:?} cannot be typed on the harness's keyboard (US layout, printable ASCII)"
                ),
            ));
        }
    }
    Ok(texts)
}

/// The evdev key code that types `c` on a US keyboard, and whether Shift is held for it.
pub fn key_of(c: char) -> Option<(u32, bool)> {
    const ROWS: [(&str, &str, u32); 4] = [
        ("`1234567890-=", "~!@#$%^&*()_+", 41),
        ("qwertyuiop[]\\", "QWERTYUIOP{}|", 16),
        ("asdfghjkl;'", "ASDFGHJKL:\"", 30),
        ("zxcvbnm,./", "ZXCVBNM<>?", 44),
    ];
    if c == ' ' {
        return Some((57, false));
    }
    for (plain, shifted, first) in ROWS {
        for (row, shift) in [(plain, false), (shifted, true)] {
            if let Some(i) = row.chars().position(|k| k == c) {
                // The first row starts with grave (41), then 1 (2) onwards.
                let code = match (first, i) {
                    (41, 0) => 41,
                    (41, i) => 1 + i as u32,
                    (16, 12) => 43,
                    (first, i) => first + i as u32,
                };
                return Some((code, shift));
            }
        }
    }
    None
}

/// The phrase to speak, with `{challenge}` replaced by the word the dialog shows (nothing when
/// it shows none).
pub fn phrase_for(phrase: &str, challenge: Option<&str>) -> String {
    phrase
        .replace(CHALLENGE, challenge.unwrap_or(""))
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptFile {
    user: Option<Defaults>,
    #[serde(default)]
    answer: Vec<AnswerFile>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Defaults {
    delay_ms: Option<u64>,
    hold_ms: Option<u64>,
    say_wait_ms: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AnswerFile {
    capability: Spanned<String>,
    #[serde(rename = "do")]
    actions: Spanned<OneOrMany>,
    say: Option<Spanned<String>>,
    #[serde(rename = "type")]
    typed: Option<Spanned<OneOrMany>>,
    delay_ms: Option<u64>,
    params: Option<std::collections::BTreeMap<String, Spanned<String>>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_reads_in_order_with_defaults_and_globs() {
        let s = Script::parse(
            "[user]\ndelay_ms = 900\n\n[[answer]]\ncapability = \"window.*\"\ndo = \"approve\"\n\n\
             [[answer]]\ncapability = \"file.delete\"\ndo = [\"say\", \"approve\"]\n\
             say = \"네 {challenge}\"\ndelay_ms = 2000\n\n[[answer]]\ncapability = \"*\"\n\
             do = \"nothing\"\n",
            "user.toml",
        )
        .unwrap();
        let none = Value::Null;
        let a = s.answer_for("window.move", &none).unwrap();
        assert_eq!(
            (a.actions.as_slice(), a.delay_ms),
            (&[Action::Approve][..], 900)
        );
        let d = s.answer_for("file.delete", &none).unwrap();
        assert_eq!(d.actions, [Action::Say, Action::Approve]);
        assert_eq!(d.delay_ms, 2000);
        assert_eq!(
            s.answer_for("session.logout", &none).unwrap().actions,
            [Action::Nothing]
        );
        assert!(s.speaks());
        assert_eq!(s.hold_ms, DEFAULT_HOLD_MS);
        assert_eq!(
            phrase_for(d.say.as_deref().unwrap(), Some("바다")),
            "네 바다"
        );
        assert_eq!(phrase_for(d.say.as_deref().unwrap(), None), "네");
    }

    fn error(text: &str) -> String {
        Script::parse(text, "user.toml").unwrap_err()
    }

    #[test]
    fn parameter_globs_narrow_an_answer() {
        use serde_json::json;
        let s = Script::parse(
            "[[answer]]\ncapability = \"file.delete\"\ndo = \"deny\"\n\
             params = { path = \"/etc/*\", force = \"true\" }\n\n\
             [[answer]]\ncapability = \"file.delete\"\ndo = \"approve\"\n",
            "user.toml",
        )
        .unwrap();
        let answer = |params: Value| s.answer_for("file.delete", &params).unwrap().actions[0];
        assert_eq!(
            answer(json!({"path": "/etc/passwd", "force": true})),
            Action::Deny
        );
        assert_eq!(answer(json!({"path": "/etc/passwd"})), Action::Approve);
        assert_eq!(
            answer(json!({"path": "/tmp/x", "force": true})),
            Action::Approve
        );
    }

    #[test]
    fn an_unknown_action_is_named_at_its_line_and_column() {
        let e = error("[[answer]]\ncapability = \"file.*\"\ndo = [\"approve\", \"maybe\"]\n");
        assert!(
            e.starts_with("user.toml:3:6: unknown action 'maybe'"),
            "{e}"
        );
    }

    #[test]
    fn a_toml_mistake_is_named_at_its_line_and_column() {
        let e = error("[[answer]]\ncapability = \"file.*\"\ndo = approve\n");
        assert!(e.starts_with("user.toml:3:6:"), "{e}");
        let e = error("[[answer]]\ncapability = \"file.*\"\ndo = \"deny\"\nwhen = 3\n");
        assert!(e.starts_with("user.toml:4:1:") && e.contains("when"), "{e}");
        let e = error("[[answer]]\ndo = \"deny\"\n");
        assert!(e.contains("capability"), "{e}");
    }

    #[test]
    fn say_needs_its_phrase_and_a_phrase_needs_say() {
        let e = error("[[answer]]\ncapability = \"x\"\ndo = \"say\"\n");
        assert!(
            e.starts_with("user.toml:3:6:") && e.contains("say = "),
            "{e}"
        );
        let e = error("[[answer]]\ncapability = \"x\"\ndo = \"approve\"\nsay = \"네\"\n");
        assert!(e.starts_with("user.toml:4:7:"), "{e}");
        let e = error("[[answer]]\ncapability = \"\"\ndo = \"deny\"\n");
        assert!(e.starts_with("user.toml:2:14:"), "{e}");
        let e = error("[[answer]]\ncapability = \"x\"\ndo = [\"nothing\", \"deny\"]\n");
        assert!(e.contains("`nothing` cannot be combined"), "{e}");
    }

    #[test]
    fn type_needs_its_text_and_each_character_has_a_key() {
        let s = Script::parse(
            "[[answer]]\ncapability = \"polkit.*\"\ndo = [\"type\", \"type\", \"approve\"]\n\
             type = [\"wrong\", \"Pw-1\"]\n",
            "user.toml",
        )
        .unwrap();
        let a = s.answer_for("polkit.x", &Value::Null).unwrap();
        assert_eq!(a.typed, ["wrong", "Pw-1"]);
        let e = error("[[answer]]\ncapability = \"x\"\ndo = \"type\"\n");
        assert!(
            e.starts_with("user.toml:3:6:") && e.contains("type = "),
            "{e}"
        );
        let e = error("[[answer]]\ncapability = \"x\"\ndo = \"deny\"\ntype = \"pw\"\n");
        assert!(
            e.starts_with("user.toml:4:8:") && e.contains("never be typed"),
            "{e}"
        );
        let e = error("[[answer]]\ncapability = \"x\"\ndo = \"type\"\ntype = \"pässword\"\n");
        assert!(e.contains("'ä' cannot be typed"), "{e}");
        let e = error("[[answer]]\ncapability = \"x\"\ndo = \"type\"\ntype = [\"a\", \"b\"]\n");
        assert!(e.contains("2 texts for 1 `type` actions"), "{e}");
        assert_eq!(key_of('a'), Some((30, false)));
        assert_eq!(key_of('A'), Some((30, true)));
        assert_eq!(key_of('1'), Some((2, false)));
        assert_eq!(key_of('0'), Some((11, false)));
        assert_eq!(key_of('-'), Some((12, false)));
        assert_eq!(key_of('_'), Some((12, true)));
        assert_eq!(key_of('\\'), Some((43, false)));
        assert_eq!(key_of('p'), Some((25, false)));
        assert_eq!(key_of('m'), Some((50, false)));
        assert_eq!(key_of('/'), Some((53, false)));
        assert_eq!(key_of('\''), Some((40, false)));
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        assert_eq!(line_column("가나\nab", 7), (2, 1));
        assert_eq!(line_column("가나 x", 7), (1, 4));
    }
}
