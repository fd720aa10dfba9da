//! Confirmation tokens (seed 002): HMAC-SHA256 over the capability, its version, the canonical
//! params, the profile, an expiry and a nonce. Single use, verified in constant time, keyed by a
//! 0600 file created on first start and refused when someone else owns it or may read it.

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
use crate::store::Store;
use crate::trust::TrustRules;

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
    pub profile: String,
    #[serde(rename = "exp")]
    pub expires_ms: i64,
    pub nonce: String,
}

/// Why a token was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TokenRejection {
    #[error("forged: the token was not issued by this gate or was altered")]
    Forged,
    #[error("mismatch: the token is for another capability or other parameters")]
    Mismatch,
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
            TokenRejection::Expired => "expired",
            TokenRejection::Replayed => "replayed",
        }
    }
}

/// The secret key tokens are signed with.
#[derive(Clone)]
pub struct TokenKey {
    key: [u8; KEY_LEN],
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
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
            && !dir.exists()
        {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(|e| file_err(format!("cannot create the folder: {e}")))?;
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
        Ok(TokenKey {
            key,
            nonce_prefix,
            nonce_counter: Arc::new(AtomicU64::new(0)),
        })
    }

    fn mac(&self) -> Hmac<Sha256> {
        // HMAC accepts keys of any length, so this cannot fail.
        <Hmac<Sha256> as Mac>::new_from_slice(&self.key).unwrap_or_else(|_| unreachable!())
    }

    /// Issues a token for an approved action.
    pub fn issue(
        &self,
        capability: &str,
        version: u32,
        params: &Value,
        profile: &str,
        expires_ms: i64,
    ) -> Result<String, StoreError> {
        let mut nonce = [0u8; 16];
        nonce[..8].copy_from_slice(&self.nonce_prefix);
        let count = self.nonce_counter.fetch_add(1, Ordering::Relaxed);
        nonce[8..].copy_from_slice(&count.to_be_bytes());
        let claims = TokenClaims {
            capability: capability.to_string(),
            version,
            params: canonical_json(params),
            profile: profile.to_string(),
            expires_ms,
            nonce: crate::capability::lower_hex(&nonce),
        };
        let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&claims).unwrap_or_default());
        let mut mac = self.mac();
        mac.update(payload.as_bytes());
        let tag = URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
        Ok(format!("{PREFIX}.{payload}.{tag}"))
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

    /// Verifies a token for `capability` with `params` at `now` and spends it.
    pub fn verify(
        &self,
        store: &mut Store,
        token: &str,
        capability: &str,
        params: &Value,
        now_ms: i64,
    ) -> Result<Result<TokenClaims, TokenRejection>, StoreError> {
        let claims = match self.open(token) {
            Ok(c) => c,
            Err(r) => return Ok(Err(r)),
        };
        if claims.capability != capability || claims.params != canonical_json(params) {
            return Ok(Err(TokenRejection::Mismatch));
        }
        if now_ms > claims.expires_ms {
            return Ok(Err(TokenRejection::Expired));
        }
        if !store.spend_nonce(&claims.nonce, claims.expires_ms, now_ms)? {
            return Ok(Err(TokenRejection::Replayed));
        }
        Ok(Ok(claims))
    }
}
