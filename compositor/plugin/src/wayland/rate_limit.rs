//! The rate limit that ends a pcp-intent-v1 connection which keeps being refused
//! `rate_limited`: when each connection was last refused, within the configured window.

use std::collections::{HashMap, VecDeque};

use wayland_server::backend::ClientId;

/// When each connection was last refused `rate_limited`, newest last: at most
/// `[queue] disconnect_after` times per connection, and only connections refused within the
/// last `[queue] disconnect_window_seconds` are kept.
#[derive(Default)]
pub(crate) struct RateLimits {
    refused: HashMap<ClientId, VecDeque<i64>>,
}

impl RateLimits {
    /// Notes that `client` was refused `rate_limited` at `now_ms`; true when that makes
    /// `limit` refusals within the last `window_ms` (the client is then to be disconnected).
    pub fn note(&mut self, client: ClientId, now_ms: i64, limit: u32, window_ms: i64) -> bool {
        let since = now_ms.saturating_sub(window_ms);
        // Connections not refused within the window are forgotten (and gone ones with them).
        self.refused
            .retain(|_, times| times.back().is_some_and(|&t| t > since));
        let times = self.refused.entry(client.clone()).or_default();
        while times.front().is_some_and(|&t| t <= since) {
            times.pop_front();
        }
        times.push_back(now_ms);
        let limit = usize::try_from(limit.max(1)).unwrap_or(usize::MAX);
        while times.len() > limit {
            times.pop_front();
        }
        if times.len() >= limit {
            self.refused.remove(&client);
            return true;
        }
        false
    }
}
