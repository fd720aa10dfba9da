//! What a screen reader learns from [`ConfirmUi`] (feature `a11y`): the reading of the dialog
//! handed to [`crate::a11y`]'s publisher after every change, and the polite announcements — a
//! prompt shown, and how it was decided.

use super::ConfirmUi;

impl ConfirmUi {
    /// Publishes the dialog's accessibility tree on the session's AT-SPI bus from now on (its
    /// adapter runs on its own thread and starts serving once a screen reader turns
    /// accessibility on). Assistive software can read the dialog, never answer it.
    #[cfg(feature = "a11y")]
    pub fn enable_accessibility(&mut self) {
        if self.accessibility.is_none() {
            self.accessibility = Some(crate::a11y::Publisher::new());
            self.publish_accessibility();
        }
    }

    /// What a screen reader reads now (`None`: accessibility is not enabled).
    #[cfg(feature = "a11y")]
    pub fn accessible_reading(&self) -> Option<crate::a11y::Reading> {
        self.accessibility.as_ref()?;
        Some(crate::a11y::Reading::of(
            self.dialog.dialog(),
            self.dialog.placement().map(|p| p.rect),
            &self.announcement,
            self.input.keyboard,
        ))
    }

    /// How many actions (press, focus, …) assistive software asked for on the dialog and was
    /// refused; how many times a stalled accessibility adapter was replaced.
    #[cfg(feature = "a11y")]
    pub fn accessibility_counters(&self) -> (u64, u64) {
        self.accessibility
            .as_ref()
            .map_or((0, 0), |p| (p.refused(), p.restarts()))
    }

    /// Brings the accessibility tree in line with the dialog (a prompt newly shown is
    /// announced). Cheap when nothing changed; nothing when accessibility is off.
    pub(crate) fn publish_accessibility(&mut self) {
        #[cfg(feature = "a11y")]
        {
            if self.accessibility.is_none() {
                return;
            }
            let shown = self.dialog.shown().zip(self.dialog.dialog().content());
            if let Some((id, content)) = shown
                && self.announced.as_ref().is_none_or(|(a, _)| *a != id)
            {
                let action = self.dialog.dialog().config().visible_text(&content.action);
                self.announcement = self
                    .dialog
                    .dialog()
                    .config()
                    .text
                    .announce_shown
                    .replace("{action}", &action);
                self.announced = Some((id, action));
            }
            let reading = crate::a11y::Reading::of(
                self.dialog.dialog(),
                self.dialog.placement().map(|p| p.rect),
                &self.announcement,
                self.input.keyboard,
            );
            if let Some(p) = &mut self.accessibility {
                p.publish(reading);
            }
        }
    }

    /// A prompt was decided: the announcement says how, when it is the one last announced.
    pub(crate) fn decided(&mut self, _outcome: &pcp_gate::Outcome) {
        #[cfg(feature = "a11y")]
        {
            let outcome = _outcome;
            let Some((id, action)) = &self.announced else {
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
            self.announcement = wording.replace("{action}", action);
            // Published now, while the dialog still shows the decided prompt: the next prompt
            // may be shown in the same round, and its own announcement must not replace this
            // one before a screen reader heard it.
            self.publish_accessibility();
        }
    }
}
