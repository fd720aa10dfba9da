//! The confirmation dialog as the compositor drives it: show/hide, live updates (countdown,
//! voice, haptic), input (pointer, touch, keyboard) through the clickjacking guard, and
//! rendering with buffers cached per scale and damage reported per region.
//!
//! Input never has a default: nothing is focused when the dialog appears, Enter does nothing
//! until Tab has put the focus on a control, and every activation waits for the guard.

use tiny_skia::Pixmap;

use crate::OverlayError;
use crate::config::{Config, ThemeName};
use crate::content::{Control, DialogContent, HapticState, LiveState, VoiceState};
use crate::draw::{Region, Scene, draw_full, draw_region};
use crate::guard::ClickGuard;
use crate::layout::{IRect, Layout, Row};
use crate::placement::{Output, Point, Rect, nearest_output, place_dialog};
use crate::text::Fonts;

/// At most this many (scale, output size) buffers are kept, e.g. while moving between outputs.
const MAX_CACHED: usize = 2;

/// The user's answer through the dialog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    Approve,
    Deny,
}

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
    Other,
}

/// Whether a key event is a press, an auto-repeat or a release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyState {
    Pressed,
    /// Auto-repeat: never activates anything.
    Repeated,
    Released,
}

/// A rendered dialog: the pixels and what changed since the previous render.
#[derive(Debug)]
pub struct RenderedDialog<'a> {
    /// Premultiplied RGBA, `size.0 × size.1` physical pixels.
    pub pixmap: &'a Pixmap,
    /// Size in logical pixels, for placement.
    pub logical_size: (i32, i32),
    /// Physical rectangles redrawn since the previous render; empty if nothing changed.
    pub damage: Vec<IRect>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PressSource {
    Pointer,
    Key,
}

#[derive(Debug, Clone, Copy)]
struct Press {
    control: Control,
    source: PressSource,
    at: u64,
}

struct Cached {
    scale: f64,
    output: (u32, u32),
    layout: Layout,
    pixmap: Pixmap,
    full: bool,
    regions: Vec<Region>,
}

struct Visible {
    content: DialogContent,
    live: LiveState,
    guard: ClickGuard,
    press: Option<Press>,
    answered: bool,
    cache: Vec<Cached>,
    /// Index in `cache` of the last rendered buffer: the one on screen, used for hit-testing.
    current: Option<usize>,
}

/// The dialog. One per compositor; it shows one prompt at a time.
pub struct ConfirmDialog {
    config: Config,
    fonts: Fonts,
    visible: Option<Box<Visible>>,
}

impl ConfirmDialog {
    /// A hidden dialog drawing with `fonts`.
    pub fn new(config: Config, fonts: Fonts) -> Self {
        ConfirmDialog {
            config,
            fonts,
            visible: None,
        }
    }

    /// Shows `content` (replacing any prompt on screen) at `now` ms; the guard starts counting.
    /// Invalid content is refused and nothing is shown.
    pub fn show(&mut self, content: DialogContent, now: u64) -> Result<(), OverlayError> {
        content.validate(self.config.max_steps)?;
        let mut guard = ClickGuard::new(
            self.config.guard_delay_ms,
            self.config.guard_early_press_extension_ms,
            self.config.guard_max_extension_ms,
        );
        guard.rearm(now);
        let live = LiveState {
            armed: false,
            ..LiveState::default()
        };
        self.visible = Some(Box::new(Visible {
            content,
            live,
            guard,
            press: None,
            answered: false,
            cache: Vec::new(),
            current: None,
        }));
        Ok(())
    }

    /// Hides the dialog and drops its buffers.
    pub fn hide(&mut self) {
        self.visible = None;
    }

    pub fn is_open(&self) -> bool {
        self.visible.is_some()
    }

    /// The live state (what the next render shows).
    pub fn live(&self) -> Option<&LiveState> {
        self.visible.as_ref().map(|v| &v.live)
    }

    /// The dialog moved (or went to another output) at `now`: the guard starts again.
    pub fn moved(&mut self, now: u64) {
        if let Some(v) = &mut self.visible {
            v.guard.rearm(now);
            v.press = None;
            v.live.hold_progress = 0.0;
            set_armed(v, false);
        }
    }

    /// Switches the palette; the next render is a full one.
    pub fn set_theme(&mut self, theme: ThemeName) {
        if self.config.theme != theme {
            self.config.theme = theme;
            if let Some(v) = &mut self.visible {
                v.cache.iter_mut().for_each(|c| c.full = true);
            }
        }
    }

    /// Updates the countdown.
    pub fn set_seconds_left(&mut self, seconds: u32) {
        if let Some(v) = &mut self.visible
            && v.live.seconds_left != Some(seconds)
        {
            v.live.seconds_left = Some(seconds);
            mark(v, Region::Countdown);
        }
    }

    /// Updates the voice modality: its state and the microphone level (0–1).
    pub fn set_voice(&mut self, state: VoiceState, level: f32) {
        let level = if level.is_finite() {
            level.clamp(0.0, 1.0)
        } else {
            0.0
        };
        if let Some(v) = &mut self.visible {
            let row = row_index(v, Row::Voice);
            if v.live.voice != state {
                v.live.voice = state;
                v.live.voice_level = level;
                if let Some(i) = row {
                    mark(v, Region::Row(i));
                }
            } else if v.live.voice_level != level {
                v.live.voice_level = level;
                mark(v, Region::Meter);
            }
        }
    }

    /// Updates the haptic modality.
    pub fn set_haptic(&mut self, state: HapticState) {
        if let Some(v) = &mut self.visible
            && v.live.haptic != state
        {
            v.live.haptic = state;
            if let Some(i) = row_index(v, Row::Haptic) {
                mark(v, Region::Row(i));
            }
        }
    }

    /// Advances time to `now`: enables the controls once the guard is ready, moves a
    /// press-and-hold along, and returns `Approve` when a hold completes. Call it on each frame
    /// (or at [`ConfirmDialog::next_deadline`]).
    pub fn advance(&mut self, now: u64) -> Option<Choice> {
        let hold_ms = self.config.hold_to_approve_ms;
        let v = self.visible.as_mut()?;
        if v.answered {
            return None;
        }
        let ready = v.guard.is_ready(now);
        set_armed(v, ready);
        let press = v.press?;
        if press.control != Control::Approve || !needs_hold(&self.config, &v.content) {
            return None;
        }
        let progress = (now.saturating_sub(press.at) as f64 / hold_ms.max(1) as f64).min(1.0);
        set_hold(v, progress as f32);
        if progress >= 1.0 {
            v.press = None;
            v.answered = true;
            return Some(Choice::Approve);
        }
        None
    }

    /// When `advance` next has something to do: the guard arming (or `None` if nothing pends;
    /// during a hold, call `advance` every frame).
    pub fn next_deadline(&self) -> Option<u64> {
        let v = self.visible.as_ref()?;
        (!v.live.armed).then(|| v.guard.ready_at()).flatten()
    }

    /// While Approve is held down and the plan asks for a press-and-hold: when the hold
    /// completes (`advance` at or after it returns `Approve`). `None` when nothing is held.
    pub fn hold_done_at(&self) -> Option<u64> {
        let v = self.visible.as_ref()?;
        let press = v.press.filter(|p| p.control == Control::Approve)?;
        needs_hold(&self.config, &v.content).then(|| press.at + self.config.hold_to_approve_ms)
    }

    /// The control under a logical, surface-local point, as last rendered.
    pub fn control_at(&self, x: f64, y: f64) -> Option<Control> {
        let v = self.visible.as_ref()?;
        let c = v.cache.get(v.current?)?;
        c.layout.control_at(x * c.scale, y * c.scale)
    }

    /// A control's bounds as last rendered, in logical surface-local pixels (x, y, w, h).
    pub fn control_bounds(&self, control: Control) -> Option<[f64; 4]> {
        let v = self.visible.as_ref()?;
        let c = v.cache.get(v.current?)?;
        let r = match control {
            Control::Approve => c.layout.approve,
            Control::Deny => c.layout.deny,
        };
        let s = c.scale;
        Some([
            f64::from(r.x) / s,
            f64::from(r.y) / s,
            f64::from(r.w) / s,
            f64::from(r.h) / s,
        ])
    }

    /// A pointer button or touch went down at a logical, surface-local point.
    pub fn pointer_down(&mut self, x: f64, y: f64, now: u64) -> Option<Choice> {
        let control = self.control_at(x, y)?;
        self.press(control, PressSource::Pointer, now)
    }

    /// The pointer moved; leaving the pressed control cancels the press.
    pub fn pointer_motion(&mut self, x: f64, y: f64) {
        let under = self.control_at(x, y);
        if let Some(v) = &mut self.visible
            && let Some(p) = v.press
            && p.source == PressSource::Pointer
            && under != Some(p.control)
        {
            cancel(v);
        }
    }

    /// A pointer button or touch went up: a click completes if it started on the same control.
    pub fn pointer_up(&mut self, x: f64, y: f64, now: u64) -> Option<Choice> {
        let under = self.control_at(x, y);
        self.release(PressSource::Pointer, under, now)
    }

    /// A key event at `now`.
    pub fn key(&mut self, key: Key, state: KeyState, now: u64) -> Option<Choice> {
        let v = self.visible.as_mut()?;
        match (key, state) {
            (_, KeyState::Repeated) | (Key::Other, _) => None,
            (Key::Tab { shift }, KeyState::Pressed) => {
                let next = match (v.live.focus, shift) {
                    (None, false) | (Some(Control::Approve), false) => Control::Deny,
                    (Some(Control::Deny), false) | (None, true) => Control::Approve,
                    (Some(Control::Approve), true) => Control::Deny,
                    (Some(Control::Deny), true) => Control::Approve,
                };
                if let Some(old) = v.live.focus {
                    mark(v, Region::Button(old));
                }
                if v.press.is_some_and(|p| p.source == PressSource::Key) {
                    cancel(v);
                }
                v.live.focus = Some(next);
                mark(v, Region::Button(next));
                None
            }
            (Key::Tab { .. }, KeyState::Released) => None,
            (Key::Escape, KeyState::Pressed) => self.press(Control::Deny, PressSource::Key, now),
            (Key::Escape, KeyState::Released) => None,
            (Key::Enter | Key::Space, KeyState::Pressed) => {
                let focus = v.live.focus?;
                self.press(focus, PressSource::Key, now)
            }
            (Key::Enter | Key::Space, KeyState::Released) => {
                let focus = v.live.focus;
                self.release(PressSource::Key, focus, now)
            }
        }
    }

    /// Starts a press; Deny by key and Approve without a hold answer at once, pointer presses
    /// wait for the release.
    fn press(&mut self, control: Control, source: PressSource, now: u64) -> Option<Choice> {
        let hold = needs_hold(&self.config, &self.visible.as_ref()?.content);
        let v = self.visible.as_mut()?;
        if v.answered {
            return None;
        }
        // Escape (a key-sourced Deny) wins over a hold in progress; anything else waits for it.
        let escape = source == PressSource::Key && control == Control::Deny;
        if v.press.is_some() && !escape {
            return None;
        }
        if !v.guard.press(now) {
            tracing::debug!(?control, "input before the guard delay ignored");
            return None;
        }
        set_armed(v, true);
        if escape {
            cancel(v);
        }
        if source == PressSource::Key && !(control == Control::Approve && hold) {
            v.answered = true;
            return Some(to_choice(control));
        }
        v.press = Some(Press {
            control,
            source,
            at: now,
        });
        if control == Control::Approve && hold {
            set_hold(v, 0.0);
        }
        None
    }

    fn release(&mut self, source: PressSource, under: Option<Control>, now: u64) -> Option<Choice> {
        let hold = needs_hold(&self.config, &self.visible.as_ref()?.content);
        let hold_ms = self.config.hold_to_approve_ms;
        let v = self.visible.as_mut()?;
        let p = v.press.filter(|p| p.source == source)?;
        cancel(v);
        if v.answered || under != Some(p.control) {
            return None;
        }
        if p.control == Control::Approve && hold && now.saturating_sub(p.at) < hold_ms {
            return None;
        }
        v.answered = true;
        Some(to_choice(p.control))
    }

    /// The dialog's size in logical pixels on an output of `output` logical pixels at `scale`
    /// (lays it out if needed; drawing waits for `render`).
    pub fn logical_size(
        &mut self,
        scale: f64,
        output: (u32, u32),
    ) -> Result<(i32, i32), OverlayError> {
        let i = self.entry(scale, output)?;
        let v = self
            .visible
            .as_ref()
            .ok_or_else(|| OverlayError::Layout("the dialog is hidden".into()))?;
        Ok(v.cache[i].layout.logical_size)
    }

    /// Chooses the output for a dialog about `focus` and the dialog's place on it (global
    /// logical coordinates). When the result differs from where it was, the compositor calls
    /// [`ConfirmDialog::moved`]. `Err` when there is no output or the dialog cannot fit on it.
    pub fn place(
        &mut self,
        focus: Point,
        outputs: &[Output],
    ) -> Result<(usize, Rect), OverlayError> {
        let i = nearest_output(focus, outputs)
            .ok_or_else(|| OverlayError::Layout("no usable output".into()))?;
        let o = outputs[i];
        let size = (o.rect.w.max(0) as u32, o.rect.h.max(0) as u32);
        let dialog = self.logical_size(o.scale, size)?;
        let rect = place_dialog(
            o.rect,
            dialog,
            Some(focus),
            self.config.large_output_width as i32,
            self.config.margin as i32,
        );
        Ok((i, rect))
    }

    /// The cache entry for (scale, output), laid out and marked for a full render if new.
    fn entry(&mut self, scale: f64, output: (u32, u32)) -> Result<usize, OverlayError> {
        let v = self
            .visible
            .as_mut()
            .ok_or_else(|| OverlayError::Layout("the dialog is hidden".into()))?;
        if let Some(i) = v
            .cache
            .iter()
            .position(|c| c.scale == scale && c.output == output)
        {
            return Ok(i);
        }
        let layout = Layout::compute(&mut self.fonts, &self.config, &v.content, scale, output)?;
        let (w, h) = (layout.size.0 as u32, layout.size.1 as u32);
        let pixmap = Pixmap::new(w, h).ok_or(OverlayError::Buffer {
            width: w,
            height: h,
        })?;
        if v.cache.len() >= MAX_CACHED {
            v.cache.remove(0);
            // The buffer on screen may have been the evicted one; until the next render no
            // control is hit (fail closed).
            v.current = v.current.and_then(|c| c.checked_sub(1));
        }
        v.cache.push(Cached {
            scale,
            output,
            layout,
            pixmap,
            full: true,
            regions: Vec::new(),
        });
        Ok(v.cache.len() - 1)
    }

    /// Renders for an output of `output` logical pixels at `scale`: a full render when the
    /// content, theme, scale or output size changed, else only the changed regions.
    pub fn render(
        &mut self,
        scale: f64,
        output: (u32, u32),
    ) -> Result<RenderedDialog<'_>, OverlayError> {
        let i = self.entry(scale, output)?;
        let palette = self.config.palette().clone();
        let v = self
            .visible
            .as_mut()
            .ok_or_else(|| OverlayError::Layout("the dialog is hidden".into()))?;
        v.current = Some(i);
        let scene = Scene {
            config: &self.config,
            palette: &palette,
            content: &v.content,
            live: &v.live,
        };
        let c = &mut v.cache[i];
        let mut damage = Vec::new();
        if c.full {
            draw_full(&mut self.fonts, &c.layout, &scene, &mut c.pixmap);
            damage.push(IRect::new(0, 0, c.layout.size.0, c.layout.size.1));
        } else {
            for region in &c.regions {
                let d = draw_region(&mut self.fonts, &c.layout, &scene, *region, &mut c.pixmap);
                if !d.is_empty() {
                    damage.push(d);
                }
            }
        }
        c.full = false;
        c.regions.clear();
        Ok(RenderedDialog {
            pixmap: &c.pixmap,
            logical_size: c.layout.logical_size,
            damage,
        })
    }
}

fn needs_hold(config: &Config, content: &DialogContent) -> bool {
    content.needs_hold(config)
}

fn to_choice(c: Control) -> Choice {
    match c {
        Control::Approve => Choice::Approve,
        Control::Deny => Choice::Deny,
    }
}

/// Queues a region for the next render of every cached buffer.
fn mark(v: &mut Visible, region: Region) {
    for c in &mut v.cache {
        if !c.regions.contains(&region) {
            c.regions.push(region);
        }
    }
}

fn row_index(v: &Visible, row: Row) -> Option<usize> {
    // Rows follow the content's modality order, the same in every cached layout.
    v.cache
        .first()
        .and_then(|c| c.layout.rows.iter().position(|(r, _)| *r == row))
}

fn set_armed(v: &mut Visible, armed: bool) {
    if v.live.armed != armed {
        v.live.armed = armed;
        mark(v, Region::Button(Control::Deny));
        mark(v, Region::Button(Control::Approve));
    }
}

fn set_hold(v: &mut Visible, progress: f32) {
    if v.live.hold_progress != progress {
        v.live.hold_progress = progress;
        mark(v, Region::Button(Control::Approve));
    }
}

fn cancel(v: &mut Visible) {
    v.press = None;
    set_hold(v, 0.0);
}

/// Renders one state of a dialog from scratch (no guard, no cache): what the renderer binary
/// and the golden tests use. `live` is drawn as given, `armed` included.
pub fn render_state(
    fonts: &mut Fonts,
    config: &Config,
    content: &DialogContent,
    live: &LiveState,
    scale: f64,
    output: (u32, u32),
) -> Result<Pixmap, OverlayError> {
    content.validate(config.max_steps)?;
    let layout = Layout::compute(fonts, config, content, scale, output)?;
    let (w, h) = (layout.size.0 as u32, layout.size.1 as u32);
    let mut pixmap = Pixmap::new(w, h).ok_or(OverlayError::Buffer {
        width: w,
        height: h,
    })?;
    let scene = Scene {
        config,
        palette: config.palette(),
        content,
        live,
    };
    draw_full(fonts, &layout, &scene, &mut pixmap);
    Ok(pixmap)
}
