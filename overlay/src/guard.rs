//! The clickjacking guard: input counts only after the dialog has been visible and unmoved for a
//! delay. Showing, moving or changing the content re-arms it; a press that arrives early is
//! ignored and pushes the ready time later (capped). Pure logic on an injected clock: every call
//! takes `now` in milliseconds since any fixed epoch the caller picks.

/// The guard's state for one visible dialog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClickGuard {
    delay_ms: u64,
    extension_ms: u64,
    max_extension_ms: u64,
    /// When the dialog was last shown, moved or changed; `None` while hidden.
    armed_from: Option<u64>,
    /// When input starts to count.
    ready_at: u64,
}

impl ClickGuard {
    /// A guard that is not armed (no dialog visible): nothing counts.
    pub fn new(delay_ms: u64, extension_ms: u64, max_extension_ms: u64) -> Self {
        ClickGuard {
            delay_ms,
            extension_ms,
            max_extension_ms,
            armed_from: None,
            ready_at: u64::MAX,
        }
    }

    /// The dialog was shown, moved or its content changed at `now`: start the delay again.
    pub fn rearm(&mut self, now: u64) {
        self.armed_from = Some(now);
        self.ready_at = now.saturating_add(self.delay_ms);
    }

    /// The dialog was hidden: nothing counts until it is shown again.
    pub fn disarm(&mut self) {
        self.armed_from = None;
        self.ready_at = u64::MAX;
    }

    /// Whether input at `now` counts.
    pub fn is_ready(&self, now: u64) -> bool {
        match self.armed_from {
            // A clock reading before the arming (a caller bug or a clock jump) never counts.
            Some(from) => now >= from && now >= self.ready_at,
            None => false,
        }
    }

    /// When input will start to count, if the dialog is visible (to schedule a redraw that
    /// shows the controls enabled).
    pub fn ready_at(&self) -> Option<u64> {
        self.armed_from.map(|_| self.ready_at)
    }

    /// A press (pointer, touch or key) at `now`: returns whether it counts. An early press does
    /// not count and pushes the ready time to at least `now + extension`, but never past
    /// `armed + delay + max_extension`, so a user cannot be locked out by their own tapping.
    pub fn press(&mut self, now: u64) -> bool {
        if self.is_ready(now) {
            return true;
        }
        if let Some(from) = self.armed_from {
            let cap = from
                .saturating_add(self.delay_ms)
                .saturating_add(self.max_extension_ms);
            let wanted = self.ready_at.max(now.saturating_add(self.extension_ms));
            self.ready_at = wanted.min(cap).max(self.ready_at);
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard() -> ClickGuard {
        ClickGuard::new(750, 500, 1500)
    }

    #[test]
    fn nothing_counts_while_hidden() {
        let mut g = guard();
        assert!(!g.is_ready(0));
        assert!(!g.press(10_000));
        assert_eq!(g.ready_at(), None);
    }

    #[test]
    fn counts_exactly_from_the_delay() {
        let mut g = guard();
        g.rearm(1000);
        assert!(!g.is_ready(1749));
        assert!(g.is_ready(1750));
        assert!(g.press(1750));
    }

    #[test]
    fn move_or_content_change_rearms() {
        let mut g = guard();
        g.rearm(0);
        assert!(g.is_ready(800));
        g.rearm(800);
        assert!(!g.is_ready(1549));
        assert!(g.is_ready(1550));
    }

    #[test]
    fn early_press_extends_and_is_capped() {
        let mut g = guard();
        g.rearm(0);
        assert!(!g.press(600)); // pushes to 1100
        assert!(!g.is_ready(1099));
        assert!(g.is_ready(1100));
        // Hammering keeps pushing, but never past 0 + 750 + 1500.
        let mut g = guard();
        g.rearm(0);
        for t in (0..2250).step_by(100) {
            assert!(!g.press(t), "press at {t} counted");
        }
        assert_eq!(g.ready_at(), Some(2250));
        assert!(g.press(2250));
    }

    #[test]
    fn an_early_press_right_after_showing_keeps_the_full_delay() {
        let mut g = guard();
        g.rearm(0);
        assert!(!g.press(10)); // 10 + 500 < 750: the delay stands
        assert_eq!(g.ready_at(), Some(750));
    }

    #[test]
    fn clock_before_arming_never_counts() {
        let mut g = guard();
        g.rearm(5000);
        assert!(!g.is_ready(4000));
        assert!(!g.press(4000));
        assert!(g.is_ready(5750));
    }

    #[test]
    fn disarm_stops_counting() {
        let mut g = guard();
        g.rearm(0);
        g.disarm();
        assert!(!g.is_ready(10_000));
    }
}
