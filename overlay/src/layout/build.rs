//! One layout attempt at a given zoom, width and height limit: the client strings made visible
//! once ([`Texts`]), then every element placed top to bottom — header (icon, verified
//! requester, the self-declared app id, "asks to"), risk line, challenge word, the body (action,
//! target, steps, extra parameters) with its view, separator, live rows, countdown and badge,
//! buttons.

use cosmic_text::Align;

use super::rows::{live_row_count, place_live_rows};
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
const ICON: f32 = 40.0;
const STRIPE: f32 = 6.0;
const BUTTON_GAP: f32 = 16.0;
const BAR_H: f32 = 4.0;
/// Space right of the body for its scroll bar.
const SCROLLBAR_GUTTER: f32 = 12.0;
const SCROLLBAR_W: f32 = 5.0;
const LINE_HEIGHT: f32 = 1.3;
/// The body's view is never shorter than this many lines of body text.
const MIN_VIEW_LINES: i32 = 3;
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

/// Lays out everything for `frame`; `None` when it does not fit in `frame.max_h` (scrolling
/// the body only if `frame.scroll`).
pub(crate) fn build(
    fonts: &mut Fonts,
    config: &Config,
    content: &DialogContent,
    t: &Texts,
    frame: Frame,
) -> Option<Layout> {
    let scale = frame.scale;
    // Spacing follows the output's scale and the zoom; text follows the text scale too.
    let ks = scale as f32 * frame.zoom;
    let k = ks * config.text_scale.get();
    let px = |v: f32| (v * ks).round() as i32;
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
    let full = |size: f32, bold: bool| style(size, bold, TextStyle::UNLIMITED);
    let w = phys(frame.width as f32);
    let border = px(1.0).max(1);
    let stripe = px(STRIPE).max(2);
    let pad = px(if frame.compact { PAD_COMPACT } else { PAD });
    let gap = px(if frame.compact { GAP_COMPACT } else { GAP });
    let left = stripe + pad;
    let inner_w = w - left - pad;
    let mut texts = Vec::new();
    let mut y = pad;

    // Header: icon (or monogram), then the verified requester in full, how it is verified, the
    // self-declared app id, "asks to".
    let side = ((ICON * k).round() as i32).min(inner_w / 4);
    let icon = IRect::new(left, y, side, side);
    let name_w = inner_w - icon.w - gap;
    if name_w < px(60.0) {
        return None;
    }
    let mut mono_style = style(fs * 1.3, true, 1);
    mono_style.align = Some(Align::Center);
    let mono = fonts.shape(
        &content.requester.monogram().to_string(),
        &mono_style,
        icon.w as f32,
    );
    texts.push(Placed {
        x: icon.x,
        y: icon.y + (icon.h - mono.height) / 2,
        w: icon.w,
        text: mono,
        role: Role::Monogram,
    });
    let mut head = Column {
        fonts: &mut *fonts,
        out: Vec::new(),
        x: icon.right() + gap,
        w: name_w,
        y,
    };
    head.push(&t.identity, &full(fs * 1.1, true), Role::Text);
    let marker_role = if t.verified {
        Role::Verified
    } else {
        Role::Unverified
    };
    head.push(&t.marker, &full(fs * 0.85, true), marker_role);
    if let Some(declared) = &t.declared {
        head.push(declared, &full(fs * 0.85, false), Role::Muted);
    }
    head.push(&config.text.asks, &full(fs * 0.9, false), Role::Muted);
    let stack = head.y - y;
    // A short stack is centred on the icon.
    let dy = ((icon.h - stack) / 2).max(0);
    texts.extend(head.out.into_iter().map(|mut p| {
        p.y += dy;
        p
    }));
    y += stack.max(icon.h) + gap;

    // Risk class: a dot and the wording, both in the risk colour.
    let risk_size = fs * 0.95;
    let risk = fonts.shape(
        config.text.risk(content.risk),
        &full(risk_size, true),
        (inner_w - px(18.0)) as f32,
    );
    let dot = px(10.0);
    let risk_line = (risk_size * LINE_HEIGHT).round() as i32;
    let risk_dot = IRect::new(left, y + (risk_line - dot) / 2, dot, dot);
    let risk_h = risk.height;
    texts.push(Placed {
        x: left + px(18.0),
        y,
        w: inner_w - px(18.0),
        text: risk,
        role: Role::Risk,
    });
    y += risk_h + gap;

    // The challenge word of a spoken approval, large and framed.
    let mut challenge_box = None;
    if let Some(word) = &t.challenge {
        let mut col = Column {
            fonts: &mut *fonts,
            out: Vec::new(),
            x: left,
            w: inner_w,
            y,
        };
        col.push(&config.text.challenge, &full(fs * 0.9, false), Role::Muted);
        let inset = px(10.0);
        let box_y = col.y + px(4.0);
        col.x = left + inset;
        col.w = inner_w - 2 * inset;
        col.y = box_y + px(6.0);
        let mut word_style = full(fs * 1.6, true);
        word_style.align = Some(Align::Center);
        col.push(word, &word_style, Role::Text);
        let frame_box = IRect::new(left, box_y, inner_w, col.y + px(6.0) - box_y);
        y = frame_box.bottom() + gap;
        challenge_box = Some(frame_box);
        texts.extend(col.out);
    }

    // The body, in its own coordinates: the action, the target, every step, every extra
    // parameter, each in full.
    let gutter = px(SCROLLBAR_GUTTER);
    let body_w = inner_w - gutter;
    let mut body = Column {
        fonts: &mut *fonts,
        out: Vec::new(),
        x: left,
        w: body_w,
        y: 0,
    };
    // Without scrolling, a body taller than the whole height cannot fit: stop shaping it.
    let limit = (!frame.scroll).then_some(frame.max_h - y);
    body.push(&t.action, &full(fs * 1.2, true), Role::Text);
    let label = full(fs * 0.8, true);
    if let Some(target) = &t.target {
        body.y += gap;
        body.push(&config.text.target_label, &label, Role::Muted);
        body.push(target, &full(fs, false), Role::Text);
    }
    if body.past(limit) {
        return None;
    }
    let item_size = if frame.compact { fs * 0.9 } else { fs };
    if !t.steps.is_empty() {
        body.y += gap;
        body.push(&config.text.steps_label, &label, Role::Muted);
        // The number column fits the widest number ("10.") plus a gap.
        let widest = body.fonts.shape(
            &format!("{}.", t.steps.len()),
            &style(item_size, true, 1),
            body_w as f32,
        );
        let num_w = px(24.0).max(widest.width + px(8.0)).min(body_w / 3);
        for (i, step) in t.steps.iter().enumerate() {
            let num = body.fonts.shape(
                &format!("{}.", i + 1),
                &style(item_size, true, 1),
                num_w as f32,
            );
            let text = body
                .fonts
                .shape(step, &full(item_size, false), (body_w - num_w) as f32);
            let h = text.height.max(num.height);
            let sy = body.y;
            body.out.push(Placed {
                x: left,
                y: sy,
                w: num_w,
                text: num,
                role: Role::Muted,
            });
            body.out.push(Placed {
                x: left + num_w,
                y: sy,
                w: body_w - num_w,
                text,
                role: Role::Text,
            });
            body.y += h + px(2.0);
            if body.past(limit) {
                return None;
            }
        }
    }
    if !t.extra.is_empty() {
        body.y += gap;
        body.push(&config.text.extra_params_label, &label, Role::Muted);
        for entry in &t.extra {
            body.push(entry, &full(item_size, false), Role::Text);
            body.y += px(2.0);
            if body.past(limit) {
                return None;
            }
        }
    }
    let body_height = body.y;
    let body_texts = body.out;
    let line = (fs * LINE_HEIGHT).round() as i32;

    // What goes under the body: heights first, to know how tall the body's view can be.
    let small = style(fs * 0.9, false, 1);
    let row_h = (small.size * LINE_HEIGHT).round() as i32 + px(4.0);
    let mut badge_style = style(fs * 0.8, true, 1);
    badge_style.align = Some(Align::Center);
    let badge_text = fonts.shape(
        &queued_label(config, MAX_SHOWN_QUEUE + 1),
        &badge_style,
        1e6,
    );
    let badge_size = (badge_text.width + px(20.0), badge_text.height + px(6.0));
    let row_h = row_h.max(badge_size.1);
    let countdown_text = fonts.shape(&config.text.seconds_left.replace("{n}", "999"), &small, 1e6);
    let countdown_w = countdown_text.width.max(inner_w / 4) + px(8.0);
    let bar_w = inner_w - countdown_w - badge_size.0 - px(8.0);
    let badge_own_row = bar_w < px(24.0);
    let live_rows = live_row_count(content, config);
    let ring_reach = px(super::RING_W + super::RING_GAP).max(2);
    let bgap = px(BUTTON_GAP).max(2 * ring_reach + 4);
    let button_w = (inner_w - bgap) / 2;
    let mut label_style = style(fs * 1.05, true, 2);
    label_style.align = Some(Align::Center);
    let label_w = (button_w - px(8.0)).max(1) as f32;
    let deny_label = fonts.shape(&config.text.deny, &label_style, label_w);
    let approve_label = fonts.shape(&config.text.approve, &label_style, label_w);
    let session_label = content
        .offer_session
        .then(|| fonts.shape(&config.text.allow_session, &label_style, label_w));
    let tallest = [
        Some(&deny_label),
        Some(&approve_label),
        session_label.as_ref(),
    ]
    .into_iter()
    .flatten()
    .map(|l| l.height)
    .max()
    .unwrap_or(0);
    let button_h = phys(config.min_target as f32).max(tallest + px(12.0));
    let above_buttons = gap.max(ring_reach + 2);
    let below_buttons = pad.max(ring_reach + border + 2);
    let bottom_h = gap
        + border
        + gap
        + live_rows as i32 * (row_h + px(2.0))
        + row_h
        + if badge_own_row { row_h + px(2.0) } else { 0 }
        + above_buttons
        + if content.offer_session {
            button_h + bgap
        } else {
            0
        }
        + button_h
        + below_buttons;
    let hint_h = row_h;
    let (view_h, scrolls) = if y + body_height + bottom_h <= frame.max_h {
        (body_height, false)
    } else if frame.scroll {
        let view = frame.max_h - y - bottom_h - hint_h;
        if view < body_height.min(MIN_VIEW_LINES * line) {
            return None;
        }
        (view, true)
    } else {
        return None;
    };

    let body_view = IRect::new(left, y, body_w, view_h);
    let scrollbar = scrolls.then(|| {
        let sw = px(SCROLLBAR_W).max(2);
        IRect::new(left + body_w + (gutter - sw) / 2, y, sw, view_h)
    });
    y += view_h;
    let scroll_hint = scrolls.then(|| IRect::new(left, y, inner_w, hint_h));
    if scrolls {
        y += hint_h;
    }
    let body_region = IRect::new(left, body_view.y, inner_w, y - body_view.y);
    y += gap;

    let separator = IRect::new(left, y, inner_w, border);
    y += border + gap;

    // Live rows.
    let (rows, meter, below_rows) = place_live_rows(content, config, (left, y, inner_w, row_h), ks);
    y = below_rows;

    // Countdown, with the queue badge at its end (or under it when narrow).
    let bar_x = left + countdown_w;
    let bar_h = px(BAR_H).max(1);
    let (countdown, countdown_bar, badge) = if badge_own_row {
        let countdown = IRect::new(left, y, inner_w, row_h);
        let bar = IRect::new(
            bar_x,
            y + (row_h - bar_h) / 2,
            (countdown.right() - bar_x).max(0),
            bar_h,
        );
        y += row_h + px(2.0);
        let bw = badge_size.0.min(inner_w);
        let badge = IRect::new(left + inner_w - bw, y, bw, row_h);
        (countdown, bar, badge)
    } else {
        let badge = IRect::new(left + inner_w - badge_size.0, y, badge_size.0, row_h);
        let countdown = IRect::new(left, y, badge.x - px(4.0) - left, row_h);
        let bar = IRect::new(bar_x, y + (row_h - bar_h) / 2, bar_w, bar_h);
        (countdown, bar, badge)
    };
    y += row_h + above_buttons;

    // Buttons: equal width, Deny first; none is a default. "Allow until logout" sits above
    // Approve, on its own row.
    let session = content.offer_session.then(|| {
        let r = IRect::new(left + inner_w - button_w, y, button_w, button_h);
        y += button_h + bgap;
        r
    });
    let deny = IRect::new(left, y, button_w, button_h);
    let approve = IRect::new(left + inner_w - button_w, y, button_w, button_h);
    y += button_h + below_buttons;
    if y > frame.max_h {
        return None;
    }

    let logical_h = (f64::from(y) / scale).ceil() as i32;
    Some(Layout {
        scale,
        k,
        ks,
        logical_size: (frame.width, logical_h),
        size: (w, phys(logical_h as f32)),
        radius: 12.0 * ks,
        stripe,
        border,
        icon,
        risk_dot,
        challenge_box,
        separator,
        texts,
        body: body_view,
        body_texts,
        body_height,
        body_region,
        scrollbar,
        scroll_hint,
        line,
        rows,
        meter,
        countdown,
        countdown_bar,
        badge,
        deny,
        approve,
        session,
        deny_label,
        approve_label,
        session_label,
        small,
        badge_style,
        ring_reach,
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
