//! pcp-wlcs: the reference compositor (pcp-compositor, headless, with the plugin) as a display
//! server module of WLCS, Mir's Wayland Conformance Test Suite. WLCS loads `libpcp_wlcs.so`
//! through the three C structs of its integration ABI (wrapped by the `wlcs` crate), starts and
//! stops a server for every test, connects its in-process clients over socket pairs, places
//! windows where a test wants them, and drives a fake pointer and fake touch devices (each a
//! touch point of its own). `cargo xtask wlcs` runs it; docs/wlcs.md says what passes.
//!
//! [`server`] runs each test's compositor on a thread of its own from a private folder; with
//! `PCP_WLCS_PROMPT=1` in the environment a real intent waits in the dialog throughout each test
//! ([`prompt`]).

pub mod prompt;
pub mod server;

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Once};

use pcp_compositor::host::DeviceEvent;
use wayland_sys::client::{wl_display, wl_display_get_fd, wl_proxy, wl_proxy_get_id};
use wayland_sys::common::{wl_fixed_t, wl_fixed_to_double};
use wlcs::ffi_display_server_api::{
    WlcsExtensionDescriptor, WlcsIntegrationDescriptor, WlcsServerIntegration,
};
use wlcs::ffi_wrappers::wlcs_server;
use wlcs::{Wlcs, extension_list, wlcs_server_integration};

use crate::server::{Command, Link, Running, ServerOptions};

wlcs_server_integration!(PcpDisplayServer);

/// The environment variable that puts a prompt in the dialog during every test (`1`).
pub const PROMPT_ENV: &str = "PCP_WLCS_PROMPT";
/// The environment variable with the log filter (`tracing`'s syntax; `warn` by default).
pub const LOG_ENV: &str = "PCP_WLCS_LOG";

/// The globals the compositor offers that WLCS knows, at the versions it offers them (a test
/// compares this with what a client sees). WLCS skips the tests of every other extension
/// (`wl_shell`, `zxdg_shell_v6`, relative pointer, pointer constraints, text input…).
static EXTENSIONS: &[WlcsExtensionDescriptor] = extension_list!(
    ("wl_compositor", 5),
    ("wl_subcompositor", 1),
    ("wl_data_device_manager", 3),
    ("wl_seat", 9),
    ("wl_output", 4),
    ("wl_shm", 2),
    ("xdg_wm_base", 6),
    ("zxdg_output_manager_v1", 3),
    ("zwlr_layer_shell_v1", 4),
    ("zwp_primary_selection_device_manager_v1", 1),
    ("wp_viewporter", 1),
    ("xdg_activation_v1", 1),
    ("zxdg_decoration_manager_v1", 1),
);

static DESCRIPTOR: WlcsIntegrationDescriptor = WlcsIntegrationDescriptor {
    version: 1,
    num_extensions: EXTENSIONS.len(),
    supported_extensions: EXTENSIONS.as_ptr(),
};

/// The display server WLCS creates once and starts and stops for each test.
pub struct PcpDisplayServer {
    running: Option<Running>,
    options: ServerOptions,
    /// The next touch device's slot: each fake touch device is one touch point.
    next_slot: Arc<AtomicU32>,
}

impl PcpDisplayServer {
    fn link(&self) -> Option<Link> {
        self.running.as_ref().map(Running::link)
    }
}

fn init_logging() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let filter = tracing_subscriber::EnvFilter::try_from_env(LOG_ENV)
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
        // A host that set its own subscriber keeps it.
        let _ = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .try_init();
    });
}

impl Wlcs for PcpDisplayServer {
    type Pointer = FakePointer;
    type Touch = FakeTouch;

    fn new() -> Self {
        init_logging();
        let prompt = std::env::var(PROMPT_ENV).is_ok_and(|v| v == "1");
        PcpDisplayServer {
            running: None,
            options: ServerOptions {
                manifests: PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                    .join("../../assets/capabilities.d"),
                prompt,
            },
            next_slot: Arc::new(AtomicU32::new(0)),
        }
    }

    fn start(&mut self) {
        if let Some(old) = self.running.take() {
            old.stop();
        }
        match Running::start(self.options.clone()) {
            Ok(running) => self.running = Some(running),
            Err(e) => tracing::error!("the compositor did not start: {e}"),
        }
    }

    fn stop(&mut self) {
        if let Some(running) = self.running.take() {
            running.stop();
        }
    }

    fn create_client_socket(&self) -> std::io::Result<OwnedFd> {
        let running = self
            .running
            .as_ref()
            .ok_or_else(|| std::io::Error::other("the compositor is not running"))?;
        let (theirs, ours) = UnixStream::pair()?;
        let key = theirs.as_raw_fd();
        running
            .run(Command::Client { stream: ours, key })
            .map_err(std::io::Error::other)?;
        Ok(theirs.into())
    }

    #[allow(
        clippy::not_unsafe_ptr_arg_deref,
        reason = "the `wlcs` crate's trait declares it safe; WLCS passes only live pointers"
    )]
    fn position_window_absolute(
        &self,
        display: *mut wl_display,
        surface: *mut wl_proxy,
        x: i32,
        y: i32,
    ) {
        let Some(running) = self.running.as_ref() else {
            return;
        };
        // SAFETY: WLCS passes its client's live `wl_display` and one of its live proxies; both
        // calls only read them.
        let (key, surface) = unsafe { (wl_display_get_fd(display), wl_proxy_get_id(surface)) };
        if let Err(e) = running.run(Command::PlaceWindow { key, surface, x, y }) {
            tracing::warn!("the window was not placed: {e}");
        }
    }

    fn create_pointer(&mut self) -> Option<FakePointer> {
        Some(FakePointer { link: self.link()? })
    }

    fn create_touch(&mut self) -> Option<FakeTouch> {
        Some(FakeTouch {
            link: self.link()?,
            slot: self.next_slot.fetch_add(1, Ordering::Relaxed),
        })
    }

    fn get_descriptor(&self) -> &WlcsIntegrationDescriptor {
        &DESCRIPTOR
    }
}

fn fixed(v: wl_fixed_t) -> f64 {
    wl_fixed_to_double(v)
}

/// The seat's pointer, driven by WLCS.
pub struct FakePointer {
    link: Link,
}

impl wlcs::Pointer for FakePointer {
    fn move_absolute(&mut self, x: wl_fixed_t, y: wl_fixed_t) {
        let (x, y) = (fixed(x), fixed(y));
        self.link.device(DeviceEvent::PointerMotion { x, y });
    }

    fn move_relative(&mut self, dx: wl_fixed_t, dy: wl_fixed_t) {
        let (dx, dy) = (fixed(dx), fixed(dy));
        self.link
            .device(DeviceEvent::PointerMotionRelative { dx, dy });
    }

    fn button_up(&mut self, button: i32) {
        self.button(button, false);
    }

    fn button_down(&mut self, button: i32) {
        self.button(button, true);
    }
}

impl FakePointer {
    fn button(&self, button: i32, pressed: bool) {
        match u32::try_from(button) {
            Ok(code) => self
                .link
                .device(DeviceEvent::PointerButton { code, pressed }),
            Err(_) => tracing::warn!("button code {button} is not an evdev code: ignored"),
        }
    }
}

/// One touch point, driven by WLCS: a slot of its own.
pub struct FakeTouch {
    link: Link,
    slot: u32,
}

/// A touch coordinate as WLCS passes it. `touch.h` declares `wl_fixed_t`, but WLCS's own
/// `Touch::down_at` and `move_to` hand their `int` pixels straight through, and Mir's example
/// integration reads them as `int`: they are whole logical pixels, not 24.8 fixed point.
fn touch_coordinate(v: wl_fixed_t) -> f64 {
    f64::from(v)
}

impl wlcs::Touch for FakeTouch {
    fn touch_down(&mut self, x: wl_fixed_t, y: wl_fixed_t) {
        let (x, y, slot) = (touch_coordinate(x), touch_coordinate(y), self.slot);
        self.link.device(DeviceEvent::TouchDown { slot, x, y });
    }

    fn touch_move(&mut self, x: wl_fixed_t, y: wl_fixed_t) {
        let (x, y, slot) = (touch_coordinate(x), touch_coordinate(y), self.slot);
        self.link.device(DeviceEvent::TouchMotion { slot, x, y });
    }

    fn touch_up(&mut self) {
        let slot = self.slot;
        self.link.device(DeviceEvent::TouchUp { slot });
    }
}
