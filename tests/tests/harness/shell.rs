//! A hand-written shell client for the desktop tests: one xdg toplevel (or one layer surface)
//! drawn in one colour, on a thread of its own, that reports over a channel what it receives
//! (configures, pointer, touch points) and does what the test asked on a press: nothing, an
//! interactive move, or a resize from an edge, from a pointer button or a touch alike. It draws
//! every size it is configured with, so a resize takes effect.

use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, Sender, channel};

use wayland_client::globals::{GlobalListContents, registry_queue_init};
use wayland_client::protocol::wl_buffer::WlBuffer;
use wayland_client::protocol::wl_compositor::WlCompositor;
use wayland_client::protocol::wl_pointer::{self, WlPointer};
use wayland_client::protocol::wl_registry::WlRegistry;
use wayland_client::protocol::wl_seat::WlSeat;
use wayland_client::protocol::wl_shm::WlShm;
use wayland_client::protocol::wl_shm_pool::WlShmPool;
use wayland_client::protocol::wl_surface::WlSurface;
use wayland_client::protocol::wl_touch::{self, WlTouch};
use wayland_client::{Connection, Dispatch, QueueHandle, WEnum};
use wayland_protocols::xdg::shell::client::xdg_surface::{self, XdgSurface};
use wayland_protocols::xdg::shell::client::xdg_toplevel::{self, ResizeEdge, XdgToplevel};
use wayland_protocols::xdg::shell::client::xdg_wm_base::XdgWmBase;
use wayland_protocols_wlr::layer_shell::v1::client::zwlr_layer_shell_v1::{
    Layer, ZwlrLayerShellV1,
};
use wayland_protocols_wlr::layer_shell::v1::client::zwlr_layer_surface_v1::{
    self, Anchor, ZwlrLayerSurfaceV1,
};

use super::client::{answer_pings, ignore_events, shm_buffer};

/// What the client received.
#[derive(Debug, Clone, PartialEq)]
pub enum Seen {
    /// A toplevel configure (0: the client chooses) and whether it says maximized, activated.
    Configure {
        w: i32,
        h: i32,
        maximized: bool,
        activated: bool,
    },
    /// A layer surface's configure.
    LayerConfigure {
        w: u32,
        h: u32,
    },
    /// The surface drew its first buffer.
    Mapped,
    PointerEnter(f64, f64),
    PointerLeave,
    Motion(f64, f64),
    Button(bool),
    TouchDown(i32, f64, f64),
    TouchMotion(i32, f64, f64),
    TouchUp(i32),
    TouchCancel,
}

/// What the client does on a press (a pointer button or a touch point going down).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OnPress {
    Nothing,
    Move,
    Resize(ResizeEdge),
    /// Hostile: no press of its own, but once it loses the keyboard (another window was
    /// pressed) it asks to be moved with every serial from 1 to 5000, hoping one is that press.
    StealMoves,
}

/// What the client shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Role {
    /// An xdg toplevel, maximized from the start when asked.
    Toplevel { maximized: bool },
    /// A layer surface on `layer`, anchored to `anchor`, keeping `exclusive` pixels for itself.
    Layer {
        layer: Layer,
        anchor: Anchor,
        exclusive: i32,
    },
}

/// Starts the client on its own thread, connected to the compositor at `path`. `size` is what
/// it draws until configured otherwise.
pub fn spawn(
    path: PathBuf,
    app_id: &str,
    role: Role,
    size: (i32, i32),
    on_press: OnPress,
) -> Receiver<Seen> {
    let (tx, rx) = channel();
    let app_id = app_id.to_string();
    std::thread::spawn(move || run(path, app_id, role, size, on_press, tx));
    rx
}

struct App {
    tx: Sender<Seen>,
    on_press: OnPress,
    seat: Option<WlSeat>,
    toplevel: Option<XdgToplevel>,
    shm: Option<WlShm>,
    surface: Option<WlSurface>,
    size: (i32, i32),
    /// The size of the last configure (0: keep `size`), until it is drawn.
    asked: Option<(i32, i32)>,
    /// The xdg_surface or layer surface configure serial to ack before drawing.
    serial: Option<u32>,
    buffer: Option<WlBuffer>,
    mapped: bool,
    layer: Option<ZwlrLayerSurfaceV1>,
    xdg: Option<XdgSurface>,
}

fn run(
    path: PathBuf,
    app_id: String,
    role: Role,
    size: (i32, i32),
    on_press: OnPress,
    tx: Sender<Seen>,
) {
    let Ok(stream) = UnixStream::connect(path) else {
        return;
    };
    let conn = Connection::from_socket(stream).expect("connection");
    let (globals, mut queue) = registry_queue_init::<App>(&conn).expect("registry");
    let qh = queue.handle();
    let compositor: WlCompositor = globals.bind(&qh, 4..=5, ()).expect("wl_compositor");
    let shm: WlShm = globals.bind(&qh, 1..=1, ()).expect("wl_shm");
    let seat: WlSeat = globals.bind(&qh, 1..=7, ()).expect("wl_seat");
    let _pointer = seat.get_pointer(&qh, ());
    let _touch = seat.get_touch(&qh, ());
    let surface = compositor.create_surface(&qh, ());
    let mut app = App {
        tx,
        on_press,
        seat: Some(seat),
        toplevel: None,
        shm: Some(shm),
        surface: Some(surface.clone()),
        size,
        asked: None,
        serial: None,
        buffer: None,
        mapped: false,
        layer: None,
        xdg: None,
    };
    match role {
        Role::Toplevel { maximized } => {
            let wm: XdgWmBase = globals.bind(&qh, 1..=6, ()).expect("xdg_wm_base");
            let xdg = wm.get_xdg_surface(&surface, &qh, ());
            let toplevel = xdg.get_toplevel(&qh, ());
            toplevel.set_app_id(app_id);
            if maximized {
                toplevel.set_maximized();
            }
            app.toplevel = Some(toplevel);
            app.xdg = Some(xdg);
        }
        Role::Layer {
            layer,
            anchor,
            exclusive,
        } => {
            let shell: ZwlrLayerShellV1 = globals.bind(&qh, 1..=4, ()).expect("layer shell");
            let l = shell.get_layer_surface(&surface, None, layer, app_id, &qh, ());
            l.set_anchor(anchor);
            l.set_size(size.0 as u32, size.1 as u32);
            l.set_exclusive_zone(exclusive);
            app.layer = Some(l);
        }
    }
    surface.commit();
    while queue.blocking_dispatch(&mut app).is_ok() {
        app.draw_if_asked(&qh);
    }
}

impl App {
    /// Acks the last configure and draws its size (once a configure came).
    fn draw_if_asked(&mut self, qh: &QueueHandle<App>) {
        let Some(serial) = self.serial.take() else {
            return;
        };
        if let Some(xdg) = &self.xdg {
            xdg.ack_configure(serial);
        }
        if let Some(layer) = &self.layer {
            layer.ack_configure(serial);
        }
        if let Some((w, h)) = self.asked.take()
            && w > 0
            && h > 0
        {
            self.size = (w, h);
        }
        let (Some(shm), Some(surface)) = (&self.shm, &self.surface) else {
            return;
        };
        let (w, h) = self.size;
        let buffer = shm_buffer(shm, qh, w, h, [0x50, 0x80, 0x30, 0xff]);
        surface.attach(Some(&buffer), 0, 0);
        surface.damage_buffer(0, 0, w, h);
        surface.commit();
        self.buffer = Some(buffer);
        if !self.mapped {
            self.mapped = true;
            let _ = self.tx.send(Seen::Mapped);
        }
    }

    /// A press with `serial`: what the test asked for.
    fn pressed(&self, serial: u32) {
        let (Some(toplevel), Some(seat)) = (&self.toplevel, &self.seat) else {
            return;
        };
        match self.on_press {
            OnPress::Nothing | OnPress::StealMoves => {}
            OnPress::Move => toplevel._move(seat, serial),
            OnPress::Resize(edge) => toplevel.resize(seat, serial, edge),
        }
    }
}

impl Dispatch<XdgSurface, ()> for App {
    fn event(
        app: &mut App,
        _: &XdgSurface,
        event: xdg_surface::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<App>,
    ) {
        if let xdg_surface::Event::Configure { serial } = event {
            app.serial = Some(serial);
        }
    }
}

impl Dispatch<XdgToplevel, ()> for App {
    fn event(
        app: &mut App,
        _: &XdgToplevel,
        event: xdg_toplevel::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<App>,
    ) {
        if let xdg_toplevel::Event::Configure {
            width,
            height,
            states,
        } = event
        {
            let states: Vec<u32> = states
                .chunks_exact(4)
                .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            let has = |s: xdg_toplevel::State| states.contains(&(s as u32));
            app.asked = Some((width, height));
            if app.on_press == OnPress::StealMoves
                && app.mapped
                && !has(xdg_toplevel::State::Activated)
                && let (Some(toplevel), Some(seat)) = (&app.toplevel, &app.seat)
            {
                for serial in 1..=5000 {
                    toplevel._move(seat, serial);
                }
            }
            let _ = app.tx.send(Seen::Configure {
                w: width,
                h: height,
                maximized: has(xdg_toplevel::State::Maximized),
                activated: has(xdg_toplevel::State::Activated),
            });
        }
    }
}

impl Dispatch<ZwlrLayerSurfaceV1, ()> for App {
    fn event(
        app: &mut App,
        _: &ZwlrLayerSurfaceV1,
        event: zwlr_layer_surface_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<App>,
    ) {
        if let zwlr_layer_surface_v1::Event::Configure {
            serial,
            width,
            height,
        } = event
        {
            app.serial = Some(serial);
            app.asked = Some((width as i32, height as i32));
            let _ = app.tx.send(Seen::LayerConfigure {
                w: width,
                h: height,
            });
        }
    }
}

impl Dispatch<WlPointer, ()> for App {
    fn event(
        app: &mut App,
        _: &WlPointer,
        event: wl_pointer::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<App>,
    ) {
        let seen = match event {
            wl_pointer::Event::Enter {
                surface_x,
                surface_y,
                ..
            } => Seen::PointerEnter(surface_x, surface_y),
            wl_pointer::Event::Leave { .. } => Seen::PointerLeave,
            wl_pointer::Event::Motion {
                surface_x,
                surface_y,
                ..
            } => Seen::Motion(surface_x, surface_y),
            wl_pointer::Event::Button { serial, state, .. } => {
                let pressed = state == WEnum::Value(wl_pointer::ButtonState::Pressed);
                if pressed {
                    app.pressed(serial);
                }
                Seen::Button(pressed)
            }
            _ => return,
        };
        let _ = app.tx.send(seen);
    }
}

impl Dispatch<WlTouch, ()> for App {
    fn event(
        app: &mut App,
        _: &WlTouch,
        event: wl_touch::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<App>,
    ) {
        let seen = match event {
            wl_touch::Event::Down {
                serial, id, x, y, ..
            } => {
                app.pressed(serial);
                Seen::TouchDown(id, x, y)
            }
            wl_touch::Event::Motion { id, x, y, .. } => Seen::TouchMotion(id, x, y),
            wl_touch::Event::Up { id, .. } => Seen::TouchUp(id),
            wl_touch::Event::Cancel => Seen::TouchCancel,
            _ => return,
        };
        let _ = app.tx.send(seen);
    }
}

answer_pings!(App);

ignore_events!(
    App:
    WlRegistry => GlobalListContents,
    WlCompositor => (),
    WlShm => (),
    WlShmPool => (),
    WlBuffer => (),
    WlSurface => (),
    WlSeat => (),
    ZwlrLayerShellV1 => (),
);
