//! Outputs and input devices coming and going while running (hotplug): [`State::remove_output`]
//! and [`State::add_output`] keep the space, the `wl_output` globals and the windows in line and
//! let the plugin see the change (the dialog moves, prompts nobody can answer are denied); any
//! backend's hotplug calls `State::output_removed` and `State::output_added` once its device
//! has let go of an output or draws a new one, and [`State::input_devices_changed`] when the
//! seat gains or loses a device that can answer.

use std::time::Duration;

use calloop::timer::{TimeoutAction, Timer};
use smithay::desktop::{Window, layer_map_for_output};
use wayland_server::backend::GlobalId;

use crate::backend::{BackendError, VirtualOutput, logical_rect};
use crate::config::OutputSpec;
use crate::state::State;

/// How long a removed output's `wl_output` global stays disabled before it is destroyed, so a
/// client that binds it in the meantime is not killed for it (wayland-server's advice).
const GLOBAL_REMOVAL_DELAY: Duration = Duration::from_secs(5);

fn overlaps(a: &pcp_overlay::Rect, b: &pcp_overlay::Rect) -> bool {
    a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h
}

/// Where a window whose geometry is `window` goes when output `gone` is removed: `None` when it
/// was not on `gone`, still shows on one of `remaining`, or nothing remains. Else its new
/// top-left on the remaining output nearest its centre, at the offset it had on `gone`, moved
/// in just enough to fit (at the output's corner when it is larger).
pub(crate) fn relocated(
    window: pcp_overlay::Rect,
    gone: pcp_overlay::Rect,
    remaining: &[pcp_overlay::Output],
) -> Option<(i32, i32)> {
    if !overlaps(&window, &gone) || remaining.iter().any(|o| overlaps(&window, &o.rect)) {
        return None;
    }
    let centre = pcp_overlay::Point {
        x: f64::from(window.x) + f64::from(window.w) / 2.0,
        y: f64::from(window.y) + f64::from(window.h) / 2.0,
    };
    let to = remaining
        .get(pcp_overlay::nearest_output(centre, remaining)?)?
        .rect;
    let fit = |offset: i32, room: i32, len: i32| {
        if len >= room {
            0
        } else {
            offset.clamp(0, room - len)
        }
    };
    Some((
        to.x + fit(window.x - gone.x, to.w, window.w),
        to.y + fit(window.y - gone.y, to.h, window.h),
    ))
}

/// Whether an output (first) lies beyond the unplugged one (second) in one direction.
type Beyond = fn(&pcp_overlay::Rect, &pcp_overlay::Rect) -> bool;

/// Where the remaining `outputs` go once `gone` is unplugged, so it leaves no gap: an output
/// wholly right of it and level with it moves left by its width, then one wholly below it and
/// beside it moves up by its height — each only when it then overlaps no other output. `None`
/// for an output that stays.
pub(crate) fn closed_gaps(
    gone: pcp_overlay::Rect,
    outputs: &[pcp_overlay::Rect],
) -> Vec<Option<(i32, i32)>> {
    let mut placed: Vec<pcp_overlay::Rect> = outputs.to_vec();
    let mut moved = vec![None; outputs.len()];
    let passes: [(Beyond, (i32, i32)); 2] = [
        (
            |o, g| o.x >= g.x + g.w && o.y < g.y + g.h && g.y < o.y + o.h,
            (-gone.w, 0),
        ),
        (
            |o, g| o.y >= g.y + g.h && o.x < g.x + g.w && g.x < o.x + o.w,
            (0, -gone.h),
        ),
    ];
    for (beyond, (dx, dy)) in passes {
        // Nearest first, so a row of outputs closes up in order.
        let mut order: Vec<usize> = (0..placed.len())
            .filter(|&i| beyond(&placed[i], &gone))
            .collect();
        order.sort_by_key(|&i| (placed[i].x, placed[i].y));
        for i in order {
            let mut to = placed[i];
            to.x += dx;
            to.y += dy;
            let clear = placed
                .iter()
                .enumerate()
                .all(|(j, other)| j == i || !overlaps(&to, other));
            if clear {
                placed[i] = to;
                moved[i] = Some((to.x, to.y));
            }
        }
    }
    moved
}

/// Where the other `outputs` go when output `index` (at `outputs[index]`) takes the size
/// `new` at the same top-left (its display's mode changed): one wholly right of it and level
/// with it moves by the change in width, then one wholly below it and beside it by the change
/// in height — so a display that grew covers none of them and one that shrank leaves no gap. An
/// output that would then overlap another stays. `None` for an output that stays (always the
/// resized one).
pub(crate) fn resized_layout(
    index: usize,
    new: (i32, i32),
    outputs: &[pcp_overlay::Rect],
) -> Vec<Option<(i32, i32)>> {
    let mut placed: Vec<pcp_overlay::Rect> = outputs.to_vec();
    let mut moved = vec![None; outputs.len()];
    let Some(&old) = outputs.get(index) else {
        return moved;
    };
    // The resized output at its new size: nothing may move onto it.
    placed[index].w = new.0;
    placed[index].h = new.1;
    let new = placed[index];
    let passes: [(Beyond, (i32, i32)); 2] = [
        (
            |o, g| o.x >= g.x + g.w && o.y < g.y + g.h && g.y < o.y + o.h,
            (new.w - old.w, 0),
        ),
        (
            |o, g| o.y >= g.y + g.h && o.x < g.x + g.w && g.x < o.x + o.w,
            (0, new.h - old.h),
        ),
    ];
    for (beyond, (dx, dy)) in passes {
        if (dx, dy) == (0, 0) {
            continue;
        }
        let mut order: Vec<usize> = (0..placed.len())
            .filter(|&i| i != index && beyond(&outputs[i], &old))
            .collect();
        // Growing pushes the furthest first, shrinking pulls the nearest first, so each move
        // lands on room already made.
        order.sort_by_key(|&i| (placed[i].x, placed[i].y));
        if dx > 0 || dy > 0 {
            order.reverse();
        }
        for i in order {
            let mut to = placed[i];
            to.x += dx;
            to.y += dy;
            let clear = placed
                .iter()
                .enumerate()
                .all(|(j, other)| j == i || !overlaps(&to, other));
            if clear {
                placed[i] = to;
                moved[i] = Some((to.x, to.y));
            }
        }
    }
    moved
}

impl State {
    /// Removes output `index` (unplugged): the device's buffers for it, then
    /// `State::output_removed`. Returns its name. The headless and udev backends can; the
    /// winit window is the one output and says it cannot. Later outputs move down one index.
    pub fn remove_output(&mut self, index: usize) -> Result<String, BackendError> {
        let vo = self.backend.remove_output(index)?;
        let name = vo.output.name();
        self.output_removed(index, vo);
        Ok(name)
    }

    /// The backend-neutral part of losing output `index`, once the device has let go of it
    /// (any backend's hotplug calls it): its `wl_output` global is withdrawn, its layer surfaces
    /// are closed, it leaves the space, windows that showed only on it move to the nearest
    /// remaining output, and the plugin sees the outputs left: the dialog on it moves to the
    /// output nearest the focal point (its guard starting again, its timeout running on), and
    /// with none left, shown and queued prompts are denied `confirmation_unavailable`.
    pub(crate) fn output_removed(&mut self, index: usize, mut vo: VirtualOutput) {
        let name = vo.output.name();
        if let Some(global) = vo.global.take() {
            self.withdraw_global(global);
        }
        {
            let mut map = layer_map_for_output(&vo.output);
            let layers: Vec<_> = map.layers().cloned().collect();
            for layer in layers {
                layer.layer_surface().send_close();
                map.unmap_layer(&layer);
            }
        }
        self.desktop.space.unmap_output(&vo.output);
        let gone = logical_rect(&vo.spec);
        let remaining = self.backend.overlay_outputs();
        self.relocate_windows(gone, &remaining);
        self.close_gaps(gone);
        self.desktop.space.refresh();
        tracing::info!(
            "output {name} (index {index}) removed, {} left",
            self.backend.outputs.len()
        );
        self.devices_changed();
    }

    /// Moves the outputs beyond the unplugged `gone` in to close the gap it left
    /// ([`closed_gaps`]); the windows on a moved output move with it.
    fn close_gaps(&mut self, gone: pcp_overlay::Rect) {
        let rects: Vec<_> = self
            .backend
            .outputs
            .iter()
            .map(|o| logical_rect(&o.spec))
            .collect();
        let moves = closed_gaps(gone, &rects);
        self.move_outputs(&rects, &moves, "to close a gap");
    }

    /// Moves each output `i` whose `moves[i]` is `Some` from `rects[i]` to that top-left; the
    /// windows on it, the pointer and the focal point move with it.
    fn move_outputs(
        &mut self,
        rects: &[pcp_overlay::Rect],
        moves: &[Option<(i32, i32)>],
        why: &str,
    ) {
        let windows: Vec<Window> = self.desktop.space.elements().cloned().collect();
        for (i, to) in moves.iter().enumerate() {
            let (Some((x, y)), Some(&old)) = (*to, rects.get(i)) else {
                continue;
            };
            let Some(vo) = self.backend.outputs.get_mut(i) else {
                continue;
            };
            let (dx, dy) = (x - old.x, y - old.y);
            vo.spec.x = x;
            vo.spec.y = y;
            vo.output
                .change_current_state(None, None, None, Some((x, y).into()));
            self.desktop.space.map_output(&vo.output, (x, y));
            tracing::info!("output {} moved to {x},{y} {why}", vo.output.name());
            // The pointer and the focal point stay where they were on that display.
            let inside = |p: smithay::utils::Point<f64, smithay::utils::Logical>| {
                p.x >= f64::from(old.x)
                    && p.x < f64::from(old.x + old.w)
                    && p.y >= f64::from(old.y)
                    && p.y < f64::from(old.y + old.h)
            };
            let delta = smithay::utils::Point::from((f64::from(dx), f64::from(dy)));
            self.pointer.follow_display(inside, delta);
            self.sync_seat_pointer();
            for window in &windows {
                let Some(geo) = self.desktop.space.element_geometry(window) else {
                    continue;
                };
                let centre = (geo.loc.x + geo.size.w / 2, geo.loc.y + geo.size.h / 2);
                let on_it = centre.0 >= old.x
                    && centre.0 < old.x + old.w
                    && centre.1 >= old.y
                    && centre.1 < old.y + old.h;
                if on_it && let Some(loc) = self.desktop.space.element_location(window) {
                    self.desktop
                        .space
                        .map_element(window.clone(), (loc.x + dx, loc.y + dy), false);
                }
            }
        }
    }

    /// Adds a headless output of `spec` (plugged in) and places the dialog again. Returns its
    /// index.
    pub fn add_output(&mut self, spec: &OutputSpec) -> Result<usize, BackendError> {
        let index = self
            .backend
            .add_output::<State>(&self.dh, spec, &mut self.desktop.space)?;
        self.output_added(index);
        Ok(index)
    }

    /// The backend-neutral part of gaining output `index`, once the device draws it (any
    /// backend's hotplug calls it): prompts can be shown again, and the dialog goes to the
    /// output nearest the focal point.
    pub(crate) fn output_added(&mut self, index: usize) {
        if let Some(vo) = self.backend.outputs.get(index) {
            tracing::info!("output {} added at {}", vo.output.name(), vo.spec);
        }
        self.desktop.space.refresh();
        self.devices_changed();
    }

    /// Changes output `index` to `mode` (`WxH` or `WxH*SCALE`) at its place, as a display
    /// whose preferred mode changed would (`State::output_resized`). The headless backend
    /// can; the winit window follows its host window and the udev backend its displays, and
    /// they say they cannot.
    pub fn reconfigure_output(&mut self, index: usize, mode: &str) -> Result<(), BackendError> {
        let old = self
            .backend
            .outputs
            .get(index)
            .ok_or(BackendError::NoOutput(index))?
            .spec;
        self.backend.reconfigure(index, mode)?;
        self.output_resized(index, old);
        Ok(())
    }

    /// The backend-neutral part of output `index` taking a new size, once the device draws it
    /// at that size (`old` is the spec it had; the output's own spec is already the new one):
    /// a display whose preferred mode changed, or `output.configure`. Its `wl_output` has told
    /// clients the new mode; its layer surfaces are arranged again; the outputs beyond it move
    /// so none overlaps it or is left behind a gap ([`resized_layout`]); windows that no longer
    /// show on any output move onto the nearest one; the plugin places the dialog again. (The
    /// output's fresh damage tracker, from [`VirtualOutput::set_spec`], draws all of it.)
    /// Moves every window that was on `gone` (a display's old area) and now shows on none of
    /// `outputs` onto the nearest of them (see [`relocated`]).
    fn relocate_windows(&mut self, gone: pcp_overlay::Rect, outputs: &[pcp_overlay::Output]) {
        let windows: Vec<Window> = self.desktop.space.elements().cloned().collect();
        for window in windows {
            let (Some(geo), Some(loc)) = (
                self.desktop.space.element_geometry(&window),
                self.desktop.space.element_location(&window),
            ) else {
                continue;
            };
            let rect = pcp_overlay::Rect {
                x: geo.loc.x,
                y: geo.loc.y,
                w: geo.size.w,
                h: geo.size.h,
            };
            if let Some((x, y)) = relocated(rect, gone, outputs) {
                let to = (loc.x + x - geo.loc.x, loc.y + y - geo.loc.y);
                self.desktop.space.map_element(window, to, false);
            }
        }
    }

    pub(crate) fn output_resized(&mut self, index: usize, old: OutputSpec) {
        let Some(vo) = self.backend.outputs.get(index) else {
            return;
        };
        let name = vo.output.name();
        let spec = vo.spec;
        layer_map_for_output(&vo.output).arrange();
        let was = logical_rect(&old);
        let mut rects: Vec<_> = self
            .backend
            .outputs
            .iter()
            .map(|o| logical_rect(&o.spec))
            .collect();
        // Where the others are now, around the output as it was.
        rects[index] = was;
        let (w, h) = spec.logical_size();
        let moves = resized_layout(index, (w, h), &rects);
        self.move_outputs(&rects, &moves, "beside a display whose mode changed");
        // The pointer and the focal point stay on this display: one now past its edge goes to
        // the nearest point still on it (so the dialog stays where the user looks).
        let now = logical_rect(&spec);
        let keep = |p: smithay::utils::Point<f64, smithay::utils::Logical>| {
            let on_was = p.x >= f64::from(was.x)
                && p.x < f64::from(was.x + was.w)
                && p.y >= f64::from(was.y)
                && p.y < f64::from(was.y + was.h);
            if !on_was {
                return p;
            }
            let last = |start: i32, len: i32| f64::from(start) + f64::from(len.max(1)) - 1.0;
            smithay::utils::Point::from((
                p.x.clamp(f64::from(now.x), last(now.x, now.w)),
                p.y.clamp(f64::from(now.y), last(now.y, now.h)),
            ))
        };
        self.pointer.keep_within(keep);
        self.sync_seat_pointer();
        let outputs = self.backend.overlay_outputs();
        self.relocate_windows(was, &outputs);
        self.desktop.space.refresh();
        tracing::info!("output {name} (index {index}) is now {spec} (was {old})");
        self.devices_changed();
    }

    /// The seat now has `answering` input devices that can press the dialog's controls
    /// (keyboards, pointers, touch screens). With none, nobody can answer: the prompt on
    /// screen and those queued are denied `confirmation_unavailable`, and so is every new ask
    /// (the denying authorizer) until one returns; routine intents still run.
    pub fn input_devices_changed(&mut self, answering: usize) {
        self.input_devices = answering;
        self.devices_changed();
    }

    fn devices_changed(&mut self) {
        self.frames.damage();
        pcp_plugin::refresh(self);
    }

    /// Disables `global` now (clients see it go) and destroys it after
    /// [`GLOBAL_REMOVAL_DELAY`].
    fn withdraw_global(&mut self, global: GlobalId) {
        self.dh.disable_global::<State>(global.clone());
        let timer = Timer::from_duration(GLOBAL_REMOVAL_DELAY);
        let result = self
            .loop_handle
            .insert_source(timer, move |_, _, state: &mut State| {
                state.dh.remove_global::<State>(global.clone());
                TimeoutAction::Drop
            });
        if let Err(e) = result {
            // Left disabled: clients no longer see it, only its memory stays.
            tracing::warn!("cannot schedule the removal of an output's global: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use pcp_overlay::{Output, Rect};

    use super::*;

    fn rect(x: i32, y: i32, w: i32, h: i32) -> Rect {
        Rect { x, y, w, h }
    }

    fn out(x: i32, y: i32, w: i32, h: i32) -> Output {
        Output {
            rect: rect(x, y, w, h),
            scale: 1.0,
        }
    }

    #[test]
    fn a_window_on_the_removed_output_keeps_its_offset_on_the_nearest_one() {
        let gone = rect(1280, 0, 1280, 720);
        let remaining = [out(0, 0, 1280, 720), out(0, 720, 1280, 720)];
        // Centre (1580, 200) is nearest output 0 (distance 300; output 1 is further down).
        let to = relocated(rect(1380, 100, 400, 200), gone, &remaining);
        assert_eq!(to, Some((100, 100)));
    }

    #[test]
    fn a_window_is_moved_in_to_fit_or_to_the_corner_when_larger() {
        let gone = rect(1920, 0, 1920, 1080);
        let remaining = [out(0, 0, 800, 600)];
        assert_eq!(
            relocated(rect(3500, 900, 300, 150), gone, &remaining),
            Some((500, 450))
        );
        assert_eq!(
            relocated(rect(2000, 10, 1000, 700), gone, &remaining),
            Some((0, 0))
        );
    }

    #[test]
    fn windows_still_visible_or_elsewhere_or_with_nowhere_to_go_stay() {
        let gone = rect(1280, 0, 1280, 720);
        let remaining = [out(0, 0, 1280, 720)];
        // Straddles both: still partly visible on output 0.
        assert_eq!(relocated(rect(1200, 0, 200, 200), gone, &remaining), None);
        // Was not on the removed output.
        assert_eq!(relocated(rect(100, 100, 200, 200), gone, &remaining), None);
        assert_eq!(relocated(rect(5000, 0, 200, 200), gone, &remaining), None);
        // No output left.
        assert_eq!(relocated(rect(1300, 0, 200, 200), gone, &[]), None);
    }

    #[test]
    fn touching_edges_do_not_overlap() {
        assert!(!overlaps(&rect(0, 0, 10, 10), &rect(10, 0, 10, 10)));
        assert!(overlaps(&rect(0, 0, 11, 10), &rect(10, 0, 10, 10)));
    }

    #[test]
    fn the_outputs_right_of_an_unplugged_one_close_up() {
        let gone = rect(800, 0, 800, 600);
        let left = rect(0, 0, 800, 600);
        let right = rect(1600, 0, 1024, 768);
        let further = rect(2624, 0, 800, 600);
        assert_eq!(
            closed_gaps(gone, &[left, right, further]),
            [None, Some((800, 0)), Some((1824, 0))]
        );
    }

    #[test]
    fn an_output_below_an_unplugged_one_moves_up_and_one_that_would_overlap_stays() {
        let gone = rect(0, 0, 800, 600);
        let below = rect(0, 600, 800, 600);
        assert_eq!(closed_gaps(gone, &[below]), [Some((0, 0))]);
        // A tall output right of the gap would cover the one below it if it moved: it stays,
        // and the one below moves up.
        let gone = rect(0, 0, 800, 600);
        let beside = rect(800, 0, 800, 1200);
        let under = rect(0, 600, 800, 600);
        assert_eq!(closed_gaps(gone, &[beside, under]), [None, Some((0, 0))]);
    }

    #[test]
    fn outputs_right_of_a_display_whose_mode_changed_follow_its_edge() {
        let first = rect(0, 0, 1280, 800);
        let second = rect(1280, 0, 1024, 768);
        let third = rect(2304, 0, 800, 600);
        // Shrunk: the others close up, nearest first.
        assert_eq!(
            resized_layout(0, (1024, 768), &[first, second, third]),
            [None, Some((1024, 0)), Some((2048, 0))]
        );
        // Grown: pushed right, furthest first, so none overlaps.
        assert_eq!(
            resized_layout(0, (1920, 1080), &[first, second, third]),
            [None, Some((1920, 0)), Some((2944, 0))]
        );
        // The same size, or the rightmost one changing: nothing moves.
        assert_eq!(
            resized_layout(0, (1280, 800), &[first, second]),
            [None, None]
        );
        assert_eq!(
            resized_layout(1, (640, 480), &[first, second]),
            [None, None]
        );
        assert!(
            resized_layout(5, (640, 480), &[first])
                .iter()
                .all(Option::is_none)
        );
    }

    #[test]
    fn an_output_below_a_display_whose_mode_changed_follows_its_bottom_edge() {
        let top = rect(0, 0, 800, 600);
        let below = rect(0, 600, 800, 600);
        assert_eq!(
            resized_layout(0, (1024, 768), &[top, below]),
            [None, Some((0, 768))]
        );
        // Left of it: stays.
        let left = rect(-800, 0, 800, 600);
        assert_eq!(resized_layout(0, (640, 480), &[top, left]), [None, None]);
    }

    #[test]
    fn outputs_left_of_or_above_an_unplugged_one_stay() {
        let gone = rect(800, 600, 800, 600);
        assert_eq!(
            closed_gaps(gone, &[rect(0, 0, 800, 600), rect(0, 600, 800, 600)]),
            [None, None]
        );
    }
}
