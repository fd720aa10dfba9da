//! wp_fractional_scale_v1: a client is told the scale of the output its window is on (the
//! output's configured scale, e.g. 1.5), so it can draw at that density with a viewport instead
//! of a blurry integer scale.

use smithay::delegate_fractional_scale;
use smithay::desktop::find_popup_root_surface;
use smithay::wayland::compositor::{get_parent, with_states};
use smithay::wayland::fractional_scale::{FractionalScaleHandler, with_fractional_scale};
use wayland_server::protocol::wl_surface::WlSurface;

use crate::state::State;

impl FractionalScaleHandler for State {
    fn new_fractional_scale(&mut self, surface: WlSurface) {
        let scale = self.scale_for_surface(&surface);
        with_states(&surface, |states| {
            with_fractional_scale(states, |fractional| fractional.set_preferred_scale(scale));
        });
    }
}

delegate_fractional_scale!(State);

impl State {
    /// The scale of the output showing `surface`: its window's (through subsurface and popup
    /// parents), else the output nearest the focal point's.
    pub(crate) fn scale_for_surface(&self, surface: &WlSurface) -> f64 {
        let mut root = surface.clone();
        while let Some(parent) = get_parent(&root) {
            root = parent;
        }
        if let Some(popup) = self.desktop.popups.find_popup(&root)
            && let Ok(top) = find_popup_root_surface(&popup)
        {
            root = top;
        }
        let window = self
            .desktop
            .space
            .elements()
            .find(|w| w.toplevel().is_some_and(|t| t.wl_surface() == &root));
        let index = window
            .and_then(|w| {
                let loc = self.desktop.space.element_location(w)?;
                let centre = loc + w.geometry().size.downscale(2).to_point();
                self.backend.nearest_output(centre.to_f64())
            })
            .or_else(|| self.backend.nearest_output(self.pointer.focal_point()));
        index
            .and_then(|i| self.backend.outputs.get(i))
            .map_or(1.0, |o| o.spec.scale)
    }
}
