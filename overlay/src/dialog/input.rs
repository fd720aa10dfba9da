//! Input to the dialog: pointer and touch presses on its controls, dragging and wheeling its
//! body, and keys while the host has given it the keyboard. Every rule that keeps input from
//! approving by accident lives here:
//!
//! - nothing that could approve counts inside the guard delay (an early press, key or click,
//!   pushes it later); a refusal never waits for it: Deny and Escape work as soon as the dialog
//!   is shown, since a click or key meant for something else can at worst deny, which the
//!   requester can ask again after;
//! - a click needs its press and release on the same control; a key needs its press and its
//!   release on the focused control, both after the guard (Deny's at any time); auto-repeat
//!   activates nothing;
//! - keys act only while the dialog has the keyboard; Tab moves the focus, and a focus move
//!   inside the guard delay does nothing either;
//! - Approve and "Allow until logout" take input only once the body has been on screen down to
//!   its end, and when the prompt asks for a hold, only after it;
//! - a press that began before [`ConfirmDialog::show`] replaced the prompt is forgotten.

use super::{Choice, ConfirmDialog, cancel, mark, needs_hold, set_armed, set_hold};
use crate::content::Control;
use crate::draw::Region;

/// The keys the dialog reacts to; the compositor maps keysyms to these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// Tab, or Shift-Tab with `shift`.
    Tab {
        shift: bool,
    },
    Enter,
    Space,
    Escape,
    /// Scroll the body one line.
    Up,
    Down,
    /// Scroll the body one view.
    PageUp,
    PageDown,
    /// Scroll the body to its start or end.
    Home,
    End,
    Other,
}

/// Whether a key event is a press, an auto-repeat or a release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyState {
    Pressed,
    /// Auto-repeat: never activates anything (it may scroll).
    Repeated,
    Released,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PressSource {
    Pointer,
    Key,
}

/// A press on a control that has not been released yet.
#[derive(Debug, Clone, Copy)]
pub(super) struct Press {
    pub control: Control,
    pub source: PressSource,
    pub at: u64,
}

/// A pointer or touch dragging the body: where it went down and the scroll offset then.
#[derive(Debug, Clone, Copy)]
pub(super) struct Drag {
    y: f64,
    scroll: f32,
}

fn to_choice(c: Control) -> Choice {
    match c {
        Control::Approve => Choice::Approve,
        Control::Session => Choice::ApproveForSession,
        Control::Deny => Choice::Deny,
    }
}

fn approving(c: Control) -> bool {
    matches!(c, Control::Approve | Control::Session)
}

impl ConfirmDialog {
    /// Whether Approve is locked now ([`LiveState::approve_locked`](crate::LiveState)).
    fn approve_locked(&self) -> bool {
        self.visible.as_ref().is_some_and(|v| v.live.approve_locked)
    }

    /// Advances time to `now`: enables the controls once the guard is ready, moves a
    /// press-and-hold along, and returns the approving choice when a pointer or touch hold
    /// completes (a key hold completes at the key's release). Call it on each frame (or at
    /// [`ConfirmDialog::next_deadline`]).
    pub fn advance(&mut self, now: u64) -> Option<Choice> {
        let hold_ms = self.config.hold_to_approve_ms;
        let config = &self.config;
        let v = self.visible.as_mut()?;
        if v.answered {
            return None;
        }
        let ready = v.guard.is_ready(now);
        set_armed(v, ready);
        let press = v.press?;
        if !approving(press.control) || !needs_hold(config, &v.content) {
            return None;
        }
        let progress = (now.saturating_sub(press.at) as f64 / hold_ms.max(1) as f64).min(1.0);
        set_hold(config, v, press.control, progress as f32);
        if progress >= 1.0 && press.source == PressSource::Pointer {
            v.press = None;
            v.answered = true;
            return Some(to_choice(press.control));
        }
        None
    }

    /// When `advance` next has something to do: the guard arming (or `None` if nothing pends;
    /// during a hold, call `advance` every frame).
    pub fn next_deadline(&self) -> Option<u64> {
        let v = self.visible.as_ref()?;
        (!v.live.armed).then(|| v.guard.ready_at()).flatten()
    }

    /// While an approving control is held down and the plan asks for a press-and-hold: when
    /// the hold is full (call `advance` every frame until then; a pointer or touch hold then
    /// returns its choice from `advance`, a key hold at the key's release). `None` when
    /// nothing is held.
    pub fn hold_done_at(&self) -> Option<u64> {
        let v = self.visible.as_ref()?;
        let press = v.press.filter(|p| approving(p.control))?;
        (!v.answered && needs_hold(&self.config, &v.content))
            .then(|| press.at.saturating_add(self.config.hold_to_approve_ms))
    }

    /// The control under a logical, surface-local point, as last rendered.
    pub fn control_at(&self, x: f64, y: f64) -> Option<Control> {
        let c = self.current()?;
        c.layout.control_at(x * c.scale, y * c.scale)
    }

    /// Whether a logical, surface-local point lies on the dialog as last rendered (a click or
    /// tap there is the dialog's, e.g. to give it the keyboard).
    pub fn contains(&self, x: f64, y: f64) -> bool {
        self.current().is_some_and(|c| {
            let (w, h) = c.layout.logical_size;
            x >= 0.0 && y >= 0.0 && x < f64::from(w) && y < f64::from(h)
        })
    }

    /// The live row at a logical, surface-local point, as last rendered.
    pub fn row_at(&self, x: f64, y: f64) -> Option<crate::layout::Row> {
        let c = self.current()?;
        let (px, py) = (x * c.scale, y * c.scale);
        c.layout
            .rows
            .iter()
            .find(|(_, r)| r.contains(px, py))
            .map(|(row, _)| *row)
    }

    /// A live row's bounds as last rendered, in logical surface-local pixels (x, y, w, h).
    pub fn row_bounds(&self, row: crate::layout::Row) -> Option<[f64; 4]> {
        let c = self.current()?;
        let rect = c.layout.rows.iter().find(|(r, _)| *r == row)?.1;
        Some(logical(rect, c.scale))
    }

    /// A control's bounds as last rendered, in logical surface-local pixels (x, y, w, h).
    pub fn control_bounds(&self, control: Control) -> Option<[f64; 4]> {
        let c = self.current()?;
        Some(logical(c.layout.control_rect(control)?, c.scale))
    }

    /// The body's view as last rendered, in logical surface-local pixels (x, y, w, h).
    pub fn body_bounds(&self) -> Option<[f64; 4]> {
        let c = self.current()?;
        Some(logical(c.layout.body, c.scale))
    }

    /// Whether the body on screen is taller than its view (and must be scrolled to its end
    /// before Approve takes input).
    pub fn body_scrolls(&self) -> bool {
        self.current().is_some_and(|c| c.layout.scrolls())
    }

    /// A pointer button or touch went down at a logical, surface-local point: a press on a
    /// control, or the start of a drag on the body.
    pub fn pointer_down(&mut self, x: f64, y: f64, now: u64) -> Option<Choice> {
        if let Some(control) = self.control_at(x, y) {
            return self.press(control, PressSource::Pointer, now);
        }
        let on_body = self
            .body_bounds()
            .is_some_and(|[bx, by, bw, bh]| x >= bx && y >= by && x < bx + bw && y < by + bh);
        if let Some(v) = &mut self.visible
            && on_body
        {
            v.drag = Some(Drag {
                y,
                scroll: v.live.scroll,
            });
        }
        None
    }

    /// The pointer or touch moved: a drag scrolls the body; leaving the pressed control
    /// cancels the press.
    pub fn pointer_motion(&mut self, x: f64, y: f64) {
        let under = self.control_at(x, y);
        let drag = self.visible.as_ref().and_then(|v| v.drag);
        if let Some(d) = drag {
            self.scroll_to(f64::from(d.scroll) + (d.y - y));
        }
        let config = &self.config;
        if let Some(v) = &mut self.visible
            && let Some(p) = v.press
            && p.source == PressSource::Pointer
            && under != Some(p.control)
        {
            cancel(config, v);
        }
    }

    /// A pointer button or touch went up: a click completes if it started on the same control.
    pub fn pointer_up(&mut self, x: f64, y: f64, now: u64) -> Option<Choice> {
        if let Some(v) = &mut self.visible {
            v.drag = None;
        }
        let under = self.control_at(x, y);
        self.release(PressSource::Pointer, under, now)
    }

    /// A wheel or touchpad scrolled the body by `dy` logical pixels (positive: towards its
    /// end). Reading needs no guard: scrolling never answers.
    pub fn scroll(&mut self, dy: f64) {
        if let Some(v) = &self.visible
            && dy.is_finite()
        {
            let to = f64::from(v.live.scroll) + dy;
            self.scroll_to(to);
        }
    }

    /// Scrolls the body to `logical` pixels from its top, clamped to the layout on screen.
    fn scroll_to(&mut self, logical: f64) {
        let max = self
            .current()
            .map_or(0.0, |c| f64::from(c.layout.max_scroll()) / c.scale);
        let Some(v) = &mut self.visible else {
            return;
        };
        let to = if logical.is_finite() {
            logical.clamp(0.0, max) as f32
        } else {
            0.0
        };
        if v.live.scroll != to {
            v.live.scroll = to;
            mark(v, Region::Body);
        }
    }

    /// A key event at `now`. Keys act only while the dialog has the keyboard.
    pub fn key(&mut self, key: Key, state: KeyState, now: u64) -> Option<Choice> {
        if !self.keyboard {
            return None;
        }
        let v = self.visible.as_ref()?;
        if v.answered {
            return None;
        }
        match state {
            KeyState::Released => match key {
                Key::Enter | Key::Space => {
                    let focus = v.live.focus;
                    self.release(PressSource::Key, focus, now)
                }
                _ => None,
            },
            KeyState::Repeated => {
                // Holding an arrow key scrolls on; nothing else repeats.
                if v.guard.is_ready(now)
                    && let Some(dy) = self.scroll_step(key)
                {
                    self.scroll(dy);
                }
                None
            }
            KeyState::Pressed => {
                let v = self.visible.as_mut()?;
                if key == Key::Escape {
                    // A refusal never waits for the guard.
                    cancel(&self.config, v);
                    v.answered = true;
                    return Some(Choice::Deny);
                }
                // Any other key inside the guard delay does nothing, focus moves included, and
                // pushes the delay on like an early click.
                if !v.guard.press(now) {
                    tracing::debug!(?key, "key before the guard delay ignored");
                    return None;
                }
                set_armed(v, true);
                match key {
                    Key::Tab { shift } => {
                        self.move_focus(shift);
                        None
                    }
                    Key::Enter | Key::Space => {
                        let focus = v.live.focus?;
                        self.press(focus, PressSource::Key, now)
                    }
                    Key::Other => None,
                    _ => {
                        if let Some(dy) = self.scroll_step(key) {
                            self.scroll(dy);
                        }
                        None
                    }
                }
            }
        }
    }

    /// How far a scrolling key moves the body, in logical pixels (`None`: not a scrolling key).
    fn scroll_step(&self, key: Key) -> Option<f64> {
        let c = self.current()?;
        let line = f64::from(c.layout.line) / c.scale;
        let page = (f64::from(c.layout.body.h) / c.scale - line).max(line);
        let far = f64::from(c.layout.body_height) / c.scale;
        Some(match key {
            Key::Up => -line,
            Key::Down => line,
            Key::PageUp => -page,
            Key::PageDown => page,
            Key::Home => -far,
            Key::End => far,
            _ => return None,
        })
    }

    /// Tab: Deny, Approve, then "Allow until logout" when offered, round; Shift-Tab backwards.
    /// From nothing, Tab goes to the first and Shift-Tab to the last.
    fn move_focus(&mut self, shift: bool) {
        let config = &self.config;
        let Some(v) = &mut self.visible else {
            return;
        };
        let mut order = vec![Control::Deny, Control::Approve];
        if v.content.offer_session {
            order.push(Control::Session);
        }
        let n = order.len();
        let next = match v
            .live
            .focus
            .and_then(|f| order.iter().position(|&c| c == f))
        {
            None if shift => order[n - 1],
            None => order[0],
            Some(i) if shift => order[(i + n - 1) % n],
            Some(i) => order[(i + 1) % n],
        };
        if let Some(old) = v.live.focus {
            mark(v, Region::Button(old));
        }
        if v.press.is_some_and(|p| p.source == PressSource::Key) {
            cancel(config, v);
        }
        v.live.focus = Some(next);
        mark(v, Region::Button(next));
    }

    /// Starts a press on `control`; every answer waits for the release (or, for a pointer
    /// hold, for `advance`).
    fn press(&mut self, control: Control, source: PressSource, now: u64) -> Option<Choice> {
        let hold = needs_hold(&self.config, &self.visible.as_ref()?.content);
        let read = self.current().is_some_and(|c| c.read_all) && !self.approve_locked();
        let config = &self.config;
        let v = self.visible.as_mut()?;
        if v.answered || v.press.is_some() {
            return None;
        }
        // Deny needs no guard: only what approves waits for it (and an early press on Deny
        // does not push it later).
        if approving(control) {
            if !v.guard.press(now) {
                tracing::debug!(?control, "input before the guard delay ignored");
                return None;
            }
            set_armed(v, true);
        }
        if approving(control) && !read {
            tracing::debug!(
                ?control,
                "press before the body was read to its end (or while Approve is locked) ignored"
            );
            return None;
        }
        v.press = Some(Press {
            control,
            source,
            at: now,
        });
        if approving(control) && hold {
            set_hold(config, v, control, 0.0);
        }
        None
    }

    fn release(&mut self, source: PressSource, under: Option<Control>, now: u64) -> Option<Choice> {
        let hold = needs_hold(&self.config, &self.visible.as_ref()?.content);
        let read = self.current().is_some_and(|c| c.read_all) && !self.approve_locked();
        let hold_ms = self.config.hold_to_approve_ms;
        let config = &self.config;
        let v = self.visible.as_mut()?;
        let p = v.press.filter(|p| p.source == source)?;
        cancel(config, v);
        if v.answered || under != Some(p.control) {
            return None;
        }
        if approving(p.control) && !v.guard.is_ready(now) {
            return None;
        }
        if approving(p.control) {
            if !read {
                return None;
            }
            if hold && now.saturating_sub(p.at) < hold_ms {
                return None;
            }
        }
        v.answered = true;
        Some(to_choice(p.control))
    }
}

/// A physical rectangle as logical (x, y, w, h).
fn logical(r: crate::layout::IRect, scale: f64) -> [f64; 4] {
    [
        f64::from(r.x) / scale,
        f64::from(r.y) / scale,
        f64::from(r.w) / scale,
        f64::from(r.h) / scale,
    ]
}
