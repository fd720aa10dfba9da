//! The module as WLCS uses it, through its C ABI (the `wlcs_server_integration` struct of
//! function pointers WLCS looks up after loading `libpcp_wlcs.so`): servers started and stopped again and again (with and without a prompt waiting) leave no
//! thread, file descriptor or private folder behind; a client connected through
//! `create_client_socket` is served and sees every global the descriptor names, at its version;
//! fake touch points reach the compositor through the same ABI.

use std::ffi::CStr;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use wayland_client::globals::{GlobalListContents, registry_queue_init};
use wayland_client::protocol::wl_registry::WlRegistry;
use wayland_client::{Connection, Dispatch, QueueHandle};
use wlcs::ffi_display_server_api::{WlcsDisplayServer, WlcsServerIntegration};

unsafe extern "C" {
    /// The module's entry point, the symbol WLCS looks up in `libpcp_wlcs.so` (this test links
    /// the same crate, freshly built, as an rlib).
    static wlcs_server_integration: WlcsServerIntegration;
}

/// The module's entry point, as WLCS finds it.
struct Module {
    entry: &'static WlcsServerIntegration,
}

impl Module {
    fn load() -> Module {
        // SAFETY: the module's `#[no_mangle] static`, initialised at compile time.
        let entry = unsafe { &*std::ptr::addr_of!(wlcs_server_integration) };
        assert_eq!(entry.version, 1);
        Module { entry }
    }

    fn create(&self) -> Server {
        let create = self.entry.create_server.expect("create_server");
        let mut argv: [*const libc::c_char; 1] = [c"wlcs".as_ptr()];
        // SAFETY: argc and argv as WLCS passes them (its own name).
        let server = unsafe { create(1, argv.as_mut_ptr()) };
        assert!(!server.is_null());
        Server {
            server,
            destroy: self.entry.destroy_server.expect("destroy_server"),
        }
    }
}

/// One display server created by the module.
struct Server {
    server: *mut WlcsDisplayServer,
    destroy: unsafe extern "C" fn(*mut WlcsDisplayServer),
}

impl Server {
    fn api(&self) -> &WlcsDisplayServer {
        // SAFETY: the module made it and keeps it until destroy_server.
        unsafe { &*self.server }
    }

    fn start(&self) {
        // SAFETY: a live server.
        unsafe { (self.api().start.expect("start"))(self.server) }
    }

    fn stop(&self) {
        // SAFETY: a live server.
        unsafe { (self.api().stop.expect("stop"))(self.server) }
    }

    /// A client connection the compositor serves.
    fn client(&self) -> UnixStream {
        // SAFETY: a live server; the fd returned is ours to own.
        let fd = unsafe { (self.api().create_client_socket.expect("socket"))(self.server) };
        assert!(fd >= 0, "create_client_socket failed");
        // SAFETY: a fresh fd nothing else owns.
        UnixStream::from(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    /// Touches (x, y) with a fake touch point and lifts it.
    fn tap(&self, x: i32, y: i32) {
        // SAFETY: a live server; the touch is destroyed before returning.
        unsafe {
            let touch = (self.api().create_touch.expect("touch"))(self.server);
            assert!(!touch.is_null());
            ((*touch).touch_down.expect("down"))(touch, x, y);
            ((*touch).touch_move.expect("move"))(touch, x + 5, y + 5);
            ((*touch).touch_up.expect("up"))(touch);
            ((*touch).destroy.expect("destroy"))(touch);
        }
    }

    /// The descriptor's extensions.
    fn extensions(&self) -> Vec<(String, u32)> {
        // SAFETY: a live server; the descriptor and its names are static in the module.
        unsafe {
            let d = &*(self.api().get_descriptor.expect("descriptor"))(self.server);
            (0..d.num_extensions)
                .map(|i| {
                    let e = &*d.supported_extensions.add(i);
                    (
                        CStr::from_ptr(e.name).to_string_lossy().into_owned(),
                        e.version,
                    )
                })
                .collect()
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // SAFETY: made by create_server, destroyed once.
        unsafe { (self.destroy)(self.server) }
    }
}

struct Registry;

impl Dispatch<WlRegistry, GlobalListContents> for Registry {
    fn event(
        _: &mut Self,
        _: &WlRegistry,
        _: <WlRegistry as wayland_client::Proxy>::Event,
        _: &GlobalListContents,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
    }
}

/// The globals a client of `stream` sees: (interface, version).
fn globals(stream: UnixStream) -> Vec<(String, u32)> {
    let connection = Connection::from_socket(stream).expect("connect");
    let (list, _queue) = registry_queue_init::<Registry>(&connection).expect("registry");
    list.contents()
        .clone_list()
        .into_iter()
        .map(|g| (g.interface, g.version))
        .collect()
}

fn count(dir: &str) -> usize {
    std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0)
}

/// Threads, open fds, and the module's private folders in the places it makes them.
fn footprint() -> (usize, usize, usize) {
    let folders = [
        "/dev/shm".to_string(),
        std::env::temp_dir().display().to_string(),
    ]
    .into_iter()
    .chain(std::env::var("XDG_RUNTIME_DIR"))
    .map(|dir| {
        std::fs::read_dir(dir)
            .map(|d| {
                d.filter_map(Result::ok)
                    .filter(|e| e.file_name().to_string_lossy().starts_with("pcp-wlcs-"))
                    .count()
            })
            .unwrap_or(0)
    })
    .sum();
    (count("/proc/self/task"), count("/proc/self/fd"), folders)
}

/// Waits (a short while) for threads that end on their own after a stop to be gone.
fn settled(baseline: (usize, usize, usize)) -> (usize, usize, usize) {
    let start = Instant::now();
    loop {
        let now = footprint();
        if now == baseline || start.elapsed() > Duration::from_secs(10) {
            return now;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn cycles(module: &Module, n: usize) {
    let server = module.create();
    for _ in 0..n {
        server.start();
        let seen = globals(server.client());
        for (name, version) in server.extensions() {
            assert!(
                seen.contains(&(name.clone(), version)),
                "the descriptor names {name} v{version}, a client sees {seen:?}"
            );
        }
        server.tap(100, 100);
        server.stop();
    }
}

#[test]
fn starting_and_stopping_leaves_no_thread_fd_or_folder_behind() {
    let module = Module::load();
    // The first start loads what stays loaded for the process (fonts, keymaps, the logger).
    cycles(&module, 1);
    let baseline = settled(footprint());
    cycles(&module, 5);
    assert_eq!(
        settled(baseline),
        baseline,
        "(threads, fds, folders) after five starts and stops"
    );
    // SAFETY: set before the next server reads it; no other thread reads the environment now
    // (this is the only test in this binary).
    unsafe { std::env::set_var(pcp_wlcs::PROMPT_ENV, "1") };
    cycles(&module, 3);
    assert_eq!(
        settled(baseline),
        baseline,
        "(threads, fds, folders) after three starts and stops with a prompt waiting"
    );
}

// The crate defines the symbol; using it keeps it linked.
use pcp_wlcs as _;
