//! A display's preferred mode changing while it stays connected, as QEMU can make it: a VNC
//! client asks QEMU's VNC server (on the first GPU's console) for another desktop size (RFB
//! `SetDesktopSize`, the extended-desktop-size extension). QEMU hands the size to the virtio-gpu
//! head as its new preferred size; the guest's driver reads the new display info and EDID and
//! sends a hotplug uevent with the connector still connected — what a monitor whose mode list
//! changed does. This is the client side of that one request, nothing more.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, bail};

/// RFB pseudo-encodings the client announces: extended desktop size (needed for
/// `SetDesktopSize`) and plain desktop size.
const EXTENDED_DESKTOP_SIZE: i32 = -308;
const DESKTOP_SIZE: i32 = -223;
/// RFB client message `SetDesktopSize`.
const SET_DESKTOP_SIZE: u8 = 251;
/// The reply's reason "asked by this client", and the statuses that mean it was taken: 0 done,
/// 4 QEMU's "forwarded to the guest".
const REASON_THIS_CLIENT: u16 = 1;
const TAKEN: [u16; 2] = [0, 4];

fn read_n(s: &mut UnixStream, n: usize) -> Result<Vec<u8>> {
    let mut buf = vec![0; n];
    s.read_exact(&mut buf)
        .context("QEMU's VNC server closed or stalled")?;
    Ok(buf)
}

fn u16_at(b: &[u8], i: usize) -> u16 {
    u16::from_be_bytes([b[i], b[i + 1]])
}

fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

/// Asks QEMU's VNC server at `socket` to make the first GPU's head `size`; returns once QEMU
/// says it passed the request on.
pub fn request_size(socket: &Path, size: (u16, u16)) -> Result<()> {
    let mut s = UnixStream::connect(socket)
        .with_context(|| format!("cannot connect to QEMU's VNC socket {}", socket.display()))?;
    s.set_read_timeout(Some(Duration::from_secs(20)))?;
    // Version 3.8, security type None, a shared session.
    let version = read_n(&mut s, 12)?;
    if !version.starts_with(b"RFB 003.") {
        bail!("QEMU's VNC server greeted with {version:?}");
    }
    s.write_all(b"RFB 003.008\n")?;
    let count = read_n(&mut s, 1)?[0];
    if count == 0 {
        let len = u32_at(&read_n(&mut s, 4)?, 0) as usize;
        let why = read_n(&mut s, len.min(4096))?;
        bail!(
            "QEMU's VNC server refused: {}",
            String::from_utf8_lossy(&why)
        );
    }
    let types = read_n(&mut s, usize::from(count))?;
    if !types.contains(&1) {
        bail!("QEMU's VNC server offers no unauthenticated access (types {types:?})");
    }
    s.write_all(&[1])?;
    if u32_at(&read_n(&mut s, 4)?, 0) != 0 {
        bail!("QEMU's VNC server did not accept the connection");
    }
    s.write_all(&[1])?;
    // ServerInit: size, pixel format, name.
    let init = read_n(&mut s, 24)?;
    let name_len = u32_at(&init, 20) as usize;
    read_n(&mut s, name_len.min(4096))?;

    let mut encodings = vec![2u8, 0, 0, 2];
    for e in [EXTENDED_DESKTOP_SIZE, DESKTOP_SIZE] {
        encodings.extend_from_slice(&e.to_be_bytes());
    }
    s.write_all(&encodings)?;
    let mut request = vec![SET_DESKTOP_SIZE, 0];
    request.extend_from_slice(&size.0.to_be_bytes());
    request.extend_from_slice(&size.1.to_be_bytes());
    // One screen: id 0 at 0,0 of the whole size, no flags.
    request.extend_from_slice(&[1, 0]);
    request.extend_from_slice(&0u32.to_be_bytes());
    request.extend_from_slice(&[0, 0, 0, 0]);
    request.extend_from_slice(&size.0.to_be_bytes());
    request.extend_from_slice(&size.1.to_be_bytes());
    request.extend_from_slice(&0u32.to_be_bytes());
    s.write_all(&request)?;

    // Server messages until the answer to this request: framebuffer updates carrying desktop
    // size rectangles (no pixels were asked for), bells and clipboard text.
    loop {
        match read_n(&mut s, 1)?[0] {
            0 => {
                let head = read_n(&mut s, 3)?;
                for _ in 0..u16_at(&head, 1) {
                    let rect = read_n(&mut s, 12)?;
                    let (reason, status) = (u16_at(&rect, 0), u16_at(&rect, 2));
                    match i32::from_be_bytes([rect[8], rect[9], rect[10], rect[11]]) {
                        EXTENDED_DESKTOP_SIZE => {
                            let screens = read_n(&mut s, 4)?[0];
                            read_n(&mut s, usize::from(screens) * 16)?;
                            if reason == REASON_THIS_CLIENT {
                                if TAKEN.contains(&status) {
                                    return Ok(());
                                }
                                bail!(
                                    "QEMU refused the desktop size {}x{} (status {status})",
                                    size.0,
                                    size.1
                                );
                            }
                        }
                        DESKTOP_SIZE => {}
                        other => bail!("QEMU's VNC server sent encoding {other}, not asked for"),
                    }
                }
            }
            2 => {}
            3 => {
                let head = read_n(&mut s, 7)?;
                let len = u32_at(&head, 3) as usize;
                read_n(&mut s, len.min(1 << 20))?;
            }
            other => bail!("QEMU's VNC server sent message type {other}"),
        }
    }
}
