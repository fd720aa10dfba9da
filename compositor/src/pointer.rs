//! The pointer as the reference compositor draws and follows it: where it is, the focal point
//! (where the user is looking or working: the pointer, the last touch, or a hint), whether a
//! pointer device has moved yet, the cursor image clients asked for, the themed cursors, and
//! the surface last found under it.

use smithay::input::pointer::CursorImageStatus;
use smithay::utils::{Logical, Point};

use wayland_server::protocol::wl_surface::WlSurface;

use crate::cursor::{CursorDraw, Cursors};

/// The pointer's position and cursor, and the focal point.
pub struct Pointer {
    location: Point<f64, Logical>,
    /// The focal point: the pointer, or the last touch, or the hint set for tests and spatial
    /// hardware. The dialog goes to the output nearest it.
    focal_point: Point<f64, Logical>,
    /// Whether a pointer device has moved yet: until then no cursor is drawn (a touch-only
    /// session shows none).
    seen: bool,
    /// The pointer's cursor as clients last asked for it.
    status: CursorImageStatus,
    /// The themed cursor's images (drawn on the winit and udev backends only).
    cursors: Cursors,
    /// The surface last found under the pointer and its origin (global logical), as last given
    /// to the seat: what changed under a resting pointer is told from it.
    under: Option<(WlSurface, Point<f64, Logical>)>,
}

impl Pointer {
    /// A pointer resting at `at` (also the focal point), drawn from the xcursor theme `theme`
    /// at `size` logical pixels once it moves.
    pub(crate) fn new(at: Point<f64, Logical>, theme: &str, size: u32) -> Pointer {
        Pointer {
            location: at,
            focal_point: at,
            seen: false,
            status: CursorImageStatus::default_named(),
            cursors: Cursors::new(theme, size),
            under: None,
        }
    }

    /// The surface last found under the pointer, and its origin.
    pub(crate) fn under(&self) -> Option<&(WlSurface, Point<f64, Logical>)> {
        self.under.as_ref()
    }

    /// The seat was given `under` as what is under the pointer.
    pub(crate) fn set_under(&mut self, under: Option<(WlSurface, Point<f64, Logical>)>) {
        self.under = under;
    }

    /// Where the pointer is (global logical).
    pub fn location(&self) -> Point<f64, Logical> {
        self.location
    }

    /// Where the focal point is (global logical).
    pub fn focal_point(&self) -> Point<f64, Logical> {
        self.focal_point
    }

    /// A pointer device moved it to `p`: the focal point follows, and the cursor is drawn from
    /// now on.
    pub(crate) fn moved_to(&mut self, p: Point<f64, Logical>) {
        self.location = p;
        self.focal_point = p;
        self.seen = true;
    }

    /// The focal point moves to `p` without the pointer (a touch, a tracker's hint).
    pub(crate) fn set_focal_point(&mut self, p: Point<f64, Logical>) {
        self.focal_point = p;
    }

    /// The display under the area `inside` tells moved by `delta`: the pointer and the focal
    /// point, where on it, move with it so they stay where they were on that display.
    pub(crate) fn follow_display(
        &mut self,
        inside: impl Fn(Point<f64, Logical>) -> bool,
        delta: Point<f64, Logical>,
    ) {
        if inside(self.location) {
            self.location += delta;
        }
        if inside(self.focal_point) {
            self.focal_point += delta;
        }
    }

    /// A display changed size: `keep` maps the pointer and the focal point to where they stay
    /// (clamped onto the display they were on).
    pub(crate) fn keep_within(
        &mut self,
        keep: impl Fn(Point<f64, Logical>) -> Point<f64, Logical>,
    ) {
        self.location = keep(self.location);
        self.focal_point = keep(self.focal_point);
    }

    /// Clients asked for the cursor image `status`.
    pub(crate) fn set_cursor_image(&mut self, status: CursorImageStatus) {
        self.status = status;
    }

    /// What to draw for the pointer, given whether a client has it (`client_focus`): `None`
    /// before any pointer device moved, when the cursor is hidden, or when no image exists.
    pub(crate) fn cursor(&mut self, client_focus: bool) -> Option<CursorDraw> {
        if !self.seen {
            return None;
        }
        self.cursors
            .draw(&self.status, client_focus, self.location.to_i32_round())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(x: f64, y: f64) -> Point<f64, Logical> {
        Point::from((x, y))
    }

    #[test]
    fn no_cursor_is_drawn_until_a_pointer_device_moves() {
        // Adwaita is installed by `cargo xtask setup` (adwaita-icon-theme).
        let mut pointer = Pointer::new(at(50.0, 50.0), "Adwaita", 24);
        pointer.set_focal_point(at(10.0, 10.0));
        assert!(
            pointer.cursor(false).is_none(),
            "a touch-only session shows none"
        );
        pointer.moved_to(at(20.0, 30.0));
        assert_eq!(pointer.focal_point(), at(20.0, 30.0));
        assert!(pointer.cursor(false).is_some());
    }

    #[test]
    fn only_what_is_on_a_moved_display_moves_with_it() {
        let mut pointer = Pointer::new(at(100.0, 100.0), "Adwaita", 24);
        pointer.set_focal_point(at(2000.0, 100.0));
        let second = |p: Point<f64, Logical>| p.x >= 1920.0;
        pointer.follow_display(second, at(-100.0, 0.0));
        assert_eq!(pointer.location(), at(100.0, 100.0));
        assert_eq!(pointer.focal_point(), at(1900.0, 100.0));
    }
}
