//! The gate: one session's confirmation state (config, store, token key, profile, what hardware
//! can answer, the prompt queue) and its read-only views. What it does with an intent lives in
//! three modules by concern: `decide` (evaluate, plan, submit), `queue` (the queue, answers,
//! deadlines, cancellation) and `record` (audit records, approvals committed with their tokens,
//! denials). Every path ends in an audited outcome; any error on the way is a denial.

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use crate::audit::ClientIdentity;
use crate::capability::Capability;
use crate::config::GateConfig;
use crate::error::StoreError;
use crate::intent::Step;
use crate::intent::{Availability, IntentId};
use crate::policy_prompt::PolicyState;
use crate::prompt::Prompt;
use crate::store::{FrictionKey, GroupCommit, Store};
use crate::token::{self, Expected, TokenClaims, TokenKey, TokenRejection};
use crate::trust::TrustRules;

pub use crate::decide::Evaluation;
pub use crate::queue::RespondError;

/// The confirmation gate for one session.
pub struct Gate {
    pub(crate) config: GateConfig,
    pub(crate) store: Store,
    pub(crate) key: TokenKey,
    pub(crate) profile: String,
    pub(crate) available: Availability,
    /// Open prompts; the front one is shown once its `shown_ms` is set.
    pub(crate) prompts: VecDeque<Prompt>,
    pub(crate) next_id: u64,
    /// The host's facts and rules for the policy in force, and a policy change waiting.
    pub(crate) policy: PolicyState,
    /// For each app with a prompt waiting, the turn after its last one (see `Gate::enqueue`).
    pub(crate) turns: HashMap<String, u64>,
    /// The turn of the prompt shown last.
    pub(crate) served_turn: u64,
    /// "Allow until logout" choices in force, each with the capability as it was declared
    /// when the user chose (see `session`).
    pub(crate) session_approvals: HashMap<FrictionKey, Arc<Capability>>,
    /// Prompts are answered by a scripted user (the test harness): their records say so.
    /// Settable only with the `scripted-user` feature.
    pub(crate) scripted_user: bool,
}

impl Gate {
    /// A gate over `config`, its history and audit in `store`, its tokens signed with `key`.
    pub fn new(config: GateConfig, store: Store, key: TokenKey) -> Result<Gate, StoreError> {
        let profile = config.file.session.profile.clone();
        let mut gate = Gate {
            config,
            store,
            key,
            profile,
            available: Availability::default(),
            prompts: VecDeque::new(),
            next_id: 1,
            policy: PolicyState::default(),
            turns: HashMap::new(),
            served_turn: 0,
            session_approvals: HashMap::new(),
            scripted_user: false,
        };
        gate.sync_capability_versions()?;
        Ok(gate)
    }

    /// A gate that only looks: the store opened read-only, capability versions not synced, a
    /// throwaway token key. For `explain`.
    pub fn inspect(config: GateConfig, state: &Path) -> Result<Gate, StoreError> {
        let store = Store::open_read_only(state)?;
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(|e| StoreError::File {
            path: state.to_path_buf(),
            message: format!("no randomness: {e}"),
        })?;
        let profile = config.file.session.profile.clone();
        Ok(Gate {
            config,
            store,
            key: TokenKey::from_bytes(key)?,
            profile,
            available: Availability::default(),
            prompts: VecDeque::new(),
            next_id: 1,
            policy: PolicyState::default(),
            turns: HashMap::new(),
            served_turn: 0,
            session_approvals: HashMap::new(),
            scripted_user: false,
        })
    }

    /// From now on every prompt is answered by a scripted user, and its audit record says so
    /// (`scripted: true`). Only for the test harness: the `scripted-user` feature that compiles
    /// this is enabled by `pcp-tests` alone, never by a session binary, so a real session can
    /// never mark a person's answer as scripted (or hide one behind the mark).
    #[cfg(feature = "scripted-user")]
    pub fn attach_scripted_user(&mut self) {
        self.scripted_user = true;
    }

    /// Whether prompts are answered by a scripted user (see `attach_scripted_user`).
    pub fn scripted_user(&self) -> bool {
        self.scripted_user
    }

    /// Opens the store and token key at the config's state path.
    pub fn open(config: GateConfig) -> Result<Gate, StoreError> {
        let path = config.state_path();
        let group = GroupCommit {
            max_records: config.file.audit.group_commit_records,
            max_age_ms: i64::from(config.file.audit.group_commit_ms),
        };
        let store = Store::open_with_queue(
            &path,
            group,
            &TrustRules::default(),
            config.file.audit.writer_queue_batches,
        )?;
        let key = TokenKey::load_or_create(&TokenKey::path_beside(&path))?;
        Gate::new(config, store, key)
    }

    fn sync_capability_versions(&mut self) -> Result<(), StoreError> {
        let caps: Vec<(String, u32)> = self
            .config
            .registry
            .iter()
            .map(|c| (c.name.clone(), c.version))
            .collect();
        for (name, version) in caps {
            if self.store.note_capability_version(&name, version)? {
                tracing::info!("capability {name} is now version {version}: its history is reset");
            }
        }
        Ok(())
    }

    pub fn config(&self) -> &GateConfig {
        &self.config
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn store_mut(&mut self) -> &mut Store {
        &mut self.store
    }

    pub fn token_key(&self) -> &TokenKey {
        &self.key
    }

    /// Replaces the config as it is, asking nobody; open prompts keep their plans. A host that
    /// reloads a user's files uses [`Gate::propose_policy`], which asks before lowering.
    pub fn reload(&mut self, config: GateConfig) -> Result<(), StoreError> {
        self.config = config;
        self.prune_session_approvals();
        self.sync_capability_versions()
    }

    /// Switches the user profile: the new profile's own history applies from now on, and the
    /// session approvals given under the old one end.
    pub fn set_profile(&mut self, profile: &str) {
        if self.profile != profile {
            self.session_approvals.clear();
        }
        self.profile = profile.to_string();
    }

    pub fn profile(&self) -> &str {
        &self.profile
    }

    /// Tells the gate what can answer prompts now.
    pub fn set_available(&mut self, available: Availability) {
        self.available = available;
    }

    pub fn available(&self) -> Availability {
        self.available
    }

    /// A capability was updated to `version`: its history is reset. False when it is unknown.
    pub fn update_capability(&mut self, name: &str, version: u32) -> Result<bool, StoreError> {
        if !self.config.registry.set_version(name, version) {
            return Ok(false);
        }
        self.prune_session_approvals();
        self.store.note_capability_version(name, version)?;
        Ok(true)
    }

    /// The prompt being shown, if any.
    pub fn active(&self) -> Option<&Prompt> {
        self.prompts.front().filter(|p| p.shown_ms.is_some())
    }

    /// Every open prompt, the shown one first.
    pub fn prompts(&self) -> impl Iterator<Item = &Prompt> {
        self.prompts.iter()
    }

    pub fn prompt(&self, id: IntentId) -> Option<&Prompt> {
        self.prompts.iter().find(|p| p.id == id)
    }

    /// The earliest time `tick` has work to do: a prompt deadline or a group commit.
    pub fn next_deadline(&self) -> Option<i64> {
        self.active().and_then(Prompt::next_deadline)
    }

    /// Verifies and spends `token` for running `capability` with `params` (and `steps`) now:
    /// versions from the manifests in force, the profile in force, and the app when `app`
    /// names one.
    pub fn verify_token(
        &mut self,
        token: &str,
        capability: &str,
        params: &Value,
        steps: &[Step],
        app: Option<&str>,
        now_ms: i64,
    ) -> Result<Result<TokenClaims, TokenRejection>, StoreError> {
        let (version, steps) =
            match token::current_versions(&self.config.registry, capability, steps) {
                Ok(v) => v,
                Err(rejection) => return Ok(Err(rejection)),
            };
        let expected = Expected {
            capability,
            version,
            params,
            steps: &steps,
            profile: &self.profile,
            app,
        };
        self.key.verify(&mut self.store, token, &expected, now_ms)
    }

    /// Commits every buffered audit record (call at shutdown or when idle).
    pub fn flush(&mut self) -> Result<(), StoreError> {
        self.store.flush()
    }
}

/// The verified app identity a client's prompt slots, turns and tokens belong to.
pub(crate) fn app_of(client: &ClientIdentity) -> String {
    client.app_key()
}
