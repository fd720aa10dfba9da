//! The pointer's cursor on the winit and udev backends: what a client asks for (a shape named by
//! cursor-shape-v1 or `wl_pointer.set_cursor` with its own surface, or hidden), drawn from the
//! `[compositor] cursor_theme` xcursor theme or the client's surface. Where no client has the
//! pointer (over the dialog, its margin or the desktop) the theme's arrow is shown. The themed
//! cursor is the compositor's own and is drawn in front of everything; a client's cursor surface
//! is client content and is drawn below the dialog, so it cannot cover it.

use std::collections::HashMap;

use smithay::backend::allocator::Fourcc;
use smithay::backend::renderer::element::memory::MemoryRenderBuffer;
use smithay::input::pointer::{CursorIcon, CursorImageStatus, CursorImageSurfaceData};
use smithay::utils::{Logical, Point, Transform};
use smithay::wayland::compositor::with_states;
use wayland_server::protocol::wl_surface::WlSurface;

/// What a frame draws for the pointer on one output.
#[derive(Debug, Clone)]
pub enum CursorDraw {
    /// A theme image, its top-left at `at` (global logical).
    Themed {
        buffer: MemoryRenderBuffer,
        at: Point<i32, Logical>,
    },
    /// A client's cursor surface, its top-left at `at`.
    Surface {
        surface: WlSurface,
        at: Point<i32, Logical>,
    },
}

/// A theme image and its hotspot (logical pixels from its top-left).
type ThemeImage = (MemoryRenderBuffer, Point<i32, Logical>);

/// The loaded theme images, by shape name (`None`: the theme has none by that name).
pub struct Cursors {
    theme: xcursor::CursorTheme,
    theme_name: String,
    size: u32,
    loaded: HashMap<String, Option<ThemeImage>>,
}

impl Cursors {
    /// The theme `name` at `size` logical pixels; images load when first drawn.
    pub fn new(name: &str, size: u32) -> Cursors {
        Cursors {
            theme: xcursor::CursorTheme::load(name),
            theme_name: name.to_string(),
            size,
            loaded: HashMap::new(),
        }
    }

    /// The image of `icon` and its hotspot, falling back to the arrow; `None` when the theme
    /// has neither (logged once per name).
    fn image(&mut self, icon: CursorIcon) -> Option<ThemeImage> {
        for name in [icon.name(), "default", "left_ptr"] {
            if !self.loaded.contains_key(name) {
                let image = self.load(name);
                if image.is_none() {
                    tracing::warn!("cursor theme {:?} has no cursor {name:?}", self.theme_name);
                }
                self.loaded.insert(name.to_string(), image);
            }
            if let Some(Some(found)) = self.loaded.get(name) {
                return Some(found.clone());
            }
        }
        None
    }

    fn load(&self, name: &str) -> Option<ThemeImage> {
        let path = self.theme.load_icon(name)?;
        let bytes = std::fs::read(&path).ok()?;
        let images = xcursor::parser::parse_xcursor(&bytes)?;
        // The first frame of the size nearest the one configured.
        let nearest = images
            .iter()
            .min_by_key(|i| i.size.abs_diff(self.size))?
            .size;
        let image = images.into_iter().find(|i| i.size == nearest)?;
        let (w, h) = (
            i32::try_from(image.width).ok()?,
            i32::try_from(image.height).ok()?,
        );
        // pixels_rgba holds R, G, B, A bytes: ABGR8888 in DRM's little-endian naming.
        let buffer = MemoryRenderBuffer::from_slice(
            &image.pixels_rgba,
            Fourcc::Abgr8888,
            (w, h),
            1,
            Transform::Normal,
            None,
        );
        let hotspot = Point::from((image.xhot as i32, image.yhot as i32));
        Some((buffer, hotspot))
    }

    /// What to draw for the pointer at `pointer` given the clients' `status`, and whether a
    /// client has the pointer (`client_focus`): `None` when the cursor is hidden or no image
    /// exists.
    pub fn draw(
        &mut self,
        status: &CursorImageStatus,
        client_focus: bool,
        pointer: Point<i32, Logical>,
    ) -> Option<CursorDraw> {
        let icon = match status {
            _ if !client_focus => CursorIcon::Default,
            CursorImageStatus::Hidden => return None,
            CursorImageStatus::Named(icon) => *icon,
            CursorImageStatus::Surface(surface) => {
                let hotspot = with_states(surface, |states| {
                    states
                        .data_map
                        .get::<CursorImageSurfaceData>()
                        .and_then(|d| d.lock().ok().map(|d| d.hotspot))
                })
                .unwrap_or_default();
                return Some(CursorDraw::Surface {
                    surface: surface.clone(),
                    at: pointer - hotspot,
                });
            }
        };
        let (buffer, hotspot) = self.image(icon)?;
        Some(CursorDraw::Themed {
            buffer,
            at: pointer - hotspot,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adwaita is installed by `cargo xtask setup` (adwaita-icon-theme).
    fn adwaita() -> Cursors {
        Cursors::new("Adwaita", 24)
    }

    #[test]
    fn a_named_shape_is_drawn_from_the_theme_with_its_hotspot_at_the_pointer() {
        let mut cursors = adwaita();
        let at = Point::from((100, 100));
        let Some(CursorDraw::Themed { at: top_left, .. }) =
            cursors.draw(&CursorImageStatus::Named(CursorIcon::Text), true, at)
        else {
            panic!("no themed cursor");
        };
        let (_, hotspot) = cursors.image(CursorIcon::Text).unwrap();
        assert_eq!(top_left, at - hotspot);
        assert!(
            hotspot.x > 0 || hotspot.y > 0,
            "a text cursor's hotspot is inside it"
        );
        // Within an image of about the configured 24 px.
        assert!(
            (0..48).contains(&hotspot.x) && (0..48).contains(&hotspot.y),
            "{hotspot:?}"
        );
    }

    #[test]
    fn without_a_client_under_the_pointer_the_arrow_is_shown_even_if_hidden_was_asked() {
        let mut cursors = adwaita();
        let at = Point::from((5, 5));
        assert!(cursors.draw(&CursorImageStatus::Hidden, true, at).is_none());
        let arrow = cursors.draw(&CursorImageStatus::Hidden, false, at);
        assert!(
            matches!(arrow, Some(CursorDraw::Themed { .. })),
            "{arrow:?}"
        );
    }
}
