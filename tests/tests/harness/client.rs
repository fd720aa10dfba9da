//! What every hand-written Wayland test client repeats: a buffer of one colour in shared memory,
//! answering `xdg_wm_base` pings, and ignoring the events a test does not look at.

use std::io::Write;
use std::os::fd::{AsFd, FromRawFd, OwnedFd};

use wayland_client::protocol::wl_buffer::WlBuffer;
use wayland_client::protocol::wl_shm::{self, WlShm};
use wayland_client::protocol::wl_shm_pool::WlShmPool;
use wayland_client::{Dispatch, QueueHandle};

/// A `w` × `h` XRGB buffer filled with `pixel` (bytes in memory order: blue, green, red, x).
pub fn shm_buffer<D>(shm: &WlShm, qh: &QueueHandle<D>, w: i32, h: i32, pixel: [u8; 4]) -> WlBuffer
where
    D: Dispatch<WlShmPool, ()> + Dispatch<WlBuffer, ()> + 'static,
{
    let size = (w * h * 4) as usize;
    // SAFETY: memfd_create with a NUL-terminated name; the result is checked.
    let raw = unsafe { libc::memfd_create(c"pcp-test-buffer".as_ptr(), libc::MFD_CLOEXEC) };
    assert!(raw >= 0, "memfd_create failed");
    // SAFETY: a fresh descriptor nobody else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let mut file = std::fs::File::from(fd);
    file.write_all(&pixel.repeat(size / 4)).unwrap();
    let pool = shm.create_pool(file.as_fd(), size as i32, qh, ());
    pool.create_buffer(0, w, h, w * 4, wl_shm::Format::Xrgb8888, qh, ())
}

/// Implements `Dispatch` for the client state `$app` over each listed proxy type (with its user
/// data type), doing nothing with the events: `ignore_events!(App: WlSurface => (), …)`.
#[allow(unused_macros)]
macro_rules! ignore_events {
    ($app:ty: $($ty:ty => $data:ty),* $(,)?) => {$(
        impl wayland_client::Dispatch<$ty, $data> for $app {
            fn event(
                _: &mut $app,
                _: &$ty,
                _: <$ty as wayland_client::Proxy>::Event,
                _: &$data,
                _: &wayland_client::Connection,
                _: &wayland_client::QueueHandle<$app>,
            ) {
            }
        }
    )*};
}
#[allow(unused_imports)]
pub(crate) use ignore_events;

/// Implements `Dispatch<XdgWmBase, ()>` for the client state `$app`: every ping is answered (a
/// client that does not is one the compositor may treat as hung).
#[allow(unused_macros)]
macro_rules! answer_pings {
    ($app:ty) => {
        impl
            wayland_client::Dispatch<
                wayland_protocols::xdg::shell::client::xdg_wm_base::XdgWmBase,
                (),
            > for $app
        {
            fn event(
                _: &mut $app,
                wm: &wayland_protocols::xdg::shell::client::xdg_wm_base::XdgWmBase,
                event: wayland_protocols::xdg::shell::client::xdg_wm_base::Event,
                _: &(),
                _: &wayland_client::Connection,
                _: &wayland_client::QueueHandle<$app>,
            ) {
                if let wayland_protocols::xdg::shell::client::xdg_wm_base::Event::Ping { serial } =
                    event
                {
                    wm.pong(serial);
                }
            }
        }
    };
}
#[allow(unused_imports)]
pub(crate) use answer_pings;
