//! Reloading the config file while the compositor runs: an inotify watch on its folder (polling
//! where none can be set), and a changed file proposed to the gate as a new policy.

use std::time::{Duration, SystemTime};

use calloop::generic::Generic;
use calloop::timer::{TimeoutAction, Timer};
use calloop::{Interest, Mode, PostAction};

use crate::state::{StartError, State};

/// What tells a changed config file: modification time, length, mode, owner.
pub(crate) type ConfigStamp = (SystemTime, u64, u32, u32);

/// Reloads the config file when it changes: told by an inotify watch on its folder, so an idle
/// compositor does not wake up to look; where no watch can be set, or once the folder is gone
/// (deleted or moved away), the file is checked every `reload_check_ms` until a watch can be
/// set again. `reload_check_ms = 0` turns reloading off.
pub(crate) fn watch_config(state: &mut State) -> Result<(), StartError> {
    let Some(path) = state.settings.path.clone() else {
        return Ok(());
    };
    if state.settings.config.reload_check_ms == 0 {
        return Ok(());
    }
    state.settings.seen = state.config_stamp();
    match crate::watch::FileWatch::new(&path) {
        Ok(watch) => watch_config_folder(state, watch),
        Err(e) => {
            tracing::warn!(
                "cannot watch {} for changes ({e}): checking it every {} ms",
                path.display(),
                state.settings.config.reload_check_ms
            );
            poll_config(state)
        }
    }
    .map_err(StartError::EventLoop)
}

/// Reloads the config file if it differs from when it was last looked at.
fn look_at_config(state: &mut State) {
    let now = state.config_stamp();
    if now != state.settings.seen {
        state.settings.seen = now;
        state.reload_config();
    }
}

/// Puts `watch` on the loop: a change looks at the file; a watch gone with its folder gives way
/// to polling.
fn watch_config_folder(state: &mut State, watch: crate::watch::FileWatch) -> Result<(), String> {
    state
        .loop_handle
        .insert_source(
            Generic::new(watch, Interest::READ, Mode::Level),
            |_, watch, state| {
                let changes = watch.changes();
                if changes.file {
                    look_at_config(state);
                }
                if !changes.watch_gone {
                    return Ok(PostAction::Continue);
                }
                tracing::warn!(
                    "the folder of the config file went away: checking the file every {} ms \
                     until it can be watched again",
                    state.settings.config.reload_check_ms
                );
                if let Err(e) = poll_config(state) {
                    // Without a watch or a timer a changed config would go unnoticed until the
                    // next start, which checks it: say so rather than keep a dead watch.
                    tracing::error!("config changes are not noticed until restart: {e}");
                }
                Ok(PostAction::Remove)
            },
        )
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Looks at the config file every `reload_check_ms` and tries to watch it again each time; the
/// timer ends once a watch is set.
fn poll_config(state: &mut State) -> Result<(), String> {
    let every = |state: &State| {
        Duration::from_millis(u64::from(state.settings.config.reload_check_ms.max(1)))
    };
    let first = every(state);
    state
        .loop_handle
        .insert_source(Timer::from_duration(first), move |_, _, state| {
            let watch = state
                .settings
                .path
                .as_deref()
                .and_then(|path| crate::watch::FileWatch::new(path).ok());
            // Looked at after the watch is set, so a change in between is not missed.
            look_at_config(state);
            if let Some(watch) = watch {
                match watch_config_folder(state, watch) {
                    Ok(()) => {
                        tracing::info!("the config file is watched again");
                        return TimeoutAction::Drop;
                    }
                    Err(e) => tracing::warn!("cannot watch the config file again: {e}"),
                }
            }
            TimeoutAction::ToDuration(every(state))
        })
        .map(|_| ())
        .map_err(|e| e.to_string())
}

impl State {
    /// The config file's modification time, length, mode and owner, to notice changes (a
    /// mode or owner change matters to the trust checks).
    fn config_stamp(&self) -> Option<ConfigStamp> {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(self.settings.path.as_ref()?).ok()?;
        Some((meta.modified().ok()?, meta.len(), meta.mode(), meta.uid()))
    }

    /// Reads the config file again. A file that does not load is refused: the previous config
    /// stays in use and a notice on every output says so (with the error) until a good one
    /// loads. One that loads is proposed to the gate as a new policy
    /// ([`pcp_plugin::policy::propose`]): it applies at once when nothing in it lowers
    /// protection, else only once the user approves the policy-change prompt; until then every
    /// section stays as it is (`apply_policy_sections` runs when it applies). Outputs
    /// are not re-created; the overlay's settings apply from the next prompt.
    pub fn reload_config(&mut self) {
        let Some(path) = self.settings.path.clone() else {
            return;
        };
        match crate::startup::load(Some(&path)) {
            Ok(loaded) => {
                self.settings.notice.set(None);
                let proposal = pcp_plugin::policy::propose(self, loaded.into_proposal());
                tracing::info!("reloaded {}: {proposal:?}", path.display());
            }
            Err(e) => {
                tracing::warn!("config reload refused, keeping the previous config: {e}");
                let text = format!("{} {e}", self.settings.config.reload_error_notice);
                self.settings.notice.set(Some(text));
            }
        }
        self.frames.damage();
        pcp_plugin::refresh(self);
    }
}
