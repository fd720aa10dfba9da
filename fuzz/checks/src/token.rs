//! Token verification (`pcp_gate::token::TokenKey`): a token from anywhere else never opens;
//! one this key issued for arbitrary claims verifies once for exactly those claims, then is
//! replayed; it is refused for another capability, other parameters or steps, another version,
//! profile or app, and after its expiry; and one altered in any single byte either fails or
//! still carries exactly the same claims (so it can never stand for another action).

use std::cell::{Cell, RefCell};

use arbitrary::{Arbitrary, Unstructured};
use pcp_gate::store::{GroupCommit, Store};
use pcp_gate::token::{Expected, Grant, TokenKey, TokenRejection};
use serde_json::{Map, Value};

#[derive(Debug, Arbitrary)]
enum Param {
    Text(String),
    Number(i64),
    Flag(bool),
    Nothing,
    List(Vec<String>),
}

#[derive(Debug, Arbitrary)]
struct Input {
    raw: String,
    capability: String,
    version: u32,
    params: Vec<(String, Param)>,
    steps: String,
    profile: String,
    app: String,
    lifetime_ms: u32,
    tamper: Option<(u16, u8)>,
}

struct Kit {
    key: TokenKey,
    store: Store,
    _dir: tempfile::TempDir,
}

thread_local! {
    static KIT: RefCell<Kit> = RefCell::new(kit());
    /// Each input is a minute after the last, so spent nonces expire and the store stays small.
    static CLOCK: Cell<i64> = const { Cell::new(0) };
}

fn kit() -> Kit {
    // On tmpfs when there is one: the store syncs every spend.
    let base = std::path::Path::new("/dev/shm");
    let dir = if base.is_dir() {
        tempfile::tempdir_in(base)
    } else {
        tempfile::tempdir()
    }
    .expect("a temporary folder");
    let store = Store::open(
        &dir.path().join("state.sqlite3"),
        GroupCommit {
            max_records: 1,
            max_age_ms: 0,
        },
    )
    .expect("the store opens");
    Kit {
        key: TokenKey::from_bytes([0x5a; 32]).expect("a key"),
        store,
        _dir: dir,
    }
}

fn to_json(params: Vec<(String, Param)>) -> Value {
    let mut map = Map::new();
    for (k, p) in params {
        let v = match p {
            Param::Text(s) => Value::String(s),
            Param::Number(n) => Value::from(n),
            Param::Flag(b) => Value::Bool(b),
            Param::Nothing => Value::Null,
            Param::List(l) => Value::from(l),
        };
        map.insert(k, v);
    }
    Value::Object(map)
}

pub fn check(data: &[u8]) {
    let Ok(input) = Input::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    let now = CLOCK.with(|c| {
        c.set(c.get() + 60_000);
        c.get()
    });
    KIT.with_borrow_mut(|kit| run(kit, input, now));
}

fn run(kit: &mut Kit, input: Input, now: i64) {
    let key = &kit.key;
    // Text from anywhere else is never a token of this key.
    assert!(
        matches!(key.open(&input.raw), Err(TokenRejection::Forged)),
        "{:?} opened",
        input.raw
    );
    let params = to_json(input.params);
    // Up to two minutes: with a minute between inputs, the store keeps a few unexpired nonces.
    let expires = now + i64::from(input.lifetime_ms % 120_000);
    let grant = Grant {
        capability: &input.capability,
        version: input.version,
        params: &params,
        steps: &input.steps,
        profile: &input.profile,
        app: &input.app,
    };
    let token = key.issue(&grant, expires).expect("a token");
    let claims = key.open(&token).expect("its own token opens");
    assert_eq!(
        (
            &claims.capability,
            claims.version,
            &claims.steps,
            &claims.profile,
            &claims.app,
            claims.expires_ms
        ),
        (
            &input.capability,
            input.version,
            &input.steps,
            &input.profile,
            &input.app,
            expires
        )
    );

    // One byte altered: refused, or (the same bytes decoded) exactly the same claims.
    if let Some((at, byte)) = input.tamper {
        let mut bytes = token.clone().into_bytes();
        let i = usize::from(at) % bytes.len();
        if bytes[i] != byte {
            bytes[i] = byte;
            let altered = String::from_utf8_lossy(&bytes).into_owned();
            if let Ok(c) = key.open(&altered) {
                assert_eq!(c, claims, "an altered token carries other claims");
            }
        }
    }

    let store = &mut kit.store;
    let exact = Expected {
        capability: &input.capability,
        version: input.version,
        params: &params,
        steps: &input.steps,
        profile: &input.profile,
        app: Some(&input.app),
    };
    let mut verify = |expected: &Expected<'_>, at: i64| {
        key.verify(store, &token, expected, at)
            .expect("the store works")
    };
    let other_cap = format!("{}.other", input.capability);
    // Other parameters: one key more, or one fewer when the input already has that key.
    let mut changed = params.clone();
    if let Value::Object(m) = &mut changed
        && m.remove("\u{0}fuzz").is_none()
    {
        m.insert("\u{0}fuzz".into(), Value::Bool(true));
    }
    let other_steps = format!("{}0", input.steps);
    let other_profile = format!("{}.other", input.profile);
    let other_app = format!("{}.other", input.app);
    let refusals = [
        (
            Expected {
                capability: &other_cap,
                ..exact
            },
            TokenRejection::Mismatch,
        ),
        (
            Expected {
                params: &changed,
                ..exact
            },
            TokenRejection::Mismatch,
        ),
        (
            Expected {
                steps: &other_steps,
                ..exact
            },
            TokenRejection::Mismatch,
        ),
        (
            Expected {
                version: input.version.wrapping_add(1),
                ..exact
            },
            TokenRejection::Stale,
        ),
        (
            Expected {
                profile: &other_profile,
                ..exact
            },
            TokenRejection::WrongProfile,
        ),
        (
            Expected {
                app: Some(&other_app),
                ..exact
            },
            TokenRejection::WrongApp,
        ),
    ];
    for (expected, why) in &refusals {
        assert_eq!(verify(expected, now).err(), Some(*why));
    }
    assert_eq!(
        verify(&exact, expires + 1).err(),
        Some(TokenRejection::Expired)
    );
    let ok = verify(&exact, now).expect("verifies once");
    assert_eq!(ok, claims);
    assert_eq!(verify(&exact, now).err(), Some(TokenRejection::Replayed));
    // Not checking the app is a choice of the executor, never a way around the rest.
    assert_eq!(
        verify(&Expected { app: None, ..exact }, now).err(),
        Some(TokenRejection::Replayed)
    );
}
