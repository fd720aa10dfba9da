//! Confirmation tokens: HMAC-SHA256 over the capability, its version, the canonical params, a
//! multi-step intent's steps, the profile, the app identity the approval was given to, an expiry
//! and a nonce. Single use, verified in constant time, keyed by a 0600 file created on
//! first start and refused when someone else owns it or may read it.

use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::Sha256;

use crate::capability::canonical_json;
use crate::error::StoreError;
use crate::intent::Step;
use crate::registry::Registry;
use crate::store::{NonceSpend, Store};
use crate::trust::{Narrow, TrustRules};

const PREFIX: &str = "pcp1";
const KEY_LEN: usize = 32;

/// What a token vouches for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenClaims {
    #[serde(rename = "cap")]
    pub capability: String,
    #[serde(rename = "ver")]
    pub version: u32,
    pub params: String,
    /// [`steps_digest`] of a multi-step intent's steps; empty without steps.
    #[serde(default)]
    pub steps: String,
    pub profile: String,
    /// The app identity the approval was given to.
    #[serde(default)]
    pub app: String,
    #[serde(rename = "exp")]
    pub expires_ms: i64,
    pub nonce: String,
}

/// [`TokenClaims`] borrowed, as `issue` writes them: the same fields, names and order, so the
/// text is the same.
#[derive(Serialize)]
struct ClaimsText<'a> {
    #[serde(rename = "cap")]
    capability: &'a str,
    #[serde(rename = "ver")]
    version: u32,
    params: &'a str,
    steps: &'a str,
    profile: &'a str,
    app: &'a str,
    #[serde(rename = "exp")]
    expires_ms: i64,
    nonce: &'a str,
}

/// Bytes of claims text besides the parameters and steps (names, profile, app, nonce), to size
/// the buffer once.
const CLAIMS_OVERHEAD: usize = 256;

/// What an approval covers, as the gate issues a token for it.
#[derive(Debug, Clone, Copy)]
pub struct Grant<'a> {
    pub capability: &'a str,
    pub version: u32,
    pub params: &'a Value,
    /// [`steps_digest`] of the steps; empty without steps.
    pub steps: &'a str,
    pub profile: &'a str,
    pub app: &'a str,
}

/// What an executor is about to run, to check a token against. The version is the
/// capability's version now (from the manifests), so a token issued before it changed is
/// refused; the profile is the one in force now.
#[derive(Debug, Clone, Copy)]
pub struct Expected<'a> {
    pub capability: &'a str,
    pub version: u32,
    pub params: &'a Value,
    /// [`steps_digest`] of the steps about to run; empty without steps.
    pub steps: &'a str,
    pub profile: &'a str,
    /// The app identity that must have been given the approval; `None` does not check it.
    pub app: Option<&'a str>,
}

/// The digest a token carries for a multi-step intent's steps: each step's capability, version
/// and canonical params, in order. Empty when there are none.
pub fn steps_digest<'a>(steps: impl IntoIterator<Item = (&'a str, u32, &'a Value)>) -> String {
    let list: Vec<Value> = steps
        .into_iter()
        .map(|(capability, version, params)| {
            Value::Array(vec![capability.into(), version.into(), params.clone()])
        })
        .collect();
    if list.is_empty() {
        String::new()
    } else {
        crate::capability::digest(&Value::Array(list))
    }
}

/// The version of `capability` and the [`steps_digest`] of `steps` as the manifests in
/// `registry` declare them now: what a token must carry to run them. A capability that is no
/// longer declared makes every token for it stale.
pub fn current_versions(
    registry: &Registry,
    capability: &str,
    steps: &[Step],
) -> Result<(u32, String), TokenRejection> {
    let version = registry
        .get(capability)
        .ok_or(TokenRejection::Stale)?
        .version;
    // The gate reads a step's `null` params as `{}`; so does the check.
    let empty = Value::Object(serde_json::Map::new());
    let mut resolved = Vec::with_capacity(steps.len());
    for step in steps {
        let cap = registry
            .get(&step.capability)
            .ok_or(TokenRejection::Stale)?;
        let params = if step.params.is_null() {
            &empty
        } else {
            &step.params
        };
        resolved.push((step.capability.as_str(), cap.version, params));
    }
    Ok((version, steps_digest(resolved)))
}

/// Why a token was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TokenRejection {
    #[error("forged: the token was not issued by this gate or was altered")]
    Forged,
    #[error("mismatch: the token is for another capability, other parameters or other steps")]
    Mismatch,
    #[error("stale: the capability has changed since the approval")]
    Stale,
    #[error("wrong profile: the approval was given under another user profile")]
    WrongProfile,
    #[error("wrong app: the approval was given to another app")]
    WrongApp,
    #[error("expired")]
    Expired,
    #[error("replayed: the token was already used")]
    Replayed,
}

impl TokenRejection {
    pub fn code(self) -> &'static str {
        match self {
            TokenRejection::Forged => "forged",
            TokenRejection::Mismatch => "mismatch",
            TokenRejection::Stale => "stale",
            TokenRejection::WrongProfile => "wrong_profile",
            TokenRejection::WrongApp => "wrong_app",
            TokenRejection::Expired => "expired",
            TokenRejection::Replayed => "replayed",
        }
    }
}

/// The secret key tokens are signed with.
#[derive(Clone)]
pub struct TokenKey {
    /// The HMAC state with the key already absorbed: each token clones it instead of hashing
    /// the key's inner and outer pads again.
    keyed: Hmac<Sha256>,
    /// Nonces are a random per-load prefix and a counter shared by clones: unique without a
    /// system call per token (a nonce must be unique, not secret; the MAC protects it).
    nonce_prefix: [u8; 8],
    nonce_counter: Arc<AtomicU64>,
}

impl std::fmt::Debug for TokenKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenKey(..)")
    }
}

impl TokenKey {
    /// The key file beside a state store: `<state dir>/token.key`.
    pub fn path_beside(state: &Path) -> PathBuf {
        state.with_file_name("token.key")
    }

    /// Reads the key at `path`, creating it (mode 0600, in a 0700 folder) if it does not exist.
    /// A key someone else owns or may read is refused: anyone who can read it can mint
    /// approvals.
    pub fn load_or_create(path: &Path) -> Result<TokenKey, StoreError> {
        TokenKey::load_or_create_with(path, &TrustRules::default())
    }

    /// [`TokenKey::load_or_create`] checking ownership against `trust`.
    pub fn load_or_create_with(path: &Path, trust: &TrustRules) -> Result<TokenKey, StoreError> {
        let file_err = |message: String| StoreError::File {
            path: path.to_path_buf(),
            message,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            if dir.exists() {
                // Checked, never changed: the state store narrows the default folder.
                trust.secret_folder(dir, Narrow::Never)?;
            } else {
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(dir)
                    .map_err(|e| file_err(format!("cannot create the folder: {e}")))?;
            }
        }
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
        {
            Ok(mut file) => {
                let mut key = [0u8; KEY_LEN];
                getrandom::fill(&mut key).map_err(|e| file_err(format!("no randomness: {e}")))?;
                file.write_all(&key)
                    .and_then(|()| file.sync_all())
                    .map_err(|e| file_err(format!("cannot write the token key: {e}")))?;
                return TokenKey::with_fresh_nonces(key).map_err(file_err);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(file_err(format!("cannot create the token key: {e}"))),
        }
        trust.check_secret(path).map_err(|u| {
            file_err(format!(
                "{}; whoever could read this token key can mint approvals: delete it (a new \
                 one is made at the next start) after making its folder private",
                u.reason
            ))
        })?;
        let mut file = std::fs::File::open(path)
            .map_err(|e| file_err(format!("cannot open the token key: {e}")))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(|e| file_err(format!("cannot read the token key: {e}")))?;
        let key: [u8; KEY_LEN] = bytes.as_slice().try_into().map_err(|_| {
            file_err(format!(
                "the token key is {} bytes; expected {KEY_LEN}",
                bytes.len()
            ))
        })?;
        TokenKey::with_fresh_nonces(key).map_err(file_err)
    }

    /// A key from bytes (tests, embedders that keep their own secret).
    pub fn from_bytes(key: [u8; KEY_LEN]) -> Result<TokenKey, StoreError> {
        TokenKey::with_fresh_nonces(key).map_err(|message| StoreError::File {
            path: PathBuf::from("getrandom"),
            message,
        })
    }

    fn with_fresh_nonces(key: [u8; KEY_LEN]) -> Result<TokenKey, String> {
        let mut nonce_prefix = [0u8; 8];
        getrandom::fill(&mut nonce_prefix).map_err(|e| format!("no randomness: {e}"))?;
        // HMAC accepts keys of any length, so this cannot fail.
        let keyed = <Hmac<Sha256> as Mac>::new_from_slice(&key)
            .map_err(|e| format!("cannot key the token MAC: {e}"))?;
        Ok(TokenKey {
            keyed,
            nonce_prefix,
            nonce_counter: Arc::new(AtomicU64::new(0)),
        })
    }

    fn mac(&self) -> Hmac<Sha256> {
        self.keyed.clone()
    }

    /// Issues a token for an approved action.
    pub fn issue(&self, grant: &Grant<'_>, expires_ms: i64) -> Result<String, StoreError> {
        self.issue_canonical(grant, &canonical_json(grant.params), expires_ms)
    }

    /// [`TokenKey::issue`] with `params`, the canonical JSON of `grant.params`, already written.
    pub(crate) fn issue_canonical(
        &self,
        grant: &Grant<'_>,
        params: &str,
        expires_ms: i64,
    ) -> Result<String, StoreError> {
        let mut nonce = [0u8; 16];
        nonce[..8].copy_from_slice(&self.nonce_prefix);
        let count = self.nonce_counter.fetch_add(1, Ordering::Relaxed);
        nonce[8..].copy_from_slice(&count.to_be_bytes());
        let nonce = crate::capability::lower_hex(&nonce);
        let claims = ClaimsText {
            capability: grant.capability,
            version: grant.version,
            params,
            steps: grant.steps,
            profile: grant.profile,
            app: grant.app,
            expires_ms,
            nonce: &nonce,
        };
        // Written once into buffers sized up front: this runs for every approval, routine
        // ones included.
        let mut json = Vec::with_capacity(CLAIMS_OVERHEAD + params.len() + grant.steps.len());
        serde_json::to_writer(&mut json, &claims).map_err(|e| StoreError::File {
            path: PathBuf::from("token"),
            message: format!("cannot encode the token's claims: {e}"),
        })?;
        let mut token = String::with_capacity(PREFIX.len() + 2 + json.len().div_ceil(3) * 4 + 43);
        token.push_str(PREFIX);
        token.push('.');
        let payload_at = token.len();
        URL_SAFE_NO_PAD.encode_string(&json, &mut token);
        let mut mac = self.mac();
        mac.update(&token.as_bytes()[payload_at..]);
        token.push('.');
        URL_SAFE_NO_PAD.encode_string(mac.finalize().into_bytes(), &mut token);
        Ok(token)
    }

    /// Checks a token's signature and decodes its claims, without spending it.
    pub fn open(&self, token: &str) -> Result<TokenClaims, TokenRejection> {
        let mut parts = token.split('.');
        let (Some(PREFIX), Some(payload), Some(tag), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(TokenRejection::Forged);
        };
        let tag = URL_SAFE_NO_PAD
            .decode(tag)
            .map_err(|_| TokenRejection::Forged)?;
        let mut mac = self.mac();
        mac.update(payload.as_bytes());
        // verify_slice compares in constant time.
        mac.verify_slice(&tag).map_err(|_| TokenRejection::Forged)?;
        let bytes = URL_SAFE_NO_PAD
            .decode(payload)
            .map_err(|_| TokenRejection::Forged)?;
        serde_json::from_slice(&bytes).map_err(|_| TokenRejection::Forged)
    }

    /// Verifies a token for what is `expected` to run at `now` and spends it. Only a token
    /// that passes every check is spent. Expiry is judged on the store's token clock, which
    /// never runs back (see [`Store::spend_nonce`]).
    pub fn verify(
        &self,
        store: &mut Store,
        token: &str,
        expected: &Expected<'_>,
        now_ms: i64,
    ) -> Result<Result<TokenClaims, TokenRejection>, StoreError> {
        let claims = match self.open(token) {
            Ok(c) => c,
            Err(r) => return Ok(Err(r)),
        };
        if claims.capability != expected.capability
            || claims.params != canonical_json(expected.params)
            || claims.steps != expected.steps
        {
            return Ok(Err(TokenRejection::Mismatch));
        }
        if claims.version != expected.version {
            return Ok(Err(TokenRejection::Stale));
        }
        if claims.profile != expected.profile {
            return Ok(Err(TokenRejection::WrongProfile));
        }
        if expected.app.is_some_and(|app| app != claims.app) {
            return Ok(Err(TokenRejection::WrongApp));
        }
        if now_ms > claims.expires_ms {
            return Ok(Err(TokenRejection::Expired));
        }
        Ok(
            match store.spend_nonce(&claims.nonce, claims.expires_ms, now_ms)? {
                NonceSpend::Spent => Ok(claims),
                NonceSpend::Replayed => Err(TokenRejection::Replayed),
                NonceSpend::Expired => Err(TokenRejection::Expired),
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn issued_claims_are_the_text_token_claims_would_write() {
        let key = TokenKey::from_bytes([7; KEY_LEN]).unwrap();
        let params = json!({"path": "/tmp/a \"quoted\"", "n": [1, 2]});
        let grant = Grant {
            capability: "file.write",
            version: 3,
            params: &params,
            steps: "abc",
            profile: "work",
            app: "exe:/usr/bin/agent",
        };
        let token = key.issue(&grant, 42).unwrap();
        let claims = key.open(&token).unwrap();
        assert_eq!(
            claims,
            TokenClaims {
                capability: "file.write".into(),
                version: 3,
                params: canonical_json(&params),
                steps: "abc".into(),
                profile: "work".into(),
                app: "exe:/usr/bin/agent".into(),
                expires_ms: 42,
                nonce: claims.nonce.clone(),
            }
        );
        let payload = token.split('.').nth(1).unwrap();
        let text = URL_SAFE_NO_PAD.decode(payload).unwrap();
        assert_eq!(text, serde_json::to_vec(&claims).unwrap());
        // A token signed with another key does not open.
        let other = TokenKey::from_bytes([8; KEY_LEN]).unwrap();
        assert_eq!(other.open(&token), Err(TokenRejection::Forged));
    }
}
