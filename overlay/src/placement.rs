//! Where the dialog goes: the output nearest the user's focal point, and the dialog's position
//! inside it (centred, or near the focal point on large outputs), always fully visible. All in
//! global logical coordinates, so outputs of mixed scales compare directly.

/// A point in global logical coordinates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

/// A rectangle in logical coordinates; contains `[x, x + w) × [y, y + h)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rect {
    pub x: i32,
    pub y: i32,
    pub w: i32,
    pub h: i32,
}

impl Rect {
    /// Whether `p` lies inside.
    pub fn contains(&self, p: Point) -> bool {
        p.x >= f64::from(self.x)
            && p.y >= f64::from(self.y)
            && p.x < f64::from(self.x) + f64::from(self.w)
            && p.y < f64::from(self.y) + f64::from(self.h)
    }

    /// Squared distance from `p` to the nearest point of the rectangle (0 inside).
    pub fn distance_sq(&self, p: Point) -> f64 {
        let axis = |v: f64, lo: i32, len: i32| {
            let (lo, hi) = (f64::from(lo), f64::from(lo) + f64::from(len));
            if v < lo {
                lo - v
            } else if v >= hi {
                v - hi
            } else {
                0.0
            }
        };
        let dx = axis(p.x, self.x, self.w);
        let dy = axis(p.y, self.y, self.h);
        dx * dx + dy * dy
    }

    /// Whether `inner` lies entirely inside.
    pub fn contains_rect(&self, inner: &Rect) -> bool {
        inner.x >= self.x
            && inner.y >= self.y
            && inner.x + inner.w <= self.x + self.w
            && inner.y + inner.h <= self.y + self.h
    }
}

/// An output as the compositor lays it out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Output {
    /// Its area in global logical coordinates.
    pub rect: Rect,
    /// Its scale factor (physical pixels per logical pixel).
    pub scale: f64,
}

/// The index of the output for a dialog about `focus`: the first output (in the caller's order)
/// that contains the point, else the nearest by distance, ties going to the earlier output so
/// the choice is stable. `None` only if there are no usable outputs (the compositor then denies
/// with `confirmation_unavailable`).
pub fn nearest_output(focus: Point, outputs: &[Output]) -> Option<usize> {
    let usable = |o: &&Output| o.rect.w > 0 && o.rect.h > 0 && o.scale > 0.0;
    let candidates = outputs.iter().enumerate().filter(|(_, o)| usable(o));
    if let Some((i, _)) = candidates.clone().find(|(_, o)| o.rect.contains(focus)) {
        return Some(i);
    }
    let mut best: Option<(usize, f64)> = None;
    for (i, o) in candidates {
        let d = o.rect.distance_sq(focus);
        // A NaN focus compares false everywhere: the first usable output wins.
        if best.is_none_or(|(_, bd)| d < bd) {
            best = Some((i, d));
        }
    }
    best.map(|(i, _)| i)
}

/// Where to put a `size` (logical w, h) dialog on `output`: centred, or, when the output is at
/// least `large_width` wide and `focus` is on it, centred on the focus and clamped so that it
/// keeps `margin` from the edges. The result always lies inside the output when the dialog fits
/// (the layout makes sure it does); a dialog wider or taller than the output is centred.
pub fn place_dialog(
    output: Rect,
    size: (i32, i32),
    focus: Option<Point>,
    large_width: i32,
    margin: i32,
) -> Rect {
    let (w, h) = size;
    let centre = |lo: i32, len: i32, d: i32| lo + (len - d) / 2;
    let mut x = centre(output.x, output.w, w);
    let mut y = centre(output.y, output.h, h);
    if let Some(f) = focus.filter(|f| output.w >= large_width && output.contains(*f)) {
        let clamp = |v: f64, lo: i32, len: i32, d: i32| {
            let min = lo + margin;
            let max = lo + len - margin - d;
            if max < min {
                centre(lo, len, d)
            } else {
                (v.round() as i32 - d / 2).clamp(min, max)
            }
        };
        x = clamp(f.x, output.x, output.w, w);
        y = clamp(f.y, output.y, output.h, h);
    }
    Rect { x, y, w, h }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(x: i32, y: i32, w: i32, h: i32, scale: f64) -> Output {
        Output {
            rect: Rect { x, y, w, h },
            scale,
        }
    }

    fn p(x: f64, y: f64) -> Point {
        Point { x, y }
    }

    #[test]
    fn containing_output_wins() {
        let outs = [out(0, 0, 1920, 1080, 1.0), out(1920, 0, 1920, 1080, 1.0)];
        assert_eq!(nearest_output(p(100.0, 100.0), &outs), Some(0));
        assert_eq!(nearest_output(p(1920.0, 0.0), &outs), Some(1));
        assert_eq!(nearest_output(p(1919.9, 1079.9), &outs), Some(0));
    }

    #[test]
    fn overlapping_outputs_take_the_first_listed() {
        // Mirrored outputs overlap completely; a partial overlap too.
        let outs = [out(0, 0, 1920, 1080, 1.0), out(0, 0, 1920, 1080, 2.0)];
        assert_eq!(nearest_output(p(10.0, 10.0), &outs), Some(0));
        let outs = [out(1000, 0, 1000, 1000, 1.0), out(0, 0, 1500, 1000, 1.0)];
        assert_eq!(nearest_output(p(1200.0, 10.0), &outs), Some(0));
        assert_eq!(nearest_output(p(900.0, 10.0), &outs), Some(1));
    }

    #[test]
    fn gaps_go_to_the_nearest_and_ties_to_the_first() {
        // Two outputs with a 100 px gap between them.
        let outs = [out(0, 0, 1000, 800, 1.0), out(1100, 0, 1000, 800, 1.0)];
        assert_eq!(nearest_output(p(1030.0, 10.0), &outs), Some(0));
        assert_eq!(nearest_output(p(1070.0, 10.0), &outs), Some(1));
        assert_eq!(nearest_output(p(1050.0, 10.0), &outs), Some(0));
        let swapped = [outs[1], outs[0]];
        assert_eq!(nearest_output(p(1050.0, 10.0), &swapped), Some(0));
        // Below both, diagonal distance counts.
        assert_eq!(nearest_output(p(2300.0, 900.0), &outs), Some(1));
    }

    #[test]
    fn mixed_scales_compare_in_logical_space() {
        // A 4K panel at scale 2 (1920x1080 logical) left of a 1080p panel at scale 1.
        let outs = [out(0, 0, 1920, 1080, 2.0), out(1920, 200, 1920, 1080, 1.0)];
        assert_eq!(nearest_output(p(1919.0, 100.0), &outs), Some(0));
        assert_eq!(nearest_output(p(1950.0, 250.0), &outs), Some(1));
        // In the notch above the right output: the left one is 30 away, the right one 100.
        assert_eq!(nearest_output(p(1950.0, 100.0), &outs), Some(0));
        assert_eq!(nearest_output(p(1900.0, 1250.0), &outs), Some(1));
    }

    #[test]
    fn unusable_outputs_are_skipped_and_none_means_none() {
        assert_eq!(nearest_output(p(0.0, 0.0), &[]), None);
        let outs = [out(0, 0, 0, 0, 1.0), out(5000, 0, 100, 100, 1.0)];
        assert_eq!(nearest_output(p(0.0, 0.0), &outs), Some(1));
        assert_eq!(nearest_output(p(f64::NAN, 0.0), &outs), Some(1));
    }

    #[test]
    fn dialog_is_centred_on_small_outputs() {
        let o = Rect {
            x: 1920,
            y: 0,
            w: 800,
            h: 480,
        };
        let r = place_dialog(o, (560, 400), Some(p(1930.0, 5.0)), 2560, 16);
        assert_eq!((r.x, r.y), (1920 + 120, 40));
        assert!(o.contains_rect(&r));
    }

    #[test]
    fn dialog_follows_the_focus_on_large_outputs_but_stays_inside() {
        let o = Rect {
            x: 0,
            y: 0,
            w: 3840,
            h: 2160,
        };
        let r = place_dialog(o, (560, 400), Some(p(1000.0, 1000.0)), 2560, 16);
        assert_eq!((r.x, r.y), (720, 800));
        for f in [p(0.0, 0.0), p(3839.0, 2159.0), p(3839.0, 0.0)] {
            let r = place_dialog(o, (560, 400), Some(f), 2560, 16);
            assert!(o.contains_rect(&r), "{f:?} -> {r:?}");
            assert!(r.x >= 16 && r.y >= 16 && r.x + 560 <= 3840 - 16, "{r:?}");
        }
        // Focus on another output: centred.
        let r = place_dialog(o, (560, 400), Some(p(5000.0, 10.0)), 2560, 16);
        assert_eq!((r.x, r.y), (1640, 880));
    }
}
