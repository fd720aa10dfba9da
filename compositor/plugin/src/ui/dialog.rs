//! The dialog on screen: which prompt it shows (and with which plan), on which output (nearest
//! the focal point), where on it, its countdown, and the buffer drawn at that output's scale.
//! A prompt that cannot be shown yields the losses that end it (fail closed), never an answer.

use pcp_gate::config::TimeoutConfig;
use pcp_gate::{Authorizer, IdentityKind, IntentId, Modality, Plan, Prompt, RiskClass};
use pcp_overlay::{ConfirmDialog, DialogContent, Fonts, OverlayError, Requester, Risk};
use smithay::backend::allocator::Fourcc;
use smithay::backend::renderer::element::memory::MemoryRenderBuffer;
use smithay::utils::Transform;

use crate::render::PlacedOverlay;

/// Where the dialog is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placement {
    /// The index of its output in [`Surroundings::outputs`](crate::Surroundings).
    pub output: usize,
    /// Its global logical rectangle.
    pub rect: pcp_overlay::Rect,
    /// Its output's rectangle and scale: the dialog moved when any of these changed.
    pub output_rect: pcp_overlay::Rect,
    pub scale: f64,
}

impl Placement {
    /// Whether the dialog is at the same place on the same output (its index may differ: an
    /// output before it was removed).
    fn same_place(&self, other: &Placement) -> bool {
        self.rect == other.rect
            && self.output_rect == other.output_rect
            && self.scale == other.scale
    }
}

/// What is shown: the prompt and its plan (a fallback mid-prompt changes the plan, and the
/// dialog is shown again with it), and how many wait behind it (a change there only updates
/// the badge: it neither shows the dialog again nor re-arms its guard).
#[derive(Debug, Clone)]
struct Shown {
    id: IntentId,
    queued: u32,
    modalities: Vec<Modality>,
    press_and_hold: bool,
    /// A front end attached a text entry to it (`Some`), with an account row (`true`).
    entry: Option<bool>,
}

impl Shown {
    /// Whether `other` is the same prompt with the same plan and entry (the queue behind it
    /// aside).
    fn same_prompt(&self, other: &Shown) -> bool {
        self.id == other.id
            && self.modalities == other.modalities
            && self.press_and_hold == other.press_and_hold
            && self.entry == other.entry
    }
}

/// The dialog and what is on screen.
pub(crate) struct DialogView {
    dialog: ConfirmDialog,
    shown: Option<Shown>,
    placement: Option<Placement>,
    buffer: Option<(MemoryRenderBuffer, (i32, i32))>,
}

/// What one sync of the dialog did.
pub(crate) enum DialogSync {
    /// Up to date (`first`: it has just appeared).
    Shown { first: bool, damaged: bool },
    /// The prompt cannot be shown: the losses that end it.
    Unshowable(Vec<Modality>),
}

impl DialogView {
    pub fn new(config: pcp_overlay::Config) -> Result<DialogView, OverlayError> {
        let fonts = Fonts::from_config(&config)?;
        Ok(DialogView {
            dialog: ConfirmDialog::new(config, fonts),
            shown: None,
            placement: None,
            buffer: None,
        })
    }

    pub fn is_open(&self) -> bool {
        self.shown.is_some() && self.dialog.is_open()
    }

    pub fn shown(&self) -> Option<IntentId> {
        self.shown.as_ref().map(|s| s.id)
    }

    pub fn queued(&self) -> u32 {
        self.shown.as_ref().map_or(0, |s| s.queued)
    }

    pub fn placement(&self) -> Option<Placement> {
        self.placement.filter(|_| self.is_open())
    }

    pub fn dialog(&self) -> &ConfirmDialog {
        &self.dialog
    }

    pub fn dialog_mut(&mut self) -> &mut ConfirmDialog {
        &mut self.dialog
    }

    /// The dialog for the renderer, when it is up and drawn.
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

    /// The dialog's pixels as drawn for its output: width, height and premultiplied RGBA.
    /// Anything not drawn yet is drawn now, into the buffer the renderer shows too.
    #[cfg(feature = "testing")]
    pub fn pixels(&mut self) -> Option<(u32, u32, Vec<u8>)> {
        let p = self.placement()?;
        let size = (p.output_rect.w.max(0) as u32, p.output_rect.h.max(0) as u32);
        let r = match self.dialog.render(p.scale, size) {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!("the dialog cannot be drawn: {e}");
                return None;
            }
        };
        let (w, h) = (r.pixmap.width(), r.pixmap.height());
        let data = r.pixmap.data().to_vec();
        if !r.damage.is_empty() {
            self.buffer = Some((buffer_of(&data, w as i32, h as i32), (w as i32, h as i32)));
        }
        Some((w, h, data))
    }

    /// A global logical point → the dialog's surface-local point, when the dialog is up.
    pub fn local(&self, p: pcp_overlay::Point) -> Option<(f64, f64)> {
        let pl = self.placement()?;
        Some((p.x - f64::from(pl.rect.x), p.y - f64::from(pl.rect.y)))
    }

    /// Hides the dialog. True when it was up.
    pub fn hide(&mut self) -> bool {
        self.placement = None;
        self.buffer = None;
        if self.shown.take().is_some() {
            self.dialog.hide();
            return true;
        }
        false
    }

    /// Brings the dialog in line with `prompt` (with `queued` behind it) on `outputs` near
    /// `focus` at `now`: shows it (again, when its plan changed), counts down, places it (the
    /// guard starts again when it moved) and redraws what changed; `challenge` is the word a
    /// spoken approval must contain, shown on the dialog. Never answers anything.
    #[allow(clippy::too_many_arguments)]
    pub fn sync(
        &mut self,
        prompt: &Prompt,
        challenge: Option<&str>,
        (voice_note, entry): (Option<&str>, Option<bool>),
        queued: u32,
        timeouts: &TimeoutConfig,
        outputs: &[pcp_overlay::Output],
        focus: pcp_overlay::Point,
        now: i64,
    ) -> DialogSync {
        let now_u = now.max(0) as u64;
        let (deadline, total) = countdown(prompt, timeouts);
        let left = deadline.map_or(total, |d| ((d - now).max(0) as u64).div_ceil(1000) as u32);
        let wanted = Shown {
            id: prompt.id,
            queued,
            modalities: prompt.plan.modalities.clone(),
            press_and_hold: prompt.plan.press_and_hold,
            entry,
        };
        let mut first = false;
        let mut damaged = false;
        if !self.shown.as_ref().is_some_and(|s| s.same_prompt(&wanted)) {
            first = self.shown.is_none();
            let mut content = content_of(prompt, challenge, voice_note, queued, left, total);
            content.entry = entry.is_some();
            content.entry_account = entry == Some(true);
            if let Err(e) = self.dialog.show(content, now_u) {
                tracing::warn!("the prompt cannot be shown, denying it: {e}");
                self.hide();
                return DialogSync::Unshowable(losses_to_end(&prompt.plan, |m| prompt.answered(m)));
            }
            // The keyboard stays where it was: `ConfirmUi` gives it to the dialog only when the
            // user does (or the prompt is modal).
            self.placement = None;
            self.buffer = None;
        }
        // Another prompt joining or leaving the queue redraws the badge and nothing else.
        self.dialog.set_queued(queued);
        self.shown = Some(wanted);
        self.dialog.set_seconds_left(left);
        let placed = match self.dialog.place(focus, outputs) {
            Ok((i, rect)) => Placement {
                output: i,
                rect,
                output_rect: outputs[i].rect,
                scale: outputs[i].scale,
            },
            Err(e) => {
                tracing::warn!("the prompt cannot be placed, denying it: {e}");
                return DialogSync::Unshowable(losses_to_end(&prompt.plan, |m| prompt.answered(m)));
            }
        };
        // On the same output the dialog stays put: it does not chase the focal point (on a large
        // output it would sit under the pointer wherever the user works beside it). It moves
        // when the focal point goes to another output, or its output or its size changed.
        let placed = match self.placement {
            Some(old)
                if old.output_rect == placed.output_rect
                    && old.scale == placed.scale
                    && (old.rect.w, old.rect.h) == (placed.rect.w, placed.rect.h) =>
            {
                Placement {
                    output: placed.output,
                    ..old
                }
            }
            _ => placed,
        };
        let moved = match self.placement {
            Some(old) => !old.same_place(&placed),
            None => true,
        };
        if moved && self.placement.is_some() {
            // Moved (to another output or within one): the clickjacking guard starts again.
            self.dialog.moved(now_u);
        }
        self.placement = Some(placed);
        let o = &outputs[placed.output];
        let size = (o.rect.w.max(0) as u32, o.rect.h.max(0) as u32);
        match self.dialog.render(placed.scale, size) {
            Ok(r) => {
                if moved || !r.damage.is_empty() || self.buffer.is_none() {
                    let (w, h) = (r.pixmap.width() as i32, r.pixmap.height() as i32);
                    self.buffer = Some((buffer_of(r.pixmap.data(), w, h), (w, h)));
                    damaged = true;
                }
            }
            Err(e) => {
                tracing::warn!("the prompt cannot be drawn, denying it: {e}");
                return DialogSync::Unshowable(losses_to_end(&prompt.plan, |m| prompt.answered(m)));
            }
        }
        DialogSync::Shown { first, damaged }
    }
}

/// A buffer for the renderer holding `data`, `w`×`h` premultiplied RGBA pixels.
fn buffer_of(data: &[u8], w: i32, h: i32) -> MemoryRenderBuffer {
    // tiny-skia's premultiplied RGBA bytes are DRM ABGR8888 (little-endian).
    MemoryRenderBuffer::from_slice(data, Fourcc::Abgr8888, (w, h), 1, Transform::Normal, None)
}

pub(crate) fn risk_of(r: RiskClass) -> Risk {
    match r {
        RiskClass::Routine => Risk::Routine,
        RiskClass::Privileged => Risk::Privileged,
        RiskClass::Destructive => Risk::Destructive,
        RiskClass::System => Risk::System,
    }
}

/// Who asks, as the kernel and the sandbox know it. What the client calls itself goes to the
/// dialog's secondary text only.
fn requester_of(c: &pcp_gate::ClientIdentity) -> Requester {
    let unknown = || Requester::Unknown {
        connection: c.id.clone(),
    };
    match c.kind() {
        IdentityKind::Sandboxed => Requester::Sandboxed {
            engine: c
                .sandbox
                .as_ref()
                .and_then(|s| s.engine.clone())
                .unwrap_or_default(),
            app_id: c.display_name().to_string(),
        },
        IdentityKind::Unconfined => match c.pid {
            Some(pid) => Requester::Unconfined {
                executable: c.display_name().to_string(),
                pid,
            },
            None => unknown(),
        },
        IdentityKind::Unknown => unknown(),
    }
}

fn content_of(
    prompt: &Prompt,
    challenge: Option<&str>,
    voice_note: Option<&str>,
    queued: u32,
    seconds_left: u32,
    timeout: u32,
) -> DialogContent {
    let c = &prompt.intent.client;
    DialogContent {
        requester: requester_of(c),
        declared_app_id: c.declared_app_id.clone(),
        icon: None,
        action: prompt.description.clone(),
        target: prompt.target.clone().unwrap_or_default(),
        steps: prompt.steps.clone(),
        extra_params: prompt.extra.clone(),
        challenge: challenge.map(str::to_string),
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
        voice_unavailable: voice_note.map(str::to_string),
        offer_session: prompt.offers_session(),
        entry: false,
        entry_account: false,
    }
}

/// What the dialog counts down to: the earliest deadline still running (any step timing out
/// denies the prompt, so a 10 s voice step is shown as 10 s even under a 30 s overlay), and
/// that step's whole timeout in seconds for the progress bar. Before the prompt is shown (no
/// deadlines yet) it is the overlay's own timeout.
pub(crate) fn countdown(p: &Prompt, timeouts: &TimeoutConfig) -> (Option<i64>, u32) {
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

/// When the countdown shown for `prompt` next changes (a whole second of its deadline passes),
/// so the dialog redraws once a second and no more.
pub(crate) fn next_countdown_change(
    prompt: &Prompt,
    timeouts: &TimeoutConfig,
    now: i64,
) -> Option<i64> {
    let (deadline, _) = countdown(prompt, timeouts);
    let left = deadline? - now;
    if left <= 0 {
        return None;
    }
    // The shown number is ceil(left / 1000): it drops when `left` reaches a multiple of 1000.
    let step = (left - 1) % 1000 + 1;
    Some(now + step)
}

/// The losses that end a prompt of `plan` as unshowable, in order (empty: nothing to end).
/// The gate ends a prompt `confirmation_unavailable` when its visual step is lost; a plan
/// without one (a haptic double-tap alone) first falls back to visual, which is then lost too.
/// A visual step already approved stays: the dialog was seen, and the rest (a spoken answer)
/// needs no output. Another authorizer (a parent session) needs no output either.
pub(crate) fn losses_to_end(plan: &Plan, answered: impl Fn(Modality) -> bool) -> Vec<Modality> {
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
