//! The desktop's high-contrast preference (feature `a11y`): the XDG settings portal's
//! `org.freedesktop.appearance` `contrast` (1: the user asks for higher contrast), read once
//! and then followed through its `SettingChanged` signal, on a thread of its own. With
//! `[overlay] follow_desktop_contrast` the dialog then draws with the high-contrast palette.
//! Without a session bus or a portal that answers, nothing changes: the config's theme stays.

use calloop::LoopHandle;
use calloop::channel::{Event, Sender, channel};
use futures_lite::StreamExt;
use zbus::zvariant::{OwnedValue, Value};
use zbus::{Connection, Proxy};

use crate::PcpHandler;

const PORTAL: &str = "org.freedesktop.portal.Desktop";
const PORTAL_PATH: &str = "/org/freedesktop/portal/desktop";
const SETTINGS: &str = "org.freedesktop.portal.Settings";
const NAMESPACE: &str = "org.freedesktop.appearance";
const CONTRAST: &str = "contrast";

/// Follows the desktop's contrast preference from now on: each value the portal gives reaches
/// [`crate::set_desktop_high_contrast`] on `handle`'s loop (and the dialog is drawn
/// again). The portal is asked on its own thread: a slow or missing portal never holds the
/// compositor up.
pub fn follow_contrast<D: PcpHandler>(handle: &LoopHandle<'static, D>) -> Result<(), String> {
    let (sender, changes) = channel::<bool>();
    handle
        .insert_source(changes, |event, _, state: &mut D| {
            if let Event::Msg(high) = event {
                crate::set_desktop_high_contrast(state, high);
            }
        })
        .map_err(|e| format!("cannot listen for the desktop's contrast: {e}"))?;
    std::thread::Builder::new()
        .name("pcp-portal".into())
        .spawn(move || zbus::block_on(watch(&sender)))
        .map_err(|e| format!("cannot start the settings portal's thread: {e}"))?;
    Ok(())
}

async fn watch(sender: &Sender<bool>) {
    let bus = match Connection::session().await {
        Ok(c) => c,
        Err(e) => {
            tracing::info!(
                "no session bus, so no desktop contrast setting ({e}): the config's theme stays"
            );
            return;
        }
    };
    let proxy = match Proxy::new(&bus, PORTAL, PORTAL_PATH, SETTINGS).await {
        Ok(p) => p,
        Err(e) => {
            tracing::info!("the settings portal cannot be reached ({e}): the config's theme stays");
            return;
        }
    };
    // Listen before reading, so that a change between the two is not missed.
    let mut changes = match proxy.receive_signal("SettingChanged").await {
        Ok(c) => c,
        Err(e) => {
            tracing::info!("the settings portal's changes cannot be followed ({e})");
            return;
        }
    };
    match proxy
        .call::<_, _, OwnedValue>("ReadOne", &(NAMESPACE, CONTRAST))
        .await
    {
        Ok(value) => match high_contrast(&value) {
            Some(high) => {
                tracing::info!("the desktop asks for high contrast: {high}");
                if sender.send(high).is_err() {
                    return;
                }
            }
            None => {
                tracing::warn!("the portal's {NAMESPACE} {CONTRAST} is not a number: {value:?}")
            }
        },
        Err(e) => {
            tracing::info!(
                "no settings portal answers for {NAMESPACE} {CONTRAST} ({e}): the config's theme stays"
            );
            return;
        }
    }
    while let Some(message) = changes.next().await {
        let Ok((namespace, key, value)) =
            message.body().deserialize::<(String, String, OwnedValue)>()
        else {
            continue;
        };
        if namespace != NAMESPACE || key != CONTRAST {
            continue;
        }
        match high_contrast(&value) {
            Some(high) => {
                tracing::info!("the desktop's contrast changed: high contrast {high}");
                if sender.send(high).is_err() {
                    return;
                }
            }
            None => {
                tracing::warn!("the portal's {NAMESPACE} {CONTRAST} is not a number: {value:?}")
            }
        }
    }
}

/// Whether the portal's `contrast` value asks for high contrast (1; 0 is no preference). The
/// value may come wrapped in variants (the portal's older `Read` wrapped it twice).
fn high_contrast(value: &Value<'_>) -> Option<bool> {
    match value {
        Value::Value(inner) => high_contrast(inner),
        Value::U32(n) => Some(*n == 1),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use zbus::zvariant::Value;

    use super::high_contrast;

    #[test]
    fn contrast_one_is_high_and_anything_else_is_not_or_is_refused() {
        assert_eq!(high_contrast(&Value::U32(1)), Some(true));
        assert_eq!(high_contrast(&Value::U32(0)), Some(false));
        let wrapped = Value::Value(Box::new(Value::Value(Box::new(Value::U32(1)))));
        assert_eq!(high_contrast(&wrapped), Some(true));
        assert_eq!(high_contrast(&Value::from("high")), None);
    }
}
