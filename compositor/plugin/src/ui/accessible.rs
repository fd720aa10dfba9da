//! What a screen reader learns from [`ConfirmUi`] (feature `a11y`): the reading of the dialog
//! handed to [`crate::a11y`]'s publisher after every change, and the polite announcements — a
//! prompt shown, how it was decided, and, when assistive software asked the dialog to act
//! (press a button, take the focus, set a value: all refused), how to answer instead. Whether a
//! screen reader runs decides whether a challenge word is read aloud (see `voice.rs`).

use super::ConfirmUi;

/// The publisher and what it announced.
#[cfg(feature = "a11y")]
pub(super) struct Accessibility {
    publisher: crate::a11y::Publisher,
    /// The last polite announcement.
    announcement: String,
    /// The prompt last announced, with what it asks.
    announced: Option<(pcp_gate::IntentId, String)>,
    /// How many refused requests of assistive software have been answered with the
    /// announcement saying how to answer.
    refusals_said: u64,
}

impl ConfirmUi {
    /// Publishes the dialog's accessibility tree on the session's AT-SPI bus from now on (its
    /// adapter runs on its own thread and starts serving once a screen reader turns
    /// accessibility on). Assistive software can read the dialog, never answer it.
    #[cfg(feature = "a11y")]
    pub fn enable_accessibility(&mut self) {
        if self.accessibility.is_none() {
            self.accessibility = Some(Accessibility {
                publisher: crate::a11y::Publisher::new(),
                announcement: String::new(),
                announced: None,
                refusals_said: 0,
            });
            self.publish_accessibility();
        }
    }

    /// Whether a screen reader has turned accessibility on (and the tree is published): then a
    /// challenge word is read aloud in the spoken question.
    pub fn screen_reader_running(&self) -> bool {
        #[cfg(feature = "a11y")]
        {
            self.accessibility
                .as_ref()
                .is_some_and(|a| a.publisher.screen_reader())
        }
        #[cfg(not(feature = "a11y"))]
        false
    }

    /// What a screen reader reads now (`None`: accessibility is not enabled).
    #[cfg(feature = "a11y")]
    pub fn accessible_reading(&self) -> Option<crate::a11y::Reading> {
        let a = self.accessibility.as_ref()?;
        Some(self.reading(&a.announcement))
    }

    /// How many actions (press, focus, …) assistive software asked for on the dialog and was
    /// refused; how many times a stalled accessibility adapter was replaced.
    #[cfg(feature = "a11y")]
    pub fn accessibility_counters(&self) -> (u64, u64) {
        self.accessibility
            .as_ref()
            .map_or((0, 0), |a| (a.publisher.refused(), a.publisher.restarts()))
    }

    #[cfg(feature = "a11y")]
    fn reading(&self, announcement: &str) -> crate::a11y::Reading {
        let read_aloud = self
            .dialog
            .shown()
            .is_some_and(|id| self.voice.challenge_read_aloud(id));
        crate::a11y::Reading::of(
            self.dialog.dialog(),
            self.dialog.placement().map(|p| p.rect),
            announcement,
            self.input.keyboard,
            read_aloud,
        )
    }

    /// Brings the accessibility tree in line with the dialog (a prompt newly shown is
    /// announced; so is how to answer, after assistive software asked the dialog to act). Cheap
    /// when nothing changed; nothing when accessibility is off.
    pub(crate) fn publish_accessibility(&mut self) {
        #[cfg(feature = "a11y")]
        {
            let Some(a) = self.accessibility.as_mut() else {
                return;
            };
            let dialog = self.dialog.dialog();
            let text = &dialog.config().text;
            let shown = self.dialog.shown().zip(dialog.content());
            if let Some((id, content)) = shown
                && a.announced.as_ref().is_none_or(|(a, _)| *a != id)
            {
                let action = dialog.config().visible_text(&content.action);
                a.announcement = text.announce_shown.replace("{action}", &action);
                a.announced = Some((id, action));
            }
            let refused = a.publisher.refused();
            if refused > a.refusals_said {
                // Requests refused since the last reading are answered once, with one
                // announcement (a press and the focus request before it are one act).
                a.refusals_said = refused;
                if shown.is_some() {
                    a.announcement = text
                        .announce_refused
                        .replace("{shortcut}", &dialog.config().focus_shortcut);
                }
            }
            let announcement = a.announcement.clone();
            let reading = self.reading(&announcement);
            if let Some(a) = &mut self.accessibility {
                a.publisher.publish(reading);
            }
        }
    }

    /// A prompt was decided: the announcement says how, when it is the one last announced.
    pub(crate) fn decided(&mut self, _outcome: &pcp_gate::Outcome) {
        #[cfg(feature = "a11y")]
        {
            let outcome = _outcome;
            let Some(a) = self.accessibility.as_mut() else {
                return;
            };
            let Some((id, action)) = &a.announced else {
                return;
            };
            if *id != outcome.id {
                return;
            }
            let text = &self.dialog.dialog().config().text;
            let wording = if outcome.approved {
                &text.announce_approved
            } else if outcome.resolution == pcp_gate::Resolution::ConfirmationTimeout {
                &text.announce_timed_out
            } else {
                &text.announce_denied
            };
            a.announcement = wording.replace("{action}", action);
            // Published now, while the dialog still shows the decided prompt: the next prompt
            // may be shown in the same round, and its own announcement must not replace this
            // one before a screen reader heard it.
            self.publish_accessibility();
        }
    }
}
