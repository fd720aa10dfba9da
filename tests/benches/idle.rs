//! How often the compositor wakes up when nothing happens: the reference compositor runs its own
//! event loop as the binary does (frame timer, config watch, device probe, audit writer), and
//! the wake-ups of its threads (voluntary and involuntary context switches: the process's from
//! `getrusage`, less the client and measuring threads' from `/proc/self/task`) are counted over a
//! window (`PCP_IDLE_SECONDS`, default 30):
//! 1. one output, no client;
//! 2. one client window that draws once and then waits;
//! 3. a privileged prompt up, counting down (its animations settled).
//!
//! Not a criterion benchmark: it counts wake-ups, not time. Run by `cargo xtask bench`.

use std::collections::HashSet;
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pcp_compositor::startup;
use pcp_compositor::state::{Compositor, Socket};
use pcp_protocol::generated::client::pcp_intent_manager_v1::PcpIntentManagerV1;
use pcp_protocol::generated::client::pcp_intent_v1::PcpIntentV1;
use wayland_client::globals::{GlobalListContents, registry_queue_init};
use wayland_client::protocol::wl_buffer::WlBuffer;
use wayland_client::protocol::wl_compositor::WlCompositor;
use wayland_client::protocol::wl_registry::WlRegistry;
use wayland_client::protocol::wl_shm::{self, WlShm};
use wayland_client::protocol::wl_shm_pool::WlShmPool;
use wayland_client::protocol::wl_surface::WlSurface;
use wayland_client::{Connection, Dispatch, Proxy, QueueHandle};
use wayland_protocols::xdg::shell::client::xdg_surface::{self, XdgSurface};
use wayland_protocols::xdg::shell::client::xdg_toplevel::XdgToplevel;
use wayland_protocols::xdg::shell::client::xdg_wm_base::{self, XdgWmBase};

/// Threads whose wake-ups are not the compositor's.
type Excluded = Arc<Mutex<HashSet<i32>>>;

fn gettid() -> i32 {
    // SAFETY: gettid takes nothing and cannot fail.
    unsafe { libc::gettid() }
}

/// Context switches of this process (threads that ended included: `getrusage`), less those of
/// the excluded threads (alive for the whole count).
fn wakeups(excluded: &Excluded) -> u64 {
    // SAFETY: a zeroed rusage is a valid out-parameter for getrusage.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_SELF with a pointer to a local rusage.
    assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) }, 0);
    let all = (usage.ru_nvcsw + usage.ru_nivcsw) as u64;
    let excluded = excluded.lock().unwrap().clone();
    let theirs: u64 = excluded.iter().map(|tid| switches_of(*tid)).sum();
    all.saturating_sub(theirs)
}

/// Context switches of every live thread of this process not excluded, by thread name.
fn by_thread(excluded: &Excluded) -> std::collections::BTreeMap<String, u64> {
    let excluded = excluded.lock().unwrap().clone();
    let mut counts = std::collections::BTreeMap::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return counts;
    };
    for task in tasks.flatten() {
        let Some(tid) = task
            .file_name()
            .to_str()
            .and_then(|t| t.parse::<i32>().ok())
        else {
            continue;
        };
        if excluded.contains(&tid) {
            continue;
        }
        let name = std::fs::read_to_string(format!("/proc/self/task/{tid}/comm"))
            .map(|n| n.trim().to_string())
            .unwrap_or_default();
        *counts.entry(name).or_insert(0) += switches_of(tid);
    }
    counts
}

/// Voluntary and involuntary context switches of thread `tid` of this process.
fn switches_of(tid: i32) -> u64 {
    let Ok(status) = std::fs::read_to_string(format!("/proc/self/task/{tid}/status")) else {
        return 0;
    };
    status
        .lines()
        .filter(|l| {
            l.starts_with("voluntary_ctxt_switches:")
                || l.starts_with("nonvoluntary_ctxt_switches:")
        })
        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .sum()
}

struct Client;

/// A client that maps one window with a 64×64 buffer, optionally asks for `settings.change`
/// (a privileged prompt), and then only waits.
fn run_client(socket: PathBuf, ask: bool, excluded: Excluded) {
    excluded.lock().unwrap().insert(gettid());
    let conn = Connection::from_socket(UnixStream::connect(socket).unwrap()).unwrap();
    let (globals, mut queue) = registry_queue_init::<Client>(&conn).unwrap();
    let qh = queue.handle();
    let compositor: WlCompositor = globals.bind(&qh, 4..=5, ()).unwrap();
    let wm: XdgWmBase = globals.bind(&qh, 1..=6, ()).unwrap();
    let shm: WlShm = globals.bind(&qh, 1..=1, ()).unwrap();
    let surface = compositor.create_surface(&qh, ());
    let xdg = wm.get_xdg_surface(&surface, &qh, ());
    let toplevel = xdg.get_toplevel(&qh, ());
    toplevel.set_title("idle".into());
    surface.commit();
    queue.roundtrip(&mut Client).unwrap();
    let (w, h) = (64, 64);
    let file = tempfile::tempfile().unwrap();
    file.set_len((w * h * 4) as u64).unwrap();
    let pool = shm.create_pool(file.as_fd(), w * h * 4, &qh, ());
    let buffer = pool.create_buffer(0, w, h, w * 4, wl_shm::Format::Argb8888, &qh, ());
    surface.attach(Some(&buffer), 0, 0);
    surface.damage_buffer(0, 0, w, h);
    surface.commit();
    queue.roundtrip(&mut Client).unwrap();
    if ask {
        let manager: PcpIntentManagerV1 = globals.bind(&qh, 1..=2, ()).unwrap();
        let _intent = manager.submit(
            "settings.change".into(),
            r#"{"key":"idle","value":"bench"}"#.into(),
            None,
            None,
            &qh,
            (),
        );
        queue.roundtrip(&mut Client).unwrap();
    }
    while queue.blocking_dispatch(&mut Client).is_ok() {}
}

/// Counts the compositor's wake-ups for `seconds` on this thread's loop, after `settle`.
fn measure(
    compositor: &mut Compositor,
    socket: &Path,
    excluded: &Excluded,
    settle: Duration,
    seconds: u64,
) -> u64 {
    let done = Arc::new(AtomicBool::new(false));
    let counted = Arc::new(Mutex::new(None));
    let socket = socket.to_path_buf();
    let watcher = {
        let (done, counted, excluded) = (done.clone(), counted.clone(), excluded.clone());
        std::thread::spawn(move || {
            excluded.lock().unwrap().insert(gettid());
            std::thread::sleep(settle);
            let before = wakeups(&excluded);
            let threads_before = by_thread(&excluded);
            std::thread::sleep(Duration::from_secs(seconds));
            let after = wakeups(&excluded);
            let threads_after = by_thread(&excluded);
            let busiest: Vec<String> = threads_after
                .iter()
                .map(|(name, n)| {
                    (
                        name,
                        n - threads_before.get(name).copied().unwrap_or(0).min(*n),
                    )
                })
                .filter(|(_, n)| *n > 0)
                .map(|(name, n)| format!("{name} {n}"))
                .collect();
            println!("    by thread: {}", busiest.join(", "));
            *counted.lock().unwrap() = Some(after.saturating_sub(before));
            done.store(true, Ordering::SeqCst);
            // Wake the loop, which sleeps with no timeout: a connection is an event.
            let _ = UnixStream::connect(socket);
        })
    };
    while !done.load(Ordering::SeqCst) {
        compositor.dispatch(None).unwrap();
    }
    watcher.join().unwrap();
    // The waking connection is left to the compositor, which drops it when it closes.
    counted.lock().unwrap().take().unwrap()
}

fn main() {
    // `cargo bench` passes `--bench`; a filter that is not ours skips this bench.
    let filter = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .unwrap_or_default();
    if !"idle wake-ups".contains(filter.as_str()) {
        return;
    }
    let seconds: u64 = std::env::var("PCP_IDLE_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    let dir = tempfile::tempdir().unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets");
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[manifests]\ndirs = [{:?}]\n[state]\npath = {:?}\n[overlay]\nsystem_fonts = false\n",
            assets.join("capabilities.d"),
            dir.path().join("state.sqlite3"),
        ),
    )
    .unwrap();
    let loaded = startup::load(Some(&config)).unwrap();
    let socket = dir.path().join("wayland-idle");
    let options = startup::options(
        loaded,
        vec!["1280x720".parse().unwrap()],
        Some(Socket::Path(socket.clone())),
        Some(config),
        true,
    )
    .unwrap();
    let mut compositor = Compositor::new(options).unwrap();
    let excluded: Excluded = Arc::default();
    let settle = Duration::from_secs(3);

    let empty = measure(&mut compositor, &socket, &excluded, settle, seconds);
    let window = {
        let (path, threads) = (socket.clone(), excluded.clone());
        std::thread::spawn(move || run_client(path, false, threads));
        measure(&mut compositor, &socket, &excluded, settle, seconds)
    };
    let prompt = {
        let (path, threads) = (socket.clone(), excluded.clone());
        std::thread::spawn(move || run_client(path, true, threads));
        // The prompt's own timeout must outlast the window: measured while it counts down.
        measure(&mut compositor, &socket, &excluded, settle, seconds.min(20))
    };
    let prompt_seconds = seconds.min(20);
    println!("idle wake-ups (compositor threads, {seconds} s windows):");
    println!(
        "  no client:          {empty:>5} ({:.2}/s)",
        empty as f64 / seconds as f64
    );
    println!(
        "  one idle window:    {window:>5} ({:.2}/s)",
        window as f64 / seconds as f64
    );
    println!(
        "  a prompt counting:  {prompt:>5} ({:.2}/s over {prompt_seconds} s)",
        prompt as f64 / prompt_seconds as f64
    );
    // The clients block on their connections: leave without tearing them down one by one.
    std::process::exit(0);
}

impl Dispatch<XdgWmBase, ()> for Client {
    fn event(
        _: &mut Client,
        wm: &XdgWmBase,
        event: xdg_wm_base::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Client>,
    ) {
        if let xdg_wm_base::Event::Ping { serial } = event {
            wm.pong(serial);
        }
    }
}

impl Dispatch<XdgSurface, ()> for Client {
    fn event(
        _: &mut Client,
        xdg: &XdgSurface,
        event: xdg_surface::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Client>,
    ) {
        if let xdg_surface::Event::Configure { serial } = event {
            xdg.ack_configure(serial);
        }
    }
}

macro_rules! ignore {
    ($($ty:ty => $data:ty),* $(,)?) => {$(
        impl Dispatch<$ty, $data> for Client {
            fn event(
                _: &mut Client,
                _: &$ty,
                _: <$ty as Proxy>::Event,
                _: &$data,
                _: &Connection,
                _: &QueueHandle<Client>,
            ) {
            }
        }
    )*};
}

ignore!(
    WlRegistry => GlobalListContents,
    WlCompositor => (),
    WlSurface => (),
    WlShm => (),
    WlShmPool => (),
    WlBuffer => (),
    XdgToplevel => (),
    PcpIntentManagerV1 => (),
    PcpIntentV1 => (),
);
