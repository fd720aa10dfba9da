//! The decision rules over what the decoder phases heard, free of Vosk so every rule is tested
//! directly: an utterance's n-best alternatives → its reading and margin per phase → one reading
//! all phases agree on with enough margin → an answer, across utterances (an approval and the
//! challenge word after a short pause count as one answer). Any doubt is no answer.

use crate::phrases::{PhrasePack, Reading, SpokenAnswer};

/// One alternative transcript of an utterance with Vosk's likelihood (the negated decoder cost
/// of its path, acoustic and grammar scores together: higher is better, differences are natural
/// log-likelihood ratios). Only alternatives within the decoder's lattice beam
/// (`--lattice-beam`) survive, so a margin larger than that beam shows only as "no rival".
#[derive(Debug, Clone, PartialEq)]
pub struct Alternative {
    pub text: String,
    pub likelihood: f32,
}

/// How far ahead of every alternative that means something else the best one must be, in
/// log-likelihood units, per kind of reading.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Margins {
    /// For approvals, approval phrases awaiting the challenge word, and that word.
    pub approve: f32,
    /// For deny and cancel (a wrong refusal only denies: it can be looser).
    pub refuse: f32,
}

impl Margins {
    fn required(&self, reading: Reading) -> f32 {
        match reading {
            Reading::Answer(SpokenAnswer::Deny | SpokenAnswer::Cancel) => self.refuse,
            _ => self.approve,
        }
    }
}

/// One phase's reading of one utterance.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseReading {
    pub reading: Reading,
    /// The best alternative's text.
    pub text: String,
    /// Its lead over the best alternative that reads differently; infinite when none does
    /// (nothing else survived the decoder's lattice beam).
    pub margin: f32,
    /// Its lead over the best alternative that reads differently and is not silence (an empty
    /// transcript); infinite when none is.
    pub margin_over_speech: f32,
}

/// Reads one phase's alternatives (any order) for a prompt showing `challenge`.
pub fn read_phase(
    pack: &PhrasePack,
    challenge: Option<&str>,
    alternatives: &[Alternative],
) -> PhaseReading {
    let mut sorted: Vec<&Alternative> = alternatives.iter().collect();
    sorted.sort_by(|a, b| b.likelihood.total_cmp(&a.likelihood));
    let Some(best) = sorted.first() else {
        return PhaseReading {
            reading: Reading::Nothing,
            text: String::new(),
            margin: 0.0,
            margin_over_speech: 0.0,
        };
    };
    let reading = pack.read(&best.text, challenge);
    let lead = |rival: Option<&&Alternative>| {
        rival.map_or(f32::INFINITY, |r| best.likelihood - r.likelihood)
    };
    let rivals = || {
        sorted[1..]
            .iter()
            .filter(|a| pack.read(&a.text, challenge) != reading)
    };
    PhaseReading {
        reading,
        text: best.text.clone(),
        margin: lead(rivals().next()),
        margin_over_speech: lead(rivals().find(|a| !a.text.trim().is_empty())),
    }
}

/// The reading the phases agree on; otherwise [`Reading::Nothing`].
/// - Anything that can lead to an approval (an approval, an approval waiting for its word, the
///   shown word) needs every phase that heard anything to read it, each leading every rival
///   reading of other speech by `approve`'s margin, and one of them leading silence by as much:
///   a phase that heard other speech is doubt. A phase whose best result is silence, or that is
///   torn between the word and silence, abstains (where a short word falls in the 30 ms frame
///   decides whether it scores above silence: that is what the phases are for).
/// - A refusal (deny, cancel) needs one phase to read it with `refuse`'s margin and no phase to
///   read another answer; a phase that heard nothing or other speech does not stop it (a wrong
///   refusal only denies, and a missed one leaves the user repeating it).
pub fn agree(phases: &[PhaseReading], margins: &Margins) -> Reading {
    let heard: Vec<&PhaseReading> = phases.iter().filter(|p| !p.text.is_empty()).collect();
    if let Some(reading) = heard.first().map(|p| p.reading)
        && reading != Reading::Nothing
    {
        let required = margins.required(reading);
        // Every phase that heard something reads it and leads all other speech; at least one
        // also leads silence (a phase torn between the word and silence is like one that heard
        // silence: it abstains).
        let agreed = heard
            .iter()
            .all(|p| p.reading == reading && p.margin_over_speech >= required);
        let sure = heard.iter().any(|p| p.margin >= required);
        if agreed && sure {
            return reading;
        }
    }
    let mut answers = phases
        .iter()
        .map(|p| p.reading)
        .filter(|r| *r != Reading::Nothing);
    let Some(refusal @ Reading::Answer(SpokenAnswer::Deny | SpokenAnswer::Cancel)) = answers.next()
    else {
        return Reading::Nothing;
    };
    let alone = answers.all(|r| r == refusal);
    let sure = phases
        .iter()
        .any(|p| p.reading == refusal && p.margin >= margins.refuse);
    if alone && sure {
        refusal
    } else {
        Reading::Nothing
    }
}

/// Answers across utterances: an approval without its challenge word waits, for at most
/// `gap_samples` of audio, for an utterance that is just the shown word.
#[derive(Debug, Clone)]
pub struct Judge {
    gap_samples: u64,
    /// When (in samples) the utterance holding an approval without its word ended.
    pending_since: Option<u64>,
}

impl Judge {
    pub fn new(gap_samples: u64) -> Judge {
        Judge {
            gap_samples,
            pending_since: None,
        }
    }

    /// Takes an utterance's agreed reading; `began` and `ended` are where its speech began and
    /// ended, in samples. `Some` once an answer is decided.
    pub fn utterance(&mut self, reading: Reading, began: u64, ended: u64) -> Option<SpokenAnswer> {
        let pending = self.pending_since.take();
        match reading {
            Reading::Answer(answer) => Some(answer),
            Reading::ApproveWithoutWord => {
                self.pending_since = Some(ended);
                None
            }
            Reading::ShownWord => pending
                .filter(|since| began.saturating_sub(*since) <= self.gap_samples)
                .map(|_| SpokenAnswer::Approve),
            Reading::Nothing => None,
        }
    }

    /// Whether an approval waits for its challenge word.
    pub fn is_pending(&self) -> bool {
        self.pending_since.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alts(list: &[(&str, f32)]) -> Vec<Alternative> {
        list.iter()
            .map(|(t, l)| Alternative {
                text: t.to_string(),
                likelihood: *l,
            })
            .collect()
    }

    fn ko() -> PhrasePack {
        PhrasePack::load(None, "ko").unwrap()
    }

    const MARGINS: Margins = Margins {
        approve: 4.0,
        refuse: 2.0,
    };

    #[test]
    fn the_margin_is_over_the_best_alternative_that_reads_differently() {
        let p = ko();
        // "네 네" reads the same as "네": not a rival.
        let r = read_phase(
            &p,
            None,
            &alts(&[("네 네", 99.0), ("네", 100.0), ("내", 95.0)]),
        );
        assert_eq!(r.reading, Reading::Answer(SpokenAnswer::Approve));
        assert_eq!(r.margin, 5.0);
        assert_eq!(r.text, "네");
        let r = read_phase(&p, None, &alts(&[("아니요", 80.0)]));
        assert_eq!(r.margin, f32::INFINITY);
        // Hearing nothing is a rival too.
        let r = read_phase(&p, None, &alts(&[("네", 50.0), ("", 49.0)]));
        assert_eq!(r.margin, 1.0);
        assert_eq!(read_phase(&p, None, &[]).reading, Reading::Nothing);
    }

    #[test]
    fn every_phase_must_agree_with_enough_margin() {
        let approve = Reading::Answer(SpokenAnswer::Approve);
        let deny = Reading::Answer(SpokenAnswer::Deny);
        let phase = |reading, margin| PhaseReading {
            reading,
            text: "heard".into(),
            margin,
            margin_over_speech: margin,
        };
        let heard_other = |margin| PhaseReading {
            reading: Reading::Nothing,
            text: "전화".into(),
            margin,
            margin_over_speech: margin,
        };
        let silent = || PhaseReading {
            reading: Reading::Nothing,
            text: String::new(),
            margin: f32::INFINITY,
            margin_over_speech: f32::INFINITY,
        };
        // Torn between the word and silence, sure against other speech.
        let torn = PhaseReading {
            reading: approve,
            text: "네".into(),
            margin: 0.01,
            margin_over_speech: 9.0,
        };
        assert_eq!(
            agree(&[torn.clone(), phase(approve, 5.0)], &MARGINS),
            approve
        );
        assert_eq!(
            agree(&[torn.clone(), torn.clone()], &MARGINS),
            Reading::Nothing
        );
        let near_other = PhaseReading {
            margin_over_speech: 1.0,
            ..torn
        };
        assert_eq!(
            agree(&[near_other, phase(approve, 5.0)], &MARGINS),
            Reading::Nothing,
            "close to other speech"
        );
        assert_eq!(
            agree(&[phase(approve, 5.0), phase(approve, 4.0)], &MARGINS),
            approve
        );
        assert_eq!(
            agree(&[phase(approve, 5.0), phase(approve, 3.9)], &MARGINS),
            Reading::Nothing,
            "one doubtful phase"
        );
        assert_eq!(
            agree(&[phase(approve, 9.0), heard_other(9.0)], &MARGINS),
            Reading::Nothing,
            "a phase that heard other speech"
        );
        assert_eq!(
            agree(&[phase(approve, 9.0), silent()], &MARGINS),
            approve,
            "a phase whose best result is silence abstains"
        );
        assert_eq!(agree(&[silent(), silent()], &MARGINS), Reading::Nothing);
        assert_eq!(
            agree(&[phase(deny, 2.5), phase(deny, 2.0)], &MARGINS),
            deny,
            "refusals need less"
        );
        // A refusal stands when the other phase heard nothing, not when it heard an answer.
        assert_eq!(agree(&[silent(), phase(deny, 2.0)], &MARGINS), deny);
        assert_eq!(
            agree(&[phase(deny, 2.0), phase(approve, 9.0)], &MARGINS),
            Reading::Nothing
        );
        let cancel = Reading::Answer(SpokenAnswer::Cancel);
        assert_eq!(
            agree(&[phase(deny, 2.0), phase(cancel, 9.0)], &MARGINS),
            Reading::Nothing
        );
        assert_eq!(
            agree(&[phase(deny, 1.0), silent()], &MARGINS),
            Reading::Nothing,
            "not sure enough"
        );
        // Never so for an approval.
        assert_eq!(
            agree(
                &[phase(Reading::Nothing, 9.0), phase(approve, 9.0)],
                &MARGINS
            ),
            Reading::Nothing
        );
        assert_eq!(agree(&[phase(approve, 3.0)], &MARGINS), Reading::Nothing);
        assert_eq!(agree(&[], &MARGINS), Reading::Nothing);
    }

    #[test]
    fn an_approval_waits_a_short_pause_for_its_challenge_word() {
        let mut j = Judge::new(1000);
        assert_eq!(j.utterance(Reading::ApproveWithoutWord, 0, 500), None);
        assert!(j.is_pending());
        assert_eq!(
            j.utterance(Reading::ShownWord, 1400, 2000),
            Some(SpokenAnswer::Approve)
        );
        // Too late.
        let mut j = Judge::new(1000);
        j.utterance(Reading::ApproveWithoutWord, 0, 500);
        assert_eq!(j.utterance(Reading::ShownWord, 1600, 2000), None);
        // Something in between breaks it; the word alone approves nothing.
        let mut j = Judge::new(1000);
        j.utterance(Reading::ApproveWithoutWord, 0, 500);
        assert_eq!(j.utterance(Reading::Nothing, 600, 700), None);
        assert_eq!(j.utterance(Reading::ShownWord, 800, 900), None);
        assert!(!j.is_pending());
        // A refusal after a pending approval decides.
        let mut j = Judge::new(1000);
        j.utterance(Reading::ApproveWithoutWord, 0, 500);
        assert_eq!(
            j.utterance(Reading::Answer(SpokenAnswer::Cancel), 600, 900),
            Some(SpokenAnswer::Cancel)
        );
    }
}
