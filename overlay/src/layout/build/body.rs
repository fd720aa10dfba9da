//! The body: the action, the target, every step and every extra parameter, each in full, shaped
//! in the body's own coordinates; then the view it is seen through, which scrolls when the body
//! does not fit beside the fixed parts.
//!
//! Client text may span lines (a command, a patch): its first line starts at the column's edge
//! like any text, and every further line is shaped on its own beside its number in a muted
//! gutter ([`place_lines`]). The dialog's own lines (labels, the body's headings) start at the
//! edge unnumbered, so no line a client writes can pass for one of them; every line wraps,
//! none is clipped.

use cosmic_text::Align;

use super::{Column, Frame, Metrics, Texts, full, style};
use crate::config::Config;
use crate::layout::{IRect, Placed, Role};
use crate::text::{Fonts, TextStyle};

/// Space right of the body for its scroll bar.
const SCROLLBAR_GUTTER: f32 = 12.0;
const SCROLLBAR_W: f32 = 5.0;
/// The body's view is never shorter than this many lines of body text.
const MIN_VIEW_LINES: i32 = 3;

/// The body's width: the content column less the scroll bar's gutter.
fn body_w(m: &Metrics) -> i32 {
    m.inner_w - m.px(SCROLLBAR_GUTTER)
}

/// Shapes the body from y 0: its texts and its height. `None` once it grows past `limit` (an
/// attempt that cannot fit stops shaping).
pub(super) fn lay_out_body(
    fonts: &mut Fonts,
    config: &Config,
    t: &Texts,
    m: &Metrics,
    limit: Option<i32>,
) -> Option<(Vec<Placed>, i32)> {
    let (gap, fs) = (m.gap, m.fs);
    let mut body = Column {
        fonts: &mut *fonts,
        out: Vec::new(),
        x: m.left,
        w: body_w(m),
        y: 0,
    };
    body.push_lines(&t.action, &full(fs * 1.2, true), Role::Text);
    let label = full(fs * 0.8, true);
    if let Some(target) = &t.target {
        body.y += gap;
        body.push(&config.text.target_label, &label, Role::Muted);
        body.push_lines(target, &full(fs, false), Role::Text);
    }
    if body.past(limit) {
        return None;
    }
    let item_size = if m.compact { fs * 0.9 } else { fs };
    if !t.steps.is_empty() {
        body.y += gap;
        body.push(&config.text.steps_label, &label, Role::Muted);
        push_steps(&mut body, &t.steps, m, item_size, limit)?;
    }
    if !t.extra.is_empty() {
        body.y += gap;
        body.push(&config.text.extra_params_label, &label, Role::Muted);
        for entry in &t.extra {
            body.push_lines(entry, &full(item_size, false), Role::Text);
            body.y += m.px(2.0);
            if body.past(limit) {
                return None;
            }
        }
    }
    Some((body.out, body.y))
}

/// Pushes the numbered steps: a number column as wide as the widest number, each step wrapped
/// beside its number. `None` once the body grows past `limit`.
fn push_steps(
    body: &mut Column<'_>,
    steps: &[String],
    m: &Metrics,
    item_size: f32,
    limit: Option<i32>,
) -> Option<()> {
    let (left, body_w) = (m.left, body.w);
    // The number column fits the widest number ("10.") plus a gap.
    let widest = body.fonts.shape(
        &format!("{}.", steps.len()),
        &style(item_size, true, 1),
        body_w as f32,
    );
    let num_w = m.px(24.0).max(widest.width + m.px(8.0)).min(body_w / 3);
    for (i, step) in steps.iter().enumerate() {
        let num = body.fonts.shape(
            &format!("{}.", i + 1),
            &style(item_size, true, 1),
            num_w as f32,
        );
        let sy = body.y;
        let num_h = num.height;
        body.out.push(Placed {
            x: left,
            y: sy,
            w: num_w,
            text: num,
            role: Role::Muted,
        });
        let text_h = place_lines(
            body.fonts,
            &mut body.out,
            step,
            (left + num_w, sy, body_w - num_w),
            &full(item_size, false),
            Role::Text,
        );
        body.y += text_h.max(num_h) + m.px(2.0);
        if body.past(limit) {
            return None;
        }
    }
    Some(())
}

/// Places `text` from (`x`, `y`) in a column `w` wide: its first line across the column, every
/// further line shaped on its own beside its number (2, 3, …) in a muted, right-aligned gutter.
/// An empty line still takes a line's height. Returns the height used.
pub(super) fn place_lines(
    fonts: &mut Fonts,
    out: &mut Vec<Placed>,
    text: &str,
    (x, y, w): (i32, i32, i32),
    style: &TextStyle,
    role: Role,
) -> i32 {
    let mut lines = text.split('\n');
    let first = fonts.shape(lines.next().unwrap_or_default(), style, w as f32);
    let line_h = (style.size * style.line_height).round() as i32;
    let mut h = first.height.max(line_h);
    out.push(Placed {
        text: first,
        x,
        y,
        w,
        role,
    });
    let rest: Vec<&str> = lines.collect();
    if rest.is_empty() {
        return h;
    }
    let number = TextStyle {
        bold: false,
        max_lines: 1,
        middle_ellipsis: false,
        align: Some(Align::Right),
        ..*style
    };
    let gap = (style.size * 0.6).round() as i32;
    let widest = fonts.shape(&(rest.len() + 1).to_string(), &number, w as f32);
    let num_w = (widest.width + gap).min(w / 3).max(gap + 1);
    for (i, line) in rest.iter().enumerate() {
        let ly = y + h;
        let num = fonts.shape(&(i + 2).to_string(), &number, (num_w - gap) as f32);
        let shaped = fonts.shape(line, style, (w - num_w) as f32);
        h += shaped.height.max(num.height).max(line_h);
        out.push(Placed {
            text: num,
            x,
            y: ly,
            w: num_w - gap,
            role: Role::Muted,
        });
        out.push(Placed {
            text: shaped,
            x: x + num_w,
            y: ly,
            w: w - num_w,
            role,
        });
    }
    h
}

/// Where the body is seen through.
pub(super) struct View {
    /// The body's view.
    pub view: IRect,
    /// The scroll bar's track, when the body scrolls.
    pub scrollbar: Option<IRect>,
    /// The more-above/below row, when the body scrolls.
    pub scroll_hint: Option<IRect>,
    /// The view, its scroll bar and the hint: what a body repaint covers.
    pub region: IRect,
}

/// Sizes and places the body's view at `y`, leaving `below` for the fixed part under it: the
/// whole body when it fits, else (if `frame.scroll`) a scrolling view of at least a few lines
/// with a hint row of `hint_h` under it. `None` when neither fits.
pub(super) fn place_view(
    m: &Metrics,
    frame: Frame,
    y: i32,
    body_height: i32,
    line: i32,
    below: i32,
    hint_h: i32,
) -> Option<View> {
    let (left, body_w) = (m.left, body_w(m));
    let (view_h, scrolls) = if y + body_height + below <= frame.max_h {
        (body_height, false)
    } else if frame.scroll {
        let view = frame.max_h - y - below - hint_h;
        if view < body_height.min(MIN_VIEW_LINES * line) {
            return None;
        }
        (view, true)
    } else {
        return None;
    };
    let view = IRect::new(left, y, body_w, view_h);
    let scrollbar = scrolls.then(|| {
        let gutter = m.px(SCROLLBAR_GUTTER);
        let sw = m.px(SCROLLBAR_W).max(2);
        IRect::new(left + body_w + (gutter - sw) / 2, y, sw, view_h)
    });
    let mut bottom = y + view_h;
    let scroll_hint = scrolls.then(|| IRect::new(left, bottom, m.inner_w, hint_h));
    if scrolls {
        bottom += hint_h;
    }
    Some(View {
        view,
        scrollbar,
        scroll_hint,
        region: IRect::new(left, y, m.inner_w, bottom - y),
    })
}
