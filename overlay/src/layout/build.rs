//! One layout attempt at a given zoom, width and height limit: the client strings made visible
//! once ([`Texts`]), then every element placed top to bottom — header (icon, verified
//! requester, the self-declared app id, "asks to"), risk line, challenge word, the body (action,
//! target, steps, extra parameters) with its view, separator, live rows, countdown and badge,
//! buttons. [`build`] runs the attempt; the parts are placed by [`header`] (above the body),
//! [`body`] (the body and its view) and [`footer`] (under the body), all at one [`Metrics`].

mod body;
mod footer;
mod header;

use super::rows::place_live_rows;
use super::{IRect, Layout, Placed, Role};
use crate::config::Config;
use crate::content::{DialogContent, MAX_IDENTITY_CHARS, Requester};
use crate::text::{Fonts, TextStyle};
use crate::visible::{ltr_isolated, visible_text};

/// Logical sizes before zoom.
const PAD: f32 = 20.0;
const PAD_COMPACT: f32 = 14.0;
const GAP: f32 = 12.0;
const GAP_COMPACT: f32 = 7.0;
const STRIPE: f32 = 6.0;
const LINE_HEIGHT: f32 = 1.3;
/// The largest queue count written out; more shows as this with a `+`.
pub(crate) const MAX_SHOWN_QUEUE: u32 = 999;

/// The client strings as shown: made visible, capped, paths and names kept left to right.
pub(crate) struct Texts {
    identity: String,
    marker: String,
    verified: bool,
    declared: Option<String>,
    action: String,
    target: Option<String>,
    steps: Vec<String>,
    extra: Vec<String>,
    challenge: Option<String>,
}

impl Texts {
    pub(crate) fn new(config: &Config, content: &DialogContent) -> Texts {
        let strings = &config.text;
        let r = &content.requester;
        // Validated to fit: never cut.
        let identity = ltr_isolated(&visible_text(r.name(), MAX_IDENTITY_CHARS, ""));
        let (marker, verified) = match r {
            Requester::Sandboxed { engine, .. } => {
                let engine = if engine.is_empty() {
                    strings.unnamed_sandbox.clone()
                } else {
                    config.visible_name(engine)
                };
                (
                    strings.requester_sandboxed.replace("{engine}", &engine),
                    true,
                )
            }
            Requester::Unconfined { pid, .. } => (
                strings
                    .requester_unconfined
                    .replace("{pid}", &pid.to_string()),
                false,
            ),
            Requester::Unknown { .. } => (strings.requester_unknown.clone(), false),
        };
        let declared = content
            .declared_app_id
            .as_deref()
            .filter(|id| !id.is_empty())
            .map(|id| {
                strings
                    .declared_app_id
                    .replace("{id}", &ltr_isolated(&config.visible_name(id)))
            });
        let target = (!content.target.is_empty())
            .then(|| ltr_isolated(&config.visible_text(&content.target)));
        Texts {
            identity,
            marker,
            verified,
            declared,
            action: config.visible_text(&content.action),
            target,
            steps: content
                .steps
                .iter()
                .map(|s| config.visible_text(s))
                .collect(),
            extra: content
                .extra_params
                .iter()
                .map(|(name, value)| {
                    ltr_isolated(&format!(
                        "{} = {}",
                        config.visible_name(name),
                        config.visible_text(value)
                    ))
                })
                .collect(),
            challenge: content.challenge.as_deref().map(|w| config.visible_name(w)),
        }
    }
}

/// What one attempt may use.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Frame {
    pub scale: f64,
    pub zoom: f32,
    pub compact: bool,
    /// Logical width of the dialog.
    pub width: i32,
    /// Physical height it must fit in.
    pub max_h: i32,
    /// Whether the body may scroll.
    pub scroll: bool,
}

/// Places shaped texts top to bottom in one column.
struct Column<'a> {
    fonts: &'a mut Fonts,
    out: Vec<Placed>,
    x: i32,
    w: i32,
    y: i32,
}

impl Column<'_> {
    /// Whether the column has grown past `limit` (an attempt that cannot fit stops shaping).
    fn past(&self, limit: Option<i32>) -> bool {
        limit.is_some_and(|l| self.y > l)
    }
}

impl Column<'_> {
    /// Pushes client text that may span lines, every line after the first numbered (see
    /// [`body::place_lines`]).
    fn push_lines(&mut self, text: &str, style: &TextStyle, role: Role) -> i32 {
        let at = (self.x, self.y, self.w);
        let h = body::place_lines(self.fonts, &mut self.out, text, at, style, role);
        self.y += h;
        h
    }

    fn push(&mut self, text: &str, style: &TextStyle, role: Role) -> i32 {
        let shaped = self.fonts.shape(text, style, self.w as f32);
        let h = shaped.height;
        self.out.push(Placed {
            text: shaped,
            x: self.x,
            y: self.y,
            w: self.w,
            role,
        });
        self.y += h;
        h
    }
}

/// The sizes of one attempt in physical pixels. Spacing and strokes follow the output's scale
/// and the zoom, text follows the text scale too; targets and the outer size follow the output's
/// scale only: zoom shrinks text, not hands.
struct Metrics {
    scale: f64,
    /// Spacing factor (`scale × zoom`).
    ks: f32,
    /// Text factor (`scale × zoom × text scale`).
    k: f32,
    /// The body text's font size.
    fs: f32,
    compact: bool,
    /// The dialog's physical width.
    w: i32,
    border: i32,
    stripe: i32,
    pad: i32,
    gap: i32,
    /// Where the content column starts, right of the stripe.
    left: i32,
    /// The content column's width.
    inner_w: i32,
}

impl Metrics {
    /// The sizes for `frame` under `config`'s font size and text scale.
    fn new(config: &Config, frame: Frame) -> Metrics {
        let ks = frame.scale as f32 * frame.zoom;
        let k = ks * config.text_scale.get();
        let px = |v: f32| (v * ks).round() as i32;
        // The outer width follows the output's scale only, as `phys` does.
        let w = (f64::from(frame.width as f32) * frame.scale).round() as i32;
        let stripe = px(STRIPE).max(2);
        let pad = px(if frame.compact { PAD_COMPACT } else { PAD });
        let left = stripe + pad;
        Metrics {
            scale: frame.scale,
            ks,
            k,
            fs: config.font_size * k,
            compact: frame.compact,
            w,
            border: px(1.0).max(1),
            stripe,
            pad,
            gap: px(if frame.compact { GAP_COMPACT } else { GAP }),
            left,
            inner_w: w - left - pad,
        }
    }

    /// A logical spacing or stroke size in physical pixels.
    fn px(&self, v: f32) -> i32 {
        (v * self.ks).round() as i32
    }

    /// A logical target or outer size in physical pixels.
    fn phys(&self, v: f32) -> i32 {
        (f64::from(v) * self.scale).round() as i32
    }
}

/// A text style of `size` cut to `max_lines`.
fn style(size: f32, bold: bool, max_lines: usize) -> TextStyle {
    TextStyle {
        size,
        line_height: LINE_HEIGHT,
        bold,
        max_lines,
        middle_ellipsis: false,
        align: None,
    }
}

/// A text style of `size` that wraps in full.
fn full(size: f32, bold: bool) -> TextStyle {
    style(size, bold, TextStyle::UNLIMITED)
}

/// Lays out everything for `frame`; `None` when it does not fit in `frame.max_h` (scrolling
/// the body only if `frame.scroll`).
pub(crate) fn build(
    fonts: &mut Fonts,
    config: &Config,
    content: &DialogContent,
    t: &Texts,
    frame: Frame,
) -> Option<Layout> {
    let m = Metrics::new(config, frame);
    let mut texts = Vec::new();
    let (icon, y) = header::place_header(fonts, config, content, t, &m, &mut texts)?;
    let (risk_dot, y) = header::place_risk(fonts, config, content, &m, y, &mut texts);
    let (challenge_box, y) = header::place_challenge(fonts, config, t, &m, y, &mut texts);
    // Without scrolling, a body taller than the whole height cannot fit: stop shaping it.
    let limit = (!frame.scroll).then_some(frame.max_h - y);
    let (body_texts, body_height) = body::lay_out_body(fonts, config, t, &m, limit)?;
    let line = (m.fs * LINE_HEIGHT).round() as i32;
    let under = footer::Footer::measure(fonts, config, content, &m);
    let view = body::place_view(&m, frame, y, body_height, line, under.height, under.row_h)?;
    let mut y = view.region.bottom() + m.gap;

    let separator = IRect::new(m.left, y, m.inner_w, m.border);
    y += m.border + m.gap;
    let (rows, meter, below_rows) =
        place_live_rows(content, config, (m.left, y, m.inner_w, under.row_h), m.ks);
    let (countdown, countdown_bar, badge, y) = under.place_countdown(&m, below_rows);
    let (session, deny, approve, y) = under.place_buttons(&m, content, y);
    if y > frame.max_h {
        return None;
    }

    let logical_h = (f64::from(y) / m.scale).ceil() as i32;
    Some(Layout {
        scale: m.scale,
        k: m.k,
        ks: m.ks,
        logical_size: (frame.width, logical_h),
        size: (m.w, m.phys(logical_h as f32)),
        radius: 12.0 * m.ks,
        stripe: m.stripe,
        border: m.border,
        icon,
        risk_dot,
        challenge_box,
        separator,
        texts,
        body: view.view,
        body_texts,
        body_height,
        body_region: view.region,
        scrollbar: view.scrollbar,
        scroll_hint: view.scroll_hint,
        line,
        rows,
        meter,
        countdown,
        countdown_bar,
        badge,
        deny,
        approve,
        session,
        deny_label: under.deny_label,
        approve_label: under.approve_label,
        session_label: under.session_label,
        small: under.small,
        badge_style: under.badge_style,
        ring_reach: under.ring_reach,
    })
}

/// The badge's wording for `n` waiting prompts (`999+` beyond [`MAX_SHOWN_QUEUE`]).
pub(crate) fn queued_label(config: &Config, n: u32) -> String {
    let count = if n > MAX_SHOWN_QUEUE {
        format!("{MAX_SHOWN_QUEUE}+")
    } else {
        n.to_string()
    };
    config.text.queued.replace("{n}", &count)
}
