//! The live rows under the separator: one per modality other than visual, why voice is
//! missing, the hold hint, and a text entry's rows (the field, its message, the account when it may change), each a
//! fixed-height row whose words come from the live state.

use super::{IRect, Row};
use crate::config::Config;
use crate::content::{DialogContent, Modality};

/// The voice level meter's width before zoom (it sits at the right of the voice row).
const METER_W: f32 = 120.0;

/// The live rows from `top` (left, y, width, row height in physical pixels), the level meter's
/// place, and the y below them.
pub(super) fn place_live_rows(
    content: &DialogContent,
    config: &Config,
    (left, mut y, inner_w, row_h): (i32, i32, i32, i32),
    ks: f32,
) -> (Vec<(Row, IRect)>, Option<IRect>, i32) {
    let px = |v: f32| (v * ks).round() as i32;
    let mut rows = Vec::new();
    let mut meter = None;
    let mut push = |row: Row, y: &mut i32| {
        let r = IRect::new(left, *y, inner_w, row_h);
        rows.push((row, r));
        *y += row_h + px(2.0);
        r
    };
    // The entry first: it is what the user acts on next.
    if content.entry {
        push(Row::Entry, &mut y);
        push(Row::EntryMessage, &mut y);
        if content.entry_account {
            push(Row::EntryAccount, &mut y);
        }
    }
    for m in &content.modalities {
        let row = match m {
            Modality::Voice => Row::Voice,
            Modality::Haptic => Row::Haptic,
            Modality::Visual => continue,
        };
        let r = push(row, &mut y);
        if row == Row::Voice && !config.reduced_motion {
            let mw = px(METER_W).min(inner_w / 3);
            meter = Some(IRect::new(
                r.right() - mw,
                r.y + (row_h - px(8.0)) / 2,
                mw,
                px(8.0),
            ));
        }
    }
    if says_why_voice_is_missing(content) {
        push(Row::VoiceUnavailable, &mut y);
    }
    if content.needs_hold(config) {
        push(Row::Hold, &mut y);
    }
    (rows, meter, y)
}

/// Whether a row says why voice is not part of the prompt.
fn says_why_voice_is_missing(content: &DialogContent) -> bool {
    content.voice_unavailable.is_some() && !content.modalities.contains(&Modality::Voice)
}

/// How many live rows [`place_live_rows`] places.
pub(super) fn live_row_count(content: &DialogContent, config: &Config) -> usize {
    content
        .modalities
        .iter()
        .filter(|m| **m != Modality::Visual)
        .count()
        + usize::from(says_why_voice_is_missing(content))
        + usize::from(content.needs_hold(config))
        + 2 * usize::from(content.entry)
        + usize::from(content.entry && content.entry_account)
}
