//! The gate: one session's confirmation state and the only `impl Gate`. It owns the policy in
//! force (the config), the profile and what hardware can answer, and orchestrates the concerns
//! that own the rest: the `Queue` of open prompts (`queue`), the `Ledger` of store and token key
//! (`ledger`), the `PolicyGate` that asks before a policy lowers protection (`policy_prompt`)
//! and the `SessionApprovals` (`session`). Evaluation (`decide`) and `explain` read the pieces
//! and own nothing. Control flows one way: the gate calls a concern, handing it the other
//! pieces it needs; no concern calls back into the gate. Every path ends in an audited outcome;
//! any error on the way is a denial.

use std::path::Path;

use serde_json::Value;

use crate::audit::Resolution;
use crate::config::GateConfig;
use crate::decide::Evaluator;
use crate::error::{ConfigError, StoreError};
use crate::explain::{self, Explanation};
use crate::identity::ProcessChange;
use crate::intent::ModalityEvent;
use crate::intent::{Authorizer, Availability, Decision, Intent, IntentId, Outcome, Step};
use crate::ledger::{DenyContext, FailedExecution, Ledger};
use crate::policy::{self, KeyRule, PolicyChange, ProtectionFact};
use crate::policy_prompt::{self, PolicyGate, Proposal, StartPolicy};
use crate::prompt::Prompt;
use crate::queue::{Ended, Queue};
use crate::session::SessionApprovals;
use crate::sources::PolicySources;
use crate::store::Store;
use crate::token::{self, Expected, TokenClaims, TokenKey, TokenRejection};
use crate::types::Threshold;

pub use crate::decide::Evaluation;
pub use crate::queue::RespondError;

/// The confirmation gate for one session.
pub struct Gate {
    /// The policy in force.
    config: GateConfig,
    profile: String,
    available: Availability,
    queue: Queue,
    ledger: Ledger,
    policy: PolicyGate,
    sessions: SessionApprovals,
}

impl Gate {
    /// A gate over `config`, its history and audit in `store`, its tokens signed with `key`.
    pub fn new(config: GateConfig, store: Store, key: TokenKey) -> Result<Gate, StoreError> {
        Gate::with_ledger(config, Ledger::new(store, key))
    }

    fn with_ledger(config: GateConfig, mut ledger: Ledger) -> Result<Gate, StoreError> {
        ledger.sync_capability_versions(&config.registry)?;
        Ok(Gate::unsynced(config, ledger))
    }

    fn unsynced(config: GateConfig, ledger: Ledger) -> Gate {
        Gate {
            profile: config.file.session.profile.clone(),
            config,
            available: Availability::default(),
            queue: Queue::default(),
            ledger,
            policy: PolicyGate::default(),
            sessions: SessionApprovals::default(),
        }
    }

    /// A gate that only looks: the store opened read-only, capability versions not synced, a
    /// throwaway token key. For `explain`.
    pub fn inspect(config: GateConfig, state: &Path) -> Result<Gate, StoreError> {
        Ok(Gate::unsynced(config, Ledger::inspect(state)?))
    }

    /// Opens the store and token key at the config's state path.
    pub fn open(config: GateConfig) -> Result<Gate, StoreError> {
        let ledger = Ledger::open(&config)?;
        Gate::with_ledger(config, ledger)
    }

    /// Opens the gate at a session start with the policy loaded from the files (`config`, with
    /// the host's `facts` and `host_rules`), checked against the last approved policy in the
    /// state store at the config's state path.
    pub fn start(
        config: GateConfig,
        facts: Vec<ProtectionFact>,
        host_rules: Vec<KeyRule>,
        now_ms: i64,
    ) -> Result<(Gate, StartPolicy), StoreError> {
        Gate::start_with(config, facts, host_rules, now_ms, GateConfig::from_sources)
    }

    /// [`Gate::start`], the approved policy built again by `rebuild` when the files differ from
    /// it (the owner of the whole document reads its other sections in the same pass).
    pub fn start_with(
        config: GateConfig,
        facts: Vec<ProtectionFact>,
        host_rules: Vec<KeyRule>,
        now_ms: i64,
        rebuild: impl FnOnce(PolicySources) -> Result<GateConfig, ConfigError>,
    ) -> Result<(Gate, StartPolicy), StoreError> {
        let ledger = Ledger::open(&config)?;
        let digest = policy::policy_digest(&config.sources, &facts);
        let Some(approved) = ledger.store().approved_policy()? else {
            let mut gate = Gate::with_ledger(config, ledger)?;
            gate.policy.set_host_rules(host_rules);
            gate.apply_policy(None, facts, digest, "first start: recorded", now_ms);
            return Ok((gate, StartPolicy::InForce));
        };
        if approved.digest == digest {
            let mut gate = Gate::with_ledger(config, ledger)?;
            gate.policy = PolicyGate::in_force(facts, host_rules);
            return Ok((gate, StartPolicy::InForce));
        }
        let in_force = policy_prompt::rebuild_approved(&approved, rebuild);
        let mut gate = Gate::with_ledger(in_force, ledger)?;
        gate.policy = PolicyGate::in_force(approved.facts, host_rules);
        Ok((gate, StartPolicy::Changed(Box::new(config), facts)))
    }

    /// From now on every prompt is answered by a scripted user, and its audit record says so
    /// (`scripted: true`). Only for the test harness: the `scripted-user` feature that compiles
    /// this is enabled by `pcp-tests` alone, never by a session binary, so a real session can
    /// never mark a person's answer as scripted (or hide one behind the mark).
    #[cfg(feature = "scripted-user")]
    pub fn attach_scripted_user(&mut self) {
        self.ledger.mark_scripted_user();
    }

    /// Whether prompts are answered by a scripted user (see `attach_scripted_user`).
    pub fn scripted_user(&self) -> bool {
        self.ledger.scripted_user()
    }

    pub fn config(&self) -> &GateConfig {
        &self.config
    }

    pub fn store(&self) -> &Store {
        self.ledger.store()
    }

    pub fn store_mut(&mut self) -> &mut Store {
        self.ledger.store_mut()
    }

    pub fn token_key(&self) -> &TokenKey {
        self.ledger.key()
    }

    /// Replaces the config as it is, asking nobody; open prompts keep their plans. A host that
    /// reloads a user's files uses [`Gate::propose_policy`], which asks before lowering.
    pub fn reload(&mut self, config: GateConfig) -> Result<(), StoreError> {
        self.config = config;
        self.sessions.prune(&self.config.registry);
        self.ledger.sync_capability_versions(&self.config.registry)
    }

    /// Switches the user profile: the new profile's own history applies from now on, and the
    /// session approvals given under the old one end.
    pub fn set_profile(&mut self, profile: &str) {
        if self.profile != profile {
            self.sessions.clear();
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
        self.sessions.prune(&self.config.registry);
        self.ledger
            .store_mut()
            .note_capability_version(name, version)?;
        Ok(true)
    }

    /// The prompt being shown, if any.
    pub fn active(&self) -> Option<&Prompt> {
        self.queue.active()
    }

    /// Every open prompt, the shown one first.
    pub fn prompts(&self) -> impl Iterator<Item = &Prompt> {
        self.queue.iter()
    }

    pub fn prompt(&self, id: IntentId) -> Option<&Prompt> {
        self.queue.get(id)
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
        self.ledger.spend_token(token, &expected, now_ms)
    }

    /// Commits every buffered audit record (call at shutdown or when idle).
    pub fn flush(&mut self) -> Result<(), StoreError> {
        self.ledger.store_mut().flush()
    }

    /// What evaluation reads, borrowed from the gate's pieces.
    fn evaluator(&self) -> Evaluator<'_> {
        Evaluator {
            config: &self.config,
            profile: &self.profile,
            available: &self.available,
            store: self.ledger.store(),
            sessions: &self.sessions,
        }
    }

    /// Evaluates an intent without recording anything.
    pub fn evaluate(&self, intent: &Intent, now_ms: i64) -> Result<Evaluation, String> {
        self.evaluator()
            .evaluate(intent, now_ms)
            .map_err(|refusal| refusal.message())
    }

    /// Explains how `intent` would be decided at `now_ms` under the current availability.
    pub fn explain(&self, intent: &Intent, now_ms: i64) -> Explanation {
        explain::explain(&self.evaluator(), intent, now_ms)
    }

    /// Decides an intent at `now_ms`: execute, deny, or ask through a plan.
    pub fn submit(&mut self, intent: Intent, now_ms: i64) -> Decision {
        let id = self.queue.allocate_id();
        self.ledger.flush_if_due(now_ms);
        let ev = match self.evaluator().evaluate(&intent, now_ms) {
            Ok(ev) => ev,
            Err(refusal) => {
                let rule = refusal.rule();
                let (resolution, reason) = refusal.resolution();
                let ctx = DenyContext {
                    rule,
                    ..DenyContext::bare(id, &intent, self.profile.clone())
                };
                return Decision::Deny(self.deny_unprompted(ctx, resolution, reason, now_ms));
            }
        };
        if ev.effective == Threshold::None && ev.steps.is_empty() {
            let (profile, config) = (&self.profile, &self.config);
            return self
                .ledger
                .execute_unprompted(id, intent, ev, profile, config, now_ms);
        }
        let evaluator = self.evaluator();
        let plan = evaluator.plan_for(&ev);
        let limited = self.queue.refusal(&intent, &self.config.file.queue);
        let prompt = evaluator.make_prompt(id, intent, ev, plan, now_ms);
        // Neither denial below asked anyone: the outcome's plan is empty (audit keeps the plan).
        if let Some(reason) = limited {
            let outcome = self.end(prompt, Resolution::RateLimited, reason, now_ms);
            return Decision::Deny(Outcome {
                plan: Vec::new(),
                ..outcome
            });
        }
        if prompt.plan.authorizer == Authorizer::Denying {
            let reason = "no output or no input device can show and answer a prompt".to_string();
            let resolution = Resolution::ConfirmationUnavailable;
            return Decision::Deny(self.end(prompt, resolution, reason, now_ms));
        }
        let decision = prompt.confirm();
        self.queue
            .enqueue(prompt, &self.config.file.timeouts, now_ms);
        decision
    }

    /// Refuses `intent` because its client's connecting process changed since it connected
    /// (see [`crate::ClientIdentity::process_change`]): denied `identity_changed` without asking
    /// anyone, audited with the identity seen at connect and the change as the note.
    pub fn refuse_changed_identity(
        &mut self,
        intent: Intent,
        change: &ProcessChange,
        now_ms: i64,
    ) -> Outcome {
        let id = self.queue.allocate_id();
        let ctx = DenyContext::bare(id, &intent, self.profile.clone());
        let reason = format!("refused: {change}");
        self.deny_unprompted(ctx, Resolution::IdentityChanged, reason, now_ms)
    }

    /// Refuses `intent` because its parameters could not be read (e.g. a `submit_fd` whose fd is
    /// not a sealed memfd of the announced size): denied `invalid_params` without asking anyone,
    /// audited with `reason`. Only this request ends; the client's other intents carry on.
    pub fn refuse_unreadable(&mut self, intent: Intent, reason: &str, now_ms: i64) -> Outcome {
        let id = self.queue.allocate_id();
        let ctx = DenyContext::bare(id, &intent, self.profile.clone());
        let reason = format!("refused: {reason}");
        self.deny_unprompted(ctx, Resolution::InvalidParams, reason, now_ms)
    }

    fn deny_unprompted(
        &mut self,
        ctx: DenyContext<'_>,
        resolution: Resolution,
        reason: String,
        now_ms: i64,
    ) -> Outcome {
        let audit = &self.config.file.audit;
        self.ledger
            .deny_unprompted(ctx, resolution, reason, audit, now_ms)
    }

    /// Applies one modality's event to the shown prompt. `Ok(Some(outcome))` when it decided
    /// the prompt; `Ok(None)` when more answers are needed.
    pub fn respond(
        &mut self,
        id: IntentId,
        event: ModalityEvent,
        now_ms: i64,
    ) -> Result<Option<Outcome>, RespondError> {
        let timeouts = &self.config.file.timeouts;
        let ended = self.queue.respond(id, event, timeouts, now_ms)?;
        Ok(ended.map(|ended| self.end_shown(ended, now_ms)))
    }

    /// Advances the clock: times out the shown prompt when a deadline has passed (and the next
    /// ones, each shown from `now_ms`), and commits buffered audit records that are due.
    pub fn tick(&mut self, now_ms: i64) -> Vec<Outcome> {
        let mut outcomes = Vec::new();
        while let Some(ended) = self.queue.expire_front(now_ms) {
            outcomes.push(self.end_shown(ended, now_ms));
        }
        self.ledger.flush_if_due(now_ms);
        outcomes
    }

    /// The client withdrew its intent.
    pub fn cancel(&mut self, id: IntentId, now_ms: i64) -> Option<Outcome> {
        let reason = "the client cancelled".into();
        self.end_open(id, Resolution::Cancelled, reason, now_ms)
    }

    /// The front end's own check of the user failed for good (polkit: PAM refused every
    /// password try): denied `authentication_failed` with `reason`, and, like a denial, the
    /// friction history of the action is cleared.
    pub fn authentication_failed(
        &mut self,
        id: IntentId,
        reason: String,
        now_ms: i64,
    ) -> Option<Outcome> {
        self.end_open(id, Resolution::AuthenticationFailed, reason, now_ms)
    }

    /// Ends an open prompt from outside the user's answers, and shows the next one.
    fn end_open(
        &mut self,
        id: IntentId,
        resolution: Resolution,
        reason: String,
        now_ms: i64,
    ) -> Option<Outcome> {
        let (prompt, was_front) = self.queue.take(id)?;
        let outcome = self.end(prompt, resolution, reason, now_ms);
        if was_front {
            self.queue.show_front(&self.config.file.timeouts, now_ms);
        }
        Some(outcome)
    }

    /// Ends the prompt the queue decided, and shows the next one (under the policy in force
    /// after it: an approved policy change applies first).
    fn end_shown(&mut self, ended: Ended, now_ms: i64) -> Outcome {
        let outcome = self.end(ended.prompt, ended.resolution, ended.reason, now_ms);
        self.queue.show_front(&self.config.file.timeouts, now_ms);
        outcome
    }

    /// Ends a prompt taken out of the queue: the ledger records it (friction history, audit,
    /// a token when approved), an "allow until logout" chosen with an approval is remembered,
    /// and a policy change's prompt then applies its policy or drops it.
    fn end(
        &mut self,
        prompt: Prompt,
        resolution: Resolution,
        reason: String,
        now_ms: i64,
    ) -> Outcome {
        let reason = self.policy.reason(prompt.id, resolution.approves(), reason);
        let mut outcome = self
            .ledger
            .finish(&prompt, resolution, reason, &self.config, now_ms);
        if outcome.approved && prompt.session_chosen {
            self.sessions.grant(&prompt);
        }
        if let Some(approved) = self.policy.settle(&outcome) {
            let digest = approved.digest;
            self.install_policy(Some(approved.config), approved.facts, &digest, now_ms);
        }
        if outcome.approved {
            // What the user approved, moved from the prompt that showed it.
            outcome.run = Some(prompt.intent.into_run(prompt.params));
        }
        outcome
    }

    /// Audits an approval the host could not carry out (`failed`): an `execution_failed`
    /// record linked to the approval's own record, committed before this returns, so the log
    /// says what the client was told. Returns its sequence number; an error is logged and
    /// returned (the approval's record stands either way).
    pub fn record_execution_failed(
        &mut self,
        failed: FailedExecution<'_>,
        now_ms: i64,
    ) -> Result<u64, StoreError> {
        let (profile, config) = (&self.profile, &self.config);
        self.ledger
            .execution_failed(failed, profile, config, now_ms)
    }

    /// How many "allow until logout" choices are in force.
    pub fn session_approvals(&self) -> usize {
        self.sessions.len()
    }

    /// The session ends (logout): every "allow until logout" choice ends with it, and buffered
    /// audit records are committed.
    pub fn end_session(&mut self) -> Result<(), StoreError> {
        self.sessions.end();
        self.ledger.store_mut().flush()
    }

    /// Rules for the host's own config sections (`[overlay]`, `[speech]`, …): how their keys
    /// order protection. Keys no rule names count as lowering when they change.
    pub fn set_policy_rules(&mut self, rules: Vec<KeyRule>) {
        self.policy.set_host_rules(rules);
    }

    /// The host's facts of the policy in force.
    pub fn policy_facts(&self) -> &[ProtectionFact] {
        self.policy.facts()
    }

    /// The policy-change prompt waiting for the user and the changes it lists, if any.
    pub fn pending_policy(&self) -> Option<(IntentId, &[PolicyChange])> {
        self.policy.pending()
    }

    /// Every change from the policy in force to `new` with `facts`.
    pub fn policy_changes(&self, new: &GateConfig, facts: &[ProtectionFact]) -> Vec<PolicyChange> {
        self.policy.changes(&self.config, new, facts)
    }

    /// Proposes `new` (with the host's `facts`) to replace the policy in force:
    ///
    /// - nothing lowers protection (only raises, or changes the host calls unrelated): it
    ///   applies now and is recorded as approved (`Execute`,
    ///   `policy_allow`, audited with its changes);
    /// - something does: a system prompt lists every change (`Confirm`); the policy in force
    ///   stays until it is approved, when `new` applies; a denial or a timeout keeps it;
    /// - nobody can answer (no output or input): refused, the policy in force stays (`Deny`).
    ///
    /// A proposal identical to the one already waiting changes nothing; another one replaces it
    /// (the waiting prompt is cancelled).
    pub fn propose_policy(
        &mut self,
        new: GateConfig,
        facts: Vec<ProtectionFact>,
        now_ms: i64,
    ) -> Decision {
        let digest = policy::policy_digest(&new.sources, &facts);
        if let Some((id, same)) = self.policy.waiting(&digest) {
            if same && let Some(prompt) = self.queue.get(id) {
                return prompt.confirm();
            }
            self.policy.withdraw();
            let reason = "a newer policy replaces this one".into();
            self.end_open(id, Resolution::Cancelled, reason, now_ms);
        }
        let changes = self.policy.changes(&self.config, &new, &facts);
        if !policy::lowers(&changes) {
            let reason = if changes.is_empty() {
                "applied: nothing the gate enforces changed"
            } else {
                "applied: no change lowers protection"
            };
            return self.apply_policy(Some(new), facts, digest, reason, now_ms);
        }
        let proposal = Proposal {
            id: self.queue.allocate_id(),
            config: new,
            facts,
            digest,
            changes,
        };
        let prompt = proposal.prompt(&self.config, &self.profile, &self.available, now_ms);
        if prompt.plan.authorizer == Authorizer::Denying {
            let reason = "no output or no input device can show and answer the policy change: \
                          the policy in force stays"
                .to_string();
            let resolution = Resolution::ConfirmationUnavailable;
            return Decision::Deny(self.end(prompt, resolution, reason, now_ms));
        }
        let decision = prompt.confirm();
        self.policy.wait_for(proposal);
        // A system prompt is never refused for room: it waits behind the prompts before it.
        self.queue
            .enqueue(prompt, &self.config.file.timeouts, now_ms);
        decision
    }

    /// Puts `new` (or keeps the config in force when `None`) in force with `facts` and records
    /// it as the approved policy; audited `policy_allow` with `reason`.
    fn apply_policy(
        &mut self,
        new: Option<GateConfig>,
        facts: Vec<ProtectionFact>,
        digest: String,
        reason: &str,
        now_ms: i64,
    ) -> Decision {
        let lines = match &new {
            Some(new) => {
                let changes = self.policy.changes(&self.config, new, &facts);
                policy_prompt::change_lines(&changes, &self.config)
            }
            None => Vec::new(),
        };
        self.install_policy(new, facts, &digest, now_ms);
        let (config, profile) = (&self.config, &self.profile);
        let record =
            policy_prompt::applied_record(config, profile, &digest, &lines, reason, now_ms);
        let audit_seq = self
            .ledger
            .append(record, true)
            .map_err(|e| tracing::error!("the policy change could not be audited: {e}"))
            .ok();
        let id = self.queue.allocate_id();
        let outcome = policy_prompt::applied_outcome(id, audit_seq, reason.to_string());
        Decision::Execute(outcome)
    }

    /// Puts `new` in force (the config in force stays when `None`) with the host's `facts`, and
    /// records it as the approved policy.
    fn install_policy(
        &mut self,
        new: Option<GateConfig>,
        facts: Vec<ProtectionFact>,
        digest: &str,
        now_ms: i64,
    ) {
        if let Some(config) = new
            && let Err(e) = self.reload(config)
        {
            tracing::error!("capability versions could not be synced: {e}");
        }
        let sources = &self.config.sources;
        self.policy
            .approve(facts, sources, digest, &mut self.ledger, now_ms);
    }
}
