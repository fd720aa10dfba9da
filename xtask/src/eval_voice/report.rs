//! The evaluation's figures: the confusion table (decided answer × truth), the false approvals,
//! the share of answers decided right, a per-kind breakdown and the latency distribution from
//! the end of the spoken answer to the decision.

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
    for o in outcomes.iter().filter(|o| o.truth != Truth::None) {
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

    #[test]
    fn quantiles_use_the_nearest_rank() {
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(quantile(&v, 0.5), 5.0);
        assert_eq!(quantile(&v, 0.9), 9.0);
        assert_eq!(quantile(&v, 1.0), 10.0);
        assert_eq!(quantile(&[7.0], 0.5), 7.0);
    }
}
