//! The nested `winit` backend (cargo feature `winit`, for development): one output that is a
//! window inside X11 or Wayland, drawn with Smithay's GLES renderer through the same scene as
//! the headless backend, and the window's keyboard, pointer and touch events fed to the same
//! input routing as every other source (so the dialog's modal input, its guard and the
//! suppression of intercepted key releases apply).

use calloop::LoopHandle;
use pcp_plugin::PlacedOverlay;
use smithay::backend::input::{
    AbsolutePositionEvent, ButtonState, Event, InputEvent, KeyboardKeyEvent, PointerButtonEvent,
    TouchEvent,
};
use smithay::backend::renderer::gles::GlesRenderer;
use smithay::backend::winit::{self, WinitEvent, WinitGraphicsBackend, WinitInput};
use smithay::desktop::{Space, Window};
use smithay::reexports::winit::dpi::PhysicalSize;
use smithay::reexports::winit::window::Window as HostWindow;
use smithay::utils::{Logical, Point};
use wayland_server::DisplayHandle;

use crate::backend::{Backend, BackendError, Device, VirtualOutput};
use crate::config::OutputSpec;
use crate::state::State;

/// The host window and its GLES renderer.
pub(crate) struct WinitDevice {
    graphics: WinitGraphicsBackend<GlesRenderer>,
}

/// Opens the window (sized like the first spec, whose position and scale the output keeps),
/// makes it the one output, and feeds its events to `state` through `handle`.
pub(crate) fn start(
    dh: &DisplayHandle,
    specs: &[OutputSpec],
    space: &mut Space<Window>,
    handle: &LoopHandle<'static, State>,
    title: &str,
) -> Result<Backend, BackendError> {
    let spec = *specs.first().ok_or(BackendError::NoOutput(0))?;
    let attributes = HostWindow::default_attributes()
        .with_inner_size(PhysicalSize::new(spec.width as u32, spec.height as u32))
        .with_title(title)
        .with_visible(true);
    let (graphics, events) =
        winit::init_from_attributes::<GlesRenderer>(attributes).map_err(|e| {
            BackendError::Renderer(
                "winit GLES",
                format!(
                    "{e} (the nested window needs a running X11 or Wayland session in DISPLAY or \
                     WAYLAND_DISPLAY, and EGL with GLES 2 or later, e.g. Mesa's)"
                ),
            )
        })?;
    // The host may not give the size asked for: the output is what the window is.
    let size = graphics.window_size();
    let spec = OutputSpec {
        width: size.w.max(1),
        height: size.h.max(1),
        ..spec
    };
    let output = crate::backend::new_output::<State>(dh, "WINIT-1".into(), "nested", &spec, space);
    handle
        .insert_source(events, |event, _, state: &mut State| {
            handle_event(state, event)
        })
        .map_err(|e| BackendError::Renderer("winit", e.to_string()))?;
    tracing::info!(
        "nested window open: {}x{} (scale {})",
        spec.width,
        spec.height,
        spec.scale
    );
    Ok(Backend {
        outputs: vec![output],
        device: Device::Winit(Box::new(WinitDevice { graphics })),
    })
}

impl WinitDevice {
    /// Draws the one output into the window's back buffer and shows it when something changed.
    pub(crate) fn render(
        &mut self,
        outputs: &mut [VirtualOutput],
        space: &Space<Window>,
        layers: &[PlacedOverlay<'_>],
        clear: [f32; 4],
    ) -> Result<(), BackendError> {
        let vo = outputs.first_mut().ok_or(BackendError::NoOutput(0))?;
        let name = vo.output.name();
        let failed = |e: &dyn std::fmt::Display| BackendError::Render(name.clone(), e.to_string());
        let age = self.graphics.buffer_age().unwrap_or(0);
        let damage = {
            let (renderer, mut framebuffer) = self.graphics.bind().map_err(|e| failed(&e))?;
            crate::backend::draw_output(
                renderer,
                &mut framebuffer,
                vo,
                0,
                space,
                layers,
                clear,
                age,
            )?
            .damage
        };
        if let Some(damage) = damage {
            self.graphics
                .submit(Some(&damage))
                .map_err(|e| failed(&e))?;
        }
        Ok(())
    }
}

/// One event from the host window.
fn handle_event(state: &mut State, event: WinitEvent) {
    match event {
        WinitEvent::Resized { size, .. } => {
            if let Some(vo) = state.backend.outputs.first_mut() {
                let spec = OutputSpec {
                    width: size.w.max(1),
                    height: size.h.max(1),
                    ..vo.spec
                };
                vo.set_spec(spec);
                tracing::debug!("the nested window is now {}x{}", spec.width, spec.height);
            }
            pcp_plugin::refresh(state);
            state.frames.damage();
        }
        WinitEvent::Redraw => state.frames.damage(),
        WinitEvent::Focus(_) => {}
        WinitEvent::CloseRequested => {
            tracing::info!("the nested window was closed");
            state.running = false;
        }
        WinitEvent::Input(input) => handle_input(state, input),
    }
}

/// A window-relative position → the global logical point on the one output.
fn global(state: &State, event: &impl AbsolutePositionEvent<WinitInput>) -> Point<f64, Logical> {
    let Some(spec) = state.backend.outputs.first().map(|o| o.spec) else {
        return Point::from((0.0, 0.0));
    };
    let (w, h) = spec.logical_size();
    let local = event.position_transformed((w, h).into());
    Point::from((local.x + f64::from(spec.x), local.y + f64::from(spec.y)))
}

/// Input goes through the same routing as the harness's injection (`State::pointer_motion`,
/// `pointer_button`, `pointer_axis`, `touch_down`, `touch_motion`, `touch_up`, `key`).
fn handle_input(state: &mut State, input: InputEvent<WinitInput>) {
    tracing::trace!("host input: {input:?}");
    match input {
        InputEvent::Keyboard { event } => {
            state.key(event.key_code(), event.state(), event.time_msec());
        }
        InputEvent::PointerMotionAbsolute { event } => {
            let p = global(state, &event);
            state.pointer_motion(p, event.time_msec());
        }
        InputEvent::PointerButton { event } => {
            let pressed = event.state() == ButtonState::Pressed;
            state.pointer_button(event.button_code(), pressed, event.time_msec());
        }
        InputEvent::PointerAxis { event } => {
            state.pointer_axis(crate::input::axis_frame::<WinitInput>(&event));
        }
        InputEvent::TouchDown { event } => {
            let p = global(state, &event);
            state.touch_down(event.slot(), p, event.time_msec());
        }
        InputEvent::TouchMotion { event } => {
            let p = global(state, &event);
            state.touch_motion(event.slot(), p, event.time_msec());
        }
        InputEvent::TouchUp { event } => state.touch_up(event.slot(), event.time_msec()),
        InputEvent::TouchCancel { .. } => state.touch_cancel(),
        // A nested window has no tablets or touchpad gestures.
        _ => {}
    }
}
