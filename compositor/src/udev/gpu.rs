//! The GPUs of the udev backend: each DRM card opened through the session with its own GBM
//! allocator and GLES renderer (so a second card, such as one on a hot-pluggable PCIe port,
//! draws its own displays), its connectors scanned and lit as heads, and cards and displays
//! coming and going (hotplug) brought in line with the outputs.

use std::path::Path;

use calloop::{LoopHandle, RegistrationToken};
use smithay::backend::allocator::Fourcc;
use smithay::backend::allocator::format::FormatSet;
use smithay::backend::allocator::gbm::{GbmAllocator, GbmBufferFlags, GbmDevice};
use smithay::backend::drm::{DrmDevice, DrmDeviceFd, DrmEvent, DrmSurface, GbmBufferedSurface};
use smithay::backend::egl::{EGLContext, EGLDisplay};
use smithay::backend::renderer::gles::GlesRenderer;
use smithay::backend::session::Session;
use smithay::backend::session::libseat::LibSeatSession;
use smithay::desktop::{Space, Window};
use smithay::reexports::drm::control::{
    Device as ControlDevice, Mode, ModeTypeFlags, connector, crtc,
};
use smithay::reexports::rustix::fs::OFlags;
use smithay::utils::DeviceFd;
use wayland_server::DisplayHandle;

use super::{UdevDevice, UdevError, plan, rects, udev_device};
use crate::backend::{Device, VirtualOutput};
use crate::state::State;

type Surface = GbmBufferedSurface<GbmAllocator<DrmDeviceFd>, ()>;

/// One DRM card: its device, allocator and renderer.
pub(super) struct Gpu {
    /// The card's device number (what udev events name).
    pub id: libc::dev_t,
    /// Its device node, for messages.
    pub path: String,
    /// `card1`: tells apart connectors of the same name on two cards.
    card: String,
    pub drm: DrmDevice,
    /// Allocates the scan-out buffers of its displays.
    gbm: GbmDevice<DrmDeviceFd>,
    render_formats: FormatSet,
    pub renderer: GlesRenderer,
    /// Its DRM event source (page flips) in the event loop, removed with it.
    events: Option<RegistrationToken>,
}

/// One CRTC of a GPU driving one connector's display (same order as the backend's outputs).
pub(super) struct Head {
    pub gpu: libc::dev_t,
    pub connector: connector::Handle,
    pub crtc: crtc::Handle,
    pub surface: Surface,
    /// A frame was queued and its page flip has not completed yet.
    pub flipping: bool,
}

/// Opens the card at `path` through the session, starts its renderer and feeds its page flips
/// to the event loop.
pub(super) fn open(
    session: &mut LibSeatSession,
    path: &Path,
    handle: &LoopHandle<'static, State>,
) -> Result<Gpu, UdevError> {
    let shown = path.display().to_string();
    let gpu_err = |message: String| UdevError::Gpu {
        path: shown.clone(),
        message,
    };
    let fd = session
        .open(
            path,
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
    let id = drm.device_id();
    let source_path = shown.clone();
    let events = handle
        .insert_source(drm_events, move |event, _, state: &mut State| match event {
            DrmEvent::VBlank(crtc) => page_flipped(state, id, crtc),
            DrmEvent::Error(e) => tracing::error!("the GPU {source_path} reported: {e}"),
        })
        .map_err(|e| gpu_err(e.to_string()))?;
    let card = path
        .file_name()
        .map_or_else(|| shown.clone(), |n| n.to_string_lossy().into_owned());
    Ok(Gpu {
        id,
        path: shown,
        card,
        drm,
        gbm,
        render_formats,
        renderer,
        events: Some(events),
    })
}

/// A connected connector as a scan found it.
pub(super) struct Connected {
    handle: connector::Handle,
    /// Like `HDMI-A-1`.
    name: String,
    /// The mode [`plan::choose_mode`] picked; `None` when it offers none.
    mode: Option<Mode>,
    /// The CRTCs its encoders can use.
    crtcs: Vec<crtc::Handle>,
}

/// What a GPU says of its connectors.
#[derive(Default)]
pub(super) struct Scan {
    pub connected: Vec<Connected>,
    /// Connectors whose state could not be read or is unknown: neither lit nor dropped.
    unsure: Vec<connector::Handle>,
}

/// Asks the GPU which connectors are connected (probing them, as after a hotplug the kernel's
/// mode list may be stale), with the mode and CRTCs each could use.
pub(super) fn scan(gpu: &Gpu) -> Result<Scan, UdevError> {
    let (drm, path) = (&gpu.drm, &gpu.path);
    let resources = drm.resource_handles().map_err(|e| UdevError::Gpu {
        path: path.clone(),
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

impl UdevDevice {
    /// Lights the `found` connectors of GPU `gpu` that a free CRTC can drive: each gets a head
    /// and an output (pushed to `outputs`) right of the others. One that cannot be lit is logged
    /// with its name and stays dark; the first such error is returned.
    pub(super) fn light(
        &mut self,
        gpu: libc::dev_t,
        found: &[Connected],
        dh: &DisplayHandle,
        space: &mut Space<Window>,
        outputs: &mut Vec<VirtualOutput>,
    ) -> Option<UdevError> {
        let in_use: Vec<crtc::Handle> = self
            .heads
            .iter()
            .filter(|h| h.gpu == gpu)
            .map(|h| h.crtc)
            .collect();
        let possible: Vec<Vec<crtc::Handle>> = found.iter().map(|c| c.crtcs.clone()).collect();
        let assigned = plan::assign_crtcs(&possible, &in_use);
        let mut first = None;
        for (conn, crtc) in found.iter().zip(assigned) {
            let Some(card) = self.gpus.iter_mut().find(|g| g.id == gpu) else {
                return first;
            };
            let (head, mode) = match light_one(card, conn, crtc) {
                Ok(lit) => lit,
                Err(e) => {
                    tracing::warn!("{e}: it stays dark");
                    first.get_or_insert(e);
                    continue;
                }
            };
            // Two cards can both have a `Virtual-1`: the later one is named after its card too.
            let name = if outputs.iter().any(|o| o.output.name() == conn.name) {
                format!(
                    "{}-{}",
                    conn.name,
                    self.gpus
                        .iter()
                        .find(|g| g.id == gpu)
                        .map_or("", |g| g.card.as_str())
                )
            } else {
                conn.name.clone()
            };
            let (w, h) = mode.size();
            let spec = plan::place_after(&rects(outputs), (i32::from(w), i32::from(h)));
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
            self.heads.push(head);
        }
        first
    }
}

/// A head for `conn` on `crtc` of `gpu`: a DRM surface at its mode with GBM scan-out buffers.
fn light_one(
    gpu: &mut Gpu,
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
    let drm_surface: DrmSurface = gpu
        .drm
        .create_surface(crtc, mode, &[conn.handle])
        .map_err(|e| conn_err(e.to_string()))?;
    let allocator = GbmAllocator::new(
        gpu.gbm.clone(),
        GbmBufferFlags::RENDERING | GbmBufferFlags::SCANOUT,
    );
    let surface = GbmBufferedSurface::new(
        drm_surface,
        allocator,
        &[Fourcc::Xrgb8888, Fourcc::Argb8888],
        gpu.render_formats.clone(),
    )
    .map_err(|e| conn_err(e.to_string()))?;
    let head = Head {
        gpu: gpu.id,
        connector: conn.handle,
        crtc,
        surface,
        flipping: false,
    };
    Ok((head, mode))
}

/// A page flip completed on `crtc` of GPU `gpu`: its head can take the next frame.
fn page_flipped(state: &mut State, gpu: libc::dev_t, crtc: crtc::Handle) {
    let Some(dev) = udev_device(state) else {
        return;
    };
    if let Some(head) = dev
        .heads
        .iter_mut()
        .find(|h| h.gpu == gpu && h.crtc == crtc)
    {
        head.flipping = false;
        if let Err(e) = head.surface.frame_submitted() {
            tracing::warn!("page flip on {crtc:?} failed: {e}");
        }
    }
    if std::mem::take(&mut dev.missed) {
        state.frames.damage();
    }
}

/// GPU `gpu`'s connectors changed (a display plugged in or out): heads whose display went are
/// dropped and their outputs removed, newly connected displays are lit and added. A rescan that
/// fails is logged and changes nothing.
pub(super) fn connectors_changed(state: &mut State, gpu: libc::dev_t) {
    let Some(dev) = udev_device(state) else {
        return;
    };
    if !dev.session.is_active() {
        // Only the DRM master may probe and light connectors: rescanned on activation.
        tracing::debug!("displays changed while the session is paused");
        return;
    }
    let Some(card) = dev.gpus.iter().find(|g| g.id == gpu) else {
        return;
    };
    match scan(card) {
        Ok(scan) => apply_scan(state, gpu, scan),
        Err(e) => tracing::warn!("cannot rescan the displays: {e}"),
    }
}

/// A GPU was plugged in (or came back): it is opened and its displays lit.
pub(super) fn gpu_added(state: &mut State, path: &Path) {
    let handle = state.loop_handle.clone();
    let Some(dev) = udev_device(state) else {
        return;
    };
    let gpu = match open(&mut dev.session, path, &handle) {
        Ok(gpu) => gpu,
        Err(e) => {
            tracing::warn!("a GPU was plugged in but cannot be used: {e}");
            return;
        }
    };
    tracing::info!("GPU {} added", gpu.path);
    let id = gpu.id;
    dev.gpus.push(gpu);
    connectors_changed(state, id);
}

/// GPU `gpu` went away: its displays' outputs go (with none left, prompts are denied until one
/// returns), then the GPU itself.
pub(super) fn gpu_removed(state: &mut State, gpu: libc::dev_t) {
    let Some(dev) = udev_device(state) else {
        return;
    };
    // Its number may come back with the next card plugged in.
    dev.vanishing.retain(|g| *g != gpu);
    let Some(card) = dev.gpus.iter().find(|g| g.id == gpu) else {
        return;
    };
    tracing::warn!("the GPU {} was removed: its displays are gone", card.path);
    apply_scan(state, gpu, Scan::default());
    let handle = state.loop_handle.clone();
    let Some(dev) = udev_device(state) else {
        return;
    };
    if let Some(i) = dev.gpus.iter().position(|g| g.id == gpu) {
        let mut card = dev.gpus.remove(i);
        if let Some(token) = card.events.take() {
            handle.remove(token);
        }
    }
}

/// What makes two modes the same for a head: size, pixel clock and refresh (not the flags or
/// name, which a rescan may list differently for the same timing).
type ModeKey = ((u16, u16), u32, u32);

fn mode_key(mode: &Mode) -> ModeKey {
    (mode.size(), mode.clock(), mode.vrefresh())
}

/// Head `index` (output `index`) runs `conn`'s display, which now asks for `conn.mode`: the
/// surface takes the mode (set at its next commit, with buffers of the new size), the output
/// its new size, and the backend-neutral part follows ([`State::output_resized`]). A mode the
/// CRTC refuses is logged and the display keeps the one it has.
fn relight(state: &mut State, index: usize, conn: &Connected) {
    let Some(mode) = conn.mode else {
        return;
    };
    let State { backend, .. } = state;
    let Device::Udev(dev) = &mut backend.device else {
        return;
    };
    let (Some(head), Some(vo)) = (dev.heads.get_mut(index), backend.outputs.get_mut(index)) else {
        return;
    };
    if let Err(e) = head.surface.use_mode(mode) {
        tracing::error!(
            "the display on {} asks for {}x{}@{}Hz, which cannot be set: {e}; it keeps its mode",
            conn.name,
            mode.size().0,
            mode.size().1,
            mode.vrefresh()
        );
        return;
    }
    let old = vo.spec;
    let (w, h) = mode.size();
    tracing::info!(
        "output {}: the display's preferred mode changed: {w}x{h}@{}Hz",
        vo.output.name(),
        mode.vrefresh()
    );
    vo.set_spec(crate::config::OutputSpec {
        width: i32::from(w),
        height: i32::from(h),
        ..old
    });
    state.output_resized(index, old);
}

/// Brings GPU `gpu`'s heads in line with `scan` (see [`plan::rescan`]).
fn apply_scan(state: &mut State, gpu: libc::dev_t, scan: Scan) {
    let Some(dev) = udev_device(state) else {
        return;
    };
    // This GPU's heads: their indexes among all outputs, and their connectors.
    let (indexes, heads): (Vec<usize>, Vec<connector::Handle>) = dev
        .heads
        .iter()
        .enumerate()
        .filter(|(_, h)| h.gpu == gpu)
        .map(|(i, h)| (i, h.connector))
        .unzip();
    // Displays still connected whose mode list or preferred mode changed: lit again at the
    // mode they ask for now (before any head goes, while `indexes` hold).
    let running: Vec<(connector::Handle, ModeKey)> = indexes
        .iter()
        .filter_map(|&i| dev.heads.get(i))
        .map(|h| (h.connector, mode_key(&h.surface.pending_mode())))
        .collect();
    let wanted: Vec<(connector::Handle, Option<ModeKey>)> = scan
        .connected
        .iter()
        .map(|c| (c.handle, c.mode.as_ref().map(mode_key)))
        .collect();
    for (h, c) in plan::remoded(&running, &wanted) {
        if let (Some(&index), Some(conn)) = (indexes.get(h), scan.connected.get(c)) {
            relight(state, index, conn);
        }
    }
    let connected: Vec<connector::Handle> = scan.connected.iter().map(|c| c.handle).collect();
    let change = plan::rescan(&heads, &connected, &scan.unsure);
    // Highest first among this GPU's heads, so highest first among all outputs too.
    for i in change.remove {
        // The head, then the backend-neutral part (dialog, windows, availability).
        if let Err(e) = state.remove_output(indexes[i]) {
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
    if new.is_empty() {
        return;
    }
    let State {
        backend,
        dh,
        desktop,
        ..
    } = state;
    let Device::Udev(dev) = &mut backend.device else {
        return;
    };
    let before = backend.outputs.len();
    // Failures are logged with the connector's name; those displays stay dark.
    dev.light(gpu, &new, dh, &mut desktop.space, &mut backend.outputs);
    for index in before..backend.outputs.len() {
        state.output_added(index);
    }
}
