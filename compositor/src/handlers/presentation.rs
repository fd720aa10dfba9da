//! wp_presentation (presentation-time): a client asks when its frame was shown, and is told
//! with the compositor's presentation clock, CLOCK_MONOTONIC. Feedback is sent once a frame of
//! each output has been drawn: headless (pixman) frames are complete then, the winit window's
//! after its buffer swap; on udev it is when the frame is queued for the next page flip, not
//! at the flip's vblank (so `c2p` is the drawing time, without the wait for scan-out).

use std::time::Duration;

use smithay::desktop::layer_map_for_output;
use smithay::desktop::utils::{
    OutputPresentationFeedback, take_presentation_feedback_surface_tree,
};
use smithay::reexports::wayland_protocols::wp::presentation_time::server::wp_presentation_feedback;
use smithay::utils::{Clock, Monotonic};
use smithay::wayland::presentation::Refresh;

use crate::state::State;

smithay::delegate_presentation!(State);

/// The presentation clock's id, as the protocol names it.
pub(crate) const PRESENTATION_CLOCK: u32 = libc::CLOCK_MONOTONIC as u32;

impl State {
    /// Every output was just drawn: the surfaces shown on it are told when (now, by the
    /// presentation clock), at which refresh, and the frame's sequence number.
    pub(crate) fn send_presentation_feedback(&mut self) {
        let seq = self.frames.next_presentation_seq();
        let now: Duration = Clock::<Monotonic>::new().now().into();
        let flags = wp_presentation_feedback::Kind::empty();
        for vo in &self.backend.outputs {
            let output = vo.output.clone();
            let mut feedback = OutputPresentationFeedback::new(&output);
            let on_this = |_: &_, _: &_| Some(output.clone());
            match &vo.locked {
                Some(Some(surface)) => take_presentation_feedback_surface_tree(
                    surface,
                    &mut feedback,
                    on_this,
                    |_, _| flags,
                ),
                Some(None) => {}
                None => {
                    let outputs_area = self.desktop.space.output_geometry(&output);
                    for window in self.desktop.space.elements() {
                        let shown = outputs_area.is_some_and(|area| {
                            self.desktop
                                .space
                                .element_geometry(window)
                                .is_some_and(|g| g.overlaps(area))
                        });
                        if shown {
                            window.take_presentation_feedback(
                                &mut feedback,
                                |_, _| Some(output.clone()),
                                |_, _| flags,
                            );
                        }
                    }
                    for layer in layer_map_for_output(&output).layers() {
                        layer.take_presentation_feedback(
                            &mut feedback,
                            |_, _| Some(output.clone()),
                            |_, _| flags,
                        );
                    }
                }
            }
            let refresh = output
                .current_mode()
                .and_then(|m| u64::try_from(m.refresh).ok())
                .filter(|&mhz| mhz > 0)
                .map_or(Refresh::Unknown, |mhz| {
                    Refresh::fixed(Duration::from_nanos(1_000_000_000_000 / mhz))
                });
            feedback.presented::<_, Monotonic>(now, refresh, seq, flags);
        }
    }
}
