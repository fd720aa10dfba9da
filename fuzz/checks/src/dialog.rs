//! The dialog (`pcp_overlay`): arbitrary client strings, requester, risk and modalities, at
//! arbitrary output sizes, scales, text scales and themes, then a run of arbitrary input and
//! live updates. Properties:
//!
//! - content the dialog refuses is not shown; content it shows is laid out with every box
//!   inside the card and the dialog inside its output (nothing drawn outside the dialog);
//! - the rendered buffer has the layout's size, within the configured pixel cap, and after any
//!   updates the partial redraws equal a full render of the same state;
//! - no input inside the guard delay answers, and Approve (or "Allow until logout") answers only
//!   once the body has been on screen to its end.

use std::cell::RefCell;

use arbitrary::{Arbitrary, Unstructured};
use pcp_overlay::dialog::render_state;
use pcp_overlay::{
    Choice, Config, ConfirmDialog, DialogContent, Fonts, HapticState, Key, KeyState, Modality,
    Output, Point, Rect, Requester, Risk, TextScale, ThemeName, VoiceState,
};

/// The dialog's own cap on its buffer (`max_buffer_pixels`), at the size a 1600 × 1600
/// physical output used to bound it: outputs are any size the input says, and the product
/// keeps one input's drawing to milliseconds.
const MAX_BUFFER_PIXELS: u32 = 1600 * 1600;
/// Inputs after which the dialog and fonts are made afresh: the glyph cache keeps every size
/// it has drawn, and fuzzed scales draw many.
const FRESH_EVERY: u32 = 2000;

#[derive(Debug, Arbitrary)]
enum Who {
    Sandboxed { engine: String, app_id: String },
    Unconfined { executable: String, pid: u32 },
    Unknown { connection: String },
}

#[derive(Debug, Arbitrary)]
enum Event {
    Advance(u16),
    Down(u16, u16),
    Up(u16, u16),
    Motion(u16, u16),
    Scroll(i16),
    Key(u8, u8),
    Keyboard(bool),
    Queued(u32),
    Seconds(u32),
    Voice(u8, u8),
    Haptic(bool),
    Moved,
    Render,
    HighContrast(bool),
}

#[derive(Debug, Arbitrary)]
struct Input {
    who: Who,
    declared: Option<String>,
    action: String,
    target: String,
    steps: Vec<String>,
    extra: Vec<(String, String)>,
    challenge: Option<String>,
    risk: u8,
    voice: bool,
    haptic: bool,
    press_and_hold: bool,
    offer_session: bool,
    queued: u32,
    seconds_left: u32,
    timeout: u8,
    width: u16,
    height: u16,
    scale: u8,
    text_scale: u8,
    reduced_motion: bool,
    theme: u8,
    /// Compare the buffer with a full render at the end (costs a second render).
    compare: bool,
    events: Vec<Event>,
}

/// One dialog and one set of fonts for every input: loading fonts takes far longer than a
/// render.
struct Kit {
    dialog: ConfirmDialog,
    fonts: Fonts,
}

thread_local! {
    static KIT: RefCell<(Kit, u32)> = RefCell::new((kit(), 0));
}

fn kit() -> Kit {
    Kit {
        dialog: ConfirmDialog::new(Config::default(), bundled()),
        fonts: bundled(),
    }
}

fn bundled() -> Fonts {
    Fonts::with_files::<&str>(&[]).expect("the bundled font loads")
}

/// How far an input got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    /// The bytes are not an input.
    Undecoded,
    /// The dialog refused the content (a denial).
    Refused,
    /// The content cannot be placed on the output (a denial).
    Unplaced,
    /// Shown, drawn and driven by input.
    Rendered,
}

pub fn check(data: &[u8]) {
    stage(data);
}

/// Runs the check on `data` and says how far it got.
pub fn stage(data: &[u8]) -> Stage {
    let Ok(input) = Input::arbitrary_take_rest(Unstructured::new(data)) else {
        return Stage::Undecoded;
    };
    KIT.with_borrow_mut(|(kit, runs)| {
        *runs += 1;
        if *runs % FRESH_EVERY == 0 {
            *kit = self::kit();
        }
        run(&mut kit.dialog, &mut kit.fonts, input)
    })
}

fn run(d: &mut ConfirmDialog, fresh: &mut Fonts, input: Input) -> Stage {
    let config = Config {
        text_scale: TextScale::new(0.5 + f32::from(input.text_scale % 11) * 0.25)
            .unwrap_or(TextScale::new(1.0).expect("1 is in range")),
        reduced_motion: input.reduced_motion,
        theme: [ThemeName::Dark, ThemeName::Light, ThemeName::HighContrast]
            [usize::from(input.theme % 3)],
        max_steps: 16,
        max_extra_params: 16,
        max_text_chars: 600,
        max_buffer_pixels: MAX_BUFFER_PIXELS,
        ..Config::default()
    };
    let guard_ms = config.guard_delay_ms;
    d.hide();
    d.set_desktop_high_contrast(false);
    d.set_config(config.clone());
    // Scales inside and outside what an output can have (0.5–4), the odd fraction included.
    let scale = match input.scale {
        250 => 0.25,
        251 => 4.5,
        252 => f64::NAN,
        s => 0.5 + f64::from(s % 71) * 0.05,
    };
    let side = |v: u16| 1 + u32::from(v);
    let output = (side(input.width), side(input.height));
    let mut modalities = vec![Modality::Visual];
    if input.voice {
        modalities.push(Modality::Voice);
    }
    if input.haptic {
        modalities.push(Modality::Haptic);
    }
    let requester = match input.who {
        Who::Sandboxed { engine, app_id } => Requester::Sandboxed { engine, app_id },
        Who::Unconfined { executable, pid } => Requester::Unconfined { executable, pid },
        Who::Unknown { connection } => Requester::Unknown { connection },
    };
    let content = DialogContent {
        requester,
        declared_app_id: input.declared,
        icon: None,
        action: input.action,
        target: input.target,
        steps: input.steps,
        extra_params: input.extra,
        challenge: input.challenge,
        risk: [
            Risk::Routine,
            Risk::Privileged,
            Risk::Destructive,
            Risk::System,
        ][usize::from(input.risk % 4)],
        modalities,
        seconds_left: input.seconds_left,
        timeout_seconds: u32::from(input.timeout),
        queued: input.queued,
        press_and_hold: input.press_and_hold,
        // A prompt held for want of voice says why (the host's text, not the client's).
        voice_unavailable: input
            .press_and_hold
            .then(|| config.text.voice_no_model.clone()),
        offer_session: input.offer_session,
        entry: false,
        entry_account: false,
    };
    if let Err(e) = d.show(content.clone(), 0) {
        assert!(!d.is_open(), "refused content is not shown: {e}");
        assert!(content.validate(&config).is_err());
        return Stage::Refused;
    }
    let outputs = [Output {
        rect: Rect {
            x: 0,
            y: 0,
            w: output.0 as i32,
            h: output.1 as i32,
        },
        scale,
    }];
    let rect = match d.place(Point { x: 1.0, y: 1.0 }, &outputs) {
        Ok((_, rect)) => rect,
        // Too small an output, a bad scale, content that cannot fit: a denial, fine.
        Err(_) => return Stage::Unplaced,
    };
    assert!(
        outputs[0].rect.contains_rect(&rect),
        "{rect:?} leaves {output:?}"
    );
    let margin = config.margin as i32;
    assert!(rect.w <= output.0 as i32 - 2 * margin && rect.h <= output.1 as i32 - 2 * margin);
    let rendered = d.render(scale, output).expect("a placed dialog renders");
    assert_eq!(rendered.logical_size, (rect.w, rect.h));
    let (pw, ph) = (rendered.pixmap.width(), rendered.pixmap.height());
    assert!(
        u64::from(pw) * u64::from(ph) <= u64::from(MAX_BUFFER_PIXELS),
        "a {pw}x{ph} buffer is over the cap"
    );
    let layout = d.layout().expect("rendered");
    assert_eq!((pw as i32, ph as i32), layout.size);
    if let Err(e) = layout.check_inside() {
        panic!("{e}");
    }

    // Input and live updates, on the dialog's clock.
    let mut now: u64 = 0;
    let mut guard_from: u64 = 0;
    let read_at_render = |d: &ConfirmDialog| d.live().is_some_and(|l| l.read_all);
    for event in input.events.into_iter().take(32) {
        let mut choice = None;
        let local = |x: u16, y: u16| {
            (
                f64::from(x % (rect.w as u16).max(1)),
                f64::from(y % (rect.h as u16).max(1)),
            )
        };
        match event {
            Event::Advance(ms) => {
                now += u64::from(ms);
                choice = d.advance(now);
            }
            Event::Down(x, y) => {
                let (x, y) = local(x, y);
                choice = d.pointer_down(x, y, now);
            }
            Event::Up(x, y) => {
                let (x, y) = local(x, y);
                choice = d.pointer_up(x, y, now);
            }
            Event::Motion(x, y) => {
                let (x, y) = local(x, y);
                d.pointer_motion(x, y);
            }
            Event::Scroll(dy) => d.scroll(f64::from(dy)),
            Event::Key(k, s) => {
                let key = [
                    Key::Tab { shift: false },
                    Key::Tab { shift: true },
                    Key::Enter,
                    Key::Space,
                    Key::Escape,
                    Key::Up,
                    Key::Down,
                    Key::PageUp,
                    Key::PageDown,
                    Key::Home,
                    Key::End,
                    Key::Other,
                ][usize::from(k % 12)];
                let state =
                    [KeyState::Pressed, KeyState::Repeated, KeyState::Released][usize::from(s % 3)];
                choice = d.key(key, state, now);
            }
            Event::Keyboard(on) => d.set_keyboard_focus(on),
            Event::Queued(n) => d.set_queued(n),
            Event::Seconds(n) => d.set_seconds_left(n),
            Event::Voice(s, level) => d.set_voice(
                [
                    VoiceState::Listening,
                    VoiceState::Heard,
                    VoiceState::Unavailable,
                ][usize::from(s % 3)],
                f32::from(level) / 200.0,
            ),
            Event::Haptic(first) => d.set_haptic(if first {
                HapticState::FirstTap
            } else {
                HapticState::Waiting
            }),
            Event::Moved => {
                // The guard starts again: answers must wait for it from here.
                d.moved(now);
                guard_from = now;
            }
            Event::Render => {
                d.render(scale, output).expect("renders again");
            }
            Event::HighContrast(on) => d.set_desktop_high_contrast(on),
        }
        if let Some(c) = choice {
            assert!(
                now >= guard_from + guard_ms,
                "{c:?} at {now} ms, inside the guard from {guard_from}"
            );
            if matches!(c, Choice::Approve | Choice::ApproveForSession) {
                assert!(
                    read_at_render(d),
                    "{c:?} before the body was read to its end"
                );
            }
            return Stage::Rendered;
        }
    }

    // Whatever happened, the buffer's partial redraws equal a full render of the same state.
    if !input.compare || !d.palette().eq(config.palette()) {
        return Stage::Rendered;
    }
    let partial = d.render(scale, output).expect("renders").pixmap.clone();
    let live = d.live().expect("open").clone();
    let full = render_state(fresh, &config, &content, &live, scale, output)
        .expect("the same state renders from scratch");
    assert!(
        partial.data() == full.data(),
        "partial redraws differ from a full render"
    );
    Stage::Rendered
}
