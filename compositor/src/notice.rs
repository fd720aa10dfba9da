//! The on-screen notice a refused config reload leaves on every output: a bar across the top with
//! the configured sentence and the error, drawn with the overlay crate's fonts into a buffer per
//! output size and scale.

use pcp_overlay::text::TextStyle;
use pcp_overlay::{Fonts, IRect, Rgba};
use smithay::backend::allocator::Fourcc;
use smithay::backend::renderer::element::memory::MemoryRenderBuffer;
use smithay::utils::Transform;

/// The bar's colours and text size (logical pixels).
const BAR: Rgba = Rgba {
    r: 0x9b,
    g: 0x1c,
    b: 0x1c,
    a: 255,
};
const TEXT: Rgba = Rgba {
    r: 255,
    g: 255,
    b: 255,
    a: 255,
};
const TEXT_SIZE: f32 = 14.0;
const PADDING: f32 = 8.0;
const MAX_LINES: usize = 3;

/// One drawn bar.
pub struct NoticeBuffer {
    pub key: (i32, u64),
    pub buffer: MemoryRenderBuffer,
    /// Pixels.
    pub size: (i32, i32),
    /// Logical size.
    pub logical: (i32, i32),
}

/// The notice text, if any, and its buffers.
pub struct Notice {
    fonts: Fonts,
    text: Option<String>,
    buffers: Vec<NoticeBuffer>,
}

impl Notice {
    /// A notice drawing with the bundled font only (it must work when the config does not).
    pub fn new() -> Result<Notice, pcp_overlay::OverlayError> {
        Ok(Notice {
            fonts: Fonts::with_files::<&str>(&[])?,
            text: None,
            buffers: Vec::new(),
        })
    }

    pub fn text(&self) -> Option<&str> {
        self.text.as_deref()
    }

    /// Shows `text` (or takes the notice down with `None`).
    pub fn set(&mut self, text: Option<String>) {
        if self.text != text {
            self.text = text;
            self.buffers.clear();
        }
    }

    /// The bar for an output `logical_width` wide at `scale`, if drawn.
    pub fn get(&self, logical_width: i32, scale: f64) -> Option<&NoticeBuffer> {
        let key = (logical_width, scale.to_bits());
        self.buffers.iter().find(|b| b.key == key)
    }

    /// Draws the bar for an output `logical_width` wide at `scale` unless it is drawn already.
    pub fn prepare(&mut self, logical_width: i32, scale: f64) {
        let Some(text) = self.text.clone() else {
            return;
        };
        let key = (logical_width, scale.to_bits());
        if self.buffers.iter().any(|b| b.key == key) {
            return;
        }
        let s = scale as f32;
        let width = (logical_width as f32 * s).round().max(1.0);
        let style = TextStyle {
            size: TEXT_SIZE * s,
            line_height: 1.3,
            bold: true,
            max_lines: MAX_LINES,
            middle_ellipsis: false,
            align: None,
        };
        let pad = (PADDING * s).round();
        let shaped = self
            .fonts
            .shape(&text, &style, (width - 2.0 * pad).max(1.0));
        let height = (shaped.height as f32 + 2.0 * pad).round().max(1.0);
        let Some(mut pixmap) = tiny_skia::Pixmap::new(width as u32, height as u32) else {
            tracing::warn!("cannot allocate the notice bar");
            return;
        };
        pixmap.fill(BAR.to_skia());
        let clip = IRect::new(0, 0, width as i32, height as i32);
        self.fonts
            .draw(&shaped, &mut pixmap, pad as i32, pad as i32, TEXT, clip);
        let size = (pixmap.width() as i32, pixmap.height() as i32);
        let buffer = MemoryRenderBuffer::from_slice(
            pixmap.data(),
            Fourcc::Abgr8888,
            size,
            1,
            Transform::Normal,
            None,
        );
        let logical = (logical_width, (f64::from(size.1) / scale).round() as i32);
        self.buffers.push(NoticeBuffer {
            key,
            buffer,
            size,
            logical,
        });
    }
}
