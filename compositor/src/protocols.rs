//! The Smithay protocol states the reference compositor serves, and the globals they create:
//! which globals a sandboxed client may not see is decided here, at creation.

use calloop::LoopHandle;
use smithay::input::SeatState;
use smithay::wayland::compositor::CompositorState;
use smithay::wayland::cursor_shape::CursorShapeManagerState;
use smithay::wayland::fractional_scale::FractionalScaleManagerState;
use smithay::wayland::idle_inhibit::IdleInhibitManagerState;
use smithay::wayland::idle_notify::IdleNotifierState;
use smithay::wayland::output::OutputManagerState;
use smithay::wayland::pointer_gestures::PointerGesturesState;
use smithay::wayland::presentation::PresentationState;
use smithay::wayland::security_context::SecurityContextState;
use smithay::wayland::selection::data_device::DataDeviceState;
use smithay::wayland::selection::primary_selection::PrimarySelectionState;
use smithay::wayland::session_lock::SessionLockManagerState;
use smithay::wayland::shell::wlr_layer::WlrLayerShellState;
use smithay::wayland::shell::xdg::XdgShellState;
use smithay::wayland::shell::xdg::decoration::XdgDecorationState;
use smithay::wayland::shm::ShmState;
use smithay::wayland::tablet_manager::TabletManagerState;
use smithay::wayland::viewporter::ViewporterState;
use smithay::wayland::xdg_activation::XdgActivationState;
use wayland_server::DisplayHandle;

use crate::state::State;

/// The Smithay protocol states the reference compositor serves.
pub struct Protocols {
    pub compositor: CompositorState,
    pub xdg_shell: XdgShellState,
    pub layer_shell: WlrLayerShellState,
    pub shm: ShmState,
    pub data_device: DataDeviceState,
    pub primary_selection: PrimarySelectionState,
    pub seat: SeatState<State>,
    pub output_manager: OutputManagerState,
    /// `wp_security_context_v1`: sandbox engines make listeners whose clients are named by the
    /// sandbox and see no privileged global.
    pub security_context: SecurityContextState,
    /// `ext_session_lock_manager_v1`: screen lockers; privileged (hidden from sandboxes).
    pub session_lock: SessionLockManagerState,
    /// `zxdg_decoration_manager_v1`: always client-side (no borders are drawn here).
    pub decoration: XdgDecorationState,
    pub viewporter: ViewporterState,
    pub fractional_scale: FractionalScaleManagerState,
    /// `xdg_activation_v1`: tokens from a recent input event of the focused client.
    pub activation: XdgActivationState,
    /// `wp_presentation`: when frames were shown, by CLOCK_MONOTONIC.
    pub presentation: PresentationState,
    /// `ext_idle_notifier_v1`: idle daemons; privileged (hidden from sandboxes).
    pub idle_notifier: IdleNotifierState<State>,
    pub idle_inhibit: IdleInhibitManagerState,
    pub cursor_shape: CursorShapeManagerState,
    /// `zwp_tablet_manager_v2`: tablet tools (pens), routed through the plugin first.
    pub tablet_manager: TabletManagerState,
    /// `zwp_pointer_gestures_v1`: touchpad swipes, pinches and holds, routed through the
    /// plugin first.
    pub pointer_gestures: PointerGesturesState,
}

impl Protocols {
    /// Creates every global on `dh`; `seat` is the seat's state, made with its seat before.
    pub(crate) fn new(
        dh: &DisplayHandle,
        seat: SeatState<State>,
        loop_handle: &LoopHandle<'static, State>,
    ) -> Protocols {
        Protocols {
            compositor: CompositorState::new::<State>(dh),
            xdg_shell: XdgShellState::new::<State>(dh),
            layer_shell: WlrLayerShellState::new_with_filter::<State, _>(
                dh,
                crate::handlers::may_see_privileged,
            ),
            shm: ShmState::new::<State>(dh, vec![]),
            data_device: DataDeviceState::new::<State>(dh),
            primary_selection: PrimarySelectionState::new::<State>(dh),
            seat,
            output_manager: OutputManagerState::new_with_xdg_output::<State>(dh),
            security_context: SecurityContextState::new::<State, _>(
                dh,
                crate::handlers::may_see_privileged,
            ),
            session_lock: SessionLockManagerState::new::<State, _>(
                dh,
                crate::handlers::may_see_privileged,
            ),
            decoration: XdgDecorationState::new::<State>(dh),
            viewporter: ViewporterState::new::<State>(dh),
            fractional_scale: FractionalScaleManagerState::new::<State>(dh),
            activation: XdgActivationState::new::<State>(dh),
            presentation: PresentationState::new::<State>(
                dh,
                crate::handlers::presentation::PRESENTATION_CLOCK,
            ),
            idle_notifier: IdleNotifierState::new(dh, loop_handle.clone()),
            idle_inhibit: IdleInhibitManagerState::new::<State>(dh),
            cursor_shape: CursorShapeManagerState::new::<State>(dh),
            tablet_manager: TabletManagerState::new::<State>(dh),
            pointer_gestures: PointerGesturesState::new::<State>(dh),
        }
    }
}
