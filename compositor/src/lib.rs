//! The Smithay plugin: the pcp-intent-v1 protocol server, interception at dispatch, the overlay
//! element and its input routing, and the speech and haptics wiring. The compositor issue fills it.
