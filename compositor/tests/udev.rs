//! `pcp-compositor --backend udev` where it cannot run: this machine has no seat session and no
//! GPU a session could take. Built with the `udev` feature, start-up must fail with a clear error
//! naming what is missing (no panic, nothing listening); built without it, the backend is refused
//! with the command that builds it.

use std::process::Command;

#[test]
fn the_udev_backend_without_a_seat_or_gpu_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[manifests]\ndirs = []\n[state]\npath = {:?}\n[overlay]\nsystem_fonts = false\n",
            dir.path().join("state.sqlite3")
        ),
    )
    .unwrap();
    let run = |envs: &[(&str, std::path::PathBuf)]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_pcp-compositor"));
        c.args(["--backend", "udev", "--socket", "pcp-udev-none", "--config"])
            .arg(&config)
            .env("XDG_RUNTIME_DIR", dir.path());
        for (k, v) in envs {
            c.env(k, v);
        }
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{o:?}");
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(!err.contains("panicked"), "{err}");
        err
    };
    // libseat's seatd backend pointed at a socket that does not exist: no seat, on any machine.
    let no_seat = run(&[
        ("LIBSEAT_BACKEND", "seatd".into()),
        ("SEATD_SOCK", dir.path().join("no-seatd.sock")),
    ]);
    // As the environment is, on a machine without /dev/dri (here, a container): either libseat
    // finds no session, or it does and udev lists no GPU. Where a GPU exists this case is
    // skipped: it might really start a session.
    let gpu = std::path::Path::new("/dev/dri").exists();
    let plain = if gpu { None } else { Some(run(&[])) };
    if cfg!(feature = "udev") {
        assert!(no_seat.contains("cannot start the compositor"), "{no_seat}");
        assert!(no_seat.contains("no seat"), "{no_seat}");
        assert!(no_seat.contains("seatd"), "{no_seat}");
        if let Some(plain) = plain {
            assert!(plain.contains("cannot start the compositor"), "{plain}");
            let missing = plain.contains("no seat") || plain.contains("no GPU on seat");
            assert!(missing, "{plain}");
        }
    } else {
        let err = no_seat + &plain.unwrap_or_default();
        assert!(err.contains("built without the `udev` feature"), "{err}");
        assert!(err.contains("--features udev"), "{err}");
    }
}
