//! The English evaluation set's words, phrases and voices (see `corpus`): every answer phrase of
//! the English pack, words that begin or sound like an answer, other speech, and three
//! synthesizers, each with voices the other part never hears.

use super::corpus::{Truth, Words};

/// The answer phrases, with their meaning: every phrase of the English phrase pack (a test
/// checks it).
#[rustfmt::skip]
pub const ANSWERS: &[(&str, Truth)] = &[
    ("yes", Truth::Approve),
    ("yeah", Truth::Approve),
    ("no", Truth::Deny),
    ("nope", Truth::Deny),
    ("stop", Truth::Deny),
    ("don't", Truth::Deny),
    ("cancel", Truth::Cancel),
    ("never mind", Truth::Cancel),
];

/// The tuning part's voices: espeak-ng's American and British voices with some of their
/// variants, two of flite's four voices, and Piper's joe (the only English Piper voice the
/// registries carry: it speaks in both parts, in other conditions).
#[rustfmt::skip]
pub const TUNING_VOICES: &[&str] = &[
    "en-us", "en-us+m3", "en-us+f2", "en-gb", "en-gb+f4", "en-gb-scotland", "en-029+m5",
    "flite:slt", "flite:rms",
    "piper:joe",
];

/// The held-out part's voices: other espeak-ng voices and variants, flite's other two voices,
/// and Piper's joe.
#[rustfmt::skip]
pub const HELD_OUT_VOICES: &[&str] = &[
    "en-us+m1", "en-us+f4", "en-us+klatt", "en-gb-x-rp", "en-gb+m5", "en-gb-x-gbclan+f3",
    "en-us+croak", "flite:awb", "flite:kal", "piper:joe",
];

/// Words and phrases that begin or sound like an answer, per answer. None is an answer.
#[rustfmt::skip]
pub const NEAR_HOMOPHONES: &[(&str, &[&str])] = &[
    ("yes", &[
        "yesterday", "yellow", "yet", "yes-man", "yeast", "guess", "chess", "mess", "less",
        "bless", "dress", "Jess", "yesteryear", "yelp", "yes and no",
    ]),
    ("yeah", &["year", "yarn", "yay", "yeah right", "yard", "yeti", "yawn", "ya know"]),
    ("approve", &["improve", "approach", "a proof", "prove", "groove", "approval rating", "reprove"]),
    ("confirm", &["conform", "conference", "firm", "inform", "confined", "confetti", "con film"]),
    ("do it", &["to it", "doing", "duet", "did it", "do it later", "due date", "chew it"]),
    ("no", &[
        "nose", "notice", "know", "now", "note", "snow", "noble", "nomad", "Noah", "nod",
        "no way", "no idea", "nobody", "north",
    ]),
    ("nope", &["hope", "rope", "soap", "nobe", "open", "noble gas", "nap"]),
    ("deny", &["Denny", "any", "penny", "deli", "denial", "tiny", "defy", "Daniel", "den"]),
    ("stop", &["shop", "stock", "top", "step", "stopwatch", "stomp", "stamp", "stoplight", "atop"]),
    ("don't", &["donut", "done", "dawn", "won't", "daunt", "don't know", "dome"]),
    ("cancel", &[
        "can sell", "cancer", "castle", "candle", "counsel", "Kansas", "can't sell",
        "cancellation fee", "can so", "kennel",
    ]),
    ("never mind", &["never", "nevermore", "remind", "mind", "never mine", "forever mine"]),
];

/// Common English words that are not answers.
#[rustfmt::skip]
pub const COMMON_WORDS: &[&str] = &[
    "people", "time", "school", "friend", "family", "company", "house", "water", "food",
    "coffee", "book", "movie", "music", "song", "weather", "wind", "rain", "mountain", "river",
    "city", "country", "world", "problem", "idea", "heart", "love", "happy", "name", "phone",
    "message", "picture", "drawing", "sport", "football", "hospital", "doctor", "teacher",
    "student", "mother", "brother", "sister", "morning", "lunch", "evening", "today", "tomorrow",
    "weekend", "Monday", "Friday", "Sunday", "spring", "summer", "autumn", "winter", "car", "bus",
    "train", "airplane", "airport", "street", "right", "left", "up", "down", "outside", "one",
    "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "hundred", "money",
    "store", "market", "clothes", "shoes", "bag", "computer", "television", "internet", "game",
    "news", "paper", "letter", "gift", "birthday", "travel", "holiday", "hotel", "room", "door",
    "chair", "desk", "bed", "kitchen", "bathroom", "park", "library", "bank", "police", "bread",
    "fruit", "meat", "fish", "cheese", "tea", "juice", "cat", "dog", "bird", "cow", "flower",
    "grass", "stone", "fire", "ice", "sound", "voice", "color", "red", "blue", "green", "black",
    "white", "keyboard", "mouse", "screen", "program", "folder", "document", "save", "copy",
    "search", "settings", "update", "download", "login", "password", "email", "alarm", "volume",
    "brightness", "okay", "maybe", "sure", "fine", "thanks", "hello", "please", "wait", "what",
    "hmm",
    // Answers of other packs that the English one does not take: said, they decide nothing.
    "approve", "confirm", "do it", "deny",
];

/// Short phrases that are not answers (some agree in meaning, but are not answer phrases).
#[rustfmt::skip]
pub const PHRASES: &[&str] = &[
    "good morning", "thank you", "excuse me", "I'm sorry", "how are you", "I'm hungry",
    "I'm tired", "where are you going", "what are you doing", "what time is it",
    "how much is it", "good night", "see you later", "say that again", "just a moment",
    "I have no clue", "I understand", "sounds good", "of course", "take it slowly",
    "what is this", "where is the bathroom", "the weather is nice today", "see you tomorrow",
    "play some music", "turn off the light", "open the window", "save the file",
    "open the document", "call my mother", "send a message", "set an alarm", "turn it up",
    "take a picture", "show me the way", "a cup of coffee please", "I want to go home",
    "that's great", "really", "I see", "oh well", "hang on", "you know what", "so anyway",
    "but then", "all right", "go ahead", "sounds right", "let me think",
    "not now", "I guess so", "why not", "absolutely", "definitely", "okay then", "fine by me",
    "what did you say", "delete the file", "reboot the computer",
];

/// The challenge words, as the English phrase pack lists them (a test checks it).
#[rustfmt::skip]
pub const CHALLENGE_WORDS: &[&str] = &[
    "rocket", "pencil", "tiger", "guitar", "elephant", "turtle",
];

/// The English set.
pub const ENGLISH: Words = Words {
    answers: ANSWERS,
    voices: [TUNING_VOICES, HELD_OUT_VOICES],
    near_homophones: NEAR_HOMOPHONES,
    common_words: COMMON_WORDS,
    phrases: PHRASES,
    challenge_words: CHALLENGE_WORDS,
    wpm: (120, 210),
    pitch: (25, 75),
    seeds: [0x656e_7475_6e65, 0x656e_6865_6c64],
    id_prefix: "en-",
};
