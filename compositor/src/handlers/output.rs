//! wl_output and xdg-output: the outputs' globals (made and withdrawn by the backend and
//! [`hotplug`](crate::hotplug)).

use smithay::delegate_output;
use smithay::wayland::output::OutputHandler;

use crate::state::State;

impl OutputHandler for State {}

delegate_output!(State);
