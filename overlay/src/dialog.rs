//! The confirmation dialog as the compositor drives it: show/hide, live updates (countdown,
//! queue badge, voice, haptic), the keyboard focus the host gives and takes, and rendering with
//! buffers cached per scale and damage reported per region. Input (pointer, touch, wheel,
//! keys) is in the `input` module.
//!
//! Input never has a default: nothing is focused when the dialog appears, Enter does nothing
//! until Tab has put the focus on a control, and every activation waits for the guard. A change
//! of content is a new prompt ([`ConfirmDialog::show`]): the guard re-arms and any press that
//! began before is forgotten. A change of the queue count is not ([`ConfirmDialog::set_queued`]).

mod input;

use tiny_skia::Pixmap;

use self::input::{Drag, Press};
pub use self::input::{Key, KeyState};
use crate::OverlayError;
use crate::config::{Config, Palette, ThemeName};
use crate::content::{Control, DialogContent, HapticState, LiveState, VoiceState};
use crate::draw::{Region, Scene, draw_full, draw_region, shown_progress};
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
    /// "Allow until logout": approve this one and the same ask for the rest of the session.
    ApproveForSession,
    Deny,
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

struct Cached {
    scale: f64,
    output: (u32, u32),
    layout: Layout,
    pixmap: Pixmap,
    full: bool,
    regions: Vec<Region>,
    /// Whether this layout's body has been on screen down to its end.
    read_all: bool,
}

struct Visible {
    content: DialogContent,
    live: LiveState,
    guard: ClickGuard,
    press: Option<Press>,
    drag: Option<Drag>,
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
    /// The host gave the dialog the keyboard (a click or tap on it, a shortcut, or a modal
    /// prompt). Keys act only then.
    keyboard: bool,
    /// The desktop asks for high contrast.
    desktop_high_contrast: bool,
}

impl ConfirmDialog {
    /// A hidden dialog drawing with `fonts`.
    pub fn new(config: Config, fonts: Fonts) -> Self {
        ConfirmDialog {
            config,
            fonts,
            visible: None,
            keyboard: false,
            desktop_high_contrast: false,
        }
    }

    /// The configuration it draws with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Replaces the configuration (a reload), keeping the fonts. A prompt on screen is laid out
    /// again at its next render; until then no control is hit (fail closed), and the body
    /// counts as unread in the new layout.
    pub fn set_config(&mut self, config: Config) {
        self.config = config;
        if let Some(v) = &mut self.visible {
            v.cache.clear();
            v.current = None;
            v.press = None;
            v.drag = None;
            v.live.hold_progress = 0.0;
        }
    }

    /// Shows `content` as a new prompt (replacing any prompt on screen) at `now` ms: the guard
    /// starts counting, nothing is focused, the body is at its top, and a press that began
    /// before does nothing. Invalid content is refused and nothing is shown (the prompt that
    /// was on screen stays).
    pub fn show(&mut self, content: DialogContent, now: u64) -> Result<(), OverlayError> {
        content.validate(&self.config)?;
        let mut guard = ClickGuard::new(
            self.config.guard_delay_ms,
            self.config.guard_early_press_extension_ms,
            self.config.guard_max_extension_ms,
        );
        guard.rearm(now);
        let live = LiveState {
            armed: false,
            keyboard: self.keyboard,
            ..LiveState::default()
        };
        self.visible = Some(Box::new(Visible {
            content,
            live,
            guard,
            press: None,
            drag: None,
            answered: false,
            cache: Vec::new(),
            current: None,
        }));
        Ok(())
    }

    /// Hides the dialog, drops its buffers and gives up the keyboard.
    pub fn hide(&mut self) {
        self.visible = None;
        self.keyboard = false;
    }

    pub fn is_open(&self) -> bool {
        self.visible.is_some()
    }

    /// The prompt on screen.
    pub fn content(&self) -> Option<&DialogContent> {
        self.visible.as_ref().map(|v| &v.content)
    }

    /// The live state (what the next render shows).
    pub fn live(&self) -> Option<&LiveState> {
        self.visible.as_ref().map(|v| &v.live)
    }

    /// The dialog moved (or went to another output) at `now`: the guard starts again.
    pub fn moved(&mut self, now: u64) {
        let config = &self.config;
        if let Some(v) = &mut self.visible {
            v.guard.rearm(now);
            cancel(config, v);
            v.drag = None;
            set_armed(v, false);
        }
    }

    /// Whether keys act on the dialog: the host gave it the keyboard.
    pub fn has_keyboard_focus(&self) -> bool {
        self.keyboard
    }

    /// What the prompt's text entry shows now (the content says it has one); `None` clears it.
    pub fn set_entry(&mut self, entry: Option<crate::content::EntryLine>) {
        if let Some(v) = &mut self.visible
            && v.live.entry != entry
        {
            v.live.entry = entry;
            full(v);
        }
    }

    /// Locks Approve (and "Allow until logout") until a step outside the dialog's buttons is
    /// done, e.g. a password its front end has not accepted yet; unlocks it (`false`). A press
    /// on Approve in progress is dropped. Lasts for the prompt shown.
    pub fn set_approve_locked(&mut self, locked: bool) {
        let config = &self.config;
        if let Some(v) = &mut self.visible
            && v.live.approve_locked != locked
        {
            if locked && v.press.is_some() {
                cancel(config, v);
            }
            v.live.approve_locked = locked;
            full(v);
        }
    }

    /// The host gives the dialog the keyboard (a click or tap on it, its shortcut, or a modal
    /// prompt: call it right after [`ConfirmDialog::show`] to keep the dialog modal) or takes it
    /// back. Taking it back drops the focus ring and any key held on a control; giving it puts
    /// the focus nowhere, so Enter still does nothing before Tab.
    pub fn set_keyboard_focus(&mut self, focused: bool) {
        if self.keyboard == focused {
            return;
        }
        self.keyboard = focused;
        let config = &self.config;
        if let Some(v) = &mut self.visible {
            if v.press.is_some_and(|p| p.source == input::PressSource::Key) {
                cancel(config, v);
            }
            v.live.focus = None;
            v.live.keyboard = focused;
            full(v);
        }
    }

    /// Switches the palette; the next render is a full one.
    pub fn set_theme(&mut self, theme: ThemeName) {
        if self.config.theme != theme {
            self.config.theme = theme;
            if let Some(v) = &mut self.visible {
                full(v);
            }
        }
    }

    /// The desktop asks (or stops asking) for high contrast: with `follow_desktop_contrast`,
    /// the high-contrast palette replaces the configured theme while it does.
    pub fn set_desktop_high_contrast(&mut self, high: bool) {
        if self.desktop_high_contrast != high {
            self.desktop_high_contrast = high;
            if let Some(v) = &mut self.visible {
                full(v);
            }
        }
    }

    /// The palette drawn with now.
    pub fn palette(&self) -> &Palette {
        if self.config.follow_desktop_contrast && self.desktop_high_contrast {
            &self.config.themes.high_contrast
        } else {
            self.config.palette()
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

    /// Updates the queue badge: `n` other prompts wait. Only the badge is redrawn; the guard,
    /// focus, presses and scrolling of the prompt on screen are untouched.
    pub fn set_queued(&mut self, n: u32) {
        if let Some(v) = &mut self.visible
            && v.live.queued.unwrap_or(v.content.queued) != n
        {
            v.live.queued = Some(n);
            mark(v, Region::Badge);
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
                if !self.config.reduced_motion {
                    mark(v, Region::Meter);
                }
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
            read_all: false,
        });
        Ok(v.cache.len() - 1)
    }

    /// Renders for an output of `output` logical pixels at `scale`: a full render when the
    /// content, theme, scale, output size or keyboard focus changed, else only the changed
    /// regions.
    pub fn render(
        &mut self,
        scale: f64,
        output: (u32, u32),
    ) -> Result<RenderedDialog<'_>, OverlayError> {
        let i = self.entry(scale, output)?;
        let palette = self.palette().clone();
        let v = self
            .visible
            .as_mut()
            .ok_or_else(|| OverlayError::Layout("the dialog is hidden".into()))?;
        v.current = Some(i);
        // The body counts as read once this layout has shown its end.
        let c = &mut v.cache[i];
        c.read_all |= !c.layout.scrolls() || c.layout.at_end(v.live.scroll);
        if v.live.read_all != c.read_all {
            v.live.read_all = c.read_all;
            mark(v, Region::Button(Control::Approve));
            mark(v, Region::Button(Control::Session));
        }
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

    /// The layout on screen.
    fn current(&self) -> Option<&Cached> {
        let v = self.visible.as_ref()?;
        v.cache.get(v.current?)
    }

    /// Every text the dialog on screen draws now ([`crate::draw::drawn_texts`]): what a
    /// person reads on it, for tools that report it. Empty while it is hidden or not yet
    /// rendered.
    pub fn drawn_texts(&self) -> Vec<String> {
        let (Some(v), Some(c)) = (self.visible.as_ref(), self.current()) else {
            return Vec::new();
        };
        let scene = Scene {
            config: &self.config,
            palette: self.palette(),
            content: &v.content,
            live: &v.live,
        };
        crate::draw::drawn_texts(&c.layout, &scene)
    }

    /// The characters of `text` this dialog's fonts cannot draw (each would be an empty box).
    pub fn missing_glyphs(&mut self, text: &str) -> Vec<char> {
        self.fonts.missing_glyphs(text)
    }

    /// The characters of [`ConfirmDialog::drawn_texts`] drawn as empty boxes: none when every
    /// text on screen is legible.
    pub fn drawn_missing_glyphs(&mut self) -> Vec<char> {
        let mut missing: Vec<char> = Vec::new();
        for text in self.drawn_texts() {
            for c in self.fonts.missing_glyphs(&text) {
                if !missing.contains(&c) {
                    missing.push(c);
                }
            }
        }
        missing
    }

    /// The layout on screen, for tests and tools that check where things went.
    pub fn layout(&self) -> Option<&Layout> {
        self.current().map(|c| &c.layout)
    }
}

fn needs_hold(config: &Config, content: &DialogContent) -> bool {
    content.needs_hold(config)
}

/// Queues a region for the next render of every cached buffer.
fn mark(v: &mut Visible, region: Region) {
    for c in &mut v.cache {
        if !c.regions.contains(&region) {
            c.regions.push(region);
        }
    }
}

/// The next render of every cached buffer is a full one.
fn full(v: &mut Visible) {
    v.cache.iter_mut().for_each(|c| c.full = true);
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
        for c in [Control::Deny, Control::Approve, Control::Session] {
            mark(v, Region::Button(c));
        }
    }
}

fn set_hold(config: &Config, v: &mut Visible, control: Control, progress: f32) {
    let before = (v.live.held, shown_progress(config, v.live.hold_progress));
    v.live.held = control;
    v.live.hold_progress = progress;
    let after = (control, shown_progress(config, progress));
    if before != after {
        mark(v, Region::Button(before.0));
        mark(v, Region::Button(control));
    }
}

/// Forgets the press in progress (and its hold progress).
fn cancel(config: &Config, v: &mut Visible) {
    v.press = None;
    let held = v.live.held;
    set_hold(config, v, held, 0.0);
}

/// Renders one state of a dialog from scratch (no guard, no cache): what the renderer binary
/// and the golden tests use. `live` is drawn as given, `armed` included; the body counts as read
/// when `live.read_all` says so, when it fits or when its end is in view.
pub fn render_state(
    fonts: &mut Fonts,
    config: &Config,
    content: &DialogContent,
    live: &LiveState,
    scale: f64,
    output: (u32, u32),
) -> Result<Pixmap, OverlayError> {
    let layout = layout_state(fonts, config, content, scale, output)?;
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

/// The layout [`render_state`] draws, after validating the content.
pub fn layout_state(
    fonts: &mut Fonts,
    config: &Config,
    content: &DialogContent,
    scale: f64,
    output: (u32, u32),
) -> Result<Layout, OverlayError> {
    content.validate(config)?;
    Layout::compute(fonts, config, content, scale, output)
}
