//! The udev backend's decisions that need no hardware, as pure functions: which mode a
//! connector runs, which CRTC drives which connector, where each output sits in the global
//! space, where a relative pointer ends up, and which key chord switches VT.

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

/// Gives each connector (in order) a CRTC from the ones it can use that no earlier connector
/// took; `None` for a connector left without one.
pub(crate) fn assign_crtcs<C: Copy + PartialEq>(possible: &[Vec<C>]) -> Vec<Option<C>> {
    let mut taken: Vec<C> = Vec::new();
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

/// Places outputs of these physical sizes left to right at scale 1, top edges aligned.
pub(crate) fn layout(sizes: &[(i32, i32)]) -> Vec<OutputSpec> {
    let mut x = 0;
    sizes
        .iter()
        .map(|&(width, height)| {
            let spec = OutputSpec {
                width,
                height,
                scale: 1.0,
                x,
                y: 0,
            };
            x += width;
            spec
        })
        .collect()
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
            assign_crtcs(&possible),
            vec![Some(1), Some(2), None, Some(3)]
        );
        assert_eq!(assign_crtcs::<u32>(&[vec![]]), vec![None]);
    }

    #[test]
    fn outputs_are_laid_out_left_to_right() {
        let specs = layout(&[(1920, 1080), (2560, 1440)]);
        assert_eq!(specs.len(), 2);
        assert_eq!((specs[0].x, specs[0].y), (0, 0));
        assert_eq!((specs[1].x, specs[1].y), (1920, 0));
        assert_eq!((specs[1].width, specs[1].height), (2560, 1440));
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
