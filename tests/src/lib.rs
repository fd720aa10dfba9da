//! The headless virtual-output harness: a real compositor with virtual outputs and real Wayland
//! clients, driven from tests. The compositor issue fills it.
