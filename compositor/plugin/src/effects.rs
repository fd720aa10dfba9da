//! What goes into the engine and what comes out of it: a front end's [`Request`]s (and, inside
//! the plugin, what the seat, the devices and the clock report); a front end's
//! [`Delivery`]s and the host's [`Effect`]s, drained by [`run`](crate::run) after the engine has
//! returned. Plain data: nothing here can call anything.

use pcp_gate::{Intent, IntentId, Modality, Outcome, ProcessChange, Resolution, Threshold};
use zeroize::Zeroizing;

use crate::PromptEvent;

/// A front end: where intents come from and where their answers go. The Wayland protocol is
/// [`FrontEndId::WAYLAND`]; others get theirs from [`Pcp::add_front_end`](crate::Pcp::add_front_end).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FrontEndId(pub(crate) u32);

impl FrontEndId {
    /// The pcp-intent-v1 Wayland protocol.
    pub const WAYLAND: FrontEndId = FrontEndId(0);
}

/// One submission of one front end: the front end and its own number for it. The engine
/// answers by ticket, so a front end never needs the gate's ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ticket {
    pub front: FrontEndId,
    pub number: u64,
}

/// The final answer to one ticket. An approval carries what it runs (`outcome.run`, moved
/// from the submission by the gate).
#[derive(Debug, Clone)]
pub struct Decided {
    pub ticket: Ticket,
    pub outcome: Outcome,
}

/// Why a front end refuses a submission before the gate weighs it (audited by the gate).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Its parameters could not be read (a bad memfd).
    Unreadable(String),
    /// The process that connected is not the one asking now.
    IdentityChanged(ProcessChange),
}

/// What a front end asks of the engine ([`run`](crate::run)): the only way in for code outside
/// the plugin. None of these can answer a prompt: an answer comes only from the seat's input
/// (`pcp_plugin::input`), the microphone, the haptic double tap and the passing of time, which
/// reach the engine on paths a host cannot call with its own events.
#[derive(Debug)]
pub enum Request {
    /// An intent from any front end; answered by `Pending` and then `Decided` (or at once by
    /// `Decided`).
    Submit { ticket: Ticket, intent: Intent },
    /// An intent the front end refuses before the gate weighs it: audited, answered `Decided`.
    Refuse {
        ticket: Ticket,
        intent: Intent,
        why: Refusal,
    },
    /// The front end withdrew the ticket (a cancel, a closed connection).
    Cancel(Ticket),
    /// The front end's own check of the user failed for good (polkit: PAM refused the last
    /// password try): the prompt ends denied `authentication_failed`, `reason` in its record.
    AuthenticationFailed { ticket: Ticket, reason: String },
    /// A front end could not deliver an approval (its token): audited as `execution_failed`
    /// and answered `Decided` again with that denial.
    Undeliverable {
        decided: Box<Decided>,
        reason: String,
    },
    /// The front end's news for the text entry of its ticket's prompt (a PAM prompt, its
    /// verdict): see [`EntryUpdate`]. Ignored once the prompt has ended.
    Entry { ticket: Ticket, update: EntryUpdate },
}

/// An input to the engine: a front end's request, or what only the plugin itself hands in.
#[derive(Debug)]
pub(crate) enum Command {
    /// A front end's request.
    Request(Box<Request>),
    /// What the seat, the microphone or the haptic device said about prompts.
    Events(Vec<PromptEvent>),
    /// The plugin's timer fired or a device has news: the UI's timers and device reports.
    Wakeup,
    /// The outputs, the input devices, the focal point or the UI's settings changed.
    Refresh,
    /// A changed config, proposed in place of the policy in force.
    ProposePolicy { proposed: Box<pcp_config::Proposed> },
    /// The host's answer to an approval it performs ([`PcpHandler::execute`](crate::PcpHandler::execute)):
    /// `Err` becomes `execution_failed`.
    Executed {
        decided: Box<Decided>,
        result: Result<(), String>,
    },
}

/// What a front end tells the dialog's text entry (the polkit agent's password field). The
/// entry only collects text: what it means is the front end's business, and Approve stays
/// disabled until the front end says [`EntryUpdate::Accepted`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryUpdate {
    /// Ask for a line of text: `label` says what (PAM's prompt); masked unless `echo`.
    Ask { label: String, echo: bool },
    /// A line to show under the entry (PAM's error or info text, a failed try).
    Message(String),
    /// The text was accepted: Approve may answer now, and nothing more is typed.
    Accepted,
    /// The entry may be answered as another account: a row shows these words (which account
    /// is asked, how to ask for another), and a press on it, or the Down arrow while the entry
    /// has the keyboard, asks the front end for the next ([`Effect::EntryNextAccount`]). The
    /// front end then asks again ([`EntryUpdate::Ask`]) for the account it chose.
    Account(String),
}

/// Text typed into an entry (a password): zeroed when dropped, never formatted. A clone is a
/// second zeroed copy, so an effect can be cloned like any other.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretText(pub Zeroizing<String>);

impl std::fmt::Debug for SecretText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretText(<redacted>)")
    }
}

/// What the engine tells the host ([`PcpHandler::effect`](crate::PcpHandler::effect)), in the
/// order it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// The dialog appeared (`true`) or went away (`false`): draw a frame, and look at what is
    /// under the pointer again (`pcp_plugin::input::pointer_after_dialog`).
    DialogShown(bool),
    /// The dialog's pixels changed or it moved: draw a frame (and look at what is under the
    /// pointer again).
    Damage,
    /// Whether the dialog wants the keyboard changed: the host computes its keyboard focus
    /// again, asking [`ConfirmUi::wants_keyboard`](crate::ConfirmUi::wants_keyboard)
    /// (`pcp_plugin::input::keyboard_focus` does it for a simple host).
    KeyboardFocus,
    /// A proposed policy was settled. `applied`: it is in force now, and the plugin's own
    /// sections have been applied; the host takes its own with `Pcp::take_applied_sections`.
    /// Otherwise the policy in force stays; `reason` says why.
    PolicySettled { applied: bool, reason: String },
    /// A `session.logout` was performed: the session's "allow until logout" approvals have
    /// ended and its audit records are committed. The host ends the session.
    EndSession,
}

/// What the engine tells a front end about one of its tickets ([`FrontEnd::deliver`]).
#[derive(Debug, Clone)]
pub enum Delivery {
    /// The ticket's intent waits for the user (`id` names its prompt).
    Pending {
        ticket: Ticket,
        id: IntentId,
        threshold: Threshold,
        modalities: Vec<Modality>,
    },
    /// The ticket's final answer.
    Decided(Box<Decided>),
    /// The user typed a line into the entry of the ticket's prompt and pressed Enter (only
    /// after giving the dialog the keyboard by an explicit act).
    EntrySubmitted { ticket: Ticket, text: SecretText },
    /// The user asked to answer the entry of the ticket's prompt as the next account (see
    /// [`EntryUpdate::Account`]).
    EntryNextAccount { ticket: Ticket },
}

/// An output of the engine: for a front end, for the host to perform, or for the host.
#[derive(Debug, Clone)]
pub(crate) enum Out {
    Front(Delivery),
    /// An approved intent the host performs itself (then the front end hears `Decided`).
    Execute(Box<Decided>),
    Host(Effect),
}

impl Command {
    /// What kind of command this is, for logs (never its contents: params and tokens stay out).
    pub fn kind(&self) -> &'static str {
        match self {
            Command::Request(r) => match **r {
                Request::Submit { .. } => "submit",
                Request::Refuse { .. } => "refuse",
                Request::Cancel(_) => "cancel",
                Request::AuthenticationFailed { .. } => "authentication-failed",
                Request::Undeliverable { .. } => "undeliverable",
                Request::Entry { .. } => "entry",
            },
            Command::Events(_) => "events",
            Command::Wakeup => "wakeup",
            Command::Refresh => "refresh",
            Command::ProposePolicy { .. } => "propose-policy",
            Command::Executed { .. } => "executed",
        }
    }
}

impl Out {
    /// What kind of output this is, for logs (never its contents).
    pub fn kind(&self) -> &'static str {
        match self {
            Out::Front(Delivery::Pending { .. }) => "pending",
            Out::Front(Delivery::Decided(_)) => "decided",
            Out::Front(Delivery::EntrySubmitted { .. }) => "entry-submitted",
            Out::Front(Delivery::EntryNextAccount { .. }) => "entry-next-account",
            Out::Execute(_) => "execute",
            Out::Host(Effect::DialogShown(_)) => "dialog-shown",
            Out::Host(Effect::Damage) => "damage",
            Out::Host(Effect::KeyboardFocus) => "keyboard-focus",
            Out::Host(Effect::PolicySettled { .. }) => "policy-settled",
            Out::Host(Effect::EndSession) => "end-session",
        }
    }
}

impl Delivery {
    /// The ticket this is about.
    pub fn ticket(&self) -> Ticket {
        match self {
            Delivery::Pending { ticket, .. }
            | Delivery::EntrySubmitted { ticket, .. }
            | Delivery::EntryNextAccount { ticket } => *ticket,
            Delivery::Decided(d) => d.ticket,
        }
    }
}

/// A front end other than the Wayland protocol (a D-Bus agent, a test): it receives the
/// answers to its tickets. It never holds the engine: a delivery that fails returns a command
/// instead of calling back.
pub trait FrontEnd {
    /// `delivery` is about one of this front end's tickets. Returns a request to run next
    /// (`Undeliverable` for an approval it could not pass on), or `None`.
    fn deliver(&mut self, delivery: Delivery) -> Option<Request>;
}

/// An approval that could not be carried out, for its `Decided` effect.
pub(crate) fn failed(outcome: &Outcome, reason: String, audit_seq: Option<u64>) -> Outcome {
    Outcome {
        approved: false,
        resolution: Resolution::ExecutionFailed,
        token: None,
        audit_seq: audit_seq.or(outcome.audit_seq),
        reason,
        ..outcome.clone()
    }
}
