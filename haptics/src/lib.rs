//! Haptic confirmation: evdev force-feedback discovery and playback, and double-tap detection.
