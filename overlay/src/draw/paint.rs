//! The primitives the dialog is painted with: exact-pixel rectangles, anti-aliased fills and
//! strokes of paths, rounded rectangles and progress bars.

use tiny_skia::{FillRule, Paint, Path, PathBuilder, Pixmap, Stroke, Transform};

use crate::config::Rgba;
use crate::layout::IRect;

/// A track with `frac` (clamped to 0–1) of it filled from the leading edge.
pub(super) fn draw_bar(pixmap: &mut Pixmap, r: IRect, frac: f32, track: Rgba, fill: Rgba) {
    let radius = (r.h.min(r.w)) as f32 / 2.0;
    if let Some(t) = r.to_skia() {
        fill_path(pixmap, rounded(t, radius), track);
    }
    let fw = (r.w as f32 * frac.clamp(0.0, 1.0)).round() as i32;
    if fw > 0
        && let Some(f) = IRect::new(r.x, r.y, fw, r.h).to_skia()
    {
        fill_path(pixmap, rounded(f, radius.min(fw as f32 / 2.0)), fill);
    }
}

/// An anti-aliased paint of `color`.
fn paint(color: Rgba) -> Paint<'static> {
    let mut paint = Paint::default();
    paint.set_color(color.to_skia());
    paint.anti_alias = true;
    paint
}

/// Fills an integer rectangle without anti-aliasing: its edges are exact pixels.
pub(super) fn fill_rect(pixmap: &mut Pixmap, r: IRect, color: Rgba) {
    if let Some(rect) = r.to_skia() {
        let mut paint = paint(color);
        paint.anti_alias = false;
        // Replace, don't blend: a region repaint must erase what was there.
        paint.blend_mode = tiny_skia::BlendMode::Source;
        pixmap.fill_rect(rect, &paint, Transform::identity(), None);
    }
}

/// Fills `path` (if there is one), anti-aliased.
pub(super) fn fill_path(pixmap: &mut Pixmap, path: Option<Path>, color: Rgba) {
    if let Some(path) = path {
        pixmap.fill_path(
            &path,
            &paint(color),
            FillRule::Winding,
            Transform::identity(),
            None,
        );
    }
}

/// Strokes `path` (if there is one) `width` wide, anti-aliased.
pub(super) fn stroke_path(pixmap: &mut Pixmap, path: Option<Path>, color: Rgba, width: f32) {
    if let Some(path) = path {
        let stroke = Stroke {
            width,
            ..Stroke::default()
        };
        pixmap.stroke_path(&path, &paint(color), &stroke, Transform::identity(), None);
    }
}

/// A rectangle with circular corners of `radius` (clamped to half the shorter side).
pub(super) fn rounded(r: tiny_skia::Rect, radius: f32) -> Option<Path> {
    let rad = radius.min(r.width() / 2.0).min(r.height() / 2.0).max(0.0);
    // Control-point distance that makes a cubic approximate a quarter circle.
    let c = rad * (1.0 - 0.552_284_8);
    let (l, t, rt, b) = (r.left(), r.top(), r.right(), r.bottom());
    let mut pb = PathBuilder::new();
    pb.move_to(l + rad, t);
    pb.line_to(rt - rad, t);
    pb.cubic_to(rt - c, t, rt, t + c, rt, t + rad);
    pb.line_to(rt, b - rad);
    pb.cubic_to(rt, b - c, rt - c, b, rt - rad, b);
    pb.line_to(l + rad, b);
    pb.cubic_to(l + c, b, l, b - c, l, b - rad);
    pb.line_to(l, t + rad);
    pb.cubic_to(l, t + c, l + c, t, l + rad, t);
    pb.close();
    pb.finish()
}
