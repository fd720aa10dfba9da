//! The built-in capabilities the reference compositor performs itself, only after the plugin
//! has approved them: closing and moving windows (named by app id), changing an output's mode,
//! and logging out.

use serde_json::Value;
use smithay::desktop::Window;

use crate::handlers::xdg::app_id;
use crate::state::State;

/// How many performed built-ins [`State::performed`] keeps.
pub const PERFORMED_KEPT: usize = 64;

/// Performs `capability` with `params`; the error says what was wrong (the client then gets
/// `denied(execution_failed)`).
pub fn execute(state: &mut State, capability: &str, params: &Value) -> Result<(), String> {
    match capability {
        "window.close" => {
            let name = window_param(params)?;
            for w in windows_named(state, name)? {
                if let Some(t) = w.toplevel() {
                    t.send_close();
                }
            }
        }
        "window.move" => {
            let name = window_param(params)?;
            let index = output_index(state, param(params, "output")?)?;
            let spec = state.backend.outputs[index].spec;
            for w in windows_named(state, name)? {
                state.desktop.space.map_element(w, (spec.x, spec.y), false);
            }
            state.frames.damage();
        }
        "output.configure" => {
            let index = output_index(state, param(params, "output")?)?;
            let mode = param(params, "mode")?
                .as_str()
                .ok_or("`mode` must be WxH or WxH*SCALE")?;
            state
                .reconfigure_output(index, mode)
                .map_err(|e| e.to_string())?;
        }
        "session.logout" => {
            // Nothing to do before the answer: once this returns `Ok` the plugin ends the
            // session's "Allow until logout" choices and reports `Effect::EndSession`, on which
            // the compositor stops (`handlers::pcp`).
        }
        other => return Err(format!("this compositor does not perform {other}")),
    }
    if state.performed.len() >= PERFORMED_KEPT {
        state.performed.pop_front();
    }
    state.performed.push_back(capability.to_string());
    Ok(())
}

fn param<'a>(params: &'a Value, key: &str) -> Result<&'a Value, String> {
    params
        .get(key)
        .ok_or_else(|| format!("the parameter `{key}` is missing"))
}

fn window_param(params: &Value) -> Result<&str, String> {
    param(params, "window")?
        .as_str()
        .ok_or_else(|| "`window` must be an app id".to_string())
}

/// The windows whose app id is `name` (at least one).
fn windows_named(state: &State, name: &str) -> Result<Vec<Window>, String> {
    let windows: Vec<Window> = state
        .desktop
        .space
        .elements()
        .filter(|w| app_id(w).as_deref() == Some(name))
        .cloned()
        .collect();
    if windows.is_empty() {
        return Err(format!("no window has the app id `{name}`"));
    }
    Ok(windows)
}

/// The output a parameter names: its name (`HEADLESS-2`) or its index.
fn output_index(state: &State, name: &Value) -> Result<usize, String> {
    let outputs = &state.backend.outputs;
    let found = match name {
        Value::String(s) => outputs.iter().position(|o| o.output.name() == *s),
        Value::Number(n) => n
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .filter(|n| *n < outputs.len()),
        _ => None,
    };
    found.ok_or_else(|| format!("there is no output {name}"))
}
