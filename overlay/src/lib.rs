//! The confirmation dialog: layout, drawing into a premultiplied RGBA buffer, hit-testing, the
//! clickjacking guard, the countdown and the choice of output. Knows nothing of Smithay.
