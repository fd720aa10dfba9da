//! The backend-neutral part of the outputs: the list of outputs (Smithay output, spec, damage
//! tracker) every backend shares, the scene one output shows (`scene`: windows, layer surfaces,
//! the dialog, the config notice, built once for any renderer), and the dispatch to the device
//! that draws it: the pixman [`headless`](crate::headless) images or, with the `winit` feature, a
//! nested window drawn with GLES (the `winit` module). Outputs coming and going while
//! running are [`hotplug`](crate::hotplug)'s.

use std::path::Path;

use pcp_plugin::PlacedOverlay;
use smithay::backend::renderer::damage::OutputDamageTracker;
use smithay::desktop::{Space, Window};
use smithay::output::{Mode, Output, PhysicalProperties, Scale, Subpixel};
use smithay::utils::{Logical, Point, Transform};
use smithay::wayland::output::WlOutputData;
use wayland_server::backend::GlobalId;
use wayland_server::protocol::wl_output::WlOutput;
use wayland_server::protocol::wl_surface::WlSurface;
use wayland_server::{DisplayHandle, GlobalDispatch};

use crate::config::OutputSpec;
use crate::headless::Pixman;

mod scene;

pub(crate) use scene::draw_output;

/// Whether this build has the nested `winit` backend (the `winit` cargo feature).
pub const WINIT_BUILT: bool = cfg!(feature = "winit");
/// Whether this build has the `udev` backend for a real session (the `udev` cargo feature).
pub const UDEV_BUILT: bool = cfg!(feature = "udev");

/// Which backend draws the outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    /// Virtual outputs drawn by the pixman renderer into memory.
    Headless,
    /// One output: a window inside X11 or Wayland, drawn with GLES (`winit` feature).
    Winit,
    /// The connected displays of the primary GPU (DRM/KMS, GLES), libinput devices and a
    /// libseat session on a VT (`udev` feature).
    Udev,
}

/// What failed in the backend.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error("the {0} renderer could not start: {1}")]
    Renderer(&'static str, String),
    #[error("cannot create a {0} output buffer: {1}")]
    Buffer(String, String),
    #[error("drawing output {0} failed: {1}")]
    Render(String, String),
    #[error("there is no output {0}")]
    NoOutput(usize),
    #[error("there is no output named `{0}`")]
    NoOutputNamed(String),
    #[error("cannot write {path}: {message}")]
    Png { path: String, message: String },
    #[error("the {backend} backend cannot {what}")]
    Unsupported {
        backend: &'static str,
        what: &'static str,
    },
    #[error(
        "this pcp-compositor was built without the `winit` feature: rebuild it with \
         `cargo build -p pcp-compositor --features winit`, or use --backend headless"
    )]
    WinitNotBuilt,
    #[error(
        "this pcp-compositor was built without the `udev` feature: rebuild it with \
         `cargo build -p pcp-compositor --features udev` (needs libudev-dev libseat-dev \
         libinput-dev libgbm-dev), or use --backend headless"
    )]
    UdevNotBuilt,
    #[error("the udev backend could not start: {0}")]
    Udev(String),
}

/// One output: its Smithay output, its size, position and scale, and its damage tracker.
pub struct VirtualOutput {
    pub output: Output,
    pub spec: OutputSpec,
    pub(crate) damage: OutputDamageTracker,
    /// Its `wl_output` global, until the output is removed.
    pub(crate) global: Option<GlobalId>,
    /// While the session is locked: `Some` with the output's lock surface, if it has one yet.
    /// Then nothing else of the desktop is drawn on it.
    pub(crate) locked: Option<Option<WlSurface>>,
    /// A drag's icon and where its top-left is (global logical), while it is over this output.
    pub(crate) drag_icon: Option<(WlSurface, Point<i32, Logical>)>,
    /// The pointer's cursor (winit and udev only), drawn when it is on this output.
    pub(crate) cursor: Option<crate::cursor::CursorDraw>,
}

/// The captured pixels of one output: straight (not premultiplied) RGBA, row-major.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    pub width: u32,
    pub height: u32,
    pub rgba: Vec<u8>,
}

impl Capture {
    /// The RGBA value at physical pixel (x, y).
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 4] {
        let i = ((y * self.width + x) * 4) as usize;
        [
            self.rgba[i],
            self.rgba[i + 1],
            self.rgba[i + 2],
            self.rgba[i + 3],
        ]
    }

    /// Writes the capture as a PNG file.
    pub fn write_png(&self, path: &Path) -> Result<(), BackendError> {
        let err = |message: String| BackendError::Png {
            path: path.display().to_string(),
            message,
        };
        let file = std::fs::File::create(path).map_err(|e| err(e.to_string()))?;
        let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), self.width, self.height);
        encoder.set_color(png::ColorType::Rgba);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(|e| err(e.to_string()))?;
        writer
            .write_image_data(&self.rgba)
            .map_err(|e| err(e.to_string()))
    }
}

/// The device that turns the scene into pixels.
pub(crate) enum Device {
    Pixman(Pixman),
    #[cfg(feature = "winit")]
    Winit(Box<crate::winit::WinitDevice>),
    #[cfg(feature = "udev")]
    Udev(Box<crate::udev::UdevDevice>),
}

/// The outputs and the device that draws them.
pub struct Backend {
    pub outputs: Vec<VirtualOutput>,
    pub(crate) device: Device,
}

/// Creates an output for `spec`, advertises it as a `wl_output` and maps it into `space`.
pub(crate) fn new_output<D>(
    dh: &DisplayHandle,
    name: String,
    model: &str,
    spec: &OutputSpec,
    space: &mut Space<Window>,
) -> VirtualOutput
where
    D: GlobalDispatch<WlOutput, WlOutputData> + 'static,
{
    let output = Output::new(
        name,
        PhysicalProperties {
            size: (0, 0).into(),
            subpixel: Subpixel::Unknown,
            make: "pcp".into(),
            model: model.into(),
        },
    );
    let mode = Mode {
        size: (spec.width, spec.height).into(),
        refresh: 60_000,
    };
    output.change_current_state(
        Some(mode),
        Some(Transform::Normal),
        Some(Scale::Fractional(spec.scale)),
        Some((spec.x, spec.y).into()),
    );
    output.set_preferred(mode);
    let global = output.create_global::<D>(dh);
    space.map_output(&output, (spec.x, spec.y));
    let damage = OutputDamageTracker::from_output(&output);
    VirtualOutput {
        output,
        spec: *spec,
        damage,
        global: Some(global),
        locked: None,
        drag_icon: None,
        cursor: None,
    }
}

impl VirtualOutput {
    /// Gives the output a new size and scale (same position): a new mode, a fresh damage
    /// tracker.
    pub(crate) fn set_spec(&mut self, spec: OutputSpec) {
        let m = Mode {
            size: (spec.width, spec.height).into(),
            refresh: 60_000,
        };
        self.output
            .change_current_state(Some(m), None, Some(Scale::Fractional(spec.scale)), None);
        self.output.set_preferred(m);
        self.damage = OutputDamageTracker::from_output(&self.output);
        self.spec = spec;
    }

    /// Forgets what was drawn, so the next frame is drawn whole (after a VT switch).
    #[cfg(feature = "udev")]
    pub(crate) fn reset_damage(&mut self) {
        self.damage = OutputDamageTracker::from_output(&self.output);
    }
}

impl Backend {
    /// The headless backend: one virtual output per spec, drawn by pixman.
    pub fn headless<D>(
        dh: &DisplayHandle,
        specs: &[OutputSpec],
        space: &mut Space<Window>,
    ) -> Result<Backend, BackendError>
    where
        D: GlobalDispatch<WlOutput, WlOutputData> + 'static,
    {
        let mut pixman = Pixman::new()?;
        let mut outputs = Vec::with_capacity(specs.len());
        for (i, spec) in specs.iter().enumerate() {
            pixman.add_image(spec)?;
            outputs.push(new_output::<D>(
                dh,
                format!("HEADLESS-{}", i + 1),
                "virtual",
                spec,
                space,
            ));
        }
        Ok(Backend {
            outputs,
            device: Device::Pixman(pixman),
        })
    }

    /// Which backend this is.
    pub fn kind(&self) -> BackendKind {
        match self.device {
            Device::Pixman(_) => BackendKind::Headless,
            #[cfg(feature = "winit")]
            Device::Winit(_) => BackendKind::Winit,
            #[cfg(feature = "udev")]
            Device::Udev(_) => BackendKind::Udev,
        }
    }

    /// The output for a focal point: the one containing it, else the nearest.
    pub fn nearest_output(&self, focus: Point<f64, Logical>) -> Option<usize> {
        pcp_overlay::nearest_output(
            pcp_overlay::Point {
                x: focus.x,
                y: focus.y,
            },
            &self.overlay_outputs(),
        )
    }

    /// The outputs as the overlay crate sees them (global logical rectangles and scales).
    pub fn overlay_outputs(&self) -> Vec<pcp_overlay::Output> {
        self.outputs
            .iter()
            .map(|o| pcp_overlay::Output {
                rect: logical_rect(&o.spec),
                scale: o.spec.scale,
            })
            .collect()
    }

    /// The index of the output named `name` (`HEADLESS-2`, a connector name).
    pub fn output_index(&self, name: &str) -> Option<usize> {
        self.outputs.iter().position(|o| o.output.name() == name)
    }

    /// Takes output `index` out of the list and drops what the device drew it with. The caller
    /// ([`State::remove_output`]) unmaps it and withdraws its global.
    pub(crate) fn remove_output(&mut self, index: usize) -> Result<VirtualOutput, BackendError> {
        if index >= self.outputs.len() {
            return Err(BackendError::NoOutput(index));
        }
        match &mut self.device {
            Device::Pixman(p) => p.remove_image(index)?,
            #[cfg(feature = "winit")]
            Device::Winit(_) => {
                return Err(BackendError::Unsupported {
                    backend: "winit",
                    what: "remove its output (close the host window instead)",
                });
            }
            // A display unplugged: its head (DRM surface, CRTC) goes with the output, so heads
            // and outputs keep the same order.
            #[cfg(feature = "udev")]
            Device::Udev(u) => u.remove_head(index)?,
        }
        Ok(self.outputs.remove(index))
    }

    /// Adds an output of `spec` (headless only): a new image, a `wl_output` global and a place
    /// in `space`. Its name is the first free `HEADLESS-n`. Returns its index (the last).
    pub(crate) fn add_output<D>(
        &mut self,
        dh: &DisplayHandle,
        spec: &OutputSpec,
        space: &mut Space<Window>,
    ) -> Result<usize, BackendError>
    where
        D: GlobalDispatch<WlOutput, WlOutputData> + 'static,
    {
        match &mut self.device {
            Device::Pixman(p) => p.add_image(spec)?,
            #[cfg(feature = "winit")]
            Device::Winit(_) => {
                return Err(BackendError::Unsupported {
                    backend: "winit",
                    what: "add an output (it has one window)",
                });
            }
            // Its outputs are the connected displays, added as they are plugged in.
            #[cfg(feature = "udev")]
            Device::Udev(_) => {
                return Err(BackendError::Unsupported {
                    backend: "udev",
                    what: "add an output of a given size (plug in a display instead)",
                });
            }
        }
        let name = (1..)
            .map(|n| format!("HEADLESS-{n}"))
            .find(|n| self.output_index(n).is_none())
            .unwrap_or_default();
        self.outputs
            .push(new_output::<D>(dh, name, "virtual", spec, space));
        Ok(self.outputs.len() - 1)
    }

    /// Draws every output: the windows, and above them the layers on that output (the first in
    /// front).
    pub fn render(
        &mut self,
        space: &Space<Window>,
        layers: &[PlacedOverlay<'_>],
        background: [f32; 3],
    ) -> Result<(), BackendError> {
        let clear = [background[0], background[1], background[2], 1.0];
        match &mut self.device {
            Device::Pixman(p) => p.render(&mut self.outputs, space, layers, clear),
            #[cfg(feature = "winit")]
            Device::Winit(w) => w.render(&mut self.outputs, space, layers, clear),
            #[cfg(feature = "udev")]
            Device::Udev(u) => u.render(&mut self.outputs, space, layers, clear),
        }
    }

    /// Draws every output ([`Backend::render`]); when that fails (a client's buffer that cannot
    /// be read: a truncated shm file), draws the overlays alone on the background instead, as
    /// on a locked output with no lock surface, so no client can take the dialog off the
    /// screen. `Ok(Some(e))`: the overlays alone were drawn after `e`; `Err`: not even they were.
    pub fn render_or_overlays(
        &mut self,
        space: &Space<Window>,
        layers: &[PlacedOverlay<'_>],
        background: [f32; 3],
    ) -> Result<Option<BackendError>, BackendError> {
        let Err(first) = self.render(space, layers, background) else {
            return Ok(None);
        };
        let kept: Vec<_> = self
            .outputs
            .iter_mut()
            .map(|vo| vo.locked.replace(None))
            .collect();
        let again = self.render(space, layers, background);
        for (vo, locked) in self.outputs.iter_mut().zip(kept) {
            vo.locked = locked;
        }
        again.map(|()| Some(first))
    }

    /// The pixels of output `index` as last drawn (headless only: a nested window's pixels are
    /// the host's).
    pub fn capture(&self, index: usize) -> Result<Capture, BackendError> {
        match &self.device {
            Device::Pixman(p) => p.capture(index),
            #[cfg(feature = "winit")]
            Device::Winit(_) => Err(BackendError::Unsupported {
                backend: "winit",
                what: "capture its output (its pixels are in the host's window)",
            }),
            #[cfg(feature = "udev")]
            Device::Udev(_) => Err(BackendError::Unsupported {
                backend: "udev",
                what: "capture its outputs (they are scanned out to the displays)",
            }),
        }
    }

    /// Changes output `index` to `mode` (`WxH` or `WxH*SCALE`), keeping its position.
    pub fn reconfigure(&mut self, index: usize, mode: &str) -> Result<(), BackendError> {
        let vo = self
            .outputs
            .get_mut(index)
            .ok_or(BackendError::NoOutput(index))?;
        let at = format!("{mode}@{},{}", vo.spec.x, vo.spec.y);
        let spec: OutputSpec = at.parse().map_err(|e: crate::config::SpecError| {
            BackendError::Buffer(mode.into(), e.to_string())
        })?;
        match &mut self.device {
            Device::Pixman(p) => p.resize(index, &spec)?,
            #[cfg(feature = "winit")]
            Device::Winit(_) => {
                return Err(BackendError::Unsupported {
                    backend: "winit",
                    what: "change its output's mode (resize the host window instead)",
                });
            }
            #[cfg(feature = "udev")]
            Device::Udev(_) => {
                return Err(BackendError::Unsupported {
                    backend: "udev",
                    what: "change an output's mode (it runs the display's preferred mode)",
                });
            }
        }
        vo.set_spec(spec);
        Ok(())
    }
}

/// An output's area in global logical coordinates.
pub(crate) fn logical_rect(spec: &OutputSpec) -> pcp_overlay::Rect {
    let (w, h) = spec.logical_size();
    pcp_overlay::Rect {
        x: spec.x,
        y: spec.y,
        w,
        h,
    }
}
