//! The voice step of a prompt: the one [`SpeechEngine`] the compositor makes at start-up (its
//! model loads in the background), the listener of the shown prompt, and the translation of its
//! events into the dialog's "Listening…" state and level meter and into answers for the gate.
//! Timeouts are the gate's: a listener's own `Timeout` decides nothing here.

use pcp_gate::{Answer, IntentId, Modality, ModalityEvent};
use pcp_overlay::VoiceState;
use pcp_speech::{Listener, SpeechEngine, SpeechEvent, SpokenAnswer, Unavailable};

use crate::state::State;

/// The speech engine (none when `[speech] enabled = false`) and the prompt being listened for.
pub struct Voice {
    engine: Option<SpeechEngine>,
    listening: Option<(IntentId, Listener)>,
    /// The last prompt a question was asked for: a prompt is asked once, so a listener that
    /// timed out is not started again (the gate's own deadline decides).
    asked: Option<IntentId>,
}

impl Voice {
    /// Starts the engine (model loading on its own thread) unless voice is disabled, so a
    /// disabled voice never reads a model.
    pub fn start(config: pcp_speech::Config) -> Voice {
        let engine = config.enabled.then(|| SpeechEngine::start(config));
        Voice {
            engine,
            listening: None,
            asked: None,
        }
    }

    /// Voice over an engine made elsewhere (the harness shares one loaded model).
    pub fn with_engine(engine: Option<SpeechEngine>) -> Voice {
        Voice {
            engine,
            listening: None,
            asked: None,
        }
    }

    /// Whether voice can run now: a loaded model and a microphone that opens.
    pub fn available(&self) -> bool {
        match self.probe() {
            Ok(()) => true,
            Err(why) => {
                tracing::debug!("voice unavailable: {why}");
                false
            }
        }
    }

    /// Why voice cannot run now (`Disabled` when there is no engine).
    pub fn probe(&self) -> pcp_speech::Availability {
        match &self.engine {
            None => Err(Unavailable::Disabled),
            Some(engine) => engine.available(),
        }
    }

    /// The prompt a listener is running for.
    pub fn listening_for(&self) -> Option<IntentId> {
        self.listening.as_ref().map(|(id, _)| *id)
    }

    fn stop(&mut self) {
        if let Some((id, mut listener)) = self.listening.take() {
            tracing::debug!(?id, "voice listener stopped");
            listener.cancel();
        }
    }
}

impl State {
    /// Starts listening when the shown prompt's plan has an unanswered voice step, and stops a
    /// listener whose prompt ended or no longer asks for voice.
    pub(crate) fn sync_voice(&mut self) {
        let want = self.intents.gate().active().and_then(|p| {
            (p.plan.modalities.contains(&Modality::Voice) && !p.answered(Modality::Voice))
                .then(|| (p.id, p.description.clone()))
        });
        match (want, self.voice.listening_for()) {
            (Some((id, _)), Some(current)) if id == current => {}
            (Some((id, _)), None) if self.voice.asked == Some(id) => {}
            (Some((id, description)), _) => {
                self.voice.stop();
                let Some(engine) = &self.voice.engine else {
                    tracing::warn!("voice was planned but there is no speech engine");
                    crate::intent::respond(self, ModalityEvent::Lost(Modality::Voice));
                    return;
                };
                let question = engine.config().question(&description);
                let listener = engine.ask(&question);
                self.voice.listening = Some((id, listener));
                self.voice.asked = Some(id);
            }
            (None, Some(_)) => self.voice.stop(),
            (None, None) => {}
        }
    }

    /// The periodic probe: a microphone (or model) that went away while the shown prompt still
    /// waits for its voice answer moves that prompt to visual with press-and-hold. A busy
    /// device is not a loss: the prompt's own listener may be what holds it.
    pub(crate) fn check_voice_device(&mut self) {
        let waiting = self.intents.gate().active().is_some_and(|p| {
            p.plan.modalities.contains(&Modality::Voice) && !p.answered(Modality::Voice)
        });
        if !waiting {
            return;
        }
        match self.voice.probe() {
            Ok(()) | Err(Unavailable::DeviceBusy(_)) | Err(Unavailable::ModelLoading) => {}
            Err(why) => {
                tracing::warn!("voice lost mid-prompt, falling back to visual: {why}");
                self.voice.stop();
                self.overlay
                    .dialog_mut()
                    .set_voice(VoiceState::Unavailable, 0.0);
                crate::intent::respond(self, ModalityEvent::Lost(Modality::Voice));
                self.dirty = true;
            }
        }
    }

    /// Takes every waiting event of the listener (called from the event loop's device timer).
    pub(crate) fn poll_voice(&mut self) {
        loop {
            let Some((id, listener)) = self.voice.listening.as_mut() else {
                return;
            };
            let id = *id;
            let Some(event) = listener.poll() else {
                return;
            };
            if listener.is_done() {
                self.voice.listening = None;
            }
            if self.intents.gate().active().map(|p| p.id) != Some(id) {
                // The prompt ended between polls: nothing to feed.
                self.voice.stop();
                return;
            }
            self.voice_event(event);
        }
    }

    fn voice_event(&mut self, event: SpeechEvent) {
        match event {
            SpeechEvent::Listening { level } => {
                if self.overlay.dialog().live().map(|l| l.voice) != Some(VoiceState::Listening) {
                    tracing::info!("listening for a spoken answer");
                }
                self.overlay
                    .dialog_mut()
                    .set_voice(VoiceState::Listening, level);
                self.sync_overlay();
            }
            SpeechEvent::Heard { answer, transcript } => {
                tracing::info!(?answer, transcript, "voice answer heard");
                self.overlay.dialog_mut().set_voice(VoiceState::Heard, 0.0);
                // A spoken cancel withdraws consent: for the gate it is a deny.
                let answer = match answer {
                    SpokenAnswer::Approve => Answer::Approve,
                    SpokenAnswer::Deny | SpokenAnswer::Cancel => Answer::Deny,
                };
                crate::intent::respond(self, ModalityEvent::Answer(Modality::Voice, answer));
                self.sync_overlay();
            }
            // The gate's voice deadline decides; deciding here too could race it.
            SpeechEvent::Timeout => {
                tracing::info!("the voice listener heard no answer; the gate's timeout decides")
            }
            SpeechEvent::Unavailable { reason } => {
                tracing::warn!("voice lost mid-prompt, falling back to visual: {reason}");
                self.overlay
                    .dialog_mut()
                    .set_voice(VoiceState::Unavailable, 0.0);
                crate::intent::respond(self, ModalityEvent::Lost(Modality::Voice));
            }
        }
        self.dirty = true;
    }

    /// Replaces the speech engine (`None`: voice unavailable); the harness shares one model.
    #[cfg(feature = "test-harness")]
    pub fn set_speech_engine(&mut self, engine: Option<SpeechEngine>) {
        self.voice = Voice::with_engine(engine);
        self.refresh_availability();
    }
}
