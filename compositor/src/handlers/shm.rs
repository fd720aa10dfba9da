//! wl_shm: clients' shared-memory buffers.

use smithay::delegate_shm;
use smithay::wayland::shm::{ShmHandler, ShmState};

use crate::state::State;

impl ShmHandler for State {
    fn shm_state(&self) -> &ShmState {
        &self.protocols.shm
    }
}

delegate_shm!(State);
