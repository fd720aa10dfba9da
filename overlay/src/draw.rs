//! Drawing: pure functions from a [`Layout`], the content and the live state to pixels in a
//! premultiplied RGBA pixmap. [`draw_full`] paints everything; [`draw_region`] repaints one live
//! region (a row, the level meter, the countdown, the badge, the scrolled body, a button) and
//! returns its damage, producing exactly the pixels a full render of the same state would.
//! Every text is drawn clipped to its own box (and the body's texts to the body's view too).

mod paint;

use std::borrow::Cow;

use tiny_skia::{FilterQuality, PathBuilder, Pixmap, PixmapPaint, Transform};

use crate::config::{Config, Palette};
use crate::content::{Control, DialogContent, HapticState, LiveState, VoiceState};
use crate::layout::{IRect, Layout, RING_GAP, RING_W, Role, Row};
use crate::text::Fonts;
use paint::{draw_bar, fill_path, fill_rect, rounded, stroke_path};

/// A part of the dialog that changes while it is up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Region {
    /// The live row at this index of [`Layout::rows`].
    Row(usize),
    /// The voice level meter.
    Meter,
    /// The countdown text and bar.
    Countdown,
    /// The queue badge.
    Badge,
    /// The scrolling body, its scroll bar and the more-above/below hint.
    Body,
    /// A button with its focus ring.
    Button(Control),
}

/// Everything the drawing reads.
pub struct Scene<'a> {
    pub config: &'a Config,
    pub palette: &'a Palette,
    pub content: &'a DialogContent,
    pub live: &'a LiveState,
}

impl Scene<'_> {
    fn seconds_left(&self) -> u32 {
        self.live.seconds_left.unwrap_or(self.content.seconds_left)
    }

    fn queued(&self) -> u32 {
        self.live.queued.unwrap_or(self.content.queued)
    }
}

/// Whether the body has been read to its end: it fits, its end is in view, or it has been.
pub fn read_all(layout: &Layout, live: &LiveState) -> bool {
    live.read_all || !layout.scrolls() || layout.at_end(live.scroll)
}

/// Whether `control` takes input now: Deny always (a refusal never waits); the approving
/// controls after the guard, and only once the body has been read to its end.
pub fn enabled(layout: &Layout, live: &LiveState, control: Control) -> bool {
    control == Control::Deny || (live.armed && read_all(layout, live) && !live.approve_locked)
}

/// A hold's progress as drawn: in quarters with reduced motion, so it does not animate.
pub fn shown_progress(config: &Config, progress: f32) -> f32 {
    if config.reduced_motion {
        (progress * 4.0).floor() / 4.0
    } else {
        progress
    }
}

/// Paints the whole dialog into `pixmap` (sized [`Layout::size`]).
pub fn draw_full(fonts: &mut Fonts, layout: &Layout, scene: &Scene<'_>, pixmap: &mut Pixmap) {
    pixmap.fill(tiny_skia::Color::TRANSPARENT);
    draw_card(layout, scene, pixmap);
    draw_icon(layout, scene, pixmap);
    draw_marks(layout, scene, pixmap);
    draw_fixed_texts(fonts, layout, scene, pixmap);

    draw_region(fonts, layout, scene, Region::Body, pixmap);
    for i in 0..layout.rows.len() {
        draw_region(fonts, layout, scene, Region::Row(i), pixmap);
    }
    draw_region(fonts, layout, scene, Region::Countdown, pixmap);
    draw_region(fonts, layout, scene, Region::Badge, pixmap);
    for control in [Control::Deny, Control::Approve, Control::Session] {
        draw_region(fonts, layout, scene, Region::Button(control), pixmap);
    }
}

/// Every text [`draw_full`] draws for this state, in reading order: the fixed texts (header,
/// risk, challenge), the body's, the live rows, the countdown, the queue badge and the buttons'
/// labels. Empty ones are left out; a masked entry is its dots, as drawn. Each is the text as
/// shaped, before wrapping or ellipsis, without the left-to-right marks the dialog puts between
/// a client's words (they draw nothing, and every one of them is the dialog's own).
pub fn drawn_texts(layout: &Layout, scene: &Scene<'_>) -> Vec<String> {
    let mut texts: Vec<String> = layout
        .texts
        .iter()
        .filter(|t| t.role != Role::Monogram || scene.content.icon.is_none())
        .chain(&layout.body_texts)
        .map(|t| t.text.text())
        .collect();
    texts.extend(
        layout
            .rows
            .iter()
            .map(|&(row, _)| row_label(row, scene).0.into_owned()),
    );
    texts.push(
        scene
            .config
            .text
            .seconds_left
            .replace("{n}", &scene.seconds_left().to_string()),
    );
    if scene.queued() > 0 {
        texts.push(crate::layout::queued_label(scene.config, scene.queued()));
    }
    let labels = [Some(&layout.deny_label), Some(&layout.approve_label)];
    texts.extend(
        labels
            .into_iter()
            .chain([layout.session_label.as_ref()])
            .flatten()
            .map(|l| l.text()),
    );
    texts.retain(|t| !t.trim().is_empty());
    for t in &mut texts {
        t.retain(|c| c != '\u{200e}');
    }
    texts
}

/// The card: the risk colour frames it, a thin border and a thick stripe on the leading edge,
/// with an inner outline in the focus colour while the dialog has the keyboard.
fn draw_card(layout: &Layout, scene: &Scene<'_>, pixmap: &mut Pixmap) {
    let p = scene.palette;
    let risk = p.risk(scene.content.risk);
    let (w, h) = (layout.size.0 as f32, layout.size.1 as f32);
    if let Some(rect) = tiny_skia::Rect::from_xywh(0.0, 0.0, w, h) {
        fill_path(pixmap, rounded(rect, layout.radius), risk);
    }
    let b = layout.border as f32;
    let s = layout.stripe as f32;
    if let Some(rect) = tiny_skia::Rect::from_xywh(s, b, w - s - b, h - 2.0 * b) {
        fill_path(pixmap, rounded(rect, (layout.radius - b).max(0.0)), p.card);
        if scene.live.keyboard {
            // The dialog has the keyboard: an inner outline in the focus colour says so.
            let width = (2.0 * layout.ks).max(1.0);
            let inset = width / 2.0 + b;
            if let Some(inner) = tiny_skia::Rect::from_xywh(
                rect.x() + inset,
                rect.y() + inset,
                rect.width() - 2.0 * inset,
                rect.height() - 2.0 * inset,
            ) {
                let r = (layout.radius - b - inset).max(0.0);
                stroke_path(pixmap, rounded(inner, r), p.focus, width);
            }
        }
    }
}

/// The requester's icon scaled into its box, or without one an outlined tile for the monogram.
fn draw_icon(layout: &Layout, scene: &Scene<'_>, pixmap: &mut Pixmap) {
    let p = scene.palette;
    match &scene.content.icon {
        Some(icon) => {
            let sx = layout.icon.w as f32 / icon.pixels.width() as f32;
            let sy = layout.icon.h as f32 / icon.pixels.height() as f32;
            let paint = PixmapPaint {
                quality: FilterQuality::Bicubic,
                ..PixmapPaint::default()
            };
            pixmap.draw_pixmap(
                0,
                0,
                icon.pixels.as_ref(),
                &paint,
                Transform::from_row(sx, 0.0, 0.0, sy, layout.icon.x as f32, layout.icon.y as f32),
                None,
            );
        }
        None => {
            if let Some(r) = layout.icon.to_skia() {
                fill_path(pixmap, rounded(r, 8.0 * layout.ks), p.button);
                let bw = layout.border as f32;
                if let Some(inner) = tiny_skia::Rect::from_xywh(
                    r.x() + bw / 2.0,
                    r.y() + bw / 2.0,
                    r.width() - bw,
                    r.height() - bw,
                ) {
                    stroke_path(
                        pixmap,
                        rounded(inner, 8.0 * layout.ks - bw / 2.0),
                        p.border,
                        bw,
                    );
                }
            }
        }
    }
}

/// The fixed shapes: the risk dot, the challenge word's frame (outlined in the risk colour),
/// and the separator.
fn draw_marks(layout: &Layout, scene: &Scene<'_>, pixmap: &mut Pixmap) {
    let p = scene.palette;
    let risk = p.risk(scene.content.risk);
    if let Some(dot) = layout.risk_dot.to_skia() {
        fill_path(pixmap, PathBuilder::from_oval(dot), risk);
    }
    if let Some(r) = layout.challenge_box.and_then(IRect::to_skia) {
        let width = (2.0 * layout.ks).max(1.0);
        fill_path(pixmap, rounded(r, 8.0 * layout.ks), p.button);
        if let Some(inner) = tiny_skia::Rect::from_xywh(
            r.x() + width / 2.0,
            r.y() + width / 2.0,
            r.width() - width,
            r.height() - width,
        ) {
            stroke_path(
                pixmap,
                rounded(inner, 8.0 * layout.ks - width / 2.0),
                risk,
                width,
            );
        }
    }
    fill_rect(pixmap, layout.separator, p.border);
}

/// The texts that never move (header, risk, challenge), each in its role's colour; the
/// monogram only when there is no icon.
fn draw_fixed_texts(fonts: &mut Fonts, layout: &Layout, scene: &Scene<'_>, pixmap: &mut Pixmap) {
    let p = scene.palette;
    let risk = p.risk(scene.content.risk);
    for t in &layout.texts {
        let color = match t.role {
            Role::Text => p.text,
            Role::Muted => p.muted,
            Role::Risk => risk,
            Role::Verified => p.routine,
            Role::Unverified => p.privileged,
            Role::Monogram if scene.content.icon.is_some() => continue,
            Role::Monogram => p.button_text,
        };
        fonts.draw(&t.text, pixmap, t.x, t.y, color, t.bounds());
    }
}

/// The text and dot colour of a live row, from the scene's state.
fn row_label<'a>(row: Row, scene: &Scene<'a>) -> (Cow<'a, str>, crate::config::Rgba) {
    let p = scene.palette;
    let live = scene.live;
    match row {
        // A masked entry's `shown` is dots: the text itself never reaches the dialog.
        Row::Entry => match &live.entry {
            Some(e) => {
                let caret = if e.focused { "▏" } else { "" };
                (
                    Cow::Owned(format!("{} {}{caret}", e.label.trim_end(), e.shown)),
                    if e.focused { p.focus } else { p.muted },
                )
            }
            None => (Cow::Borrowed(""), p.muted),
        },
        Row::EntryMessage => (
            Cow::Borrowed(
                live.entry
                    .as_ref()
                    .and_then(|e| e.message.as_deref())
                    .unwrap_or_default(),
            ),
            p.card,
        ),
        Row::EntryAccount => (
            Cow::Borrowed(
                live.entry
                    .as_ref()
                    .and_then(|e| e.account.as_deref())
                    .unwrap_or_default(),
            ),
            p.focus,
        ),
        other => {
            let (label, dot) = fixed_row_label(other, scene);
            (Cow::Borrowed(label), dot)
        }
    }
}

/// The text and dot colour of a row whose words are fixed text.
fn fixed_row_label<'a>(row: Row, scene: &Scene<'a>) -> (&'a str, crate::config::Rgba) {
    let p = scene.palette;
    let text = &scene.config.text;
    let live = scene.live;
    match row {
        Row::Entry | Row::EntryMessage | Row::EntryAccount => ("", p.muted),
        Row::Voice => match live.voice {
            VoiceState::Listening => (text.listening.as_str(), p.meter),
            VoiceState::Heard => (text.voice_heard.as_str(), p.routine),
            VoiceState::Missed => (text.voice_missed.as_str(), p.meter),
            VoiceState::Unavailable => (text.voice_unavailable.as_str(), p.muted),
        },
        Row::VoiceUnavailable => (
            scene
                .content
                .voice_unavailable
                .as_deref()
                .unwrap_or_default(),
            p.muted,
        ),
        Row::Haptic => match live.haptic {
            HapticState::Waiting => (text.double_tap.as_str(), p.focus),
            HapticState::FirstTap => (text.tap_again.as_str(), p.meter),
        },
        Row::Hold => (text.hold_hint.as_str(), p.risk(scene.content.risk)),
    }
}

/// Repaints one live region and returns the damaged rectangle (physical pixels).
pub fn draw_region(
    fonts: &mut Fonts,
    layout: &Layout,
    scene: &Scene<'_>,
    region: Region,
    pixmap: &mut Pixmap,
) -> IRect {
    match region {
        Region::Row(i) => draw_row(fonts, layout, scene, i, pixmap),
        Region::Meter => draw_meter(layout, scene, pixmap),
        Region::Countdown => draw_countdown(fonts, layout, scene, pixmap),
        Region::Badge => draw_badge(fonts, layout, scene, pixmap),
        Region::Body => {
            draw_body(fonts, layout, scene, pixmap);
            layout.body_region
        }
        Region::Button(control) => draw_button(fonts, layout, scene, control, pixmap),
    }
}

/// The live row at `i`: its dot and words from the live state, and the voice row's meter.
fn draw_row(
    fonts: &mut Fonts,
    layout: &Layout,
    scene: &Scene<'_>,
    i: usize,
    pixmap: &mut Pixmap,
) -> IRect {
    let p = scene.palette;
    let px = |v: f32| (v * layout.ks).round() as i32;
    let Some(&(row, r)) = layout.rows.get(i) else {
        return IRect::default();
    };
    fill_rect(pixmap, r, p.card);
    let (label, dot) = row_label(row, scene);
    let d = px(8.0);
    if let Some(dr) = IRect::new(r.x + px(1.0), r.y + (r.h - d) / 2, d, d).to_skia() {
        fill_path(pixmap, PathBuilder::from_oval(dr), dot);
    }
    let meter_w = match (row, layout.meter) {
        (Row::Voice, Some(m)) => m.w + px(8.0),
        _ => 0,
    };
    let label_box = IRect::new(r.x + px(18.0), r.y, r.w - px(18.0) - meter_w, r.h);
    let t = fonts.shape(&label, &layout.small, label_box.w.max(1) as f32);
    let ty = r.y + (r.h - t.height) / 2;
    fonts.draw(&t, pixmap, label_box.x, ty, p.text, label_box);
    if row == Row::Voice {
        draw_region(fonts, layout, scene, Region::Meter, pixmap);
    }
    r
}

/// The voice level meter, filled while listening or after a miss.
fn draw_meter(layout: &Layout, scene: &Scene<'_>, pixmap: &mut Pixmap) -> IRect {
    let p = scene.palette;
    let live = scene.live;
    let Some(m) = layout.meter else {
        return IRect::default();
    };
    fill_rect(pixmap, m, p.card);
    if matches!(live.voice, VoiceState::Listening | VoiceState::Missed) {
        draw_bar(pixmap, m, live.voice_level, p.track, p.meter);
    }
    m
}

/// The seconds left, in words and as a bar of the time still to run.
fn draw_countdown(
    fonts: &mut Fonts,
    layout: &Layout,
    scene: &Scene<'_>,
    pixmap: &mut Pixmap,
) -> IRect {
    let p = scene.palette;
    let px = |v: f32| (v * layout.ks).round() as i32;
    let r = layout.countdown;
    fill_rect(pixmap, r, p.card);
    let secs = scene.seconds_left();
    let label = scene
        .config
        .text
        .seconds_left
        .replace("{n}", &secs.to_string());
    let bar = layout.countdown_bar;
    let label_box = IRect::new(r.x, r.y, bar.x - r.x - px(8.0), r.h);
    let t = fonts.shape(&label, &layout.small, label_box.w.max(1) as f32);
    fonts.draw(
        &t,
        pixmap,
        r.x,
        r.y + (r.h - t.height) / 2,
        p.muted,
        label_box,
    );
    let frac = secs as f32 / scene.content.timeout_seconds.max(1) as f32;
    if bar.w > 0 {
        draw_bar(pixmap, bar, frac, p.track, p.muted);
    }
    r
}

/// The queue badge: a pill with the count of waiting prompts at the end of its box, none when
/// nothing waits.
fn draw_badge(fonts: &mut Fonts, layout: &Layout, scene: &Scene<'_>, pixmap: &mut Pixmap) -> IRect {
    let p = scene.palette;
    let px = |v: f32| (v * layout.ks).round() as i32;
    let r = layout.badge;
    fill_rect(pixmap, r, p.card);
    let n = scene.queued();
    if n > 0 {
        let label = crate::layout::queued_label(scene.config, n);
        let t = fonts.shape(&label, &layout.badge_style, 1e6);
        let pill_w = (t.width + px(20.0)).min(r.w);
        let pill_h = (t.height + px(6.0)).min(r.h);
        let pill = IRect::new(r.right() - pill_w, r.y + (r.h - pill_h) / 2, pill_w, pill_h);
        if let Some(pr) = pill.to_skia() {
            fill_path(pixmap, rounded(pr, pr.height() / 2.0), p.badge);
        }
        let t = fonts.shape(&label, &layout.badge_style, pill.w as f32);
        let ty = pill.y + (pill.h - t.height) / 2;
        fonts.draw(&t, pixmap, pill.x, ty, p.badge_text, pill);
    }
    r
}

/// A button with its outline, hold progress, label (greyed while it takes no input) and focus
/// ring; the damage takes in the ring's reach.
fn draw_button(
    fonts: &mut Fonts,
    layout: &Layout,
    scene: &Scene<'_>,
    control: Control,
    pixmap: &mut Pixmap,
) -> IRect {
    let p = scene.palette;
    let ks = layout.ks;
    let px = |v: f32| (v * ks).round() as i32;
    let live = scene.live;
    let Some(b) = layout.control_rect(control) else {
        return IRect::default();
    };
    let label = match control {
        Control::Deny => &layout.deny_label,
        Control::Approve => &layout.approve_label,
        Control::Session => match &layout.session_label {
            Some(l) => l,
            None => return IRect::default(),
        },
    };
    // One pixel more than the ring's reach takes its anti-aliased fringe.
    let area = b.inflate(layout.ring_reach + 1);
    fill_rect(pixmap, area, p.card);
    let radius = 8.0 * ks;
    let risk = p.risk(scene.content.risk);
    if let Some(r) = b.to_skia() {
        fill_path(pixmap, rounded(r, radius), p.button);
        // The approving controls are outlined in the risk colour; Deny in the neutral
        // border colour. None is filled as a default would be.
        let (edge, width) = match control {
            Control::Approve | Control::Session => (risk, (2.0 * ks).max(1.0)),
            Control::Deny => (p.border, ks.max(1.0)),
        };
        let inset = width / 2.0;
        if let Some(er) = tiny_skia::Rect::from_xywh(
            r.x() + inset,
            r.y() + inset,
            r.width() - width,
            r.height() - width,
        ) {
            stroke_path(pixmap, rounded(er, radius - inset), edge, width);
        }
    }
    let progress = shown_progress(scene.config, live.hold_progress);
    if live.held == control && progress > 0.0 {
        let bh = px(4.0).max(2);
        let inner = IRect::new(b.x + px(6.0), b.bottom() - bh - px(5.0), b.w - px(12.0), bh);
        draw_bar(pixmap, inner, progress, p.track, risk);
    }
    let color = if enabled(layout, live, control) {
        p.button_text
    } else {
        p.disabled_text
    };
    let label_box = IRect::new(b.x + px(4.0), b.y, b.w - px(8.0), b.h);
    let ty = b.y + (b.h - label.height) / 2;
    fonts.draw(label, pixmap, label_box.x, ty, color, label_box);
    if live.focus == Some(control) && live.keyboard {
        let reach = (RING_GAP + RING_W / 2.0) * ks;
        if let Some(rr) = tiny_skia::Rect::from_xywh(
            b.x as f32 - reach,
            b.y as f32 - reach,
            b.w as f32 + 2.0 * reach,
            b.h as f32 + 2.0 * reach,
        ) {
            stroke_path(pixmap, rounded(rr, radius + reach), p.focus, RING_W * ks);
        }
    }
    area
}

/// The body at its scroll offset, its scroll bar, and the hint that more is above or below.
fn draw_body(fonts: &mut Fonts, layout: &Layout, scene: &Scene<'_>, pixmap: &mut Pixmap) {
    let p = scene.palette;
    let live = scene.live;
    fill_rect(pixmap, layout.body_region, p.card);
    let view = layout.body;
    let offset = layout.scroll_px(live.scroll);
    let top = view.y - offset;
    for t in &layout.body_texts {
        // Its own box, then only what the view shows of it.
        let clip = t.bounds().shifted(top).intersect(&view);
        if clip.is_empty() {
            continue;
        }
        let color = match t.role {
            Role::Muted => p.muted,
            _ => p.text,
        };
        fonts.draw(&t.text, pixmap, t.x, t.y + top, color, clip);
    }
    if let Some(track) = layout.scrollbar {
        if let Some(r) = track.to_skia() {
            fill_path(pixmap, rounded(r, r.width() / 2.0), p.track);
        }
        let max = layout.max_scroll().max(1);
        let thumb_h = ((i64::from(track.h) * i64::from(view.h)
            / i64::from(layout.body_height.max(1))) as i32)
            .clamp(track.w.max(1), track.h.max(1));
        let thumb_y =
            track.y + ((i64::from(track.h - thumb_h) * i64::from(offset) / i64::from(max)) as i32);
        let thumb = IRect::new(track.x, thumb_y, track.w, thumb_h);
        if let Some(r) = thumb.to_skia() {
            fill_path(pixmap, rounded(r, r.width() / 2.0), p.muted);
        }
    }
    if let Some(hint) = layout.scroll_hint {
        let text = &scene.config.text;
        let (label, color) = if !layout.at_end(live.scroll) {
            (text.more_below.as_str(), p.focus)
        } else if offset > 0 {
            (text.more_above.as_str(), p.muted)
        } else {
            ("", p.muted)
        };
        let t = fonts.shape(label, &layout.small, hint.w.max(1) as f32);
        fonts.draw(
            &t,
            pixmap,
            hint.x,
            hint.y + (hint.h - t.height) / 2,
            color,
            hint,
        );
    }
}
