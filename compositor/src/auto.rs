//! Which backend `--backend auto` runs: the tty-udev backend on a virtual terminal of a seat,
//! the nested winit window inside another display server, headless otherwise, limited to the
//! backends this binary was built with.

use std::path::Path;

use crate::backend::BackendKind;

/// What the choice looks at, read from the process environment by [`Surroundings::detect`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Surroundings {
    /// `WAYLAND_DISPLAY` or `DISPLAY` is set: another display server is running.
    pub display_server: bool,
    /// Standard input is a virtual terminal (`/dev/ttyN`) or `XDG_SESSION_TYPE=tty`.
    pub on_vt: bool,
    /// A DRM device exists (`/dev/dri/card*`).
    pub drm_device: bool,
    pub winit_built: bool,
    pub udev_built: bool,
}

impl Surroundings {
    /// Reads this process's environment and devices.
    pub fn detect() -> Surroundings {
        let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
        let session_tty = std::env::var("XDG_SESSION_TYPE").is_ok_and(|t| t == "tty");
        Surroundings {
            display_server: set("WAYLAND_DISPLAY") || set("DISPLAY"),
            on_vt: session_tty || stdin_is_vt(),
            drm_device: has_drm_card(Path::new("/dev/dri")),
            winit_built: crate::backend::WINIT_BUILT,
            udev_built: crate::backend::UDEV_BUILT,
        }
    }
}

/// The backend to run and why, in words for the log.
pub fn choose(s: &Surroundings) -> (BackendKind, String) {
    if s.display_server {
        if s.winit_built {
            return (
                BackendKind::Winit,
                "another display server is running: a nested window".into(),
            );
        }
        return (
            BackendKind::Headless,
            "another display server is running but the winit backend is not built in \
             (cargo feature `winit`): headless"
                .into(),
        );
    }
    if s.on_vt && s.drm_device {
        if s.udev_built {
            return (
                BackendKind::Udev,
                "a virtual terminal with a DRM device: a session on this seat".into(),
            );
        }
        return (
            BackendKind::Headless,
            "a virtual terminal, but the udev backend is not built in (cargo feature `udev`): \
             headless"
                .into(),
        );
    }
    let why = match (s.on_vt, s.drm_device) {
        (true, false) => "a virtual terminal without a DRM device (/dev/dri/card*): headless",
        _ => "no display server and not on a virtual terminal: headless",
    };
    (BackendKind::Headless, why.into())
}

/// Whether fd 0 is a Linux virtual terminal (`/dev/ttyN`, not a pseudo-terminal).
fn stdin_is_vt() -> bool {
    std::fs::read_link("/proc/self/fd/0").is_ok_and(|p| is_vt_path(&p))
}

fn is_vt_path(path: &Path) -> bool {
    path.to_str()
        .and_then(|p| p.strip_prefix("/dev/tty"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

fn has_drm_card(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("card"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_built() -> Surroundings {
        Surroundings {
            winit_built: true,
            udev_built: true,
            ..Surroundings::default()
        }
    }

    #[test]
    fn inside_another_display_the_window_is_nested() {
        let s = Surroundings {
            display_server: true,
            on_vt: true,
            drm_device: true,
            ..all_built()
        };
        assert_eq!(choose(&s).0, BackendKind::Winit);
    }

    #[test]
    fn on_a_vt_with_drm_it_is_a_session() {
        let s = Surroundings {
            on_vt: true,
            drm_device: true,
            ..all_built()
        };
        assert_eq!(choose(&s).0, BackendKind::Udev);
    }

    #[test]
    fn otherwise_headless_with_the_reason() {
        let (kind, why) = choose(&all_built());
        assert_eq!(kind, BackendKind::Headless);
        assert!(why.contains("not on a virtual terminal"), "{why}");
        let (kind, why) = choose(&Surroundings {
            on_vt: true,
            ..all_built()
        });
        assert_eq!(kind, BackendKind::Headless);
        assert!(why.contains("without a DRM device"), "{why}");
    }

    #[test]
    fn a_backend_not_built_in_is_never_chosen() {
        let s = Surroundings {
            display_server: true,
            ..Surroundings::default()
        };
        let (kind, why) = choose(&s);
        assert_eq!(kind, BackendKind::Headless);
        assert!(why.contains("`winit`"), "{why}");
        let s = Surroundings {
            on_vt: true,
            drm_device: true,
            ..Surroundings::default()
        };
        let (kind, why) = choose(&s);
        assert_eq!(kind, BackendKind::Headless);
        assert!(why.contains("`udev`"), "{why}");
    }

    #[test]
    fn only_numbered_ttys_are_virtual_terminals() {
        assert!(is_vt_path(Path::new("/dev/tty2")));
        assert!(!is_vt_path(Path::new("/dev/tty")));
        assert!(!is_vt_path(Path::new("/dev/pts/3")));
        assert!(!is_vt_path(Path::new("/dev/ttyS0")));
    }

    #[test]
    fn drm_cards_are_found_by_name() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!has_drm_card(dir.path()));
        std::fs::write(dir.path().join("renderD128"), "").unwrap();
        assert!(!has_drm_card(dir.path()));
        std::fs::write(dir.path().join("card0"), "").unwrap();
        assert!(has_drm_card(dir.path()));
        assert!(!has_drm_card(&dir.path().join("missing")));
    }
}
