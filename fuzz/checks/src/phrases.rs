//! The phrase matcher (`pcp_speech::PhrasePack`): arbitrary transcripts against the shipped
//! packs, and arbitrary pack files. Properties: no panic; a transcript with any decoy in it
//! decides nothing; one that mixes approval with denial or cancelling never approves; case and
//! spacing do not change the meaning.

use std::sync::OnceLock;

use pcp_speech::phrases::{PhrasePack, SpokenAnswer};

fn packs() -> &'static [PhrasePack] {
    static PACKS: OnceLock<Vec<PhrasePack>> = OnceLock::new();
    PACKS.get_or_init(|| {
        [
            (include_str!("../../../assets/phrases/ko.toml"), "ko"),
            (include_str!("../../../assets/phrases/en.toml"), "en"),
        ]
        .iter()
        .map(|(text, name)| PhrasePack::parse(text, name).expect("a shipped pack parses"))
        .collect()
    })
}

pub fn check(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    if mode & 1 == 1 {
        // A pack file from anywhere: parses or says why; a parsed one classifies its own phrases.
        if let Ok(pack) = PhrasePack::parse(&text, "fuzz") {
            for phrase in pack.grammar() {
                let _ = pack.classify(phrase);
            }
            let _ = pack.classify(&text);
        }
        return;
    }
    for pack in packs() {
        let meaning = pack.classify(&text);
        assert_eq!(
            pack.classify(&format!("  {}  ", text.to_uppercase())),
            pack.classify(&text.to_uppercase()),
            "spacing changed the meaning"
        );
        // Only single words that no longer phrase contains: appended, they cannot merge with
        // the transcript's last word into another phrase.
        let phrases = pack.grammar();
        let in_longer = |w: &str| {
            phrases
                .iter()
                .any(|p| p.contains(' ') && p.split(' ').any(|x| x == w))
        };
        let loose: Vec<&String> = phrases
            .iter()
            .filter(|p| !p.contains(' ') && !in_longer(p))
            .collect();
        let decoys: Vec<&&String> = loose
            .iter()
            .filter(|p| pack.classify(p).is_none())
            .collect();
        let deny = loose
            .iter()
            .find(|p| pack.classify(p) == Some(SpokenAnswer::Deny));
        if !decoys.is_empty() {
            let decoy = decoys[usize::from(mode >> 1) % decoys.len()];
            assert_eq!(
                pack.classify(&format!("{text} {decoy}")),
                None,
                "a decoy in {text:?} {decoy:?} still decided"
            );
        }
        if meaning == Some(SpokenAnswer::Approve)
            && let Some(deny) = deny
        {
            assert_ne!(
                pack.classify(&format!("{text} {deny}")),
                Some(SpokenAnswer::Approve),
                "approval mixed with {deny:?} approved"
            );
        }
    }
}
