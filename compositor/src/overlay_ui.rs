//! The overlay on screen: which prompt the dialog shows, on which output (nearest the focal
//! point), where on it, and the buffer the renderer draws above every surface. A prompt that
//! cannot be shown is denied (fail closed), never approved: with no output left, every prompt
//! of the local user is denied `confirmation_unavailable`.

use pcp_gate::{Authorizer, Modality, ModalityEvent, Prompt, RiskClass};
use pcp_overlay::{ConfirmDialog, DialogContent, Fonts, Risk};
use smithay::backend::allocator::Fourcc;
use smithay::backend::renderer::element::memory::MemoryRenderBuffer;
use smithay::utils::{Logical, Point, Transform};

use crate::state::State;

/// The overlay as placed for the renderer.
pub struct PlacedOverlay<'a> {
    /// The index of the output it is on.
    pub output: usize,
    /// Its top-left corner in global logical coordinates.
    pub location: Point<i32, Logical>,
    pub logical_size: (i32, i32),
    /// The buffer's size in pixels (the dialog drawn at the output's scale).
    pub buffer_size: (i32, i32),
    pub buffer: &'a MemoryRenderBuffer,
}

/// Where the dialog is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placement {
    pub output: usize,
    /// Global logical rectangle.
    pub rect: pcp_overlay::Rect,
    pub scale: f64,
}

/// The dialog and what is on screen.
pub struct OverlayUi {
    dialog: ConfirmDialog,
    shown: Option<(pcp_gate::IntentId, u32)>,
    /// The modalities and press-and-hold of the shown plan: a fallback mid-prompt (voice or
    /// haptic lost) changes them, and the dialog is shown again with the new plan.
    shown_plan: Option<(Vec<Modality>, bool)>,
    placement: Option<Placement>,
    buffer: Option<(MemoryRenderBuffer, (i32, i32))>,
    timeout_seconds: u32,
    /// Set while prompts are being denied as unshowable: the syncs their outcomes trigger wait.
    denying: bool,
}

impl OverlayUi {
    /// A hidden overlay drawing with the fonts `config` names.
    pub fn new(config: pcp_overlay::Config) -> Result<OverlayUi, pcp_overlay::OverlayError> {
        let fonts = Fonts::from_config(&config)?;
        Ok(OverlayUi {
            dialog: ConfirmDialog::new(config, fonts),
            shown: None,
            shown_plan: None,
            placement: None,
            buffer: None,
            timeout_seconds: 30,
            denying: false,
        })
    }

    pub fn is_open(&self) -> bool {
        self.shown.is_some() && self.dialog().is_open()
    }

    /// Where the dialog is, once placed.
    pub fn placement(&self) -> Option<Placement> {
        self.placement.filter(|_| self.is_open())
    }

    /// The number of waiting prompts the badge shows.
    pub fn queued(&self) -> u32 {
        self.shown.map_or(0, |(_, q)| q)
    }

    pub fn dialog(&self) -> &ConfirmDialog {
        &self.dialog
    }

    pub fn dialog_mut(&mut self) -> &mut ConfirmDialog {
        &mut self.dialog
    }

    /// The overlay for the renderer, when it is up and drawn.
    pub fn placed(&self) -> Option<PlacedOverlay<'_>> {
        let p = self.placement()?;
        let (buffer, buffer_size) = self.buffer.as_ref()?;
        Some(PlacedOverlay {
            output: p.output,
            location: (p.rect.x, p.rect.y).into(),
            logical_size: (p.rect.w, p.rect.h),
            buffer_size: *buffer_size,
            buffer,
        })
    }

    /// Output `index` was removed: later outputs move down one index. A dialog that was on it
    /// is placed again at the next sync, and its guard starts again now (it moved).
    pub(crate) fn output_removed(&mut self, index: usize, now_ms: i64) {
        let Some(p) = &mut self.placement else {
            return;
        };
        if p.output > index {
            p.output -= 1;
        } else if p.output == index {
            self.placement = None;
            self.dialog.moved(now_ms.max(0) as u64);
        }
    }

    /// A global logical point → the dialog's surface-local point, when the dialog is up.
    pub fn local(&self, p: Point<f64, Logical>) -> Option<(f64, f64)> {
        let pl = self.placement()?;
        Some((p.x - f64::from(pl.rect.x), p.y - f64::from(pl.rect.y)))
    }
}

fn risk_of(r: RiskClass) -> Risk {
    match r {
        RiskClass::Routine => Risk::Routine,
        RiskClass::Privileged => Risk::Privileged,
        RiskClass::Destructive => Risk::Destructive,
        RiskClass::System => Risk::System,
    }
}

fn content_of(prompt: &Prompt, queued: u32, seconds_left: u32, timeout: u32) -> DialogContent {
    let c = &prompt.intent.client;
    // The verified identity only: what the client calls itself (`declared_app_id`) is
    // unverified and is left to the dialog's secondary text.
    let app = c.to_string();
    DialogContent {
        app,
        icon: None,
        action: prompt.description.clone(),
        target: prompt.target.clone().unwrap_or_default(),
        steps: prompt.steps.clone(),
        risk: risk_of(prompt.risk),
        modalities: prompt
            .plan
            .modalities
            .iter()
            .map(|m| match m {
                Modality::Voice => pcp_overlay::Modality::Voice,
                Modality::Visual => pcp_overlay::Modality::Visual,
                Modality::Haptic => pcp_overlay::Modality::Haptic,
            })
            .collect(),
        seconds_left,
        timeout_seconds: timeout,
        queued,
        press_and_hold: prompt.plan.press_and_hold,
    }
}

/// What the dialog counts down to: the earliest deadline still running (any step timing out
/// denies the prompt, so a 10 s voice step is shown as 10 s even under a 30 s overlay), and
/// that step's whole timeout in seconds for the progress bar. Before the prompt is shown (no
/// deadlines yet) it is the overlay's own timeout.
fn countdown(p: &Prompt, timeouts: &pcp_gate::config::TimeoutConfig) -> (Option<i64>, u32) {
    let seconds = |m: Modality| match m {
        Modality::Voice => timeouts.voice_seconds,
        Modality::Visual => timeouts.visual_seconds,
        Modality::Haptic => timeouts.haptic_seconds,
    };
    let step = p
        .plan
        .modalities
        .iter()
        .filter(|m| !p.answered(**m))
        .filter_map(|&m| p.deadline(m).map(|at| (at, seconds(m))))
        .min();
    match (step, p.next_deadline()) {
        // A parent session's answer is due first.
        (Some((at, _)), Some(next)) if next < at => (Some(next), timeouts.parent_seconds),
        (Some((at, total)), _) => (Some(at), total),
        (None, Some(next)) => (Some(next), timeouts.parent_seconds),
        (None, None) => (None, timeouts.visual_seconds),
    }
}

/// The losses that end a prompt of `plan` as unshowable, in order (empty: nothing to end).
/// The gate ends a prompt `confirmation_unavailable` when its visual step is lost; a plan
/// without one (a haptic double-tap alone) first falls back to visual, which is then lost too.
/// A visual step already approved stays: the dialog was seen, and the rest (a spoken answer)
/// needs no output. Another authorizer (a parent session) needs no output either.
fn losses_to_end(plan: &pcp_gate::Plan, answered: impl Fn(Modality) -> bool) -> Vec<Modality> {
    if plan.authorizer != Authorizer::LocalUser {
        return Vec::new();
    }
    if plan.modalities.contains(&Modality::Visual) {
        return if answered(Modality::Visual) {
            Vec::new()
        } else {
            vec![Modality::Visual]
        };
    }
    match plan.modalities.iter().find(|m| !answered(**m)) {
        Some(m) => vec![*m, Modality::Visual],
        None => Vec::new(),
    }
}

impl State {
    /// Brings the overlay in line with the gate: shows the active prompt (or hides), places it
    /// on the output nearest the focal point, updates the countdown, advances the guard and a
    /// press-and-hold, and redraws its buffer when something changed. A prompt that cannot be
    /// shown is denied and the next one shown, until one can be or none is left.
    pub fn sync_overlay(&mut self) {
        // Called back while prompts are being denied: the denial syncs once it is done.
        if self.overlay.denying {
            return;
        }
        while self.sync_overlay_once() {}
    }

    /// Ends the shown prompt (and, with `all`, every prompt after it) `confirmation_unavailable`
    /// because no dialog can show it. Returns whether any prompt was ended.
    fn deny_unshowable(&mut self, all: bool) -> bool {
        self.overlay.denying = true;
        let mut ended = false;
        while let Some(p) = self.intents.gate().active() {
            let id = p.id;
            let losses = losses_to_end(&p.plan, |m| p.answered(m));
            if losses.is_empty() {
                break;
            }
            for m in losses {
                crate::intent::respond(self, ModalityEvent::Lost(m));
                if self.intents.gate().active().map(|p| p.id) != Some(id) {
                    break;
                }
            }
            if self.intents.gate().active().map(|p| p.id) == Some(id) {
                tracing::error!("prompt {} could not be ended as unshowable", id.0);
                break;
            }
            ended = true;
            if !all {
                break;
            }
        }
        self.overlay.denying = false;
        ended
    }

    /// Hides the dialog, giving keyboard focus back to clients.
    fn hide_dialog(&mut self) {
        self.overlay.shown_plan = None;
        if self.overlay.shown.take().is_some() {
            self.overlay.dialog_mut().hide();
            self.overlay.placement = None;
            self.overlay.buffer = None;
            self.restore_keyboard_focus();
            self.dirty = true;
        }
    }

    /// One pass of [`State::sync_overlay`]; true when it denied the shown prompt (another may
    /// be shown now).
    fn sync_overlay_once(&mut self) -> bool {
        if self.backend.outputs.is_empty() || !self.input_available {
            if self.deny_unshowable(true) {
                tracing::warn!(
                    "no output can show a prompt or no input device can answer it: denied \
                     those shown or queued"
                );
            }
            // What is left needs no dialog (a parent's ask, or a spoken answer still due).
            self.hide_dialog();
            return false;
        }
        let now = self.clock.now_ms();
        let now_u = now.max(0) as u64;
        let gate = self.intents.gate();
        let timeouts = &gate.config().file.timeouts;
        let mut timeout = timeouts.visual_seconds;
        let queued = gate.prompts().count().saturating_sub(1) as u32;
        let active = gate.active().map(|p| {
            let (deadline, total) = countdown(p, timeouts);
            timeout = total;
            let left = deadline.map_or(total, |d| ((d - now).max(0) as u64).div_ceil(1000) as u32);
            let plan = (p.plan.modalities.clone(), p.plan.press_and_hold);
            (p.id, left, content_of(p, queued, left, total), plan)
        });
        self.overlay.timeout_seconds = timeout;
        match active {
            None => {
                self.hide_dialog();
                return false;
            }
            Some((id, left, content, plan)) => {
                if self.overlay.shown != Some((id, queued))
                    || self.overlay.shown_plan.as_ref() != Some(&plan)
                {
                    let first = self.overlay.shown.is_none();
                    if let Err(e) = self.overlay.dialog_mut().show(content, now_u) {
                        tracing::warn!("the prompt cannot be shown, denying it: {e}");
                        self.overlay.shown = None;
                        return self.deny_unshowable(false);
                    }
                    self.overlay.shown = Some((id, queued));
                    self.overlay.shown_plan = Some(plan);
                    self.overlay.placement = None;
                    if first {
                        // Keyboard focus moves to the dialog: clients get a leave.
                        self.take_keyboard_focus();
                    }
                }
                self.overlay.dialog_mut().set_seconds_left(left);
            }
        }
        let focus = pcp_overlay::Point {
            x: self.focus.x,
            y: self.focus.y,
        };
        let outputs = self.backend.overlay_outputs();
        let placed = match self.overlay.dialog_mut().place(focus, &outputs) {
            Ok((i, rect)) => Placement {
                output: i,
                rect,
                scale: outputs[i].scale,
            },
            Err(e) => {
                tracing::warn!("the prompt cannot be placed, denying it: {e}");
                return self.deny_unshowable(false);
            }
        };
        if let Some(old) = self.overlay.placement
            && old != placed
        {
            // Moved (to another output or within one): the clickjacking guard starts again.
            self.overlay.dialog_mut().moved(now_u);
        }
        let moved = self.overlay.placement != Some(placed);
        self.overlay.placement = Some(placed);
        if let Some(pcp_overlay::Choice::Approve) = self.overlay.dialog_mut().advance(now_u) {
            crate::intent::answer_visual(self, pcp_gate::Answer::Approve);
            return false;
        }
        let o = &outputs[placed.output];
        let size = (o.rect.w.max(0) as u32, o.rect.h.max(0) as u32);
        match self.overlay.dialog.render(placed.scale, size) {
            Ok(r) => {
                if moved || !r.damage.is_empty() || self.overlay.buffer.is_none() {
                    let (w, h) = (r.pixmap.width() as i32, r.pixmap.height() as i32);
                    // tiny-skia's premultiplied RGBA bytes are DRM ABGR8888 (little-endian).
                    let buffer = MemoryRenderBuffer::from_slice(
                        r.pixmap.data(),
                        Fourcc::Abgr8888,
                        (w, h),
                        1,
                        Transform::Normal,
                        None,
                    );
                    self.overlay.buffer = Some((buffer, (w, h)));
                    self.dirty = true;
                }
                if moved {
                    self.log_placement(placed);
                }
            }
            Err(e) => {
                tracing::warn!("the prompt cannot be drawn, denying it: {e}");
                return self.deny_unshowable(false);
            }
        }
        false
    }
}

impl State {
    /// Says where the dialog now is and where its controls are (global logical pixels): what
    /// a person sees on which display, and what a scripted session aims its touches at.
    fn log_placement(&self, placed: Placement) {
        let name = self
            .backend
            .outputs
            .get(placed.output)
            .map_or_else(String::new, |o| o.output.name());
        let dialog = self.overlay.dialog();
        let global = |b: Option<[f64; 4]>| {
            b.map_or_else(
                || "none".to_string(),
                |[x, y, w, h]| {
                    let (x, y) = (f64::from(placed.rect.x) + x, f64::from(placed.rect.y) + y);
                    format!("{x:.0},{y:.0} {w:.0}x{h:.0}")
                },
            )
        };
        let r = placed.rect;
        tracing::info!(
            "dialog placed on {name} at {},{} {}x{}; approve {}; deny {}",
            r.x,
            r.y,
            r.w,
            r.h,
            global(dialog.control_bounds(pcp_overlay::Control::Approve)),
            global(dialog.control_bounds(pcp_overlay::Control::Deny)),
        );
    }
}

#[cfg(test)]
mod tests {
    use pcp_gate::{Authorizer, Modality, Plan};

    use super::losses_to_end;

    fn plan(authorizer: Authorizer, modalities: &[Modality]) -> Plan {
        Plan {
            authorizer,
            modalities: modalities.to_vec(),
            press_and_hold: false,
            notes: Vec::new(),
        }
    }

    #[test]
    fn an_unanswered_visual_step_is_lost() {
        let p = plan(Authorizer::LocalUser, &[Modality::Voice, Modality::Visual]);
        assert_eq!(losses_to_end(&p, |_| false), [Modality::Visual]);
        // Voice already approved: the visual step is still the one that cannot be given.
        assert_eq!(
            losses_to_end(&p, |m| m == Modality::Voice),
            [Modality::Visual]
        );
    }

    #[test]
    fn a_haptic_step_alone_falls_back_to_visual_which_is_lost() {
        let p = plan(Authorizer::LocalUser, &[Modality::Haptic]);
        assert_eq!(
            losses_to_end(&p, |_| false),
            [Modality::Haptic, Modality::Visual]
        );
    }

    #[test]
    fn a_seen_dialog_or_another_authorizer_is_left_alone() {
        let p = plan(Authorizer::LocalUser, &[Modality::Voice, Modality::Visual]);
        assert!(losses_to_end(&p, |m| m == Modality::Visual).is_empty());
        let parent = plan(Authorizer::Parent, &[]);
        assert!(losses_to_end(&parent, |_| false).is_empty());
        let denying = plan(Authorizer::Denying, &[]);
        assert!(losses_to_end(&denying, |_| false).is_empty());
    }
}
