//! The compositor's clock: real time, or (for the harness) a frozen clock that tests advance.

use std::time::{SystemTime, UNIX_EPOCH};

/// The compositor's clock: Unix milliseconds, plus an offset tests can advance. A frozen clock
/// (harness only) stands still between advances, so guard and timeout tests never race real time.
#[derive(Debug, Clone, Copy, Default)]
pub struct Clock {
    offset_ms: i64,
    frozen_at: Option<i64>,
}

fn real_now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl Clock {
    pub fn now_ms(&self) -> i64 {
        self.frozen_at.unwrap_or_else(real_now_ms) + self.offset_ms
    }

    /// A clock stopped at the present moment; only [`Clock::advance`] moves it.
    #[cfg(feature = "test-harness")]
    pub fn frozen() -> Clock {
        Clock {
            offset_ms: 0,
            frozen_at: Some(real_now_ms()),
        }
    }

    /// Moves the clock forward (the harness uses it to reach timeouts without waiting).
    #[cfg(feature = "test-harness")]
    pub fn advance(&mut self, ms: i64) {
        self.offset_ms += ms.max(0);
    }
}
