//! wlr-layer-shell: panels, backgrounds and overlays mapped into the output's layer map, so the
//! confirmation dialog can be shown to stay above them (it is drawn in front of every layer,
//! `overlay` included).

use smithay::delegate_layer_shell;
use smithay::desktop::{LayerSurface, WindowSurfaceType, layer_map_for_output};
use smithay::output::Output;
use smithay::utils::{Logical, Point, Rectangle};
use smithay::wayland::compositor::with_states;
use smithay::wayland::shell::wlr_layer::{
    Layer, LayerSurface as WlrLayerSurface, LayerSurfaceData, WlrLayerShellHandler,
    WlrLayerShellState,
};
use wayland_server::protocol::wl_output::WlOutput;
use wayland_server::protocol::wl_surface::WlSurface;

use crate::state::State;

impl WlrLayerShellHandler for State {
    fn shell_state(&mut self) -> &mut WlrLayerShellState {
        &mut self.protocols.layer_shell
    }

    fn new_layer_surface(
        &mut self,
        surface: WlrLayerSurface,
        output: Option<WlOutput>,
        _layer: Layer,
        namespace: String,
    ) {
        // The output the client asked for, else the one nearest the focal point.
        let output = output.as_ref().and_then(Output::from_resource).or_else(|| {
            let i = self.backend.nearest_output(self.pointer.focal_point())?;
            self.backend.outputs.get(i).map(|o| o.output.clone())
        });
        let Some(output) = output else {
            tracing::warn!("a layer surface arrived with no output to show it on");
            surface.send_close();
            return;
        };
        let mut map = layer_map_for_output(&output);
        if let Err(e) = map.map_layer(&LayerSurface::new(surface, namespace)) {
            tracing::warn!("a layer surface could not be mapped: {e}");
        }
        self.frames.damage();
    }

    fn layer_destroyed(&mut self, surface: WlrLayerSurface) {
        for vo in &self.backend.outputs {
            let mut map = layer_map_for_output(&vo.output);
            let layer = map
                .layers()
                .find(|l| l.layer_surface() == &surface)
                .cloned();
            if let Some(layer) = layer {
                map.unmap_layer(&layer);
            }
        }
        self.frames.damage();
        self.refocus_pointer();
    }
}

delegate_layer_shell!(State);

impl State {
    /// The output rectangle a layer surface is on and where the surface is (global logical),
    /// for placing its popups.
    pub(crate) fn layer_placement(
        &self,
        surface: &WlSurface,
    ) -> Option<(Rectangle<i32, Logical>, Point<i32, Logical>)> {
        self.backend.outputs.iter().find_map(|vo| {
            let map = layer_map_for_output(&vo.output);
            let layer = map.layer_for_surface(surface, WindowSurfaceType::TOPLEVEL)?;
            let geometry = map.layer_geometry(layer)?;
            let (w, h) = vo.spec.logical_size();
            let origin = Point::from((vo.spec.x, vo.spec.y));
            Some((Rectangle::new(origin, (w, h).into()), origin + geometry.loc))
        })
    }

    /// A commit on a layer surface: lay the output's layers out again and send the first
    /// configure the protocol requires.
    pub(crate) fn layer_commit(&mut self, surface: &WlSurface) {
        for vo in &self.backend.outputs {
            let mut map = layer_map_for_output(&vo.output);
            if map
                .layer_for_surface(surface, WindowSurfaceType::TOPLEVEL)
                .is_none()
            {
                continue;
            }
            let sent = with_states(surface, |states| {
                states
                    .data_map
                    .get::<LayerSurfaceData>()
                    .and_then(|d| d.lock().ok().map(|d| d.initial_configure_sent))
                    .unwrap_or(true)
            });
            map.arrange();
            if !sent
                && let Some(layer) = map.layer_for_surface(surface, WindowSurfaceType::TOPLEVEL)
            {
                layer.layer_surface().send_configure();
            }
            return;
        }
    }
}
