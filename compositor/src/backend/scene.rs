//! The scene one output shows, built once for any renderer: the windows and layer surfaces of
//! the space, a client's cursor or the themed one, a drag's icon, and above them the dialog and
//! the config notice; on a locked output, its lock surface and the overlays only.

use pcp_plugin::PlacedOverlay;
use smithay::backend::renderer::element::Kind;
use smithay::backend::renderer::element::memory::MemoryRenderBufferRenderElement;
use smithay::backend::renderer::element::surface::{
    WaylandSurfaceRenderElement, render_elements_from_surface_tree,
};
use smithay::backend::renderer::sync::SyncPoint;
use smithay::backend::renderer::{ImportAll, ImportMem, Renderer, Texture};
use smithay::desktop::{Space, Window};
use smithay::utils::{Logical, Physical, Point, Rectangle};
use wayland_server::protocol::wl_surface::WlSurface;

use super::{BackendError, VirtualOutput};
use crate::cursor::CursorDraw;

/// What [`draw_output`] drew.
pub(crate) struct Drawn {
    /// The rectangles drawn, `None` when nothing changed (the headless images need neither).
    #[cfg_attr(not(any(feature = "udev", feature = "winit")), allow(dead_code))]
    pub damage: Option<Vec<Rectangle<i32, Physical>>>,
    /// Signalled when the renderer has finished writing the buffer: a scan-out of it must wait
    /// for this (a software renderer has no implicit sync, and a display copies what it finds).
    /// Only scan-out (udev) waits: pixman draws synchronously, winit's swap waits itself.
    #[cfg_attr(not(feature = "udev"), allow(dead_code))]
    pub sync: SyncPoint,
}

/// Draws what output `index` shows with any renderer: the windows and layer surfaces in
/// `space`, and above them the `layers` placed on that output (the first in front).
#[allow(clippy::too_many_arguments)]
pub(crate) fn draw_output<R>(
    renderer: &mut R,
    framebuffer: &mut R::Framebuffer<'_>,
    vo: &mut VirtualOutput,
    index: usize,
    space: &Space<Window>,
    layers: &[PlacedOverlay<'_>],
    clear: [f32; 4],
    age: usize,
) -> Result<Drawn, BackendError>
where
    R: Renderer + ImportAll + ImportMem,
    R::TextureId: Send + Clone + Texture + 'static,
{
    // The dialog and the notice, as the plugin hands them to any renderer.
    let custom = pcp_plugin::render::elements(
        renderer,
        layers,
        index,
        (vo.spec.x, vo.spec.y).into(),
        vo.spec.scale,
    )
    .map_err(|e| BackendError::Render(vo.output.name(), e.to_string()))?;
    if let Some(lock) = vo.locked.clone() {
        return draw_locked(renderer, framebuffer, vo, custom, lock.as_ref(), clear, age);
    }
    // The themed cursor in front of all; a drag's icon and a client's cursor surface above the
    // windows and below the dialog.
    let mut custom: Vec<OverlayElement<R>> = custom.into_iter().map(Into::into).collect();
    let origin = Point::from((vo.spec.x, vo.spec.y));
    let physical = |at: Point<i32, Logical>| {
        (at - origin)
            .to_f64()
            .to_physical(vo.spec.scale)
            .to_i32_round::<i32>()
    };
    match &vo.cursor {
        Some(CursorDraw::Themed { buffer, at }) => {
            let element = MemoryRenderBufferRenderElement::from_buffer(
                renderer,
                physical(*at).to_f64(),
                buffer,
                None,
                None,
                None,
                Kind::Cursor,
            )
            .map_err(|e| BackendError::Render(vo.output.name(), format!("{e:?}")))?;
            custom.insert(0, OverlayElement::from(element));
        }
        Some(CursorDraw::Surface { surface, at }) => custom.extend(
            render_elements_from_surface_tree::<R, WaylandSurfaceRenderElement<R>>(
                renderer,
                surface,
                physical(*at),
                smithay::utils::Scale::from(vo.spec.scale),
                1.0,
                Kind::Cursor,
            )
            .into_iter()
            .map(OverlayElement::from),
        ),
        None => {}
    }
    if let Some((icon, at)) = &vo.drag_icon {
        let local = (*at - Point::from((vo.spec.x, vo.spec.y)))
            .to_f64()
            .to_physical(vo.spec.scale)
            .to_i32_round();
        custom.extend(
            render_elements_from_surface_tree::<R, WaylandSurfaceRenderElement<R>>(
                renderer,
                icon,
                local,
                smithay::utils::Scale::from(vo.spec.scale),
                1.0,
                Kind::Unspecified,
            )
            .into_iter()
            .map(OverlayElement::from),
        );
    }
    let result = smithay::desktop::space::render_output(
        &vo.output,
        renderer,
        framebuffer,
        1.0,
        age,
        [space],
        &custom,
        &mut vo.damage,
        clear,
    )
    .map_err(|e| BackendError::Render(vo.output.name(), format!("{e:?}")))?;
    Ok(Drawn {
        damage: result.damage.cloned(),
        sync: result.sync,
    })
}

smithay::backend::renderer::element::render_elements! {
    /// What is drawn above the windows: the dialog and the notice, and under them a drag's icon
    /// (or, on a locked output, its lock surface).
    OverlayElement<R> where R: ImportAll + ImportMem;
    Overlay=MemoryRenderBufferRenderElement<R>,
    Surface=WaylandSurfaceRenderElement<R>,
}

/// Draws a locked output: the overlays (`custom`, in front) above its lock surface, if it has
/// one yet, and nothing of the windows or layers.
#[allow(clippy::too_many_arguments)]
fn draw_locked<R>(
    renderer: &mut R,
    framebuffer: &mut R::Framebuffer<'_>,
    vo: &mut VirtualOutput,
    custom: Vec<MemoryRenderBufferRenderElement<R>>,
    lock: Option<&WlSurface>,
    clear: [f32; 4],
    age: usize,
) -> Result<Drawn, BackendError>
where
    R: Renderer + ImportAll + ImportMem,
    R::TextureId: Send + Clone + Texture + 'static,
{
    let mut elements: Vec<OverlayElement<R>> = custom.into_iter().map(Into::into).collect();
    if let Some(surface) = lock {
        let scale = smithay::utils::Scale::from(vo.spec.scale);
        elements.extend(
            render_elements_from_surface_tree::<R, WaylandSurfaceRenderElement<R>>(
                renderer,
                surface,
                (0, 0),
                scale,
                1.0,
                Kind::Unspecified,
            )
            .into_iter()
            .map(OverlayElement::from),
        );
    }
    let result = vo
        .damage
        .render_output(renderer, framebuffer, age, &elements, clear)
        .map_err(|e| BackendError::Render(vo.output.name(), format!("{e:?}")))?;
    Ok(Drawn {
        damage: result.damage.cloned(),
        sync: result.sync,
    })
}
