//! The udev backend's decisions that need no hardware, as pure functions: which mode a
//! connector runs, which displays a rescan drops or lights (hotplug), which CRTC drives which
//! connector, where each output sits in the global space, where a relative pointer ends up, and
//! which key chord switches VT.

use crate::config::OutputSpec;

/// One mode a connector offers, as the choice needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ModeCandidate {
    pub width: u16,
    pub height: u16,
    pub refresh_hz: u32,
    /// The display says this is its native mode (EDID's preferred timing).
    pub preferred: bool,
}

/// The mode to use: the display's preferred one; without one, the largest, then the fastest.
/// `None` when the connector offers no mode.
pub(crate) fn choose_mode(modes: &[ModeCandidate]) -> Option<usize> {
    if let Some(i) = modes.iter().position(|m| m.preferred) {
        return Some(i);
    }
    modes
        .iter()
        .enumerate()
        .max_by_key(|(i, m)| {
            let area = u32::from(m.width) * u32::from(m.height);
            // Ties keep the first listed (the kernel lists the better ones first).
            (area, m.refresh_hz, std::cmp::Reverse(*i))
        })
        .map(|(i, _)| i)
}

/// What a rescan of the GPU's connectors changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rescan {
    /// Heads whose display is gone, highest index first: removing them in this order keeps
    /// every index still to remove valid.
    pub remove: Vec<usize>,
    /// Connected connectors (indexes into `connected`) that have no head yet, in the card's
    /// order.
    pub add: Vec<usize>,
}

/// Compares the connector of each head (`heads`, in output order) with what the card now says:
/// `connected` connectors, and `unsure` ones whose state could not be read or is unknown. A head
/// goes only when its connector is no longer connected for sure (a failed read is not an
/// unplug); a connected connector without a head comes, so a display that was unplugged and
/// plugged in again gets a head again.
pub(crate) fn rescan<C: Copy + PartialEq>(heads: &[C], connected: &[C], unsure: &[C]) -> Rescan {
    let mut remove: Vec<usize> = heads
        .iter()
        .enumerate()
        .filter(|(_, c)| !connected.contains(c) && !unsure.contains(c))
        .map(|(i, _)| i)
        .collect();
    remove.reverse();
    let add = connected
        .iter()
        .enumerate()
        .filter(|(_, c)| !heads.contains(c))
        .map(|(i, _)| i)
        .collect();
    Rescan { remove, add }
}

/// The heads whose display is still connected but now asks for another mode (its mode list or
/// preferred mode changed): `heads[i]` is a head's connector and the mode it runs, `connected[j]`
/// a connected connector and the mode [`choose_mode`] picks now (`None`: it offers none, and the
/// head keeps its mode). Pairs (head index, connected index), in head order.
pub(crate) fn remoded<C: PartialEq, M: PartialEq>(
    heads: &[(C, M)],
    connected: &[(C, Option<M>)],
) -> Vec<(usize, usize)> {
    heads
        .iter()
        .enumerate()
        .filter_map(|(i, (conn, running))| {
            let j = connected.iter().position(|(c, _)| c == conn)?;
            match &connected[j].1 {
                Some(wanted) if wanted != running => Some((i, j)),
                _ => None,
            }
        })
        .collect()
}

/// Gives each connector (in order) a CRTC from the ones it can use that neither a head
/// (`in_use`) nor an earlier connector took; `None` for a connector left without one.
pub(crate) fn assign_crtcs<C: Copy + PartialEq>(
    possible: &[Vec<C>],
    in_use: &[C],
) -> Vec<Option<C>> {
    let mut taken: Vec<C> = in_use.to_vec();
    possible
        .iter()
        .map(|crtcs| {
            let free = crtcs.iter().copied().find(|c| !taken.contains(c));
            if let Some(c) = free {
                taken.push(c);
            }
            free
        })
        .collect()
}

/// Where an output of physical `size` goes, given the outputs already there (rectangles
/// `x, y, w, h` in global logical space): right of the rightmost one (at 0 when there is none),
/// top edges aligned at 0, scale 1. A gap that a removed output left stays: the others keep
/// their places, so no window or pointer jumps.
pub(crate) fn place_after(existing: &[(i32, i32, i32, i32)], size: (i32, i32)) -> OutputSpec {
    let x = existing
        .iter()
        .map(|&(x, _, w, _)| x.saturating_add(w))
        .max()
        .unwrap_or(0);
    OutputSpec {
        width: size.0,
        height: size.1,
        scale: 1.0,
        x,
        y: 0,
    }
}

/// Keeps a pointer that a relative motion moved to `p` on the outputs (rectangles `x, y, w, h`
/// in global logical space): a point on none goes to the nearest point of the nearest one.
pub(crate) fn clamp_to_outputs(p: (f64, f64), rects: &[(i32, i32, i32, i32)]) -> (f64, f64) {
    let mut best: Option<((f64, f64), f64)> = None;
    for &(x, y, w, h) in rects {
        let (x0, y0) = (f64::from(x), f64::from(y));
        // The last pixel, so the pointer stays on this output.
        let (x1, y1) = (
            x0 + f64::from(w.max(1)) - 1.0,
            y0 + f64::from(h.max(1)) - 1.0,
        );
        let q = (p.0.clamp(x0, x1), p.1.clamp(y0, y1));
        let d = (q.0 - p.0).powi(2) + (q.1 - p.1).powi(2);
        if best.is_none_or(|(_, bd)| d < bd) {
            best = Some((q, d));
        }
    }
    best.map_or(p, |(q, _)| q)
}

/// evdev codes of the keys the VT-switch chord uses.
const KEY_F1_TO_F10: std::ops::RangeInclusive<u32> = 59..=68;
const KEY_F11: u32 = 87;
const KEY_F12: u32 = 88;

/// The VT that Ctrl+Alt+F`n` asks for when key `code` (evdev) is pressed with these modifiers.
pub(crate) fn vt_switch(code: u32, ctrl: bool, alt: bool) -> Option<i32> {
    if !(ctrl && alt) {
        return None;
    }
    match code {
        c if KEY_F1_TO_F10.contains(&c) => Some((c - 58) as i32),
        KEY_F11 => Some(11),
        KEY_F12 => Some(12),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(width: u16, height: u16, refresh_hz: u32, preferred: bool) -> ModeCandidate {
        ModeCandidate {
            width,
            height,
            refresh_hz,
            preferred,
        }
    }

    #[test]
    fn the_preferred_mode_wins_even_if_smaller() {
        let modes = [m(3840, 2160, 60, false), m(1920, 1080, 60, true)];
        assert_eq!(choose_mode(&modes), Some(1));
    }

    #[test]
    fn without_a_preferred_mode_the_largest_then_fastest_wins() {
        let modes = [
            m(1280, 720, 60, false),
            m(1920, 1080, 60, false),
            m(1920, 1080, 144, false),
            m(1600, 900, 240, false),
        ];
        assert_eq!(choose_mode(&modes), Some(2));
        assert_eq!(choose_mode(&[]), None);
        // Equal modes: the first listed.
        assert_eq!(
            choose_mode(&[m(800, 600, 60, false), m(800, 600, 60, false)]),
            Some(0)
        );
    }

    #[test]
    fn crtcs_are_not_shared_and_leftovers_get_none() {
        let possible = vec![vec![1, 2], vec![1, 2], vec![1, 2], vec![3]];
        assert_eq!(
            assign_crtcs(&possible, &[]),
            vec![Some(1), Some(2), None, Some(3)]
        );
        assert_eq!(assign_crtcs::<u32>(&[vec![]], &[]), vec![None]);
    }

    #[test]
    fn crtcs_in_use_by_heads_are_not_given_to_new_connectors() {
        // Heads hold 1 and 3: the first newcomer takes 2, the second finds none left.
        let possible = vec![vec![1, 2, 3], vec![1, 3], vec![4]];
        assert_eq!(
            assign_crtcs(&possible, &[1, 3]),
            vec![Some(2), None, Some(4)]
        );
        // A CRTC that a removed head freed (no longer in use) is given again.
        assert_eq!(assign_crtcs(&[vec![1]], &[3]), vec![Some(1)]);
    }

    #[test]
    fn outputs_are_placed_left_to_right() {
        let first = place_after(&[], (1920, 1080));
        assert_eq!((first.x, first.y), (0, 0));
        assert_eq!((first.width, first.height, first.scale), (1920, 1080, 1.0));
        let second = place_after(&[(0, 0, 1920, 1080)], (2560, 1440));
        assert_eq!((second.x, second.y), (1920, 0));
        assert_eq!((second.width, second.height), (2560, 1440));
    }

    #[test]
    fn an_added_output_goes_right_of_the_rightmost_even_past_a_gap() {
        // The middle output was unplugged: 0..1920 and 3840..5120 remain, listed out of order.
        let existing = [(3840, 0, 1280, 1024), (0, 0, 1920, 1080)];
        let spec = place_after(&existing, (800, 600));
        assert_eq!((spec.x, spec.y), (5120, 0));
    }

    #[test]
    fn a_rescan_drops_unplugged_heads_last_first_and_lights_new_connectors() {
        // Heads on connectors 10, 11, 12; 11 and 12 unplugged, 13 and 14 plugged in.
        let change = rescan(&[10, 11, 12], &[14, 10, 13], &[]);
        assert_eq!(change.remove, vec![2, 1]);
        // Indexes into `connected`, in the card's order.
        assert_eq!(change.add, vec![0, 2]);
        // Nothing changed.
        let same = rescan(&[10, 11], &[10, 11], &[]);
        assert_eq!(
            same,
            Rescan {
                remove: vec![],
                add: vec![]
            }
        );
        // Every display gone (or the GPU removed).
        assert_eq!(rescan(&[10, 11], &[], &[]).remove, vec![1, 0]);
    }

    #[test]
    fn an_unreadable_connector_keeps_its_head_and_is_not_lit() {
        // 11's state could not be read: its head stays; 12 is unreadable and headless: not lit.
        let change = rescan(&[10, 11], &[10], &[11, 12]);
        assert_eq!(
            change,
            Rescan {
                remove: vec![],
                add: vec![]
            }
        );
    }

    #[test]
    fn a_connector_that_reconnects_gets_a_head_again() {
        let mut heads = vec![10, 11];
        // 11 unplugged.
        let change = rescan(&heads, &[10], &[]);
        assert_eq!(change.remove, vec![1]);
        assert!(change.add.is_empty());
        for i in change.remove {
            heads.remove(i);
        }
        // 11 plugged in again.
        let connected = [10, 11];
        let change = rescan(&heads, &connected, &[]);
        assert!(change.remove.is_empty());
        assert_eq!(change.add, vec![1]);
        heads.extend(change.add.iter().map(|&i| connected[i]));
        assert_eq!(heads, vec![10, 11]);
    }

    #[test]
    fn a_connected_display_that_asks_for_another_mode_is_relit() {
        // Heads on 10 (1280x800) and 11 (1024x768); 10 now prefers 1024x768, 11 is unchanged,
        // 12 is new (lit by the rescan, not here).
        let heads = [(10, (1280, 800)), (11, (1024, 768))];
        let connected = [
            (12, Some((800, 600))),
            (11, Some((1024, 768))),
            (10, Some((1024, 768))),
        ];
        assert_eq!(remoded(&heads, &connected), vec![(0, 2)]);
        // Unplugged (not listed) or offering no mode: not relit here.
        assert!(remoded(&heads, &[(10, None)]).is_empty());
        assert!(remoded(&heads, &[]).is_empty());
    }

    #[test]
    fn the_pointer_stays_on_the_outputs() {
        let rects = [(0, 0, 1920, 1080), (1920, 0, 1280, 720)];
        // Inside: unchanged.
        assert_eq!(clamp_to_outputs((100.0, 100.0), &rects), (100.0, 100.0));
        // Off the left edge.
        assert_eq!(clamp_to_outputs((-50.0, 10.0), &rects), (0.0, 10.0));
        // Below the shorter right output: onto its bottom row.
        assert_eq!(clamp_to_outputs((2500.0, 800.0), &rects), (2500.0, 719.0));
        // Past the right edge.
        assert_eq!(clamp_to_outputs((5000.0, 0.0), &rects), (3199.0, 0.0));
        // No outputs: left as is.
        assert_eq!(clamp_to_outputs((7.0, 8.0), &[]), (7.0, 8.0));
    }

    #[test]
    fn ctrl_alt_function_keys_switch_vt() {
        assert_eq!(vt_switch(59, true, true), Some(1));
        assert_eq!(vt_switch(68, true, true), Some(10));
        assert_eq!(vt_switch(87, true, true), Some(11));
        assert_eq!(vt_switch(88, true, true), Some(12));
        assert_eq!(vt_switch(59, true, false), None);
        assert_eq!(vt_switch(59, false, true), None);
        assert_eq!(vt_switch(30, true, true), None);
    }
}
