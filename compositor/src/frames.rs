//! Frame pacing: whether the picture may have changed since it was last drawn, the frame timer
//! that draws it at most once per frame interval (armed only while something waits to be drawn,
//! so an idle compositor does not wake up), and the sequence number of the frames drawn
//! (presentation feedback's `seq`).

use std::time::{Duration, Instant};

use calloop::timer::{TimeoutAction, Timer};

use crate::state::State;

/// When the next frame is drawn, and which frame it is.
#[derive(Default)]
pub struct Frames {
    /// Set when the rendered picture may have changed.
    damaged: bool,
    /// The frame interval; `None`: no timer (the harness draws when it asks).
    interval: Option<Duration>,
    /// Whether the frame timer is on the event loop.
    armed: bool,
    /// When the frame timer last fired.
    last: Option<Instant>,
    /// The sequence number of the last frame drawn.
    presentation_seq: u64,
}

impl Frames {
    /// The picture may have changed: it is drawn with the next frame.
    pub fn damage(&mut self) {
        self.damaged = true;
    }

    /// Whether the picture may have changed since it was last drawn; clears it.
    pub(crate) fn take_damage(&mut self) -> bool {
        std::mem::take(&mut self.damaged)
    }

    /// Frames are drawn on a timer, at most one per `interval`.
    pub(crate) fn pace(&mut self, interval: Duration) {
        self.interval = Some(interval);
    }

    /// How long from now the frame timer should fire, when it should be armed now: frames are
    /// paced, something waits to be drawn and no timer is armed yet. The next frame comes one
    /// interval after the last one (at once after a pause).
    fn due_in(&self, now: Instant) -> Option<Duration> {
        let interval = self.interval?;
        if !self.damaged || self.armed {
            return None;
        }
        Some(self.last.map_or(Duration::ZERO, |last| {
            (last + interval).saturating_duration_since(now)
        }))
    }

    /// The sequence number of the frame just drawn (wrapping).
    pub(crate) fn next_presentation_seq(&mut self) -> u64 {
        self.presentation_seq = self.presentation_seq.wrapping_add(1);
        self.presentation_seq
    }
}

impl State {
    /// Draws every output if something changed.
    pub fn refresh(&mut self) {
        if self.frames.take_damage() {
            self.render();
        }
    }

    /// Arms the frame timer when something waits to be drawn and it is not armed yet. Never
    /// armed when nothing changed, so an idle compositor does not wake up to draw.
    pub fn schedule_frame(&mut self) {
        let Some(wait) = self.frames.due_in(Instant::now()) else {
            return;
        };
        let armed = self.loop_handle.insert_source(
            Timer::from_duration(wait),
            |_, _, state: &mut State| {
                state.frames.armed = false;
                state.frames.last = Some(Instant::now());
                state.refresh();
                TimeoutAction::Drop
            },
        );
        match armed {
            Ok(_) => self.frames.armed = true,
            Err(e) => {
                // Without the timer nothing is drawn: draw now rather than never.
                tracing::error!("cannot arm the frame timer, drawing at once: {e}");
                self.refresh();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_is_due_only_when_paced_damaged_and_not_armed() {
        let now = Instant::now();
        let mut frames = Frames::default();
        frames.damage();
        assert_eq!(frames.due_in(now), None, "not paced: the harness draws");
        frames.pace(Duration::from_millis(16));
        assert_eq!(
            frames.due_in(now),
            Some(Duration::ZERO),
            "first frame at once"
        );
        frames.armed = true;
        assert_eq!(frames.due_in(now), None, "already armed");
        frames.armed = false;
        frames.last = Some(now);
        assert_eq!(frames.due_in(now), Some(Duration::from_millis(16)));
        assert!(frames.take_damage());
        assert_eq!(frames.due_in(now), None, "nothing to draw");
    }
}
