//! The `udev` backend (cargo feature `udev`): a real session on a VT. It owns the libseat
//! session, the primary GPU found by udev (DRM/KMS with GBM buffers and Smithay's GLES
//! renderer, one output per connected connector at its preferred mode), display hotplug (udev
//! change events of that GPU: a head per connected connector, lit and dropped as displays are
//! plugged in and out), the libinput devices of the seat, and VT switching (the session's pause
//! and activate). Outputs are drawn through the same scene as every other backend, and come and
//! go through the same [`hotplug`](crate::hotplug) path; libinput events go through the same
//! input routing (`State::key`, `pointer_motion`, `pointer_button`, `touch_down`, `touch_up`).
//! The choices that need no hardware live in [`plan`].

mod input;
mod plan;

use std::path::PathBuf;

use calloop::LoopHandle;
use smithay::backend::allocator::Fourcc;
use smithay::backend::allocator::format::FormatSet;
use smithay::backend::allocator::gbm::{GbmAllocator, GbmBufferFlags, GbmDevice};
use smithay::backend::drm::{DrmDevice, DrmDeviceFd, DrmEvent, DrmSurface, GbmBufferedSurface};
use smithay::backend::egl::{EGLContext, EGLDisplay};
use smithay::backend::libinput::{LibinputInputBackend, LibinputSessionInterface};
use smithay::backend::renderer::Bind;
use smithay::backend::renderer::gles::GlesRenderer;
use smithay::backend::session::libseat::LibSeatSession;
use smithay::backend::session::{Event as SessionEvent, Session};
use smithay::backend::udev::{UdevBackend, UdevEvent};
use smithay::desktop::{Space, Window};
use smithay::reexports::drm::control::{
    Device as ControlDevice, Mode, ModeTypeFlags, connector, crtc,
};
use smithay::reexports::input::Libinput;
use smithay::reexports::rustix::fs::OFlags;
use smithay::utils::DeviceFd;
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

/// One CRTC driving one connector's display (same order as the backend's outputs).
struct Head {
    connector: connector::Handle,
    crtc: crtc::Handle,
    surface: Surface,
    /// A frame was queued and its page flip has not completed yet.
    flipping: bool,
}

/// The session, the GPU and its renderer, the heads, and the input state kept here.
pub(crate) struct UdevDevice {
    session: LibSeatSession,
    drm: DrmDevice,
    /// Allocates the scan-out buffers of a display lit later (hotplug).
    gbm: GbmDevice<DrmDeviceFd>,
    render_formats: FormatSet,
    /// The GPU's device node, for messages.
    path: String,
    renderer: GlesRenderer,
    heads: Vec<Head>,
    libinput: Libinput,
    /// Held modifiers, for the Ctrl+Alt+F`n` VT switch (evdev codes).
    held: std::collections::HashSet<u32>,
    /// A frame was skipped because its head was still flipping: draw again after the flip.
    missed: bool,
    /// Input devices that can answer the dialog (keyboard, pointer or touch).
    answering_inputs: usize,
}

/// Opens the session and the primary GPU, lights every connected connector, and feeds the
/// seat's input devices, session changes and display hotplug to `state` through `handle`.
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
    let (drm, drm_events) = DrmDevice::new(fd.clone(), true).map_err(|e| gpu_err(e.to_string()))?;
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

    let found = scan(&drm, &shown)?.connected;
    if found.is_empty() {
        return Err(UdevError::NoDisplay(shown).into());
    }
    let libinput = Libinput::new_with_udev(LibinputSessionInterface::from(session.clone()));
    let mut dev = UdevDevice {
        session,
        drm,
        gbm,
        render_formats,
        path: shown,
        renderer,
        heads: Vec::new(),
        libinput,
        held: Default::default(),
        missed: false,
        answering_inputs: 0,
    };
    let mut outputs = Vec::new();
    let failed = dev.light(&found, dh, space, &mut outputs);
    if dev.heads.is_empty() {
        return Err(failed.unwrap_or(UdevError::NoDisplay(dev.path)).into());
    }

    dev.libinput
        .udev_assign_seat(&seat)
        .map_err(|()| UdevError::Input {
            seat: seat.clone(),
            message: "libinput could not take the seat's devices".into(),
        })?;
    let loop_err = |e: &dyn std::fmt::Display| BackendError::Udev(e.to_string());
    handle
        .insert_source(
            LibinputInputBackend::new(dev.libinput.clone()),
            |event, _, state| input::handle_input(state, event),
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
    // The kernel sends a udev change event for the card when a connector's state changes.
    let gpu = dev.drm.device_id();
    match UdevBackend::new(&seat) {
        Ok(monitor) => {
            handle
                .insert_source(monitor, move |event, _, state: &mut State| match event {
                    UdevEvent::Changed { device_id } if device_id == gpu => {
                        connectors_changed(state)
                    }
                    UdevEvent::Removed { device_id } if device_id == gpu => gpu_removed(state),
                    _ => {}
                })
                .map_err(|e| loop_err(&e))?;
        }
        Err(e) => tracing::warn!(
            "cannot watch udev for displays being plugged in or out ({e}): the outputs stay \
             as they are now"
        ),
    }
    Ok(Backend {
        outputs,
        device: Device::Udev(Box::new(dev)),
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

/// A connected connector as a scan found it.
struct Connected {
    handle: connector::Handle,
    /// Like `HDMI-A-1`.
    name: String,
    /// The mode [`plan::choose_mode`] picked; `None` when it offers none.
    mode: Option<Mode>,
    /// The CRTCs its encoders can use.
    crtcs: Vec<crtc::Handle>,
}

/// What the GPU says of its connectors.
#[derive(Default)]
struct Scan {
    connected: Vec<Connected>,
    /// Connectors whose state could not be read or is unknown: neither lit nor dropped.
    unsure: Vec<connector::Handle>,
}

/// Asks the GPU at `path` which connectors are connected (probing them, as after a hotplug the
/// kernel's mode list may be stale), with the mode and CRTCs each could use.
fn scan(drm: &DrmDevice, path: &str) -> Result<Scan, UdevError> {
    let resources = drm.resource_handles().map_err(|e| UdevError::Gpu {
        path: path.into(),
        message: e.to_string(),
    })?;
    let mut scan = Scan::default();
    for &handle in resources.connectors() {
        let info = match drm.get_connector(handle, true) {
            Ok(info) => info,
            Err(e) => {
                tracing::warn!("connector {handle:?} of {path} unreadable: {e}");
                scan.unsure.push(handle);
                continue;
            }
        };
        match info.state() {
            connector::State::Connected => {}
            connector::State::Disconnected => continue,
            connector::State::Unknown => {
                scan.unsure.push(handle);
                continue;
            }
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
        let mode = plan::choose_mode(&candidates).and_then(|i| info.modes().get(i).copied());
        let mut crtcs = Vec::new();
        for &encoder in info.encoders() {
            match drm.get_encoder(encoder) {
                Ok(e) => crtcs.extend(resources.filter_crtcs(e.possible_crtcs())),
                Err(e) => tracing::warn!("encoder of {name} unreadable: {e}"),
            }
        }
        scan.connected.push(Connected {
            handle,
            name,
            mode,
            crtcs,
        });
    }
    Ok(scan)
}

/// The global logical rectangles (`x, y, w, h`) of `outputs`.
fn rects(outputs: &[VirtualOutput]) -> Vec<(i32, i32, i32, i32)> {
    outputs
        .iter()
        .map(|o| {
            let (w, h) = o.spec.logical_size();
            (o.spec.x, o.spec.y, w, h)
        })
        .collect()
}

impl UdevDevice {
    /// Lights the `found` connectors that a free CRTC can drive: each gets a head and an output
    /// (pushed to `outputs`) right of the others. One that cannot be lit is logged with its
    /// name and stays dark; the first such error is returned.
    fn light(
        &mut self,
        found: &[Connected],
        dh: &DisplayHandle,
        space: &mut Space<Window>,
        outputs: &mut Vec<VirtualOutput>,
    ) -> Option<UdevError> {
        let in_use: Vec<crtc::Handle> = self.heads.iter().map(|h| h.crtc).collect();
        let possible: Vec<Vec<crtc::Handle>> = found.iter().map(|c| c.crtcs.clone()).collect();
        let assigned = plan::assign_crtcs(&possible, &in_use);
        let mut first = None;
        for (conn, crtc) in found.iter().zip(assigned) {
            let (head, mode) = match self.light_one(conn, crtc) {
                Ok(lit) => lit,
                Err(e) => {
                    tracing::warn!("{e}: it stays dark");
                    first.get_or_insert(e);
                    continue;
                }
            };
            let (w, h) = mode.size();
            let spec = plan::place_after(&rects(outputs), (i32::from(w), i32::from(h)));
            tracing::info!(
                "output {}: {}x{}@{}Hz at {},{}",
                conn.name,
                spec.width,
                spec.height,
                mode.vrefresh(),
                spec.x,
                spec.y
            );
            let name = conn.name.clone();
            outputs.push(crate::backend::new_output::<State>(
                dh, name, "drm", &spec, space,
            ));
            self.heads.push(head);
        }
        first
    }

    /// A head for `conn` on `crtc`: a DRM surface at its mode with GBM scan-out buffers.
    fn light_one(
        &mut self,
        conn: &Connected,
        crtc: Option<crtc::Handle>,
    ) -> Result<(Head, Mode), UdevError> {
        let conn_err = |message: String| UdevError::Connector {
            connector: conn.name.clone(),
            message,
        };
        let mode = conn
            .mode
            .ok_or_else(|| conn_err("it offers no mode".into()))?;
        let crtc = crtc.ok_or_else(|| conn_err("no free CRTC can drive it".into()))?;
        let drm_surface: DrmSurface = self
            .drm
            .create_surface(crtc, mode, &[conn.handle])
            .map_err(|e| conn_err(e.to_string()))?;
        let allocator = GbmAllocator::new(
            self.gbm.clone(),
            GbmBufferFlags::RENDERING | GbmBufferFlags::SCANOUT,
        );
        let surface = GbmBufferedSurface::new(
            drm_surface,
            allocator,
            &[Fourcc::Xrgb8888, Fourcc::Argb8888],
            self.render_formats.clone(),
        )
        .map_err(|e| conn_err(e.to_string()))?;
        let head = Head {
            connector: conn.handle,
            crtc,
            surface,
            flipping: false,
        };
        Ok((head, mode))
    }

    /// Drops head `index` (its display was unplugged): dropping its surface turns its CRTC
    /// off, free for a display plugged in later. [`Backend::remove_output`] calls it.
    pub(crate) fn remove_head(&mut self, index: usize) -> Result<(), BackendError> {
        if index >= self.heads.len() {
            return Err(BackendError::NoOutput(index));
        }
        self.heads.remove(index);
        Ok(())
    }

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

fn udev_device(state: &mut State) -> Option<&mut UdevDevice> {
    match &mut state.backend.device {
        Device::Udev(d) => Some(d),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

/// A page flip completed on `crtc`: its head can take the next frame.
fn page_flipped(state: &mut State, crtc: crtc::Handle) {
    let Some(dev) = udev_device(state) else {
        return;
    };
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
    let Some(dev) = udev_device(state) else {
        return;
    };
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
            // Displays may have been plugged in or out while another VT had the GPU.
            connectors_changed(state);
        }
    }
}

/// The GPU's connectors changed (a display plugged in or out): heads whose display went are
/// dropped and their outputs removed, newly connected displays are lit and added. A rescan that
/// fails is logged and changes nothing.
fn connectors_changed(state: &mut State) {
    let Some(dev) = udev_device(state) else {
        return;
    };
    if !dev.session.is_active() {
        // Only the DRM master may probe and light connectors: rescanned on activation.
        tracing::debug!("displays changed while the session is paused");
        return;
    }
    match scan(&dev.drm, &dev.path) {
        Ok(scan) => apply_scan(state, scan),
        Err(e) => tracing::warn!("cannot rescan the displays: {e}"),
    }
}

/// The GPU itself went away: every output goes (so prompts are denied until one returns).
fn gpu_removed(state: &mut State) {
    if let Some(dev) = udev_device(state) {
        tracing::warn!("the GPU {} was removed: its displays are gone", dev.path);
        apply_scan(state, Scan::default());
    }
}

/// Brings the heads in line with `scan` (see [`plan::rescan`]).
fn apply_scan(state: &mut State, scan: Scan) {
    let Some(dev) = udev_device(state) else {
        return;
    };
    let heads: Vec<connector::Handle> = dev.heads.iter().map(|h| h.connector).collect();
    let connected: Vec<connector::Handle> = scan.connected.iter().map(|c| c.handle).collect();
    let change = plan::rescan(&heads, &connected, &scan.unsure);
    for index in change.remove {
        // The head, then the backend-neutral part (dialog, windows, availability).
        if let Err(e) = state.remove_output(index) {
            tracing::error!("cannot remove the output of an unplugged display: {e}");
        }
    }
    let new: Vec<Connected> = scan
        .connected
        .into_iter()
        .enumerate()
        .filter(|(i, _)| change.add.contains(i))
        .map(|(_, c)| c)
        .collect();
    let State {
        backend, dh, space, ..
    } = state;
    let Device::Udev(dev) = &mut backend.device else {
        return;
    };
    let before = backend.outputs.len();
    // Failures are logged with the connector's name; those displays stay dark.
    dev.light(&new, dh, space, &mut backend.outputs);
    for index in before..backend.outputs.len() {
        state.output_added(index);
    }
}
