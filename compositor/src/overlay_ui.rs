//! The overlay on screen: which prompt the dialog shows, on which output (nearest the focal
//! point), where on it, and the buffer the renderer draws above every surface. A prompt that
//! cannot be shown is denied (fail closed), never approved.

use pcp_gate::{Modality, ModalityEvent, Prompt, RiskClass};
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
    let mut app = c.display_name().to_string();
    let mut who = Vec::new();
    if let Some(pid) = c.pid {
        who.push(format!("pid {pid}"));
    }
    if let Some(uid) = c.uid {
        who.push(format!("uid {uid}"));
    }
    if !who.is_empty() {
        app = format!("{app} ({})", who.join(", "));
    }
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

impl State {
    /// Brings the overlay in line with the gate: shows the active prompt (or hides), places it
    /// on the output nearest the focal point, updates the countdown, advances the guard and a
    /// press-and-hold, and redraws its buffer when something changed.
    pub fn sync_overlay(&mut self) {
        let now = self.clock.now_ms();
        let now_u = now.max(0) as u64;
        let gate = self.intents.gate();
        let timeout = gate.config().file.timeouts.visual_seconds;
        let queued = gate.prompts().count().saturating_sub(1) as u32;
        let active = gate.active().map(|p| {
            let deadline = p.deadline(Modality::Visual).or(p.next_deadline());
            let left =
                deadline.map_or(timeout, |d| ((d - now).max(0) as u64).div_ceil(1000) as u32);
            let plan = (p.plan.modalities.clone(), p.plan.press_and_hold);
            (p.id, left, content_of(p, queued, left, timeout), plan)
        });
        self.overlay.timeout_seconds = timeout;
        match active {
            None => {
                self.overlay.shown_plan = None;
                if self.overlay.shown.take().is_some() {
                    self.overlay.dialog_mut().hide();
                    self.overlay.placement = None;
                    self.overlay.buffer = None;
                    self.restore_keyboard_focus();
                    self.dirty = true;
                }
                return;
            }
            Some((id, left, content, plan)) => {
                if self.overlay.shown != Some((id, queued))
                    || self.overlay.shown_plan.as_ref() != Some(&plan)
                {
                    let first = self.overlay.shown.is_none();
                    if let Err(e) = self.overlay.dialog_mut().show(content, now_u) {
                        tracing::warn!("the prompt cannot be shown, denying it: {e}");
                        self.overlay.shown = None;
                        crate::intent::respond(self, ModalityEvent::Lost(Modality::Visual));
                        return;
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
                crate::intent::respond(self, ModalityEvent::Lost(Modality::Visual));
                return;
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
            return;
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
            }
            Err(e) => {
                tracing::warn!("the prompt cannot be drawn, denying it: {e}");
                crate::intent::respond(self, ModalityEvent::Lost(Modality::Visual));
            }
        }
    }
}
