//! The headless backend's device: one offscreen pixman image per virtual output, drawn by
//! Smithay's pixman renderer through the shared scene in [`backend`](crate::backend), with
//! per-output capture to RGBA and PNG. Images come and go with the outputs (hotplug).

use pcp_plugin::PlacedOverlay;
use smithay::backend::allocator::Fourcc;
use smithay::backend::renderer::pixman::PixmanRenderer;
use smithay::backend::renderer::{Bind, Offscreen};
use smithay::desktop::{Space, Window};
use smithay::reexports::pixman::Image;

pub use crate::backend::{Backend as Headless, BackendError, Capture, VirtualOutput};
use crate::config::OutputSpec;

/// The pixman renderer and one image per output (same order as the outputs).
pub(crate) struct Pixman {
    renderer: PixmanRenderer,
    images: Vec<Image<'static, 'static>>,
}

impl Pixman {
    pub(crate) fn new() -> Result<Pixman, BackendError> {
        let renderer =
            PixmanRenderer::new().map_err(|e| BackendError::Renderer("pixman", e.to_string()))?;
        Ok(Pixman {
            renderer,
            images: Vec::new(),
        })
    }

    fn image(&mut self, spec: &OutputSpec) -> Result<Image<'static, 'static>, BackendError> {
        self.renderer
            .create_buffer(Fourcc::Argb8888, (spec.width, spec.height).into())
            .map_err(|e| BackendError::Buffer(spec.to_string(), e.to_string()))
    }

    /// Adds the image of the next output.
    pub(crate) fn add_image(&mut self, spec: &OutputSpec) -> Result<(), BackendError> {
        let image = self.image(spec)?;
        self.images.push(image);
        Ok(())
    }

    /// Drops output `index`'s image (the output was unplugged); later images move down one.
    pub(crate) fn remove_image(&mut self, index: usize) -> Result<(), BackendError> {
        if index >= self.images.len() {
            return Err(BackendError::NoOutput(index));
        }
        self.images.remove(index);
        Ok(())
    }

    /// Replaces output `index`'s image with one of `spec`'s size.
    pub(crate) fn resize(&mut self, index: usize, spec: &OutputSpec) -> Result<(), BackendError> {
        let image = self.image(spec)?;
        let slot = self
            .images
            .get_mut(index)
            .ok_or(BackendError::NoOutput(index))?;
        *slot = image;
        Ok(())
    }

    /// Draws every output into its image.
    pub(crate) fn render(
        &mut self,
        outputs: &mut [VirtualOutput],
        space: &Space<Window>,
        layers: &[PlacedOverlay<'_>],
        clear: [f32; 4],
    ) -> Result<(), BackendError> {
        for (i, (vo, image)) in outputs.iter_mut().zip(&mut self.images).enumerate() {
            let mut target = self
                .renderer
                .bind(image)
                .map_err(|e| BackendError::Render(vo.output.name(), e.to_string()))?;
            crate::backend::draw_output(
                &mut self.renderer,
                &mut target,
                vo,
                i,
                space,
                layers,
                clear,
                0,
            )?;
        }
        Ok(())
    }

    /// The pixels of output `index` as last drawn.
    pub(crate) fn capture(&self, index: usize) -> Result<Capture, BackendError> {
        let image = self
            .images
            .get(index)
            .ok_or(BackendError::NoOutput(index))?;
        let (w, h) = (image.width(), image.height());
        let stride = image.stride();
        // SAFETY: the image owns `stride × height` bytes of ARGB8888 that nothing else writes
        // while we hold `&self` (the renderer only draws through `&mut self`).
        let bytes = unsafe { std::slice::from_raw_parts(image.data() as *const u8, stride * h) };
        let mut rgba = Vec::with_capacity(w * h * 4);
        for row in bytes.chunks_exact(stride).take(h) {
            for px in row[..w * 4].chunks_exact(4) {
                // Little-endian ARGB8888 is B, G, R, A in memory; outputs are opaque.
                rgba.extend_from_slice(&[px[2], px[1], px[0], 255]);
            }
        }
        Ok(Capture {
            width: w as u32,
            height: h as u32,
            rgba,
        })
    }
}
