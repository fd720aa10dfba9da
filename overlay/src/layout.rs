//! Layout: where every element of the dialog goes, in physical pixels with integer edges, for a
//! given content, scale and output size. Long content degrades step by step (fewer lines per
//! step, then a smaller zoom) until the dialog fits the output; if it cannot, layout fails and
//! the compositor denies (fail closed). Touch targets never shrink below `min_target`.

use cosmic_text::Align;

use crate::OverlayError;
use crate::config::Config;
use crate::content::{DialogContent, Modality};
use crate::text::{Fonts, Shaped, TextStyle};

/// Zoom factors tried in order when the content does not fit at full size.
const ZOOMS: [f32; 6] = [1.0, 0.9, 0.8, 0.7, 0.6, 0.5];
/// Smallest output area (logical, after margins) the dialog will try to fit.
const MIN_AREA: (u32, u32) = (240, 200);
/// Scales accepted; beyond them something upstream is wrong.
const SCALE_RANGE: (f64, f64) = (0.5, 4.0);
/// Logical sizes before zoom.
const PAD: f32 = 20.0;
const PAD_COMPACT: f32 = 14.0;
const GAP: f32 = 12.0;
const GAP_COMPACT: f32 = 7.0;
const ICON: f32 = 40.0;
const STRIPE: f32 = 6.0;
const BUTTON_GAP: f32 = 16.0;
const METER_W: f32 = 120.0;
const BAR_H: f32 = 4.0;
const LINE_HEIGHT: f32 = 1.3;
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
    /// Grown by `d` on every side.
    pub fn inflate(&self, d: i32) -> IRect {
        IRect::new(self.x - d, self.y - d, self.w + 2 * d, self.h + 2 * d)
    }
    /// Whether it covers no pixel.
    pub fn is_empty(&self) -> bool {
        self.w <= 0 || self.h <= 0
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
    Badge,
    Monogram,
}

/// A shaped text at its place.
#[derive(Debug)]
pub struct Placed {
    pub text: Shaped,
    pub x: i32,
    pub y: i32,
    pub role: Role,
}

/// A live row under the steps: one per modality other than visual, plus the hold hint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Row {
    Voice,
    Haptic,
    Hold,
}

/// The dialog laid out for one content, scale and output size.
#[derive(Debug)]
pub struct Layout {
    pub scale: f64,
    /// The factor from logical design sizes to physical pixels (`scale × zoom`).
    pub k: f32,
    /// Size in logical pixels (what the compositor places).
    pub logical_size: (i32, i32),
    /// Size of the pixel buffer.
    pub size: (i32, i32),
    pub radius: f32,
    pub stripe: i32,
    pub border: i32,
    pub icon: IRect,
    pub badge: Option<IRect>,
    pub risk_dot: IRect,
    pub separator: IRect,
    pub texts: Vec<Placed>,
    pub rows: Vec<(Row, IRect)>,
    /// The voice level meter, inside the voice row.
    pub meter: Option<IRect>,
    /// The countdown row (text and bar).
    pub countdown: IRect,
    pub countdown_bar: IRect,
    pub deny: IRect,
    pub approve: IRect,
    pub deny_label: Shaped,
    pub approve_label: Shaped,
    /// Style of the live texts (rows, countdown).
    pub small: TextStyle,
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
        if !(SCALE_RANGE.0..=SCALE_RANGE.1).contains(&scale) {
            return Err(OverlayError::Layout(format!(
                "scale {scale} is outside {}–{}",
                SCALE_RANGE.0, SCALE_RANGE.1
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
        // Before shrinking text, a short output may use its whole width (a touch panel).
        let width = avail_w.min(config.max_width) as i32;
        let full = avail_w as i32;
        let widths: &[i32] = if full > width {
            &[width, full]
        } else {
            &[width]
        };
        for zoom in ZOOMS {
            for &w in widths {
                for compact in [false, true] {
                    let layout = build(fonts, config, content, scale, zoom, compact, w);
                    if layout.logical_size.1 <= avail_h as i32 {
                        return Ok(layout);
                    }
                }
            }
        }
        Err(OverlayError::Layout(format!(
            "the content does not fit on a {}x{} output even at the smallest zoom",
            output.0, output.1
        )))
    }

    /// The control under a physical point.
    pub fn control_at(&self, x: f64, y: f64) -> Option<crate::content::Control> {
        use crate::content::Control;
        if self.approve.contains(x, y) {
            Some(Control::Approve)
        } else if self.deny.contains(x, y) {
            Some(Control::Deny)
        } else {
            None
        }
    }
}

fn build(
    fonts: &mut Fonts,
    config: &Config,
    content: &DialogContent,
    scale: f64,
    zoom: f32,
    compact: bool,
    width: i32,
) -> Layout {
    let k = scale as f32 * zoom;
    let px = |v: f32| (v * k).round() as i32;
    // Targets and the outer size follow the output's scale only: zoom shrinks text, not hands.
    let phys = |v: f32| (f64::from(v) * scale).round() as i32;
    let fs = config.font_size * k;
    let style = |size: f32, bold: bool, max_lines: usize| TextStyle {
        size,
        line_height: LINE_HEIGHT,
        bold,
        max_lines,
        middle_ellipsis: false,
        align: None,
    };
    let w = phys(width as f32);
    let border = px(1.0).max(1);
    let stripe = px(STRIPE).max(2);
    let pad = px(if compact { PAD_COMPACT } else { PAD });
    let gap = px(if compact { GAP_COMPACT } else { GAP });
    let left = stripe + pad;
    let inner_w = w - left - pad;
    let mut texts = Vec::new();
    let mut y = pad;

    // Header: icon, app name, "asks to", queue badge.
    let icon = IRect::new(left, y, px(ICON), px(ICON));
    let initial: String = content.app.trim().chars().take(1).collect();
    let mut centred = style(fs * 1.3, true, 1);
    centred.align = Some(Align::Center);
    let mono = fonts.shape(&initial, &centred, icon.w as f32);
    texts.push(Placed {
        x: icon.x,
        y: icon.y + (icon.h - mono.height) / 2,
        text: mono,
        role: Role::Monogram,
    });
    let mut badge = None;
    let mut name_w = inner_w - icon.w - gap;
    if content.queued > 0 {
        let label = config
            .text
            .queued
            .replace("{n}", &content.queued.to_string());
        let t = fonts.shape(&label, &style(fs * 0.8, true, 1), (inner_w / 2) as f32);
        let b = IRect::new(
            w - pad - t.width - px(20.0),
            y,
            t.width + px(20.0),
            t.height + px(8.0),
        );
        texts.push(Placed {
            x: b.x + px(10.0),
            y: b.y + px(4.0),
            text: t,
            role: Role::Badge,
        });
        name_w = b.x - gap - (icon.right() + gap);
        badge = Some(b);
    }
    // The name sits against the icon whatever its script's direction.
    let mut name_style = style(fs * 1.15, true, 1);
    name_style.align = Some(Align::Left);
    let name = fonts.shape(&content.app, &name_style, name_w as f32);
    let asks = fonts.shape(&config.text.asks, &style(fs * 0.9, false, 1), name_w as f32);
    let tx = icon.right() + gap;
    let head_h = icon.h.max(name.height + asks.height);
    let name_y = y + (head_h - name.height - asks.height) / 2;
    texts.push(Placed {
        x: tx,
        y: name_y + name.height,
        text: asks,
        role: Role::Muted,
    });
    texts.push(Placed {
        x: tx,
        y: name_y,
        text: name,
        role: Role::Text,
    });
    y += head_h + gap;

    // Risk class: a dot and the wording, both in the risk colour.
    let risk = fonts.shape(
        config.text.risk(content.risk),
        &style(fs * 0.95, true, 2),
        (inner_w - px(18.0)) as f32,
    );
    let dot = px(10.0);
    let risk_line = (fs * 0.95 * LINE_HEIGHT).round() as i32;
    let risk_dot = IRect::new(left, y + (risk_line - dot) / 2, dot, dot);
    let risk_h = risk.height;
    texts.push(Placed {
        x: left + px(18.0),
        y,
        text: risk,
        role: Role::Risk,
    });
    y += risk_h + gap;

    // The action, then the target.
    let action_lines = if compact {
        config.max_action_lines.min(3)
    } else {
        config.max_action_lines
    } as usize;
    let action = fonts.shape(
        &content.action,
        &style(fs * 1.2, true, action_lines),
        inner_w as f32,
    );
    let action_h = action.height;
    texts.push(Placed {
        x: left,
        y,
        text: action,
        role: Role::Text,
    });
    y += action_h + gap;
    if !content.target.trim().is_empty() {
        let label = fonts.shape(
            &config.text.target_label,
            &style(fs * 0.8, true, 1),
            inner_w as f32,
        );
        let lh = label.height;
        texts.push(Placed {
            x: left,
            y,
            text: label,
            role: Role::Muted,
        });
        y += lh;
        let lines = if compact { 1 } else { config.max_target_lines } as usize;
        let mut st = style(fs, false, lines);
        st.middle_ellipsis = true;
        let target = fonts.shape(&content.target, &st, inner_w as f32);
        let th = target.height;
        texts.push(Placed {
            x: left,
            y,
            text: target,
            role: Role::Text,
        });
        y += th + gap;
    }

    // Every step, numbered.
    if !content.steps.is_empty() {
        let label = fonts.shape(
            &config.text.steps_label,
            &style(fs * 0.8, true, 1),
            inner_w as f32,
        );
        let lh = label.height;
        texts.push(Placed {
            x: left,
            y,
            text: label,
            role: Role::Muted,
        });
        y += lh;
        let step_size = if compact { fs * 0.9 } else { fs };
        // The number column fits the widest number ("10.") plus a gap.
        let widest = fonts.shape(
            &format!("{}.", content.steps.len()),
            &style(step_size, true, 1),
            inner_w as f32,
        );
        let num_w = px(24.0).max(widest.width + px(8.0));
        for (i, step) in content.steps.iter().enumerate() {
            let num = fonts.shape(
                &format!("{}.", i + 1),
                &style(step_size, true, 1),
                inner_w as f32,
            );
            let t = fonts.shape(
                step,
                &style(step_size, false, if compact { 1 } else { 2 }),
                (inner_w - num_w) as f32,
            );
            let h = t.height.max(num.height);
            texts.push(Placed {
                x: left,
                y,
                text: num,
                role: Role::Muted,
            });
            texts.push(Placed {
                x: left + num_w,
                y,
                text: t,
                role: Role::Text,
            });
            y += h + px(2.0);
        }
        y += gap;
    }

    let separator = IRect::new(left, y, inner_w, border);
    y += border + gap;

    // Live rows.
    let small = style(fs * 0.9, false, 1);
    let row_h = (small.size * LINE_HEIGHT).round() as i32 + px(4.0);
    let mut rows = Vec::new();
    let mut meter = None;
    for m in &content.modalities {
        let row = match m {
            Modality::Voice => Row::Voice,
            Modality::Haptic => Row::Haptic,
            Modality::Visual => continue,
        };
        let r = IRect::new(left, y, inner_w, row_h);
        if row == Row::Voice {
            let mw = px(METER_W).min(inner_w / 3);
            meter = Some(IRect::new(
                r.right() - mw,
                r.y + (row_h - px(8.0)) / 2,
                mw,
                px(8.0),
            ));
        }
        rows.push((row, r));
        y += row_h + px(2.0);
    }
    if content.needs_hold(config) {
        rows.push((Row::Hold, IRect::new(left, y, inner_w, row_h)));
        y += row_h + px(2.0);
    }

    let countdown = IRect::new(left, y, inner_w, row_h);
    let bar_x = left + inner_w / 3;
    let countdown_bar = IRect::new(
        bar_x,
        y + (row_h - px(BAR_H)) / 2,
        countdown.right() - bar_x,
        px(BAR_H).max(1),
    );
    let ring_reach = px(RING_W + RING_GAP).max(2);
    // The buttons' repaint area (ring reach + 1) must not reach the countdown.
    y += row_h + gap.max(ring_reach + 2);

    // Buttons: equal width, Deny first; neither is a default.
    let bh = phys(config.min_target as f32);
    let bgap = px(BUTTON_GAP).max(2 * ring_reach + 4);
    let bw = (inner_w - bgap) / 2;
    let deny = IRect::new(left, y, bw, bh);
    let approve = IRect::new(left + inner_w - bw, y, bw, bh);
    // Centred in the whole button width, whatever the label's direction.
    let mut label_style = style(fs * 1.05, true, 1);
    label_style.align = Some(Align::Center);
    let deny_label = fonts.shape(&config.text.deny, &label_style, bw as f32);
    let approve_label = fonts.shape(&config.text.approve, &label_style, bw as f32);
    y += bh + pad.max(ring_reach + border + 2);

    let logical_h = (f64::from(y) / scale).ceil() as i32;
    Layout {
        scale,
        k,
        logical_size: (width, logical_h),
        size: (w, phys(logical_h as f32)),
        radius: 12.0 * k,
        stripe,
        border,
        icon,
        badge,
        risk_dot,
        separator,
        texts,
        rows,
        meter,
        countdown,
        countdown_bar,
        deny,
        approve,
        deny_label,
        approve_label,
        small,
        ring_reach,
    }
}
