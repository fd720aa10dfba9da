//! The fixed part above the body: the header (icon or monogram, the verified requester, how it
//! is verified, the self-declared app id, "asks to"), the risk line and the challenge word.
//! These texts never scroll, so no client text in the body can push them off the dialog.

use cosmic_text::Align;

use super::{Column, LINE_HEIGHT, Metrics, Texts, full, style};
use crate::config::Config;
use crate::content::DialogContent;
use crate::layout::{IRect, Placed, Role};
use crate::text::Fonts;

/// The icon's side before zoom, following the text scale like the name beside it.
const ICON: f32 = 40.0;

/// Places the header at the top padding: the icon's box, with the monogram centred in it, and
/// the requester's stack beside it. Returns the icon and the y under the header; `None` when
/// the frame is too narrow for the requester's name.
pub(super) fn place_header(
    fonts: &mut Fonts,
    config: &Config,
    content: &DialogContent,
    t: &Texts,
    m: &Metrics,
    texts: &mut Vec<Placed>,
) -> Option<(IRect, i32)> {
    let (left, gap, fs) = (m.left, m.gap, m.fs);
    let y = m.pad;
    let side = ((ICON * m.k).round() as i32).min(m.inner_w / 4);
    let icon = IRect::new(left, y, side, side);
    let name_w = m.inner_w - icon.w - gap;
    if name_w < m.px(60.0) {
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
    Some((icon, y + stack.max(icon.h) + gap))
}

/// Places the risk class at `y`: a dot and the wording, both in the risk colour. Returns the
/// dot and the y under the line.
pub(super) fn place_risk(
    fonts: &mut Fonts,
    config: &Config,
    content: &DialogContent,
    m: &Metrics,
    y: i32,
    texts: &mut Vec<Placed>,
) -> (IRect, i32) {
    let (left, inner_w) = (m.left, m.inner_w);
    let risk_size = m.fs * 0.95;
    let risk = fonts.shape(
        config.text.risk(content.risk),
        &full(risk_size, true),
        (inner_w - m.px(18.0)) as f32,
    );
    let dot = m.px(10.0);
    let risk_line = (risk_size * LINE_HEIGHT).round() as i32;
    let risk_dot = IRect::new(left, y + (risk_line - dot) / 2, dot, dot);
    let risk_h = risk.height;
    texts.push(Placed {
        x: left + m.px(18.0),
        y,
        w: inner_w - m.px(18.0),
        text: risk,
        role: Role::Risk,
    });
    (risk_dot, y + risk_h + m.gap)
}

/// Places the challenge word of a spoken approval at `y`, large and framed, under its label.
/// Returns the frame (none without a challenge) and the y under it.
pub(super) fn place_challenge(
    fonts: &mut Fonts,
    config: &Config,
    t: &Texts,
    m: &Metrics,
    y: i32,
    texts: &mut Vec<Placed>,
) -> (Option<IRect>, i32) {
    let Some(word) = &t.challenge else {
        return (None, y);
    };
    let (left, inner_w, fs) = (m.left, m.inner_w, m.fs);
    let mut col = Column {
        fonts: &mut *fonts,
        out: Vec::new(),
        x: left,
        w: inner_w,
        y,
    };
    col.push(&config.text.challenge, &full(fs * 0.9, false), Role::Muted);
    let inset = m.px(10.0);
    let box_y = col.y + m.px(4.0);
    col.x = left + inset;
    col.w = inner_w - 2 * inset;
    col.y = box_y + m.px(6.0);
    let mut word_style = full(fs * 1.6, true);
    word_style.align = Some(Align::Center);
    col.push(word, &word_style, Role::Text);
    let frame_box = IRect::new(left, box_y, inner_w, col.y + m.px(6.0) - box_y);
    texts.extend(col.out);
    (Some(frame_box), frame_box.bottom() + m.gap)
}
