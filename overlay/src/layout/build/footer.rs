//! The fixed part under the body: the separator's spacing, the live rows, the countdown with the
//! queue badge, and the buttons. Their sizes are measured first ([`Footer::measure`]), to know
//! how tall the body's view can be; then the countdown and the buttons are placed.

use cosmic_text::Align;

use super::{LINE_HEIGHT, MAX_SHOWN_QUEUE, Metrics, queued_label, style};
use crate::config::Config;
use crate::content::DialogContent;
use crate::layout::rows::live_row_count;
use crate::layout::{IRect, RING_GAP, RING_W};
use crate::text::{Fonts, Shaped, TextStyle};

/// Logical sizes before zoom.
const BUTTON_GAP: f32 = 16.0;
const BAR_H: f32 = 4.0;

/// The sizes of what goes under the body, and the texts shaped to find them.
pub(super) struct Footer {
    /// The live rows' and the countdown's style.
    pub small: TextStyle,
    /// One live row's height (also the countdown's, the badge's and the scroll hint's).
    pub row_h: i32,
    pub badge_style: TextStyle,
    /// The badge at its widest count.
    badge_size: (i32, i32),
    /// The countdown's text column, left of its bar.
    countdown_w: i32,
    bar_w: i32,
    /// Whether the badge goes under the countdown (too narrow for both on one row).
    badge_own_row: bool,
    /// How far the focus ring reaches out of a button.
    pub ring_reach: i32,
    /// The gap between buttons.
    bgap: i32,
    button_w: i32,
    button_h: i32,
    above_buttons: i32,
    below_buttons: i32,
    pub deny_label: Shaped,
    pub approve_label: Shaped,
    pub session_label: Option<Shaped>,
    /// Everything from the body's end to the dialog's bottom edge.
    pub height: i32,
}

impl Footer {
    /// Measures the footer for `content` at `m`'s sizes.
    pub(super) fn measure(
        fonts: &mut Fonts,
        config: &Config,
        content: &DialogContent,
        m: &Metrics,
    ) -> Footer {
        let (fs, gap, inner_w) = (m.fs, m.gap, m.inner_w);
        let small = style(fs * 0.9, false, 1);
        let row_h = (small.size * LINE_HEIGHT).round() as i32 + m.px(4.0);
        let mut badge_style = style(fs * 0.8, true, 1);
        badge_style.align = Some(Align::Center);
        let badge_text = fonts.shape(
            &queued_label(config, MAX_SHOWN_QUEUE + 1),
            &badge_style,
            1e6,
        );
        let badge_size = (badge_text.width + m.px(20.0), badge_text.height + m.px(6.0));
        let row_h = row_h.max(badge_size.1);
        let countdown_text =
            fonts.shape(&config.text.seconds_left.replace("{n}", "999"), &small, 1e6);
        let countdown_w = countdown_text.width.max(inner_w / 4) + m.px(8.0);
        let bar_w = inner_w - countdown_w - badge_size.0 - m.px(8.0);
        let badge_own_row = bar_w < m.px(24.0);
        let live_rows = live_row_count(content, config);
        let ring_reach = m.px(RING_W + RING_GAP).max(2);
        let bgap = m.px(BUTTON_GAP).max(2 * ring_reach + 4);
        let button_w = (inner_w - bgap) / 2;
        let (deny_label, approve_label, session_label) =
            button_labels(fonts, config, content, m, button_w);
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
        let button_h = m.phys(config.min_target as f32).max(tallest + m.px(12.0));
        let above_buttons = gap.max(ring_reach + 2);
        let below_buttons = m.pad.max(ring_reach + m.border + 2);
        let height = gap
            + m.border
            + gap
            + live_rows as i32 * (row_h + m.px(2.0))
            + row_h
            + if badge_own_row { row_h + m.px(2.0) } else { 0 }
            + above_buttons
            + if content.offer_session {
                button_h + bgap
            } else {
                0
            }
            + button_h
            + below_buttons;
        Footer {
            small,
            row_h,
            badge_style,
            badge_size,
            countdown_w,
            bar_w,
            badge_own_row,
            ring_reach,
            bgap,
            button_w,
            button_h,
            above_buttons,
            below_buttons,
            deny_label,
            approve_label,
            session_label,
            height,
        }
    }

    /// Places the countdown at `y`, with the queue badge at its end (or under it when narrow).
    /// Returns the countdown, its bar, the badge, and the y where the buttons start.
    pub(super) fn place_countdown(&self, m: &Metrics, mut y: i32) -> (IRect, IRect, IRect, i32) {
        let (left, inner_w, row_h) = (m.left, m.inner_w, self.row_h);
        let bar_x = left + self.countdown_w;
        let bar_h = m.px(BAR_H).max(1);
        let (countdown, countdown_bar, badge) = if self.badge_own_row {
            let countdown = IRect::new(left, y, inner_w, row_h);
            let bar = IRect::new(
                bar_x,
                y + (row_h - bar_h) / 2,
                (countdown.right() - bar_x).max(0),
                bar_h,
            );
            y += row_h + m.px(2.0);
            let bw = self.badge_size.0.min(inner_w);
            let badge = IRect::new(left + inner_w - bw, y, bw, row_h);
            (countdown, bar, badge)
        } else {
            let bw = self.badge_size.0;
            let badge = IRect::new(left + inner_w - bw, y, bw, row_h);
            let countdown = IRect::new(left, y, badge.x - m.px(4.0) - left, row_h);
            let bar = IRect::new(bar_x, y + (row_h - bar_h) / 2, self.bar_w, bar_h);
            (countdown, bar, badge)
        };
        let below = y + row_h + self.above_buttons;
        (countdown, countdown_bar, badge, below)
    }

    /// Places the buttons at `y`: equal width, Deny first; none is a default. "Allow until
    /// logout" sits above Approve, on its own row. Returns it (if offered), Deny, Approve, and
    /// the dialog's bottom edge.
    pub(super) fn place_buttons(
        &self,
        m: &Metrics,
        content: &DialogContent,
        mut y: i32,
    ) -> (Option<IRect>, IRect, IRect, i32) {
        let (left, inner_w) = (m.left, m.inner_w);
        let (button_w, button_h) = (self.button_w, self.button_h);
        let session = content.offer_session.then(|| {
            let r = IRect::new(left + inner_w - button_w, y, button_w, button_h);
            y += button_h + self.bgap;
            r
        });
        let deny = IRect::new(left, y, button_w, button_h);
        let approve = IRect::new(left + inner_w - button_w, y, button_w, button_h);
        (session, deny, approve, y + button_h + self.below_buttons)
    }
}

/// Shapes the buttons' labels (Deny, Approve, and "Allow until logout" when offered), centred
/// on two lines at most, for buttons `button_w` wide.
fn button_labels(
    fonts: &mut Fonts,
    config: &Config,
    content: &DialogContent,
    m: &Metrics,
    button_w: i32,
) -> (Shaped, Shaped, Option<Shaped>) {
    let mut label_style = style(m.fs * 1.05, true, 2);
    label_style.align = Some(Align::Center);
    let label_w = (button_w - m.px(8.0)).max(1) as f32;
    let deny_label = fonts.shape(&config.text.deny, &label_style, label_w);
    let approve_label = fonts.shape(&config.text.approve, &label_style, label_w);
    let session_label = content
        .offer_session
        .then(|| fonts.shape(&config.text.allow_session, &label_style, label_w));
    (deny_label, approve_label, session_label)
}
