//! The evaluation's figures: the confusion table (decided answer × truth), the false approvals,
//! the share of answers decided right (on one utterance, and within one repeat), a per-kind
//! breakdown and the latency distribution from the end of the spoken answer to the decision.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::corpus::{Kind, Truth};

/// One clip's outcome, as the table needs it.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub id: String,
    pub kind: Kind,
    pub truth: Truth,
    pub decided: Truth,
    /// What the clip says (for the list of false approvals).
    pub text: String,
    pub transcript: String,
    /// End of the spoken answer → decision, in milliseconds (for decided speech clips).
    pub latency_ms: Option<f64>,
    /// The conditions the clip was made in, as (condition, value) pairs (the answer word, the
    /// voice, the rate and pitch bands, the noise, the reverb, the level band), for the
    /// breakdown of answers by condition: where answers are missed.
    pub conditions: Vec<(&'static str, String)>,
}

/// The figures of one set of outcomes.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// `table[truth][decided]`, in [`Truth::ALL`] order.
    pub table: [[usize; 4]; 4],
    pub false_approvals: usize,
    /// Clips whose truth is approve, deny or cancel.
    pub answers: usize,
    pub answers_right: usize,
    /// Clips whose truth is none (non-answers, wrong or missing challenge words, silence, ...).
    pub non_answers: usize,
    /// p50, p90 and max of the latency of answers decided right, in milliseconds.
    pub latency: Option<(f64, f64, f64)>,
    /// Every latency of answers decided right, sorted (for the distribution).
    pub latencies: Vec<f64>,
    pub latency_count: usize,
}

fn index(t: Truth) -> usize {
    Truth::ALL
        .iter()
        .position(|x| *x == t)
        .unwrap_or(Truth::ALL.len() - 1)
}

/// The `q`-quantile (0..=1) of sorted values, nearest rank.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (q * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

pub fn summarize(outcomes: &[Outcome]) -> Summary {
    let mut table = [[0usize; 4]; 4];
    let mut latencies = Vec::new();
    for o in outcomes {
        table[index(o.truth)][index(o.decided)] += 1;
        if o.truth != Truth::None
            && o.decided == o.truth
            && let Some(l) = o.latency_ms
        {
            latencies.push(l);
        }
    }
    latencies.sort_by(f64::total_cmp);
    let answers = outcomes.iter().filter(|o| o.truth != Truth::None).count();
    Summary {
        table,
        false_approvals: outcomes
            .iter()
            .filter(|o| o.decided == Truth::Approve && o.truth != Truth::Approve)
            .count(),
        answers,
        answers_right: outcomes
            .iter()
            .filter(|o| o.truth != Truth::None && o.decided == o.truth)
            .count(),
        non_answers: outcomes.len() - answers,
        latency: (!latencies.is_empty()).then(|| {
            (
                quantile(&latencies, 0.5),
                quantile(&latencies, 0.9),
                latencies[latencies.len() - 1],
            )
        }),
        latency_count: latencies.len(),
        latencies,
    }
}

impl Summary {
    /// Answers decided right, in percent.
    pub fn answer_accuracy(&self) -> f64 {
        if self.answers == 0 {
            return 0.0;
        }
        100.0 * self.answers_right as f64 / self.answers as f64
    }
}

/// Answers decided within one repeat: the user says the answer, and says it again when the
/// first utterance decided nothing (the dialog's "didn't catch that"). Each answer clip of a
/// prompt without a challenge word is followed by a repeat: the next such clip (by id,
/// cyclically) with the same truth said in another condition (voice, rate band or noise), as a
/// second try sounds different. A pair is right when the first clip is, or when it decided
/// nothing and the repeat is right; a first clip decided wrong is not repeated. Worked out from
/// the clips' single outcomes, not played in one window: on a prompt without a challenge word
/// the listener decides each utterance on its own (challenge prompts carry a pending approval
/// across utterances, so they are left out).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Repeats {
    /// Answer clips, each the first of a pair.
    pub pairs: usize,
    /// Pairs decided right by the first utterance.
    pub first: usize,
    /// Pairs decided right by the repeat after a first utterance that decided nothing.
    pub second: usize,
    /// Pairs that approved what was not an approval (first or repeat).
    pub false_approvals: usize,
}

impl Repeats {
    /// Pairs decided right within one repeat, in percent.
    pub fn accuracy(&self) -> f64 {
        if self.pairs == 0 {
            return 0.0;
        }
        100.0 * (self.first + self.second) as f64 / self.pairs as f64
    }
}

/// The conditions a repeat must differ in from the first utterance (one of them).
const REPEAT_DIFFERS_IN: &[&str] = &["voice", "wpm", "noise"];

/// Each answer clip (of a prompt without a challenge word) with the clip that is its repeat:
/// the next one by id, cyclically, with the same truth said in another condition (voice, rate
/// band or noise), else the next one; `None` when no other clip has its truth. Indices into
/// `outcomes`; only ids, kinds, truths and conditions are read, so it holds before any result.
pub fn repeat_pairs(outcomes: &[Outcome]) -> Vec<(usize, Option<usize>)> {
    let mut groups: BTreeMap<(Kind, usize), Vec<usize>> = BTreeMap::new();
    for (i, o) in outcomes.iter().enumerate() {
        if o.kind == Kind::Answer && o.truth != Truth::None {
            groups.entry((o.kind, index(o.truth))).or_default().push(i);
        }
    }
    let condition = |o: &Outcome, name: &str| {
        o.conditions
            .iter()
            .find(|(c, _)| *c == name)
            .map(|(_, v)| v.clone())
    };
    let mut pairs = Vec::new();
    for group in groups.values_mut() {
        group.sort_by(|a, b| outcomes[*a].id.cmp(&outcomes[*b].id));
        for (k, &first) in group.iter().enumerate() {
            let others = (1..group.len()).map(|j| group[(k + j) % group.len()]);
            let differs = |o: &usize| {
                REPEAT_DIFFERS_IN
                    .iter()
                    .any(|c| condition(&outcomes[*o], c) != condition(&outcomes[first], c))
            };
            let repeat = others
                .clone()
                .find(differs)
                .or_else(|| others.clone().next());
            pairs.push((first, repeat));
        }
    }
    pairs
}

pub fn repeats(outcomes: &[Outcome]) -> Repeats {
    let wrong_approval = |o: &Outcome| o.decided == Truth::Approve && o.truth != Truth::Approve;
    let mut r = Repeats::default();
    for (first, repeat) in repeat_pairs(outcomes) {
        let first = &outcomes[first];
        r.pairs += 1;
        if first.decided == first.truth {
            r.first += 1;
            continue;
        }
        if first.decided != Truth::None {
            r.false_approvals += usize::from(wrong_approval(first));
            continue;
        }
        let Some(repeat) = repeat.map(|i| &outcomes[i]) else {
            continue;
        };
        if repeat.decided == repeat.truth {
            r.second += 1;
        }
        r.false_approvals += usize::from(wrong_approval(repeat));
    }
    r
}

/// Pairs played in one listening window: the first answer, a pause, and its repeat, which the
/// listener hears only when the first decided nothing (see [`repeat_pairs`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Windows {
    pub pairs: usize,
    /// Windows decided right.
    pub right: usize,
    /// Windows that approved what was not an approval.
    pub false_approvals: usize,
}

impl Windows {
    /// Adds one window: the pair's truth and what the window decided.
    pub fn add(&mut self, truth: Truth, decided: Truth) {
        self.pairs += 1;
        self.right += usize::from(decided == truth);
        self.false_approvals += usize::from(decided == Truth::Approve && truth != Truth::Approve);
    }

    /// The line of the printed report.
    pub fn render(&self, gap_ms: u32) -> String {
        let percent = if self.pairs == 0 {
            0.0
        } else {
            100.0 * self.right as f64 / self.pairs as f64
        };
        format!(
            "answered within the window with one repeat, played: {}/{} = {percent:.1} % (the \
             repeat {gap_ms} ms after the first, heard only if it decided nothing; {} false \
             approvals)\n",
            self.right, self.pairs, self.false_approvals
        )
    }
}

/// The printed report of one part.
pub fn render(title: &str, outcomes: &[Outcome]) -> String {
    let s = summarize(outcomes);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "== {title}: {} clips ({} answers, {} non-answers)",
        outcomes.len(),
        s.answers,
        s.non_answers
    );
    let _ = writeln!(out, "truth \\ decided   approve     deny   cancel     none");
    for truth in Truth::ALL {
        let row = s.table[index(truth)];
        let _ = writeln!(
            out,
            "{:<16} {:>8} {:>8} {:>8} {:>8}",
            truth.name(),
            row[0],
            row[1],
            row[2],
            row[3]
        );
    }
    let _ = writeln!(
        out,
        "answers right: {}/{} = {:.1} %",
        s.answers_right,
        s.answers,
        s.answer_accuracy()
    );
    let r = repeats(outcomes);
    let _ = writeln!(
        out,
        "answered within one repeat: {}/{} = {:.1} % ({} on the first utterance, {} on the \
         repeat after a miss; {} false approvals in the pairs)",
        r.first + r.second,
        r.pairs,
        r.accuracy(),
        r.first,
        r.second,
        r.false_approvals
    );
    let _ = writeln!(
        out,
        "false approvals: {} (of {} clips that are not approvals)",
        s.false_approvals,
        outcomes.len() - s.table[0].iter().sum::<usize>()
    );
    match s.latency {
        Some((p50, p90, max)) => {
            let _ = writeln!(
                out,
                "end of answer → decision ({} answers decided right): p50 {p50:.0} ms, p90 {p90:.0} ms, max {max:.0} ms",
                s.latency_count
            );
        }
        None => {
            let _ = writeln!(out, "end of answer → decision: no answer decided right");
        }
    }
    if !s.latencies.is_empty() {
        let deciles: Vec<String> = (1..=9)
            .map(|d| format!("{:.0}", quantile(&s.latencies, f64::from(d) / 10.0)))
            .collect();
        let _ = writeln!(
            out,
            "  deciles p10..p90 (ms): {}; min {:.0}",
            deciles.join(" "),
            s.latencies[0]
        );
    }
    let mut kinds: BTreeMap<Kind, (usize, usize)> = BTreeMap::new();
    for o in outcomes {
        let e = kinds.entry(o.kind).or_default();
        e.0 += 1;
        e.1 += usize::from(o.decided == o.truth);
    }
    let _ = writeln!(out, "by kind (decided as the truth / clips):");
    for (kind, (n, right)) in kinds {
        let _ = writeln!(out, "  {:<18} {right:>4}/{n:<4}", kind.name());
    }
    let mut by_condition: BTreeMap<(&str, &str), (usize, usize)> = BTreeMap::new();
    for o in outcomes
        .iter()
        .filter(|o| o.kind == Kind::Answer && o.truth != Truth::None)
    {
        for (condition, value) in &o.conditions {
            let e = by_condition.entry((condition, value)).or_default();
            e.0 += 1;
            e.1 += usize::from(o.decided == o.truth);
        }
    }
    if !by_condition.is_empty() {
        let _ = writeln!(out, "answers right by condition (right / answers):");
        let mut last = None;
        for ((condition, value), (n, right)) in by_condition {
            if last != Some(condition) {
                if last.is_some() {
                    out.push('\n');
                }
                let _ = write!(out, "  {condition:<8}");
                last = Some(condition);
            }
            let _ = write!(out, " {value} {right}/{n}");
        }
        out.push('\n');
    }
    let wrong_approvals: Vec<&Outcome> = outcomes
        .iter()
        .filter(|o| o.decided == Truth::Approve && o.truth != Truth::Approve)
        .collect();
    if !wrong_approvals.is_empty() {
        let _ = writeln!(out, "false approvals:");
        for o in wrong_approvals {
            let _ = writeln!(
                out,
                "  {} ({}): said `{}`, heard `{}`",
                o.id,
                o.kind.name(),
                o.text,
                o.transcript
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(truth: Truth, decided: Truth, latency: Option<f64>) -> Outcome {
        Outcome {
            id: "x".into(),
            kind: Kind::Answer,
            truth,
            decided,
            text: String::new(),
            transcript: String::new(),
            latency_ms: latency,
            conditions: vec![("word", "네".into())],
        }
    }

    #[test]
    fn the_table_counts_truth_against_decision() {
        let outcomes = [
            o(Truth::Approve, Truth::Approve, Some(100.0)),
            o(Truth::Approve, Truth::None, None),
            o(Truth::Deny, Truth::Deny, Some(300.0)),
            o(Truth::None, Truth::Approve, None),
            o(Truth::Deny, Truth::Approve, None),
            o(Truth::None, Truth::None, None),
            o(Truth::Cancel, Truth::Cancel, Some(200.0)),
        ];
        let s = summarize(&outcomes);
        assert_eq!(s.table[0], [1, 0, 0, 1]);
        assert_eq!(s.table[1], [1, 1, 0, 0]);
        assert_eq!(s.table[3], [1, 0, 0, 1]);
        assert_eq!(s.false_approvals, 2);
        assert_eq!((s.answers, s.answers_right, s.non_answers), (5, 3, 2));
        assert_eq!(s.latency, Some((200.0, 300.0, 300.0)));
        let text = render("t", &outcomes);
        assert!(text.contains("false approvals: 2"), "{text}");
        // 3 of the 5 answers right, all said as "네".
        assert!(text.contains("word     네 3/5"), "{text}");
        assert!(
            text.contains("p10..p90 (ms): 100 100 100 200 200 200 300 300 300"),
            "{text}"
        );
    }

    fn said(id: &str, truth: Truth, decided: Truth, voice: &str) -> Outcome {
        Outcome {
            id: id.into(),
            conditions: vec![("voice", voice.into()), ("wpm", "150+".into())],
            ..o(truth, decided, None)
        }
    }

    #[test]
    fn a_missed_answer_is_decided_by_its_repeat_in_another_voice() {
        let outcomes = [
            // Right at once.
            said("a1", Truth::Approve, Truth::Approve, "ko"),
            // Missed; its repeat is the next approve clip in another voice, a3: right.
            said("a2", Truth::Approve, Truth::None, "ko+f"),
            said("a3", Truth::Approve, Truth::Approve, "ko+m"),
            // Missed; the next approve clip after it is a1 (cyclically): right.
            said("a4", Truth::Approve, Truth::None, "ko+f"),
            // Missed; its only repeat is an approval: a false approval in the pair.
            said("d1", Truth::Deny, Truth::None, "ko"),
            said("d2", Truth::Deny, Truth::Approve, "ko+m"),
            // Not an answer, and an answer on a challenge prompt: no pair.
            said("n1", Truth::None, Truth::None, "ko"),
            Outcome {
                kind: Kind::ChallengeRight,
                ..said("c1", Truth::Approve, Truth::None, "ko")
            },
        ];
        let r = repeats(&outcomes);
        assert_eq!(
            r,
            Repeats {
                pairs: 6,
                first: 2,
                second: 2,
                false_approvals: 2,
            }
        );
        assert!((r.accuracy() - 400.0 / 6.0).abs() < 1e-9);
        let text = render("t", &outcomes);
        assert!(text.contains("answered within one repeat: 4/6"), "{text}");
        // The pairs are chosen from the clips alone: what was decided changes none of them.
        let undecided: Vec<Outcome> = outcomes
            .iter()
            .map(|o| Outcome {
                decided: Truth::None,
                ..o.clone()
            })
            .collect();
        let ids = |o: &[Outcome]| -> Vec<(String, Option<String>)> {
            repeat_pairs(o)
                .into_iter()
                .map(|(f, r)| (o[f].id.clone(), r.map(|r| o[r].id.clone())))
                .collect()
        };
        assert_eq!(ids(&outcomes), ids(&undecided));
        assert!(ids(&outcomes).contains(&("a2".into(), Some("a3".into()))));
    }

    #[test]
    fn a_window_counts_right_answers_and_approvals_of_what_was_not_one() {
        let mut w = Windows::default();
        w.add(Truth::Approve, Truth::Approve);
        w.add(Truth::Deny, Truth::None);
        w.add(Truth::Deny, Truth::Approve);
        assert_eq!(
            w,
            Windows {
                pairs: 3,
                right: 1,
                false_approvals: 1,
            }
        );
        let line = w.render(700);
        assert!(
            line.contains("1/3 = 33.3 %") && line.contains("700 ms"),
            "{line}"
        );
    }

    #[test]
    fn quantiles_use_the_nearest_rank() {
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(quantile(&v, 0.5), 5.0);
        assert_eq!(quantile(&v, 0.9), 9.0);
        assert_eq!(quantile(&v, 1.0), 10.0);
        assert_eq!(quantile(&[7.0], 0.5), 7.0);
    }
}
