//! Render elements for any Smithay renderer: a buffer placed above every surface on one output
//! (the dialog; a host may place its own, such as a notice bar, the same way), drawn at that
//! output's scale into its global logical rectangle.

use smithay::backend::renderer::element::Kind;
use smithay::backend::renderer::element::memory::{
    MemoryRenderBuffer, MemoryRenderBufferRenderElement,
};
use smithay::backend::renderer::{ImportMem, Renderer, Texture};
use smithay::utils::{Logical, Point, Rectangle};

use crate::ConfirmUi;

/// A buffer placed on one output, above every surface.
pub struct PlacedOverlay<'a> {
    /// The index of its output in [`Surroundings::outputs`](crate::Surroundings).
    pub output: usize,
    /// Its top-left corner in global logical coordinates.
    pub location: Point<i32, Logical>,
    pub logical_size: (i32, i32),
    /// The buffer's size in pixels (drawn at the output's scale).
    pub buffer_size: (i32, i32),
    pub buffer: &'a MemoryRenderBuffer,
}

/// The elements of `overlays` that are on output `index`, whose top-left corner is `origin`
/// (global logical) and whose scale is `scale`: the first in front. Put them before the
/// windows' elements so they are drawn above everything.
pub fn elements<R>(
    renderer: &mut R,
    overlays: &[PlacedOverlay<'_>],
    index: usize,
    origin: Point<i32, Logical>,
    scale: f64,
) -> Result<Vec<MemoryRenderBufferRenderElement<R>>, R::Error>
where
    R: Renderer + ImportMem,
    R::TextureId: Send + Clone + Texture + 'static,
{
    let mut out = Vec::new();
    for o in overlays.iter().filter(|o| o.output == index) {
        // Output-local logical position → physical, like Space does for windows.
        let local = (
            f64::from(o.location.x - origin.x) * scale,
            f64::from(o.location.y - origin.y) * scale,
        );
        out.push(MemoryRenderBufferRenderElement::from_buffer(
            renderer,
            local,
            o.buffer,
            None,
            // The whole buffer (drawn at the output's scale) into the logical rectangle.
            Some(Rectangle::from_size(
                (f64::from(o.buffer_size.0), f64::from(o.buffer_size.1)).into(),
            )),
            Some(o.logical_size.into()),
            Kind::Unspecified,
        )?);
    }
    Ok(out)
}

impl ConfirmUi {
    /// The dialog's render element for output `index` (of [`Surroundings::outputs`](crate::Surroundings::outputs)), whose
    /// top-left corner is `origin` and whose scale is `scale`; empty when it is elsewhere.
    pub fn render_elements<R>(
        &self,
        renderer: &mut R,
        index: usize,
        origin: Point<i32, Logical>,
        scale: f64,
    ) -> Result<Vec<MemoryRenderBufferRenderElement<R>>, R::Error>
    where
        R: Renderer + ImportMem,
        R::TextureId: Send + Clone + Texture + 'static,
    {
        let placed: Vec<PlacedOverlay<'_>> = self.placed().into_iter().collect();
        elements(renderer, &placed, index, origin, scale)
    }

    /// The dialog's render elements for `output` as it is mapped in `space` (at the output's
    /// scale; empty when the dialog is elsewhere): for a host whose
    /// [`Surroundings`](crate::Surroundings) are [`Surroundings::of_space`](crate::Surroundings::of_space).
    /// Put them in front of everything else the output draws.
    pub fn render_elements_on<R, E>(
        &self,
        renderer: &mut R,
        space: &smithay::desktop::Space<E>,
        output: &smithay::output::Output,
    ) -> Result<Vec<MemoryRenderBufferRenderElement<R>>, R::Error>
    where
        R: Renderer + ImportMem,
        R::TextureId: Send + Clone + Texture + 'static,
        E: smithay::desktop::space::SpaceElement + PartialEq,
    {
        let (Some(geometry), Some(placement)) = (space.output_geometry(output), self.placement())
        else {
            return Ok(Vec::new());
        };
        let rect = pcp_overlay::Rect {
            x: geometry.loc.x,
            y: geometry.loc.y,
            w: geometry.size.w,
            h: geometry.size.h,
        };
        if placement.output_rect != rect {
            return Ok(Vec::new());
        }
        let scale = output.current_scale().fractional_scale();
        self.render_elements(renderer, placement.output, geometry.loc, scale)
    }
}
