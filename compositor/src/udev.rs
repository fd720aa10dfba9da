//! The `udev` backend (cargo feature `udev`): a real session on a VT. It owns the libseat
//! session, the seat's GPUs found by udev (`gpu`: DRM/KMS with GBM buffers and a GLES renderer
//! per card, one output per connected connector at its preferred mode), display and GPU hotplug
//! (udev events of the cards: a head per connected connector, lit and dropped as displays and
//! cards are plugged in and out), the libinput devices of the seat, and VT switching (the
//! session's pause and activate). Outputs are drawn through the same scene as every other
//! backend, and come and go through the same [`hotplug`](crate::hotplug) path; libinput events go
//! through the same input routing (`State::key`, `pointer_motion`, `pointer_button`,
//! `touch_down`, `touch_up`). The choices that need no hardware live in `plan`.

mod gpu;
mod input;
mod plan;

use std::path::PathBuf;

use calloop::LoopHandle;
use smithay::backend::libinput::{LibinputInputBackend, LibinputSessionInterface};
use smithay::backend::renderer::Bind;
use smithay::backend::session::libseat::LibSeatSession;
use smithay::backend::session::{Event as SessionEvent, Session};
use smithay::backend::udev::{UdevBackend, UdevEvent};
use smithay::desktop::{Space, Window};
use smithay::reexports::input::Libinput;
use wayland_server::DisplayHandle;

use crate::backend::{Backend, BackendError, Device, VirtualOutput};
use crate::state::State;
use pcp_plugin::PlacedOverlay;

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

/// The session, the GPUs and their heads, and the input state kept here.
pub(crate) struct UdevDevice {
    session: LibSeatSession,
    gpus: Vec<gpu::Gpu>,
    /// One per output, in the same order.
    heads: Vec<gpu::Head>,
    libinput: Libinput,
    /// Held modifiers, for the Ctrl+Alt+F`n` VT switch (evdev codes).
    held: std::collections::HashSet<u32>,
    /// A frame was skipped because its head was still flipping: draw again after the flip.
    missed: bool,
    /// Input devices that can answer the dialog (keyboard, pointer or touch).
    answering_inputs: usize,
    /// To remove a GPU found gone while drawing, before udev's event for it arrives.
    loop_handle: LoopHandle<'static, State>,
    /// GPUs found gone while drawing, whose removal is queued.
    vanishing: Vec<libc::dev_t>,
}

/// Opens the session and the seat's GPUs, lights every connected connector, and feeds the
/// seat's input devices, session changes and display and GPU hotplug to `state` through
/// `handle`.
pub(crate) fn start(
    dh: &DisplayHandle,
    space: &mut Space<Window>,
    handle: &LoopHandle<'static, State>,
) -> Result<Backend, BackendError> {
    let (session, notifier) =
        LibSeatSession::new().map_err(|e| UdevError::NoSeat(e.to_string()))?;
    let seat = session.seat();
    let paths = gpu_paths(&seat)?;
    let libinput = Libinput::new_with_udev(LibinputSessionInterface::from(session.clone()));
    let mut dev = UdevDevice {
        session,
        gpus: Vec::new(),
        heads: Vec::new(),
        libinput,
        held: Default::default(),
        missed: false,
        answering_inputs: 0,
        loop_handle: handle.clone(),
        vanishing: Vec::new(),
    };
    let mut outputs = Vec::new();
    let mut failed = None;
    for path in &paths {
        let lit = gpu::open(&mut dev.session, path, handle).and_then(|card| {
            let found = gpu::scan(&card)?.connected;
            let id = card.id;
            dev.gpus.push(card);
            Ok(dev.light(id, &found, dh, space, &mut outputs))
        });
        match lit {
            Ok(None) => {}
            // The first card's error is the one to report when nothing can be lit.
            Ok(Some(e)) | Err(e) => {
                tracing::warn!("{e}");
                failed.get_or_insert(e);
            }
        }
    }
    if dev.heads.is_empty() {
        let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(failed
            .unwrap_or(UdevError::NoDisplay(shown.join(", ")))
            .into());
    }

    dev.libinput
        .udev_assign_seat(&seat)
        .map_err(|()| UdevError::Input {
            seat: seat.clone(),
            message: "libinput could not take the seat's devices".into(),
        })?;
    let loop_err = |e: &dyn std::fmt::Display| BackendError::Udev(e.to_string());
    // The devices present now are announced only when libinput's fd next becomes readable,
    // which is the first key press or touch: until then nobody could answer a prompt. Take
    // them now and count them once the loop runs.
    let present = input::devices_present(&mut dev.libinput);
    handle.insert_idle(move |state| {
        for device in present {
            input::handle_input(
                state,
                smithay::backend::input::InputEvent::DeviceAdded { device },
            );
        }
    });
    handle
        .insert_source(
            LibinputInputBackend::new(dev.libinput.clone()),
            |event, _, state| input::handle_input(state, event),
        )
        .map_err(|e| loop_err(&e))?;
    handle
        .insert_source(notifier, |event, _, state: &mut State| {
            session_changed(state, event)
        })
        .map_err(|e| loop_err(&e))?;
    // The kernel sends a udev change event for a card when a connector's state changes, and
    // add and remove events when the card itself comes and goes.
    match UdevBackend::new(&seat) {
        Ok(monitor) => {
            handle
                .insert_source(monitor, move |event, _, state: &mut State| match event {
                    UdevEvent::Changed { device_id } => gpu::connectors_changed(state, device_id),
                    UdevEvent::Added { path, .. } => gpu::gpu_added(state, &path),
                    UdevEvent::Removed { device_id } => gpu::gpu_removed(state, device_id),
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

/// The seat's GPUs: the primary one (the boot VGA device) first, then the other DRM cards.
fn gpu_paths(seat: &str) -> Result<Vec<PathBuf>, UdevError> {
    let no_gpu = |detail: String| UdevError::NoGpu {
        seat: seat.into(),
        detail,
    };
    let primary =
        smithay::backend::udev::primary_gpu(seat).map_err(|e| no_gpu(format!(" ({e})")))?;
    let mut all = smithay::backend::udev::all_gpus(seat).map_err(|e| no_gpu(format!(" ({e})")))?;
    all.sort();
    if let Some(p) = primary {
        all.retain(|q| *q != p);
        all.insert(0, p);
    }
    if all.is_empty() {
        return Err(no_gpu(String::new()));
    }
    Ok(all)
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
    /// Drops head `index` (its display was unplugged): dropping its surface turns its CRTC
    /// off, free for a display plugged in later. [`Backend::remove_output`] calls it.
    pub(crate) fn remove_head(&mut self, index: usize) -> Result<(), BackendError> {
        if index >= self.heads.len() {
            return Err(BackendError::NoOutput(index));
        }
        self.heads.remove(index);
        Ok(())
    }

    /// Draws every head whose previous frame has been flipped, with its GPU's renderer, and
    /// queues it for scan-out.
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
            if self.vanishing.contains(&head.gpu) {
                continue;
            }
            if head.flipping {
                self.missed = true;
                continue;
            }
            let name = vo.output.name();
            let failed =
                |e: &dyn std::fmt::Display| BackendError::Render(name.clone(), e.to_string());
            let Some(card) = self.gpus.iter_mut().find(|g| g.id == head.gpu) else {
                return Err(failed(&"its GPU is gone"));
            };
            let drawn = draw_head(card, head, vo, i, space, layers, clear);
            match drawn {
                Ok(()) => {}
                // Its card was unplugged: udev's remove event is on its way, but until it
                // arrives every frame fails here, and a failed frame fails the prompt on
                // screen. The GPU goes now instead (its outputs go, the dialog moves); the
                // event then finds nothing left to remove.
                Err(e) if !std::path::Path::new(&card.path).exists() => {
                    let id = card.id;
                    if !self.vanishing.contains(&id) {
                        self.vanishing.push(id);
                        tracing::warn!(
                            "{name}: {e}; its GPU {} is gone (its device node was removed)",
                            card.path
                        );
                        self.loop_handle
                            .insert_idle(move |state| gpu::gpu_removed(state, id));
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// Draws output `vo` (index `index`) into `head`'s next buffer with `card`'s renderer and
/// queues it for scan-out.
fn draw_head(
    card: &mut gpu::Gpu,
    head: &mut gpu::Head,
    vo: &mut VirtualOutput,
    index: usize,
    space: &Space<Window>,
    layers: &[PlacedOverlay<'_>],
    clear: [f32; 4],
) -> Result<(), BackendError> {
    let name = vo.output.name();
    let failed = |e: &dyn std::fmt::Display| BackendError::Render(name.clone(), e.to_string());
    let (mut dmabuf, age) = head.surface.next_buffer().map_err(|e| failed(&e))?;
    let drawn = {
        let mut target = card.renderer.bind(&mut dmabuf).map_err(|e| failed(&e))?;
        crate::backend::draw_output(
            &mut card.renderer,
            &mut target,
            vo,
            index,
            space,
            layers,
            clear,
            usize::from(age),
        )?
    };
    if let Some(damage) = drawn.damage {
        // Scanned out only once drawn: llvmpipe renders on threads with no implicit sync, and
        // virtio-gpu copies the buffer to the display at the commit (early, that left a
        // half-drawn frame, a dialog missing, rows black at the bottom).
        head.surface
            .queue_buffer(Some(drawn.sync), Some(damage), ())
            .map_err(|e| failed(&e))?;
        head.flipping = true;
    }
    Ok(())
}

fn udev_device(state: &mut State) -> Option<&mut UdevDevice> {
    match &mut state.backend.device {
        Device::Udev(d) => Some(d),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

/// VT switching: on pause the GPUs and input are released to the other session; on activation
/// they are taken back and every output is drawn again.
fn session_changed(state: &mut State, event: SessionEvent) {
    let Some(dev) = udev_device(state) else {
        return;
    };
    match event {
        SessionEvent::PauseSession => {
            tracing::info!("session paused (VT switched away)");
            dev.libinput.suspend();
            for card in &mut dev.gpus {
                card.drm.pause();
            }
            dev.held.clear();
        }
        SessionEvent::ActivateSession => {
            tracing::info!("session active again");
            if dev.libinput.resume().is_err() {
                tracing::error!("libinput could not take the seat's devices back");
            }
            for card in &mut dev.gpus {
                if let Err(e) = card.drm.activate(false) {
                    tracing::error!("the GPU {} could not be taken back: {e}", card.path);
                }
            }
            for head in &mut dev.heads {
                head.flipping = false;
                head.surface.reset_buffers();
            }
            let cards: Vec<libc::dev_t> = dev.gpus.iter().map(|g| g.id).collect();
            for vo in &mut state.backend.outputs {
                vo.reset_damage();
            }
            state.frames.damage();
            // Displays may have been plugged in or out while another VT had the GPUs.
            for card in cards {
                gpu::connectors_changed(state, card);
            }
        }
    }
}
