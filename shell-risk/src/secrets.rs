//! What counts as a secret: files (SSH and TLS keys, cloud and CLI credentials, keyrings,
//! password stores, browser login stores, the agents' own credentials, `.env` files) and
//! environment variables (`*_TOKEN`, `*_SECRET*`, `*_KEY`, `*PASSWORD*`, …). An agent's model
//! provider sees what the agent reads, so reading a secret is already sending it. The lists are
//! the built-in defaults below plus whatever a config adds; a config may also exempt paths and
//! leave the defaults out, which the gate treats as lowering protection.

use std::path::Path;
use std::sync::{Arc, LazyLock};

use crate::glob::{self, GlobError, PathGlob};

/// Secret files and folders: `~/…` under the home folder, `/…` absolute, a bare name anywhere.
/// A folder covers everything in it.
#[rustfmt::skip]
pub const DEFAULT_SECRET_PATHS: &[&str] = &[
    // SSH: private keys wherever they are kept, and everything in ~/.ssh but the public parts
    // (exempted below).
    "~/.ssh", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk",
    // TLS and other private keys, key stores.
    "*.pem", "*.key", "*.p12", "*.pfx", "*.ppk", "*.jks", "*.keystore",
    // Cloud, container and CLI credentials.
    "~/.aws", "~/.config/gcloud", "~/.azure", "~/.kube/config", "~/.docker/config.json",
    "~/.netrc", "~/.git-credentials", "~/.config/git/credentials", "~/.config/gh",
    "~/.config/hub", "~/.npmrc", "~/.yarnrc.yml", "~/.pypirc", "~/.gem/credentials",
    "~/.cargo/credentials", "~/.cargo/credentials.toml", "~/.pgpass", "~/.my.cnf",
    "~/.vault-token", "~/.terraform.d/credentials.tfrc.json", "~/.config/rclone/rclone.conf",
    "~/.config/op", "~/.config/github-copilot",
    // The coding agents' own sign-ins.
    "~/.claude/.credentials.json", "~/.codex/auth.json", "~/.gemini/oauth_creds.json",
    // Keys, keyrings and password stores.
    "~/.gnupg", "~/.password-store", "~/.local/share/keyrings", "~/.local/share/kwalletd",
    // Browsers' cookie and login stores (Firefox, its snap, and every Chromium-based browser
    // under ~/.config).
    "~/.mozilla/**/cookies.sqlite", "~/.mozilla/**/logins.json", "~/.mozilla/**/key4.db",
    "~/.mozilla/**/key3.db", "~/snap/firefox/common/.mozilla/**/cookies.sqlite",
    "~/snap/firefox/common/.mozilla/**/logins.json", "~/snap/firefox/common/.mozilla/**/key4.db", "~/.config/*/**/Cookies", "~/.config/*/**/Login Data",
    "~/.config/*/**/Login Data For Account", "~/.config/*/**/Web Data",
    // Project secrets: `.env` files hold API keys, and agents are asked to read them by text
    // they read (their examples are exempted below).
    ".env", ".env.*", ".envrc",
    // The environment of running processes, and the system's own keys.
    "/proc/*/environ", "/etc/shadow", "/etc/gshadow", "/etc/ssh/ssh_host_*_key",
];

/// Paths the defaults name that are not secret: public keys, SSH's host list and config, and
/// `.env` examples.
#[rustfmt::skip]
pub const DEFAULT_NOT_SECRET: &[&str] = &[
    "*.pub", "~/.ssh/known_hosts", "~/.ssh/known_hosts.old", "~/.ssh/config",
    "~/.ssh/authorized_keys", "~/.ssh/authorized_keys2", "~/.ssh/rc", "~/.ssh/environment",
    ".env.example", ".env.sample", ".env.template", ".env.dist", ".env.defaults",
];

/// Environment variables whose value is a secret (case does not matter).
#[rustfmt::skip]
pub const DEFAULT_SECRET_ENV: &[&str] = &[
    "*_TOKEN", "*_SECRET", "*_SECRET_*", "*SECRET_KEY*", "*_KEY", "*_KEYS", "*PASSWORD*",
    "*PASSWD*", "*_PASS", "*CREDENTIAL*", "*_PRIVATE_KEY*", "*_API_KEY*", "*_AUTH_TOKEN*",
    "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "DATABASE_URL", "*_DSN", "GITHUB_TOKEN",
    "GH_TOKEN", "NPM_TOKEN",
];

/// The compiled secret lists a [`crate::Context`] carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Secrets {
    paths: Vec<PathGlob>,
    not_secret: Vec<PathGlob>,
    /// Upper-cased name patterns.
    env: Vec<String>,
}

/// Which of a config's lists an invalid entry is in, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretsError {
    /// `secrets` or `not_secrets`: entry index and the glob's error.
    Path {
        list: &'static str,
        index: usize,
        error: GlobError,
    },
    /// `secret_env`: entry index and why.
    Env {
        index: usize,
        name: String,
        message: &'static str,
    },
}

impl std::fmt::Display for SecretsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SecretsError::Path { list, index, error } => {
                write!(f, "{list}[{index}] {error}")
            }
            SecretsError::Env {
                index,
                name,
                message,
            } => write!(f, "secret_env[{index}] `{name}`: {message}"),
        }
    }
}

impl std::error::Error for SecretsError {}

static BUILTIN: LazyLock<Arc<Secrets>> = LazyLock::new(|| {
    let none: &[&str] = &[];
    let built = Secrets::new(none, none, none, true);
    // The defaults are checked by a test; were one ever refused, nothing would be lost but it.
    Arc::new(built.unwrap_or_else(|_| Secrets::empty()))
});

impl Secrets {
    /// The built-in lists, shared.
    pub fn builtin() -> Arc<Secrets> {
        BUILTIN.clone()
    }

    fn empty() -> Secrets {
        Secrets {
            paths: Vec::new(),
            not_secret: Vec::new(),
            env: Vec::new(),
        }
    }

    /// The lists a config asks for: its own entries, beside the built-in ones when `builtin`.
    pub fn new<S: AsRef<str>>(
        paths: &[S],
        not_secret: &[S],
        env: &[S],
        builtin: bool,
    ) -> Result<Secrets, SecretsError> {
        let mut s = Secrets::empty();
        let compile = |list: &'static str, items: &[&str], out: &mut Vec<PathGlob>| {
            for (index, item) in items.iter().enumerate() {
                let glob = PathGlob::new(item).map_err(|error| SecretsError::Path {
                    list,
                    index,
                    error,
                })?;
                out.push(glob);
            }
            Ok(())
        };
        if builtin {
            compile("secrets", DEFAULT_SECRET_PATHS, &mut s.paths)?;
            compile("not_secrets", DEFAULT_NOT_SECRET, &mut s.not_secret)?;
            s.env
                .extend(DEFAULT_SECRET_ENV.iter().map(|e| e.to_ascii_uppercase()));
        }
        compile("secrets", &refs(paths), &mut s.paths)?;
        compile("not_secrets", &refs(not_secret), &mut s.not_secret)?;
        for (index, name) in refs(env).into_iter().enumerate() {
            let bad = |message| SecretsError::Env {
                index,
                name: name.to_string(),
                message,
            };
            if name.is_empty() || name.chars().all(|c| c == '*') {
                return Err(bad(
                    "the pattern names no variable (it would match every one)",
                ));
            }
            if !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '*' | '?'))
            {
                return Err(bad("only letters, digits, `_`, `*` and `?` may appear"));
            }
            s.env.push(name.to_ascii_uppercase());
        }
        Ok(s)
    }

    /// The secret pattern that covers `path` (absolute, resolved), unless an exemption does.
    pub fn secret_at(&self, path: &Path, home: Option<&Path>) -> Option<&str> {
        let comps = glob::components(path);
        let home_comps = home.map(glob::components);
        self.covering(&comps, home_comps.as_deref())
    }

    pub(crate) fn covering(&self, comps: &[&str], home: Option<&[&str]>) -> Option<&str> {
        let hit = self.paths.iter().find(|g| g.covers(comps, home))?;
        if self.not_secret.iter().any(|g| g.covers(comps, home)) {
            return None;
        }
        Some(hit.as_str())
    }

    /// A secret pattern that names something at or under the folder `path`, or covers the
    /// folder itself: what reading the whole folder reads. `skip_hidden` as [`PathGlob`] says.
    pub fn secret_under(
        &self,
        path: &Path,
        home: Option<&Path>,
        skip_hidden: bool,
    ) -> Option<&str> {
        let comps = glob::components(path);
        let home_comps = home.map(glob::components);
        let home_comps = home_comps.as_deref();
        if let Some(hit) = self.covering(&comps, home_comps) {
            return Some(hit);
        }
        self.paths
            .iter()
            .find(|g| g.under(&comps, home_comps, skip_hidden))
            .map(PathGlob::as_str)
    }

    /// A secret pattern that a path the shell pattern `word` (absolute components) expands to
    /// could match, unless the word's last component ends the way an exempted name does
    /// (`~/.ssh/*.pub`).
    pub(crate) fn secret_in_glob(&self, word: &[&str], home: Option<&Path>) -> Option<&str> {
        let home_comps = home.map(glob::components);
        let home_comps = home_comps.as_deref();
        let hit = self.paths.iter().find(|g| g.may_hit(word, home_comps))?;
        let last = word.last().copied().unwrap_or("");
        let end: String = {
            let rev: String = last
                .chars()
                .rev()
                .take_while(|c| !"*?]".contains(*c))
                .collect();
            rev.chars().rev().collect()
        };
        let exempt = self.not_secret.iter().any(|g| g.exempts_ending(&end));
        (!exempt).then(|| hit.as_str())
    }

    /// Whether the variable `name` holds a secret.
    pub fn is_secret_env(&self, name: &str) -> bool {
        let upper = name.to_ascii_uppercase();
        self.env.iter().any(|p| glob::glob_match(p, &upper))
    }

    /// The secret patterns, for a check that a folder is covered.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.paths.iter().map(PathGlob::as_str)
    }
}

fn refs<S: AsRef<str>>(v: &[S]) -> Vec<&str> {
    v.iter().map(AsRef::as_ref).collect()
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn home() -> PathBuf {
        PathBuf::from("/home/u")
    }

    #[test]
    fn the_defaults_compile_and_name_the_usual_secrets() {
        let s = Secrets::new::<&str>(&[], &[], &[], true).unwrap();
        assert_eq!(&s, Secrets::builtin().as_ref());
        let h = home();
        let at = |p: &str| s.secret_at(Path::new(p), Some(&h));
        for secret in [
            "/home/u/.ssh/id_rsa",
            "/home/u/.ssh/id_ed25519",
            "/home/u/.ssh/deploy_key",
            "/home/u/.aws/credentials",
            "/home/u/.config/gh/hosts.yml",
            "/home/u/.kube/config",
            "/home/u/.mozilla/firefox/ab.default/logins.json",
            "/home/u/.config/google-chrome/Default/Login Data",
            "/home/u/.config/chromium/Default/Network/Cookies",
            "/home/u/proj/.env",
            "/home/u/proj/.env.local",
            "/srv/tls/server.key",
            "/proc/self/environ",
            "/tmp/copy/id_rsa",
        ] {
            assert!(at(secret).is_some(), "{secret}");
        }
        for plain in [
            "/home/u/.ssh/id_rsa.pub",
            "/home/u/.ssh/known_hosts",
            "/home/u/.ssh/config",
            "/home/u/proj/.env.example",
            "/home/u/proj/src/main.rs",
            "/home/u/.bashrc",
            "/etc/hosts",
        ] {
            assert_eq!(at(plain), None, "{plain}");
        }
    }

    #[test]
    fn folders_that_hold_secrets_are_found() {
        let s = Secrets::builtin();
        let h = home();
        let under = |p: &str, hidden| s.secret_under(Path::new(p), Some(&h), hidden);
        assert!(under("/home/u", false).is_some());
        assert!(under("/home", false).is_some());
        assert!(under("/home/u/.ssh", true).is_some());
        assert!(under("/home/u/proj", false).is_none());
        assert!(
            under("/home/u", true).is_none(),
            "{:?}",
            under("/home/u", true)
        );
    }

    #[test]
    fn secret_variables_match_by_pattern() {
        let s = Secrets::builtin();
        for name in [
            "AWS_SECRET_ACCESS_KEY",
            "GITHUB_TOKEN",
            "OPENAI_API_KEY",
            "db_password",
            "DATABASE_URL",
        ] {
            assert!(s.is_secret_env(name), "{name}");
        }
        for name in [
            "HOME",
            "PATH",
            "EDITOR",
            "TOKENIZERS_PARALLELISM",
            "KEYBOARD",
        ] {
            assert!(!s.is_secret_env(name), "{name}");
        }
    }

    #[test]
    fn a_config_extends_or_replaces_the_defaults() {
        let mine = Secrets::new(&["~/work/vault"], &[], &["MY_VAR"], true).unwrap();
        let h = home();
        assert!(
            mine.secret_at(Path::new("/home/u/work/vault/x"), Some(&h))
                .is_some()
        );
        assert!(
            mine.secret_at(Path::new("/home/u/.aws/config"), Some(&h))
                .is_some()
        );
        assert!(mine.is_secret_env("my_var"));
        let only = Secrets::new(&["~/work/vault"], &[], &[], false).unwrap();
        assert!(
            only.secret_at(Path::new("/home/u/.aws/config"), Some(&h))
                .is_none()
        );
        let exempt = Secrets::new(&[], &["~/.aws/config"], &[], true).unwrap();
        assert!(
            exempt
                .secret_at(Path::new("/home/u/.aws/config"), Some(&h))
                .is_none()
        );
        let e = Secrets::new(&["a/b"], &[], &[], true).unwrap_err();
        assert!(e.to_string().starts_with("secrets[0] `a/b`"), "{e}");
        let e = Secrets::new(&[], &[], &["*"], true).unwrap_err();
        assert!(e.to_string().contains("every one"), "{e}");
    }
}
