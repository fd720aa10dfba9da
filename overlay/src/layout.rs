//! Layout: where every element of the dialog goes, in physical pixels with integer edges, for a
//! given content, scale and output size.
//!
//! Nothing an action does is hidden: the requester, the action, the target, every step and every
//! extra parameter wrap in full, never ellipsized. The requester sits in the fixed header, so no
//! client text can push it off the dialog; the action, target, steps and parameters form the
//! *body*, which scrolls when it does not fit. Long content first shrinks a little (zoom ≥
//! [`MIN_UNSCROLLED_ZOOM`]), then scrolls; if even the fixed part cannot fit, layout fails and
//! the compositor denies (fail closed). Touch targets never shrink below `min_target`.

mod build;
mod rows;

pub(crate) use build::queued_label;

use crate::OverlayError;
use crate::config::Config;
use crate::content::{Control, DialogContent};
use crate::text::{Fonts, Shaped, TextStyle};

/// Zoom factors tried in order when the content does not fit at full size.
const ZOOMS: [f32; 6] = [1.0, 0.9, 0.8, 0.7, 0.6, 0.5];
/// Below this zoom, scrolling the body is preferred to shrinking the text further.
pub const MIN_UNSCROLLED_ZOOM: f32 = 0.8;
/// Smallest output area (logical, after margins) the dialog will try to fit.
const MIN_AREA: (u32, u32) = (240, 200);
/// Scales accepted; beyond them something upstream is wrong.
const SCALE_RANGE: (f64, f64) = (0.5, 4.0);
/// Width of the keyboard focus ring, in logical pixels.
pub const RING_W: f32 = 2.0;
/// Gap between the focus ring and its button, in logical pixels.
pub const RING_GAP: f32 = 2.0;

/// A rectangle in physical pixels; contains `[x, x + w) × [y, y + h)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IRect {
    pub x: i32,
    pub y: i32,
    pub w: i32,
    pub h: i32,
}

impl IRect {
    /// The rectangle at (`x`, `y`) of `w` × `h` pixels.
    pub const fn new(x: i32, y: i32, w: i32, h: i32) -> IRect {
        IRect { x, y, w, h }
    }
    /// One past the last column.
    pub fn right(&self) -> i32 {
        self.x + self.w
    }
    /// One past the last row.
    pub fn bottom(&self) -> i32 {
        self.y + self.h
    }
    /// The overlap of two rectangles (empty if none).
    pub fn intersect(&self, o: &IRect) -> IRect {
        let x = self.x.max(o.x);
        let y = self.y.max(o.y);
        let r = self.right().min(o.right());
        let b = self.bottom().min(o.bottom());
        IRect::new(x, y, (r - x).max(0), (b - y).max(0))
    }
    /// The smallest rectangle covering both (an empty one counts as nothing).
    pub fn union(&self, o: &IRect) -> IRect {
        if self.is_empty() {
            return *o;
        }
        if o.is_empty() {
            return *self;
        }
        let x = self.x.min(o.x);
        let y = self.y.min(o.y);
        IRect::new(
            x,
            y,
            self.right().max(o.right()) - x,
            self.bottom().max(o.bottom()) - y,
        )
    }
    /// Grown by `d` on every side.
    pub fn inflate(&self, d: i32) -> IRect {
        IRect::new(self.x - d, self.y - d, self.w + 2 * d, self.h + 2 * d)
    }
    /// Moved down by `dy`.
    pub fn shifted(&self, dy: i32) -> IRect {
        IRect::new(self.x, self.y + dy, self.w, self.h)
    }
    /// Whether it covers no pixel.
    pub fn is_empty(&self) -> bool {
        self.w <= 0 || self.h <= 0
    }
    /// Whether `inner` lies entirely inside (an empty `inner` always does).
    pub fn contains_rect(&self, inner: &IRect) -> bool {
        inner.is_empty()
            || (inner.x >= self.x
                && inner.y >= self.y
                && inner.right() <= self.right()
                && inner.bottom() <= self.bottom())
    }
    /// Whether the physical point lies inside.
    pub fn contains(&self, x: f64, y: f64) -> bool {
        x >= f64::from(self.x)
            && y >= f64::from(self.y)
            && x < f64::from(self.right())
            && y < f64::from(self.bottom())
    }
    /// As a tiny-skia rectangle.
    pub fn to_skia(self) -> Option<tiny_skia::Rect> {
        tiny_skia::Rect::from_xywh(self.x as f32, self.y as f32, self.w as f32, self.h as f32)
    }
}

/// How a static text is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Text,
    Muted,
    Risk,
    Monogram,
    /// The requester's verification line, for a sandboxed (verified) app.
    Verified,
    /// The requester's verification line, for an unconfined or unknown one.
    Unverified,
}

/// A shaped text in its own box: it is drawn clipped to that box, so nothing in it (a long
/// glyph, a stack of marks) paints over anything else.
#[derive(Debug)]
pub struct Placed {
    pub text: Shaped,
    pub x: i32,
    pub y: i32,
    /// The width it was shaped for: the box's width.
    pub w: i32,
    pub role: Role,
}

impl Placed {
    /// The box it is drawn in.
    pub fn bounds(&self) -> IRect {
        IRect::new(self.x, self.y, self.w, self.text.height)
    }
}

/// A live row under the separator: one per modality other than visual, plus why voice is
/// missing, the hold hint, and a text entry's two rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Row {
    Voice,
    Haptic,
    VoiceUnavailable,
    Hold,
    /// A text entry: what it asks and what it shows (dots for a password).
    Entry,
    /// The entry's message (a failed try, PAM's text).
    EntryMessage,
    /// Which account the entry is for; a press asks for the next one.
    EntryAccount,
}

/// The dialog laid out for one content, scale and output size.
#[derive(Debug)]
pub struct Layout {
    pub scale: f64,
    /// The factor from logical design sizes of text to physical pixels
    /// (`scale × zoom × text scale`).
    pub k: f32,
    /// The same for spacing, strokes and bars (`scale × zoom`).
    pub ks: f32,
    /// Size in logical pixels (what the compositor places).
    pub logical_size: (i32, i32),
    /// Size of the pixel buffer.
    pub size: (i32, i32),
    pub radius: f32,
    pub stripe: i32,
    pub border: i32,
    pub icon: IRect,
    pub risk_dot: IRect,
    /// The framed box of the challenge word, when there is one.
    pub challenge_box: Option<IRect>,
    pub separator: IRect,
    /// Texts that never move (header, risk, challenge).
    pub texts: Vec<Placed>,
    /// The part of the dialog the body is seen through.
    pub body: IRect,
    /// The body's texts; `y` counts from the top of the body's content, before scrolling.
    pub body_texts: Vec<Placed>,
    /// Height of the body's content; more than `body.h` when it scrolls.
    pub body_height: i32,
    /// Everything [`crate::draw::Region::Body`] repaints: the body, its scroll bar and the hint.
    pub body_region: IRect,
    /// The scroll bar's track, right of the body, when the body scrolls.
    pub scrollbar: Option<IRect>,
    /// The row saying that more is above or below, when the body scrolls.
    pub scroll_hint: Option<IRect>,
    /// One body line, in physical pixels (a keyboard scroll step).
    pub line: i32,
    pub rows: Vec<(Row, IRect)>,
    /// The voice level meter, inside the voice row (none with reduced motion).
    pub meter: Option<IRect>,
    /// The countdown row (text and bar).
    pub countdown: IRect,
    pub countdown_bar: IRect,
    /// Where the queue badge goes when prompts wait (reserved whatever the count).
    pub badge: IRect,
    pub deny: IRect,
    pub approve: IRect,
    /// "Allow until logout", when offered.
    pub session: Option<IRect>,
    pub deny_label: Shaped,
    pub approve_label: Shaped,
    pub session_label: Option<Shaped>,
    /// Style of the live texts (rows, countdown, scroll hint).
    pub small: TextStyle,
    /// Style of the badge's text.
    pub badge_style: TextStyle,
    /// How far the focus ring reaches outside a button.
    pub ring_reach: i32,
}

impl Layout {
    /// Lays out `content` for an output of `output` logical pixels at `scale`.
    pub fn compute(
        fonts: &mut Fonts,
        config: &Config,
        content: &DialogContent,
        scale: f64,
        output: (u32, u32),
    ) -> Result<Layout, OverlayError> {
        let frames = Self::frames(config, scale, output)?;
        let texts = build::Texts::new(config, content);
        let cap = u64::from(config.max_buffer_pixels);
        let fits = |fonts: &mut Fonts, frame: &build::Frame| {
            build::build(fonts, config, content, &texts, *frame)
                .filter(|layout| layout.size.0.max(0) as u64 * layout.size.1.max(0) as u64 <= cap)
        };
        let (first, rest) = frames.split_first().ok_or_else(|| {
            OverlayError::Layout("no size or width to lay the dialog out at".into())
        })?;
        if let Some(layout) = fits(fonts, first) {
            return Ok(layout);
        }
        // Every later attempt shapes the same texts at another size or width: shape each once
        // (not for the first, where most contents fit and keeping the shaping costs more than
        // it saves).
        let later = fonts.reusing_shapes(|fonts| rest.iter().find_map(|frame| fits(fonts, frame)));
        later.ok_or_else(|| {
            OverlayError::Layout(format!(
                "the fixed part of the dialog does not fit on a {}x{} output at scale {scale} in \
                 {cap} pixels (max_buffer_pixels) even at the smallest zoom",
                output.0, output.1
            ))
        })
    }

    /// The frames [`Layout::compute`] tries, in order: each zoom that does not scroll, then
    /// each zoom scrolling; for each, the preferred width and then (on a short output) its
    /// whole width; for each, normal and then compact spacing.
    fn frames(
        config: &Config,
        scale: f64,
        output: (u32, u32),
    ) -> Result<Vec<build::Frame>, OverlayError> {
        if !(SCALE_RANGE.0..=SCALE_RANGE.1).contains(&scale) {
            return Err(OverlayError::Layout(format!(
                "scale {scale} is outside {}–{}",
                SCALE_RANGE.0, SCALE_RANGE.1
            )));
        }
        if !(config.font_size.is_finite() && (4.0..=64.0).contains(&config.font_size)) {
            return Err(OverlayError::Layout(format!(
                "font_size {} is outside 4–64",
                config.font_size
            )));
        }
        let avail_w = output.0.saturating_sub(2 * config.margin);
        let avail_h = output.1.saturating_sub(2 * config.margin);
        if avail_w < MIN_AREA.0 || avail_h < MIN_AREA.1 {
            return Err(OverlayError::Layout(format!(
                "output {}x{} is smaller than the {}x{} the dialog needs",
                output.0,
                output.1,
                MIN_AREA.0 + 2 * config.margin,
                MIN_AREA.1 + 2 * config.margin
            )));
        }
        // Larger text gets a wider dialog before it wraps more.
        let wanted = (config.max_width as f32 * config.text_scale.get()).round() as u32;
        let width = avail_w.min(wanted.max(MIN_AREA.0)) as i32;
        // Before shrinking text, a short output may use its whole width (a touch panel).
        let full = avail_w as i32;
        let widths: &[i32] = if full > width {
            &[width, full]
        } else {
            &[width]
        };
        let output_h = (f64::from(avail_h) * scale).floor() as i32;
        let cap = u64::from(config.max_buffer_pixels);
        let unscrolled = ZOOMS.iter().filter(|&&z| z >= MIN_UNSCROLLED_ZOOM);
        let attempts = unscrolled
            .map(|&z| (z, false))
            .chain(ZOOMS.iter().map(|&z| (z, true)));
        let mut frames = Vec::new();
        for (zoom, scroll) in attempts {
            for &w in widths {
                // The buffer's area cap, as a height for this width; the headroom covers the
                // height's rounding to whole logical pixels and back.
                let w_px = (f64::from(w) * scale).round().max(1.0) as u64;
                let cap_h = (cap / w_px).saturating_sub(scale.ceil() as u64 + 1);
                let max_h = output_h.min(i32::try_from(cap_h).unwrap_or(i32::MAX));
                for compact in [false, true] {
                    frames.push(build::Frame {
                        scale,
                        zoom,
                        compact,
                        width: w,
                        max_h,
                        scroll,
                    });
                }
            }
        }
        Ok(frames)
    }

    /// Whether the body is taller than its view.
    pub fn scrolls(&self) -> bool {
        self.body_height > self.body.h
    }

    /// The furthest the body can scroll, in physical pixels.
    pub fn max_scroll(&self) -> i32 {
        (self.body_height - self.body.h).max(0)
    }

    /// A logical scroll offset as this layout's physical one, clamped to what it can scroll.
    pub fn scroll_px(&self, logical: f32) -> i32 {
        let px = (f64::from(logical) * self.scale).round();
        if px.is_finite() {
            (px.max(0.0) as i64).min(i64::from(self.max_scroll())) as i32
        } else {
            0
        }
    }

    /// Whether the view shows the end of the body at this logical scroll offset.
    pub fn at_end(&self, logical_scroll: f32) -> bool {
        self.scroll_px(logical_scroll) >= self.max_scroll()
    }

    /// A control's rectangle, if the dialog has it.
    pub fn control_rect(&self, control: Control) -> Option<IRect> {
        match control {
            Control::Approve => Some(self.approve),
            Control::Deny => Some(self.deny),
            Control::Session => self.session,
        }
    }

    /// The control under a physical point.
    pub fn control_at(&self, x: f64, y: f64) -> Option<Control> {
        [Control::Approve, Control::Deny, Control::Session]
            .into_iter()
            .find(|&c| self.control_rect(c).is_some_and(|r| r.contains(x, y)))
    }

    /// Checks that everything lies where it must: every box inside the card's inner area, the
    /// body's texts inside the body's width, nothing overlapping the controls, the controls
    /// apart. `Err` lists what is wrong (a bug: tests and the fuzzer call this).
    pub fn check_inside(&self) -> Result<(), String> {
        let (w, h) = self.size;
        let inner = IRect::new(
            self.stripe,
            self.border,
            w - self.stripe - self.border,
            h - 2 * self.border,
        );
        let mut wrong = Vec::new();
        let mut check = |what: &str, r: IRect| {
            if !inner.contains_rect(&r) {
                wrong.push(format!("{what} {r:?} leaves the card {inner:?}"));
            }
        };
        for t in &self.texts {
            check("text", t.bounds());
        }
        check("body", self.body_region);
        check("icon", self.icon);
        check("separator", self.separator);
        check("countdown", self.countdown);
        check("badge", self.badge);
        for (_, r) in &self.rows {
            check("row", *r);
        }
        let controls: Vec<IRect> = [Control::Deny, Control::Approve, Control::Session]
            .into_iter()
            .filter_map(|c| self.control_rect(c))
            .collect();
        for c in &controls {
            check("control", c.inflate(self.ring_reach));
        }
        if !self.body_region.contains_rect(&self.body) {
            wrong.push(format!("body {:?} leaves its region", self.body));
        }
        for t in &self.body_texts {
            let b = t.bounds();
            if b.x < self.body.x || b.right() > self.body.right() || b.y < 0 {
                wrong.push(format!("body text {b:?} leaves the body {:?}", self.body));
            }
            if b.bottom() > self.body_height {
                wrong.push(format!(
                    "body text {b:?} ends below the body's height {}",
                    self.body_height
                ));
            }
        }
        let above_controls = self
            .texts
            .iter()
            .map(Placed::bounds)
            .chain([self.body_region, self.countdown, self.badge])
            .chain(self.rows.iter().map(|(_, r)| *r));
        for r in above_controls {
            for c in &controls {
                if !r.intersect(&c.inflate(self.ring_reach + 1)).is_empty() {
                    wrong.push(format!("{r:?} overlaps the control at {c:?}"));
                }
            }
        }
        for (i, a) in controls.iter().enumerate() {
            for b in &controls[i + 1..] {
                if !a.inflate(self.ring_reach + 1).intersect(b).is_empty() {
                    wrong.push(format!("controls {a:?} and {b:?} touch"));
                }
            }
        }
        if wrong.is_empty() {
            Ok(())
        } else {
            Err(wrong.join("; "))
        }
    }
}
