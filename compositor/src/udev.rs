//! The `udev` backend (cargo feature `udev`): a real session on a VT. It owns the libseat
//! session, the primary GPU found by udev (DRM/KMS with GBM buffers and Smithay's GLES
//! renderer, one output per connected connector at its preferred mode), the libinput devices
//! of the seat, and VT switching (the session's pause and activate). Outputs are drawn through
//! the same scene as every other backend, and libinput events go through the same input routing
//! (`State::key`, `pointer_motion`, `pointer_button`, `touch_down`, `touch_up`).
//! The choices that need no hardware live in [`plan`].

mod plan;

use std::path::PathBuf;

use calloop::LoopHandle;
use smithay::backend::allocator::Fourcc;
use smithay::backend::allocator::gbm::{GbmAllocator, GbmBufferFlags, GbmDevice};
use smithay::backend::drm::{DrmDevice, DrmDeviceFd, DrmEvent, DrmSurface, GbmBufferedSurface};
use smithay::backend::egl::{EGLContext, EGLDisplay};
use smithay::backend::input::{
    AbsolutePositionEvent, ButtonState, Event, InputEvent, KeyState, KeyboardKeyEvent,
    PointerButtonEvent, PointerMotionEvent,
};
use smithay::backend::libinput::{LibinputInputBackend, LibinputSessionInterface};
use smithay::backend::renderer::Bind;
use smithay::backend::renderer::gles::GlesRenderer;
use smithay::backend::session::libseat::LibSeatSession;
use smithay::backend::session::{Event as SessionEvent, Session};
use smithay::desktop::{Space, Window};
use smithay::reexports::drm::control::{Device as ControlDevice, ModeTypeFlags, connector, crtc};
use smithay::reexports::input::{DeviceCapability, Libinput};
use smithay::reexports::rustix::fs::OFlags;
use smithay::utils::{DeviceFd, Logical, Point};
use wayland_server::DisplayHandle;

use crate::backend::{Backend, BackendError, Device, VirtualOutput};
use crate::overlay_ui::PlacedOverlay;
use crate::state::State;

/// Why the udev backend could not start.
#[derive(Debug, thiserror::Error)]
pub enum UdevError {
    #[error(
        "no seat: libseat could not open a session ({0}); run pcp-compositor from a text \
         console (VT) login with logind or seatd running, or use --backend winit or headless"
    )]
    NoSeat(String),
    #[error("no GPU on seat {seat}: udev lists no DRM card{detail}")]
    NoGpu { seat: String, detail: String },
    #[error("cannot open the GPU {path}: {message}")]
    Gpu { path: String, message: String },
    #[error("cannot start EGL/GLES on {path}: {message}")]
    Egl { path: String, message: String },
    #[error("no connected display on {0}: at least one output is needed to show prompts")]
    NoDisplay(String),
    #[error("cannot drive connector {connector}: {message}")]
    Connector { connector: String, message: String },
    #[error("cannot set up libinput on seat {seat}: {message}")]
    Input { seat: String, message: String },
}

impl From<UdevError> for BackendError {
    fn from(e: UdevError) -> BackendError {
        BackendError::Udev(e.to_string())
    }
}

type Surface = GbmBufferedSurface<GbmAllocator<DrmDeviceFd>, ()>;

/// One CRTC driving one output (same order as the backend's outputs).
struct Head {
    crtc: crtc::Handle,
    surface: Surface,
    /// A frame was queued and its page flip has not completed yet.
    flipping: bool,
}

/// The session, the GPU and its renderer, the heads, and the input state kept here.
pub(crate) struct UdevDevice {
    session: LibSeatSession,
    drm: DrmDevice,
    renderer: GlesRenderer,
    heads: Vec<Head>,
    libinput: Libinput,
    /// Held modifiers, for the Ctrl+Alt+F`n` VT switch (evdev codes).
    held: std::collections::HashSet<u32>,
    /// A frame was skipped because its head was still flipping: draw again after the flip.
    missed: bool,
}

/// Opens the session and the primary GPU, lights every connected connector, and feeds the
/// seat's input devices and session changes to `state` through `handle`.
pub(crate) fn start(
    dh: &DisplayHandle,
    space: &mut Space<Window>,
    handle: &LoopHandle<'static, State>,
) -> Result<Backend, BackendError> {
    let (mut session, notifier) =
        LibSeatSession::new().map_err(|e| UdevError::NoSeat(e.to_string()))?;
    let seat = session.seat();
    let path = gpu_path(&seat)?;
    let shown = path.display().to_string();
    let gpu_err = |message: String| UdevError::Gpu {
        path: shown.clone(),
        message,
    };
    let fd = session
        .open(
            &path,
            OFlags::RDWR | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK,
        )
        .map_err(|e| gpu_err(e.to_string()))?;
    let fd = DrmDeviceFd::new(DeviceFd::from(fd));
    let (mut drm, drm_events) =
        DrmDevice::new(fd.clone(), true).map_err(|e| gpu_err(e.to_string()))?;
    let gbm = GbmDevice::new(fd.clone()).map_err(|e| gpu_err(e.to_string()))?;
    let egl_err = |message: String| UdevError::Egl {
        path: shown.clone(),
        message,
    };
    // SAFETY: the GBM device stays alive (the allocators hold clones) as long as the display.
    let display = unsafe { EGLDisplay::new(gbm.clone()) }.map_err(|e| egl_err(e.to_string()))?;
    let context = EGLContext::new(&display).map_err(|e| egl_err(e.to_string()))?;
    let render_formats = context.dmabuf_render_formats().clone();
    // SAFETY: the context was just created and is only used by this renderer.
    let renderer = unsafe { GlesRenderer::new(context) }.map_err(|e| egl_err(e.to_string()))?;

    let heads_found = connected_heads(&drm, &shown)?;
    if heads_found.is_empty() {
        return Err(UdevError::NoDisplay(shown).into());
    }
    let sizes: Vec<(i32, i32)> = heads_found
        .iter()
        .map(|(_, _, mode, _)| {
            let (w, h) = mode.size();
            (i32::from(w), i32::from(h))
        })
        .collect();
    let specs = plan::layout(&sizes);
    let mut heads = Vec::new();
    let mut outputs = Vec::new();
    for ((conn, crtc, mode, name), spec) in heads_found.into_iter().zip(specs) {
        let conn_err = |message: String| UdevError::Connector {
            connector: name.clone(),
            message,
        };
        let drm_surface: DrmSurface = drm
            .create_surface(crtc, mode, &[conn])
            .map_err(|e| conn_err(e.to_string()))?;
        let allocator = GbmAllocator::new(
            gbm.clone(),
            GbmBufferFlags::RENDERING | GbmBufferFlags::SCANOUT,
        );
        let surface = GbmBufferedSurface::new(
            drm_surface,
            allocator,
            &[Fourcc::Xrgb8888, Fourcc::Argb8888],
            render_formats.clone(),
        )
        .map_err(|e| conn_err(e.to_string()))?;
        tracing::info!(
            "output {name}: {}x{}@{}Hz at {},{}",
            spec.width,
            spec.height,
            mode.vrefresh(),
            spec.x,
            spec.y
        );
        outputs.push(crate::backend::new_output::<State>(
            dh, name, "drm", &spec, space,
        ));
        heads.push(Head {
            crtc,
            surface,
            flipping: false,
        });
    }

    let mut libinput = Libinput::new_with_udev(LibinputSessionInterface::from(session.clone()));
    libinput
        .udev_assign_seat(&seat)
        .map_err(|()| UdevError::Input {
            seat: seat.clone(),
            message: "libinput could not take the seat's devices".into(),
        })?;
    let loop_err = |e: &dyn std::fmt::Display| BackendError::Udev(e.to_string());
    handle
        .insert_source(
            LibinputInputBackend::new(libinput.clone()),
            |event, _, state| handle_input(state, event),
        )
        .map_err(|e| loop_err(&e))?;
    handle
        .insert_source(drm_events, |event, _, state: &mut State| match event {
            DrmEvent::VBlank(crtc) => page_flipped(state, crtc),
            DrmEvent::Error(e) => tracing::error!("the DRM device reported: {e}"),
        })
        .map_err(|e| loop_err(&e))?;
    handle
        .insert_source(notifier, |event, _, state: &mut State| {
            session_changed(state, event)
        })
        .map_err(|e| loop_err(&e))?;
    Ok(Backend {
        outputs,
        device: Device::Udev(Box::new(UdevDevice {
            session,
            drm,
            renderer,
            heads,
            libinput,
            held: Default::default(),
            missed: false,
        })),
    })
}

/// The seat's primary GPU (the boot VGA device), else its first DRM card.
fn gpu_path(seat: &str) -> Result<PathBuf, UdevError> {
    let no_gpu = |detail: String| UdevError::NoGpu {
        seat: seat.into(),
        detail,
    };
    match smithay::backend::udev::primary_gpu(seat) {
        Ok(Some(path)) => return Ok(path),
        Ok(None) => {}
        Err(e) => return Err(no_gpu(format!(" ({e})"))),
    }
    let all = smithay::backend::udev::all_gpus(seat).map_err(|e| no_gpu(format!(" ({e})")))?;
    all.into_iter().next().ok_or_else(|| no_gpu(String::new()))
}

/// A connected connector with a CRTC and a mode.
type FoundHead = (
    connector::Handle,
    crtc::Handle,
    smithay::reexports::drm::control::Mode,
    String,
);

/// Every connected connector of the GPU at `path` with a CRTC and a mode: (connector, CRTC,
/// mode, name like `HDMI-A-1`).
fn connected_heads(drm: &DrmDevice, path: &str) -> Result<Vec<FoundHead>, UdevError> {
    let gpu_err = |e: std::io::Error| UdevError::Gpu {
        path: path.into(),
        message: e.to_string(),
    };
    let resources = drm.resource_handles().map_err(gpu_err)?;
    let mut found = Vec::new();
    let mut possible = Vec::new();
    for &handle in resources.connectors() {
        let info = drm.get_connector(handle, false).map_err(gpu_err)?;
        if info.state() != connector::State::Connected {
            continue;
        }
        let name = format!("{}-{}", info.interface().as_str(), info.interface_id());
        let candidates: Vec<plan::ModeCandidate> = info
            .modes()
            .iter()
            .map(|m| {
                let (width, height) = m.size();
                plan::ModeCandidate {
                    width,
                    height,
                    refresh_hz: m.vrefresh(),
                    preferred: m.mode_type().contains(ModeTypeFlags::PREFERRED),
                }
            })
            .collect();
        let Some(mode) = plan::choose_mode(&candidates).map(|i| info.modes()[i]) else {
            tracing::warn!("connector {name} is connected but offers no mode: skipped");
            continue;
        };
        let mut crtcs = Vec::new();
        for &encoder in info.encoders() {
            match drm.get_encoder(encoder) {
                Ok(e) => crtcs.extend(resources.filter_crtcs(e.possible_crtcs())),
                Err(e) => tracing::warn!("encoder of {name} unreadable: {e}"),
            }
        }
        possible.push(crtcs);
        found.push((handle, mode, name));
    }
    let assigned = plan::assign_crtcs(&possible);
    Ok(found
        .into_iter()
        .zip(assigned)
        .filter_map(|((conn, mode, name), crtc)| match crtc {
            Some(crtc) => Some((conn, crtc, mode, name)),
            None => {
                tracing::warn!("no free CRTC for connector {name}: it stays dark");
                None
            }
        })
        .collect())
}

impl UdevDevice {
    /// Draws every head whose previous frame has been flipped and queues it for scan-out.
    pub(crate) fn render(
        &mut self,
        outputs: &mut [VirtualOutput],
        space: &Space<Window>,
        layers: &[PlacedOverlay<'_>],
        clear: [f32; 4],
    ) -> Result<(), BackendError> {
        if !self.session.is_active() {
            // Another VT has the display; drawing resumes on activation.
            return Ok(());
        }
        for (i, (vo, head)) in outputs.iter_mut().zip(&mut self.heads).enumerate() {
            if head.flipping {
                self.missed = true;
                continue;
            }
            let name = vo.output.name();
            let failed =
                |e: &dyn std::fmt::Display| BackendError::Render(name.clone(), e.to_string());
            let (mut dmabuf, age) = head.surface.next_buffer().map_err(|e| failed(&e))?;
            let damage = {
                let mut target = self.renderer.bind(&mut dmabuf).map_err(|e| failed(&e))?;
                crate::backend::draw_output(
                    &mut self.renderer,
                    &mut target,
                    vo,
                    i,
                    space,
                    layers,
                    clear,
                    usize::from(age),
                )?
            };
            if let Some(damage) = damage {
                head.surface
                    .queue_buffer(None, Some(damage), ())
                    .map_err(|e| failed(&e))?;
                head.flipping = true;
            }
        }
        Ok(())
    }
}

fn device(state: &mut State) -> Option<&mut UdevDevice> {
    match &mut state.backend.device {
        Device::Udev(d) => Some(d),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

/// A page flip completed on `crtc`: its head can take the next frame.
fn page_flipped(state: &mut State, crtc: crtc::Handle) {
    let Some(dev) = device(state) else { return };
    if let Some(head) = dev.heads.iter_mut().find(|h| h.crtc == crtc) {
        head.flipping = false;
        if let Err(e) = head.surface.frame_submitted() {
            tracing::warn!("page flip on {crtc:?} failed: {e}");
        }
    }
    if std::mem::take(&mut dev.missed) {
        state.dirty = true;
    }
}

/// VT switching: on pause the GPU and input are released to the other session; on activation
/// they are taken back and every output is drawn again.
fn session_changed(state: &mut State, event: SessionEvent) {
    let Some(dev) = device(state) else { return };
    match event {
        SessionEvent::PauseSession => {
            tracing::info!("session paused (VT switched away)");
            dev.libinput.suspend();
            dev.drm.pause();
            dev.held.clear();
        }
        SessionEvent::ActivateSession => {
            tracing::info!("session active again");
            if dev.libinput.resume().is_err() {
                tracing::error!("libinput could not take the seat's devices back");
            }
            if let Err(e) = dev.drm.activate(false) {
                tracing::error!("the GPU could not be taken back: {e}");
            }
            for head in &mut dev.heads {
                head.flipping = false;
                head.surface.reset_buffers();
            }
            for vo in &mut state.backend.outputs {
                vo.reset_damage();
            }
            state.dirty = true;
        }
    }
}

/// The global logical point `event` is at on the first output (a touch screen or tablet maps to
/// the first output).
fn absolute(
    state: &State,
    event: &impl AbsolutePositionEvent<LibinputInputBackend>,
) -> Point<f64, Logical> {
    let Some(spec) = state.backend.outputs.first().map(|o| o.spec) else {
        return Point::from((0.0, 0.0));
    };
    let (w, h) = spec.logical_size();
    let local = event.position_transformed((w, h).into());
    Point::from((local.x + f64::from(spec.x), local.y + f64::from(spec.y)))
}

/// Where a relative motion of `delta` takes the pointer, kept on the outputs.
fn moved(state: &State, delta: Point<f64, Logical>) -> Point<f64, Logical> {
    let rects: Vec<(i32, i32, i32, i32)> = state
        .backend
        .outputs
        .iter()
        .map(|o| {
            let (w, h) = o.spec.logical_size();
            (o.spec.x, o.spec.y, w, h)
        })
        .collect();
    let p = state.pointer + delta;
    plan::clamp_to_outputs((p.x, p.y), &rects).into()
}

const CTRL: [u32; 2] = [29, 97];
const ALT: [u32; 2] = [56, 100];

/// libinput events go through the same routing as the other backends' input.
fn handle_input(state: &mut State, input: InputEvent<LibinputInputBackend>) {
    match input {
        InputEvent::DeviceAdded { device } => {
            let caps: Vec<&str> = [
                (DeviceCapability::Keyboard, "keyboard"),
                (DeviceCapability::Pointer, "pointer"),
                (DeviceCapability::Touch, "touch"),
            ]
            .iter()
            .filter(|(c, _)| device.has_capability(*c))
            .map(|(_, n)| *n)
            .collect();
            tracing::info!("input device {} ({})", device.name(), caps.join(", "));
        }
        InputEvent::DeviceRemoved { device } => {
            tracing::info!("input device {} removed", device.name());
        }
        InputEvent::Keyboard { event } => {
            let Some(code) = event.key_code().raw().checked_sub(8) else {
                return;
            };
            let pressed = event.state() == KeyState::Pressed;
            if let Some(dev) = device(state) {
                if pressed {
                    dev.held.insert(code);
                } else {
                    dev.held.remove(&code);
                }
                let ctrl = CTRL.iter().any(|c| dev.held.contains(c));
                let alt = ALT.iter().any(|c| dev.held.contains(c));
                if pressed && let Some(vt) = plan::vt_switch(code, ctrl, alt) {
                    // The chord is the session's, not a client's or the dialog's.
                    if let Err(e) = dev.session.change_vt(vt) {
                        tracing::warn!("switching to VT {vt} failed: {e}");
                    }
                    return;
                }
            }
            state.key(code, pressed, event.time_msec());
        }
        InputEvent::PointerMotion { event } => {
            let p = moved(state, event.delta());
            state.pointer_motion(p, event.time_msec());
        }
        InputEvent::PointerMotionAbsolute { event } => {
            let p = absolute(state, &event);
            state.pointer_motion(p, event.time_msec());
        }
        InputEvent::PointerButton { event } => {
            let pressed = event.state() == ButtonState::Pressed;
            state.pointer_button(event.button_code(), pressed, event.time_msec());
        }
        InputEvent::TouchDown { event } => {
            let p = absolute(state, &event);
            state.touch_down(p, event.time_msec());
        }
        InputEvent::TouchUp { event } => state.touch_up(event.time_msec()),
        InputEvent::TouchCancel { .. } => state.touch_cancel(),
        // Scrolling, touch motion, tablets and gestures have no routing in this compositor yet.
        _ => {}
    }
}
