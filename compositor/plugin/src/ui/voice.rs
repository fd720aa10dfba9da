//! The voice step of the shown prompt: the listener started when its plan has an unanswered
//! voice step (the engine speaks the question and listens on its own thread), its events turned
//! into the dialog's "Listening…" state and level meter and into [`PromptEvent`]s. Timeouts are
//! the gate's: a listener's own `Timeout` decides nothing here. A prompt of a risk class in
//! `[speech] challenge` gets a challenge word when its question is asked: the dialog shows it and
//! only an approval that says it counts.

use std::sync::Arc;

use pcp_gate::{Answer, IntentId, Modality, ModalityEvent, Prompt};
use pcp_overlay::{ConfirmDialog, VoiceState};
use pcp_speech::{Listening, SpeechEvent, SpokenAnswer, Voice};

use crate::PromptEvent;

/// The speech engine (none when voice is disabled) and the prompt being listened for.
pub(crate) struct VoiceStep {
    engine: Option<Arc<dyn Voice>>,
    listening: Option<(IntentId, Box<dyn Listening>)>,
    /// The last prompt a question was asked for: a prompt is asked once, so a listener that
    /// ended is not started again (the gate's own deadline decides).
    asked: Option<IntentId>,
    /// The challenge word of the prompt asked last, if its risk class has one, and whether its
    /// question read the word aloud (a screen reader was running).
    challenge: Option<(IntentId, String, bool)>,
    /// The last prompt whose listening was logged: once per prompt, whatever the dialog showed
    /// before (its voice state starts as "Listening").
    announced: Option<IntentId>,
    /// The prompt for which something was said that decided nothing: its dialog keeps saying
    /// "didn't catch that" while it listens on.
    missed: Option<IntentId>,
}

/// `config` with the answer words of `engine`'s phrase pack in its texts (unchanged without an
/// engine or a pack: no voice row or challenge line is shown then).
pub(crate) fn with_answer_words(
    config: pcp_overlay::Config,
    engine: Option<&Arc<dyn Voice>>,
) -> pcp_overlay::Config {
    match engine.and_then(|e| e.answer_words()) {
        Some(words) => pcp_overlay::Config {
            text: config
                .text
                .with_answer_words(&words.approve, &words.deny, &words.cancel),
            ..config
        },
        None => config,
    }
}

/// The line a prompt shows when its class needed voice and voice is unavailable (`why`),
/// from `[overlay.text]`; `language` is the speech config's.
pub(crate) fn unavailable_line(
    why: &pcp_speech::Availability,
    language: Option<&str>,
    text: &pcp_overlay::config::Strings,
) -> String {
    match why {
        Err(pcp_speech::Unavailable::NoModel(_)) => text
            .voice_no_model
            .replace("{language}", language.unwrap_or("?")),
        Err(pcp_speech::Unavailable::NoInputDevice(_)) => text.voice_no_microphone.clone(),
        // The words themselves cannot be drawn: the line names the language instead.
        Err(pcp_speech::Unavailable::Undrawable { package, .. }) => text
            .voice_no_font
            .replace("{language}", language.unwrap_or("?"))
            .replace("{package}", package),
        _ => text.voice_unavailable.clone(),
    }
}

/// Whether `prompt` still waits for a spoken answer.
pub(crate) fn wants_voice(prompt: &Prompt) -> bool {
    prompt.plan.modalities.contains(&Modality::Voice) && !prompt.answered(Modality::Voice)
}

impl VoiceStep {
    pub fn new(engine: Option<Arc<dyn Voice>>) -> VoiceStep {
        VoiceStep {
            engine,
            listening: None,
            asked: None,
            challenge: None,
            announced: None,
            missed: None,
        }
    }

    /// The challenge word the dialog of `prompt` shows (chosen when its question was asked).
    pub fn challenge_of(&self, prompt: IntentId) -> Option<&str> {
        self.challenge
            .as_ref()
            .filter(|(id, _, _)| *id == prompt)
            .map(|(_, word, _)| word.as_str())
    }

    /// Whether the question of `prompt` read its challenge word aloud.
    #[cfg(feature = "a11y")]
    pub fn challenge_read_aloud(&self, prompt: IntentId) -> bool {
        self.challenge
            .as_ref()
            .is_some_and(|(id, _, aloud)| *id == prompt && *aloud)
    }

    pub fn engine(&self) -> Option<&Arc<dyn Voice>> {
        self.engine.as_ref()
    }

    /// Whether a listener runs (its events are polled on the plugin's timer).
    pub fn is_listening(&self) -> bool {
        self.listening.is_some()
    }

    /// Stops listening (the microphone closes).
    pub fn stop(&mut self) {
        if let Some((id, mut listener)) = self.listening.take() {
            tracing::debug!(?id, "voice listener stopped");
            listener.cancel();
        }
    }

    /// Starts listening when `prompt` waits for a spoken answer and no listener runs for it yet;
    /// stops a listener whose prompt ended or no longer asks for voice. A voice step with no
    /// engine is lost (the prompt falls back to press-and-hold). The question says the action
    /// as the dialog shows it (`overlay`'s visible, capped text): nothing hidden, nothing
    /// unbounded handed to the synthesizer. While `screen_reader` says a screen reader runs
    /// (and `[speech] speak_challenge_for_screen_readers` allows), a challenge word is read
    /// aloud in the question: the user hears the dialog instead of seeing it, and the word is
    /// never put on the accessibility bus.
    pub fn sync(
        &mut self,
        prompt: Option<&Prompt>,
        overlay: &pcp_overlay::Config,
        screen_reader: bool,
    ) -> Vec<PromptEvent> {
        let want = prompt.filter(|p| wants_voice(p));
        let current = self.listening.as_ref().map(|(id, _)| *id);
        match (want, current) {
            (Some(p), Some(id)) if p.id == id => {}
            (Some(p), None) if self.asked == Some(p.id) => {}
            (Some(p), _) => {
                self.stop();
                let Some(engine) = &self.engine else {
                    tracing::warn!("voice was planned but there is no speech engine");
                    return vec![lost(p.id)];
                };
                let question = engine
                    .config()
                    .question(&overlay.visible_text(&p.description));
                self.asked = Some(p.id);
                // A class that needs a word and cannot get one loses its voice step (fail
                // closed): it never listens for a bare "yes".
                let word = match engine.challenge_for(p.risk.as_str()) {
                    Ok(word) => word,
                    Err(e) => {
                        tracing::warn!("no challenge word for a {} prompt: {e}", p.risk.as_str());
                        self.challenge = None;
                        return vec![lost(p.id)];
                    }
                };
                let aloud = screen_reader && engine.config().speak_challenge_for_screen_readers;
                let listener = match word.as_deref() {
                    Some(w) if aloud => {
                        tracing::info!("a screen reader runs: the challenge word is read aloud");
                        engine.ask_reading_challenge(&question, w)
                    }
                    w => engine.ask_with_challenge(&question, w),
                };
                self.listening = Some((p.id, listener));
                let aloud = aloud || engine.config().speak_challenge;
                self.challenge = word.map(|w| (p.id, w, aloud));
            }
            (None, Some(_)) => self.stop(),
            (None, None) => {}
        }
        Vec::new()
    }

    /// Takes every event the listener has for the shown prompt `shown`, updating `dialog`.
    pub fn poll(
        &mut self,
        shown: Option<IntentId>,
        dialog: &mut ConfirmDialog,
    ) -> Vec<PromptEvent> {
        let mut events = Vec::new();
        loop {
            let Some((id, listener)) = self.listening.as_mut() else {
                return events;
            };
            let id = *id;
            let Some(event) = listener.poll() else {
                return events;
            };
            if listener.is_done() {
                self.listening = None;
            }
            if shown != Some(id) {
                // The prompt ended between polls: nothing to feed.
                self.stop();
                return events;
            }
            match event {
                SpeechEvent::Listening { level } => {
                    if self.announced != Some(id) {
                        self.announced = Some(id);
                        tracing::info!("listening for a spoken answer");
                    }
                    let state = if self.missed == Some(id) {
                        VoiceState::Missed
                    } else {
                        VoiceState::Listening
                    };
                    dialog.set_voice(state, level);
                }
                SpeechEvent::Missed { transcript } => {
                    tracing::info!(transcript, "voice: heard something that is not an answer");
                    self.missed = Some(id);
                    dialog.set_voice(VoiceState::Missed, 0.0);
                }
                SpeechEvent::Heard {
                    answer,
                    transcript,
                    utterances,
                } => {
                    tracing::info!(?answer, transcript, utterances, "voice answer heard");
                    dialog.set_voice(VoiceState::Heard, 0.0);
                    // A spoken cancel withdraws consent: for the gate it is a deny.
                    let answer = match answer {
                        SpokenAnswer::Approve => Answer::Approve,
                        SpokenAnswer::Deny | SpokenAnswer::Cancel => Answer::Deny,
                    };
                    events.push(PromptEvent {
                        prompt: id,
                        event: ModalityEvent::Spoken { answer, utterances },
                    });
                }
                // The gate's voice deadline decides; deciding here too could race it.
                SpeechEvent::Timeout => {
                    tracing::info!("the voice listener heard no answer; the gate's timeout decides")
                }
                SpeechEvent::Unavailable { reason } => {
                    tracing::warn!("voice lost mid-prompt, falling back to visual: {reason}");
                    dialog.set_voice(VoiceState::Unavailable, 0.0);
                    events.push(lost(id));
                }
            }
        }
    }

    /// The microphone or model went away while `prompt` waits for its spoken answer.
    pub fn device_lost(&mut self, prompt: IntentId, dialog: &mut ConfirmDialog) -> PromptEvent {
        self.stop();
        dialog.set_voice(VoiceState::Unavailable, 0.0);
        lost(prompt)
    }
}

fn lost(prompt: IntentId) -> PromptEvent {
    PromptEvent {
        prompt,
        event: ModalityEvent::Lost(Modality::Voice),
    }
}
