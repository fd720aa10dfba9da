//! The phrase packs' rules, on the built-in packs and small packs written here.

use super::*;

#[test]
fn english_pack_maps_the_spec_phrases() {
    let p = PhrasePack::load(None, "en").unwrap();
    for s in ["yes", "yeah", "Yes", "yes yes", "you yes", "approved"] {
        assert_eq!(p.classify(s), Some(SpokenAnswer::Approve), "{s}");
    }
    for s in ["no", "nope", "stop", "don't", "know"] {
        assert_eq!(p.classify(s), Some(SpokenAnswer::Deny), "{s}");
    }
    for s in ["cancel", "never mind", "kensel", "counsel"] {
        assert_eq!(p.classify(s), Some(SpokenAnswer::Cancel), "{s}");
    }
    // What Moonshine misreads, and the answers the pack does not take, decide nothing.
    for s in [
        "approve",
        "confirm",
        "do it",
        "deny",
        "you",
        "yes i'm handed",
        "yes man",
    ] {
        assert_eq!(p.classify(s), None, "{s}");
    }
}

#[test]
fn heard_as_spellings_and_ignored_words_are_checked() {
    let base = "language='x'\napprove=['y']\ndeny=['n']\ncancel=['c']\ndecoys=['d']\n";
    let twice = format!("{base}[heard_as]\ncancel=['d']\n");
    let e = PhrasePack::parse(&twice, "x.toml").unwrap_err().to_string();
    assert!(e.contains("more than once"), "{e}");
    let phrase = format!("ignored_words=['y']\n{base}");
    let e = PhrasePack::parse(&phrase, "x.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("also a phrase"), "{e}");
    let two = format!("ignored_words=['a b']\n{base}");
    let e = PhrasePack::parse(&two, "x.toml").unwrap_err().to_string();
    assert!(e.contains("not one word"), "{e}");
    let fine = format!("ignored_words=['um']\n{base}[heard_as]\ndeny=['nah']\n");
    let p = PhrasePack::parse(&fine, "x.toml").unwrap();
    assert_eq!(p.classify("um nah"), Some(SpokenAnswer::Deny));
    assert!(p.is_ignored("um"));
    // Spellings are read, never put into a Vosk grammar.
    assert!(!p.grammar().iter().any(|g| g == "nah"));
    assert!(!p.words().contains(&"nah"));
}

#[test]
fn korean_pack_maps_the_spec_phrases() {
    let p = PhrasePack::load(None, "ko").unwrap();
    assert_eq!(p.language(), "ko");
    assert_eq!(p.classify("네"), Some(SpokenAnswer::Approve));
    // "예" sounds like the hesitation "에": without a challenge word, other speech.
    assert_eq!(p.classify("예"), None);
    for s in ["아니요", "아니"] {
        assert_eq!(p.classify(s), Some(SpokenAnswer::Deny), "{s}");
    }
    assert_eq!(p.classify("취소"), Some(SpokenAnswer::Cancel));
}

#[test]
fn decoys_silence_and_contradictions_decide_nothing() {
    let p = PhrasePack::load(None, "en").unwrap();
    assert_eq!(p.classify(""), None);
    assert_eq!(p.classify("hello what"), None);
    assert_eq!(p.classify("yes no"), None);
    assert_eq!(p.classify("no cancel"), None);
    // Other speech around an answer makes it unclear; repeats of one answer are clear.
    assert_eq!(p.classify("hello yes"), None);
    assert_eq!(p.classify("yes okay"), None);
    assert_eq!(p.classify("yes yeah"), Some(SpokenAnswer::Approve));
    let ko = PhrasePack::load(None, "ko").unwrap();
    assert_eq!(ko.classify("네 아니요"), None);
    for decoy in ko
        .grammar()
        .iter()
        .filter(|g| ko.phrases[*g] == Role::Decoy)
    {
        assert_eq!(ko.classify(decoy), None, "decoy {decoy}");
    }
}

#[test]
fn every_pack_has_decoys_and_an_answer_first_grammar() {
    for (lang, _) in BUILTIN {
        let p = PhrasePack::load(None, lang).unwrap();
        let decoys = p.phrases.values().filter(|m| **m == Role::Decoy).count();
        assert!(decoys >= 10, "{lang} has only {decoys} decoys");
        assert!(matches!(p.phrases[&p.grammar()[0]], Role::Answer(_)));
    }
}

#[test]
fn a_challenge_approval_needs_the_shown_word_and_nothing_else() {
    let p = PhrasePack::load(None, "ko").unwrap();
    let approve = Reading::Answer(SpokenAnswer::Approve);
    let deny = Reading::Answer(SpokenAnswer::Deny);
    let cancel = Reading::Answer(SpokenAnswer::Cancel);
    let shown = Some("기차");
    assert_eq!(p.read("네 기차", shown), approve);
    assert_eq!(p.read("기차 네", shown), approve);
    assert_eq!(p.read("네", shown), Reading::ApproveWithoutWord);
    assert_eq!(p.read("네 거울", shown), Reading::Nothing, "wrong word");
    assert_eq!(p.read("네 기차 거울", shown), Reading::Nothing, "two words");
    assert_eq!(p.read("네 기차 전화", shown), Reading::Nothing, "a decoy");
    assert_eq!(p.read("기차", shown), Reading::ShownWord);
    assert_eq!(p.read("거울", shown), Reading::Nothing);
    // Refusals need no word.
    assert_eq!(p.read("아니요", shown), deny);
    assert_eq!(p.read("취소", shown), cancel);
    assert_eq!(p.read("아니요 기차", shown), deny);
    assert_eq!(p.read("", shown), Reading::Nothing);
    // Without a challenge, a challenge word is other speech.
    assert_eq!(p.read("네 기차", None), Reading::Nothing);
    assert_eq!(p.read("네", None), approve);
}

#[test]
fn an_approval_that_needs_the_word_is_a_decoy_without_one() {
    let p = PhrasePack::load(None, "ko").unwrap();
    let approve = Reading::Answer(SpokenAnswer::Approve);
    let shown = Some("기차");
    // "예" approves only with the shown word, like "네" there.
    assert_eq!(p.read("예 기차", shown), approve);
    assert_eq!(p.read("기차 예", shown), approve);
    assert_eq!(p.read("네 예 기차", shown), approve);
    assert_eq!(p.read("예", shown), Reading::ApproveWithoutWord);
    assert_eq!(p.read("예 거울", shown), Reading::Nothing, "wrong word");
    assert_eq!(p.read("예 아니요", shown), Reading::Nothing, "disagreeing");
    // Without a challenge word it is other speech, alone or beside an answer.
    assert_eq!(p.read("예", None), Reading::Nothing);
    assert_eq!(p.read("예 네", None), Reading::Nothing);
    assert_eq!(p.read("예 기차", None), Reading::Nothing);
    // So the plain grammar lists it once (as a decoy), the challenge grammar as an answer,
    // and with every challenge word.
    assert_eq!(p.grammar().iter().filter(|g| *g == "예").count(), 1);
    assert!(p.challenge_grammar().iter().any(|g| g == "예 기차"));
    let pack = "language='x'\napprove=['y']\ndeny=['n']\ncancel=['c']\n\
                approve_with_word=['ok']\nchallenge_words=['w']\ndecoys=[]\nanswer_weight=3";
    let x = PhrasePack::parse(pack, "x").unwrap();
    assert_eq!(x.grammar().iter().filter(|g| *g == "ok").count(), 1);
    assert_eq!(x.grammar().iter().filter(|g| *g == "y").count(), 3);
    assert_eq!(
        x.challenge_grammar().iter().filter(|g| *g == "ok").count(),
        3
    );
    assert_eq!(
        x.challenge_grammar()
            .iter()
            .filter(|g| *g == "ok w")
            .count(),
        3
    );
    let twice = "language='x'\napprove=['y']\ndeny=['n']\ncancel=['c']\n\
                 approve_with_word=['y']\ndecoys=[]";
    let e = PhrasePack::parse(twice, "t.toml").unwrap_err().to_string();
    assert!(e.contains("more than once"), "{e}");
}

#[test]
fn challenge_words_are_chosen_from_the_pack_at_random() {
    let p = PhrasePack::load(None, "ko").unwrap();
    assert!(p.challenge_words().len() >= 5);
    let mut seen = std::collections::HashSet::new();
    for _ in 0..400 {
        let w = p.random_challenge().unwrap();
        assert!(p.is_challenge_word(w));
        seen.insert(w.to_string());
    }
    // 400 uniform draws from 5 words miss one with probability 5 · (4/5)^400 < 1e-37.
    assert_eq!(seen.len(), p.challenge_words().len());
    let none = "language='x'\napprove=['y']\ndeny=['n']\ncancel=['c']\ndecoys=[]";
    assert_eq!(
        PhrasePack::parse(none, "x").unwrap().random_challenge(),
        None
    );
    let two =
        "language='x'\napprove=['y']\ndeny=['n']\ncancel=['c']\nchallenge_words=['a b']\ndecoys=[]";
    let e = PhrasePack::parse(two, "two.toml").unwrap_err().to_string();
    assert!(e.contains("more than one word"), "{e}");
}

#[test]
fn bad_packs_are_rejected_with_the_reason() {
    let dup = "language='x'\napprove=['yes']\ndeny=['yes']\ncancel=['c']\ndecoys=[]";
    let e = PhrasePack::parse(dup, "dup.toml").unwrap_err().to_string();
    assert!(
        e.contains("dup.toml") && e.contains("more than once"),
        "{e}"
    );
    let quote = "language='x'\napprove=['ye\"s']\ndeny=['n']\ncancel=['c']\ndecoys=[]";
    let e = PhrasePack::parse(quote, "q.toml").unwrap_err().to_string();
    assert!(e.contains("character"), "{e}");
    let empty = "language='x'\napprove=[]\ndeny=['n']\ncancel=['c']\ndecoys=[]";
    assert!(PhrasePack::parse(empty, "e.toml").is_err());
    let e = PhrasePack::load(None, "xx").unwrap_err().to_string();
    assert!(e.contains("xx"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let e = PhrasePack::load(Some(dir.path()), "ko")
        .unwrap_err()
        .to_string();
    assert!(e.contains("ko.toml"), "{e}");
}
