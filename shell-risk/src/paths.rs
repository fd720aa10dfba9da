//! Where a path points once resolved against the working folder and the home folder: inside the
//! working folder, the home folder or `/` themselves, a system folder, a dotfile, a shell
//! start-up file, a block device. Resolution is lexical (`.` and `..` folded, nothing read from
//! disk), so classifying never touches the file system.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use crate::phrases::{self, Phrase};
use crate::secrets::Secrets;

/// Where the command runs: the working folder the agent was started in and the user's home, and
/// what counts as a secret there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    /// The working folder, absolute. "Outside the working folder" is decided against it. Empty
    /// means there is none: nothing is inside or outside it, and only the home folder, dotfiles,
    /// start-up files, system folders and devices count.
    pub cwd: PathBuf,
    /// The home folder, absolute, for `~` and `$HOME`; `None` when unknown.
    pub home: Option<PathBuf>,
    /// Secret files and variables: reading one, printing one or sending one anywhere is High.
    pub secrets: Arc<Secrets>,
}

impl Context {
    /// A context with the built-in secret lists.
    pub fn new(cwd: impl Into<PathBuf>, home: Option<PathBuf>) -> Context {
        Context {
            cwd: cwd.into(),
            home,
            secrets: Secrets::builtin(),
        }
    }

    /// This context with other secret lists (a config's).
    pub fn with_secrets(mut self, secrets: Arc<Secrets>) -> Context {
        self.secrets = secrets;
        self
    }
}

/// Top-level folders of the system: writing, deleting or re-owning there changes the machine.
const SYSTEM_DIRS: &[&str] = &[
    "bin", "boot", "dev", "efi", "etc", "lib", "lib32", "lib64", "libx32", "opt", "proc", "root",
    "sbin", "snap", "srv", "sys", "usr", "var",
];

/// Shell start-up files and other files that run code or grant access at the next login.
const STARTUP_FILES: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".cshrc",
    ".tcshrc",
    ".kshrc",
    ".xinitrc",
    ".xprofile",
    ".xsessionrc",
    ".config/fish/config.fish",
    ".ssh/authorized_keys",
    ".ssh/config",
    ".ssh/rc",
    ".pam_environment",
    ".config/autostart",
    ".config/systemd/user",
];

/// Folders in the home folder whose programs run later on their own (D-Bus activation,
/// desktop entries that replace a launcher or claim a link type, the session's environment) or
/// in place of a command (the user's own folders on `PATH`).
const PERSISTENCE_DIRS: &[&str] = &[
    "bin",
    ".local/bin",
    ".local/share/applications",
    ".local/share/dbus-1",
    ".config/environment.d",
    ".config/git/hooks",
];

/// Device files that are disks or partitions (writing them destroys a file system).
const BLOCK_DEVICE_PREFIXES: &[&str] = &[
    "/dev/sd",
    "/dev/hd",
    "/dev/vd",
    "/dev/xvd",
    "/dev/nvme",
    "/dev/mmcblk",
    "/dev/dm-",
    "/dev/md",
    "/dev/loop",
    "/dev/mapper/",
    "/dev/disk/",
    "/dev/sr",
    "/dev/mem",
    "/dev/kmem",
    "/dev/port",
];

/// Device files a write to is harmless.
const HARMLESS_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/tty",
    "/dev/zero",
    "/dev/fd/1",
    "/dev/fd/2",
];

/// Lexically resolves `text` (already unquoted, `~` already expanded) against `base`.
pub fn resolve(base: &Path, text: &str) -> PathBuf {
    let joined = if text.starts_with('/') {
        PathBuf::from(text)
    } else {
        base.join(text)
    };
    let mut out = PathBuf::from("/");
    for c in joined.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// The part of a path pattern before its first component with a glob character, and whether
/// there was one: `/var/*/x` → (`/var`, true). A pattern acts on what is inside that folder.
pub fn glob_base(text: &str) -> (String, bool) {
    let is_glob = |s: &str| s.contains(['*', '?', '['].as_ref());
    if !is_glob(text) {
        return (text.to_string(), false);
    }
    let mut kept = Vec::new();
    for part in text.split('/') {
        if is_glob(part) {
            break;
        }
        kept.push(part);
    }
    let base = kept.join("/");
    if base.is_empty() {
        let root = if text.starts_with('/') { "/" } else { "." };
        return (root.to_string(), true);
    }
    (base, true)
}

/// What a resolved path is, for the rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// `/` itself.
    Root,
    /// The home folder itself, or a folder that holds it (`/home`).
    Home,
    /// A system folder or anything in one.
    System,
    /// The working folder itself or a folder that holds it.
    WorkingFolder,
    /// Strictly inside the working folder.
    Inside,
    /// A shell start-up file or another file that runs code at login.
    Startup,
    /// A folder whose programs run later on their own or in place of a command (`~/.local/bin`,
    /// `~/.local/share/applications`), or another repository's git hooks.
    Persistence,
    /// A dotfile or dot-folder in the home folder, outside the working folder.
    Dotfile,
    /// Anywhere else outside the working folder.
    Outside,
}

impl Place {
    /// The place in words, as a phrase of the catalogue.
    pub fn describe(self) -> &'static Phrase {
        match self {
            Place::Root => &phrases::PLACE_ROOT,
            Place::Home => &phrases::PLACE_HOME,
            Place::System => &phrases::PLACE_SYSTEM,
            Place::WorkingFolder => &phrases::PLACE_WORKING_FOLDER,
            Place::Inside => &phrases::PLACE_INSIDE,
            Place::Startup => &phrases::PLACE_STARTUP,
            Place::Persistence => &phrases::PLACE_PERSISTENCE,
            Place::Dotfile => &phrases::PLACE_DOTFILE,
            Place::Outside => &phrases::PLACE_OUTSIDE,
        }
    }
}

/// Classifies a resolved absolute path.
pub fn place(path: &Path, ctx: &Context) -> Place {
    if path == Path::new("/") {
        return Place::Root;
    }
    if let Some(home) = &ctx.home
        && home.starts_with(path)
    {
        return Place::Home;
    }
    let has_cwd = !ctx.cwd.as_os_str().is_empty();
    if has_cwd && ctx.cwd.starts_with(path) {
        // `/` and the home folder were caught above.
        return Place::WorkingFolder;
    }
    if has_cwd && path.starts_with(&ctx.cwd) {
        return Place::Inside;
    }
    if git_hook(path) {
        return Place::Persistence;
    }
    if let Some(home) = &ctx.home
        && let Ok(rel) = path.strip_prefix(home)
    {
        if STARTUP_FILES.iter().any(|f| rel.starts_with(f)) {
            return Place::Startup;
        }
        if PERSISTENCE_DIRS.iter().any(|f| rel.starts_with(f)) {
            return Place::Persistence;
        }
        if rel
            .components()
            .any(|c| c.as_os_str().to_string_lossy().starts_with('.'))
        {
            return Place::Dotfile;
        }
        return Place::Outside;
    }
    let text = path.to_string_lossy();
    if text.starts_with("/etc/profile")
        || text == "/etc/bash.bashrc"
        || text == "/etc/environment"
        || text.starts_with("/etc/sudoers")
    {
        return Place::Startup;
    }
    if text.starts_with("/var/tmp") {
        return Place::Outside;
    }
    match path.components().nth(1) {
        Some(Component::Normal(first))
            if SYSTEM_DIRS.contains(&first.to_string_lossy().as_ref()) =>
        {
            Place::System
        }
        _ => Place::Outside,
    }
}

/// Whether `path` is in a repository's hooks folder (`…/.git/hooks/…`).
fn git_hook(path: &Path) -> bool {
    let mut after_git = false;
    for c in path.components() {
        let name = c.as_os_str();
        if after_git && name == "hooks" {
            return true;
        }
        after_git = name == ".git";
    }
    false
}

/// Whether a write to `path` goes to a disk or partition device.
pub fn is_block_device(path: &Path) -> bool {
    let text = path.to_string_lossy();
    BLOCK_DEVICE_PREFIXES.iter().any(|p| text.starts_with(p))
}

/// Whether a write to `path` is harmless (`/dev/null` and the standard streams).
pub fn is_harmless_device(path: &Path) -> bool {
    let text = path.to_string_lossy();
    HARMLESS_DEVICES.contains(&text.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Context {
        Context::new("/home/u/proj", Some(PathBuf::from("/home/u")))
    }

    #[test]
    fn resolution_folds_dots_lexically() {
        let c = ctx();
        assert_eq!(resolve(&c.cwd, "../x"), PathBuf::from("/home/u/x"));
        assert_eq!(
            resolve(&c.cwd, "./a/./b/.."),
            PathBuf::from("/home/u/proj/a")
        );
        assert_eq!(resolve(&c.cwd, "/../../etc"), PathBuf::from("/etc"));
    }

    #[test]
    fn places_follow_the_working_folder_and_home() {
        let c = ctx();
        let p = |s: &str| place(&resolve(&c.cwd, s), &c);
        assert_eq!(p("/"), Place::Root);
        assert_eq!(p("/home"), Place::Home);
        assert_eq!(p("/home/u"), Place::Home);
        assert_eq!(p("."), Place::WorkingFolder);
        assert_eq!(p("target"), Place::Inside);
        assert_eq!(p("../.bashrc"), Place::Startup);
        assert_eq!(p("../.config/nvim"), Place::Dotfile);
        assert_eq!(p("../other"), Place::Outside);
        assert_eq!(p("/etc/hosts"), Place::System);
        assert_eq!(p("/tmp/x"), Place::Outside);
        assert_eq!(p("/var/tmp/x"), Place::Outside);
        assert_eq!(p("../.local/bin/ls"), Place::Persistence);
        assert_eq!(p("../bin/git"), Place::Persistence);
        assert_eq!(p("../other/.git/hooks/pre-commit"), Place::Persistence);
        assert_eq!(p("/srv/repo/.git/hooks/post-merge"), Place::Persistence);
        assert_eq!(p(".git/hooks/pre-commit"), Place::Inside);
    }

    #[test]
    fn glob_bases_cut_at_the_first_pattern() {
        assert_eq!(glob_base("/*"), ("/".to_string(), true));
        assert_eq!(glob_base("*"), (".".to_string(), true));
        assert_eq!(glob_base("build/*.o"), ("build".to_string(), true));
        assert_eq!(glob_base("a/b"), ("a/b".to_string(), false));
    }
}
