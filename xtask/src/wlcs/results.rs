//! What a WLCS run means: the suite file (`compositor/wlcs/suite.toml`: the groups CI runs and
//! the failures it expects, each with its cause), gtest's XML read into one outcome a test (a
//! skip is a `<failure>` carrying the property `wlcs-skip-test`, WLCS's way of saying a test
//! needs what the compositor does not offer), the verdict against the expected failures, the
//! table of counts per group, and the comparison of two runs.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::Deserialize;

/// One test's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Pass,
    /// Skipped, with WLCS's reason (an extension the compositor does not offer).
    Skip(String),
    /// Failed, with the first line of the first failure.
    Fail(String),
}

/// A test (`Suite.name` as gtest names it, e.g. `AllSurfaceTypes/TouchTest.touch_on_surface_seen/4`)
/// and its outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestResult {
    pub test: String,
    pub outcome: Outcome,
}

/// A group of tests CI runs.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Group {
    pub name: String,
    /// A gtest filter: `:`-separated patterns (`*`, `?`), then optionally `-` and patterns to
    /// leave out.
    pub filter: String,
    /// What the group covers.
    #[serde(default)]
    pub about: String,
}

/// A failure the suite expects.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expected {
    /// A test name or a gtest pattern naming several.
    pub test: String,
    /// Why it fails (shown in docs/wlcs.md too).
    pub cause: String,
}

/// The suite file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    #[serde(rename = "group")]
    pub groups: Vec<Group>,
    #[serde(default, rename = "expected")]
    pub expected: Vec<Expected>,
}

/// What a run shows against the expectations.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Failed and not expected to: (test, first line of the failure).
    pub unexpected_failures: Vec<(String, String)>,
    /// Expected to fail and passed: (test, the expected cause).
    pub unexpected_passes: Vec<(String, String)>,
}

impl Verdict {
    /// One line for each thing that fails the run.
    pub fn problems(&self) -> Vec<String> {
        let failures = self
            .unexpected_failures
            .iter()
            .map(|(t, why)| format!("unexpected failure: {t}: {why}"));
        let passes = self.unexpected_passes.iter().map(|(t, cause)| {
            format!("unexpected pass (remove it from suite.toml): {t} (listed: {cause})")
        });
        failures.chain(passes).collect()
    }
}

impl Suite {
    /// Reads and checks the suite file.
    pub fn load(path: &Path) -> Result<Suite> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let suite: Suite =
            toml::from_str(&text).with_context(|| format!("{} is not valid", path.display()))?;
        for e in &suite.expected {
            if e.cause.trim().is_empty() {
                bail!(
                    "{}: the expected failure {} has no cause",
                    path.display(),
                    e.test
                );
            }
        }
        Ok(suite)
    }

    /// The groups named (a name that is no group is a filter of its own); all when none is.
    pub fn select(&self, names: &[String]) -> Result<Vec<Group>> {
        if names.is_empty() {
            return Ok(self.groups.clone());
        }
        Ok(names
            .iter()
            .map(|n| {
                self.groups
                    .iter()
                    .find(|g| &g.name == n)
                    .cloned()
                    .unwrap_or_else(|| Group {
                        name: n.clone(),
                        filter: n.clone(),
                        about: String::new(),
                    })
            })
            .collect())
    }

    /// The expected failure that names `test`, if any.
    pub fn expectation(&self, test: &str) -> Option<&Expected> {
        self.expected.iter().find(|e| filter_matches(&e.test, test))
    }

    /// Judges a run: every failure must be expected, and every expected failure that ran must
    /// fail (a skip is neither).
    pub fn judge(&self, results: &[TestResult]) -> Verdict {
        let mut verdict = Verdict::default();
        for r in results {
            let expected = self.expectation(&r.test);
            match (&r.outcome, expected) {
                (Outcome::Fail(why), None) => {
                    verdict
                        .unexpected_failures
                        .push((r.test.clone(), why.clone()));
                }
                (Outcome::Pass, Some(e)) => {
                    verdict
                        .unexpected_passes
                        .push((r.test.clone(), e.cause.clone()));
                }
                _ => {}
            }
        }
        verdict
    }
}

/// Whether `name` matches a gtest glob (`*` any run, `?` one character).
pub fn glob(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    // The classic two-pointer match with backtracking to the last `*`.
    let (mut i, mut j, mut star, mut mark) = (0, 0, None, 0);
    while j < n.len() {
        if i < p.len() && (p[i] == '?' || p[i] == n[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some(i);
            mark = j;
            i += 1;
        } else if let Some(s) = star {
            i = s + 1;
            mark += 1;
            j = mark;
        } else {
            return false;
        }
    }
    p[i..].iter().all(|c| *c == '*')
}

/// Whether `name` passes a gtest filter (`POSITIVE[:…][-NEGATIVE[:…]]`).
pub fn filter_matches(filter: &str, name: &str) -> bool {
    let (positive, negative) = filter.split_once('-').unwrap_or((filter, ""));
    let included = positive.is_empty() || positive.split(':').any(|p| glob(p, name));
    let excluded = negative
        .split(':')
        .filter(|p| !p.is_empty())
        .any(|p| glob(p, name));
    included && !excluded
}

/// Every test that ran in gtest's XML report, with its outcome (disabled tests did not run).
pub fn parse_xml(text: &str) -> Result<Vec<TestResult>> {
    let doc = roxmltree::Document::parse(text).context("the XML report does not parse")?;
    let mut results = Vec::new();
    for case in doc.descendants().filter(|n| n.has_tag_name("testcase")) {
        if case.attribute("status") == Some("notrun") {
            continue;
        }
        let (Some(class), Some(name)) = (case.attribute("classname"), case.attribute("name"))
        else {
            bail!("a testcase without a classname or name");
        };
        let skip = case
            .descendants()
            .find(|n| n.has_tag_name("property") && n.attribute("name") == Some("wlcs-skip-test"))
            .map(|n| n.attribute("value").unwrap_or_default().to_string())
            .or_else(|| {
                (case.attribute("result") == Some("skipped")
                    || case.children().any(|n| n.has_tag_name("skipped")))
                .then(String::new)
            });
        let failure = case
            .children()
            .find(|n| n.has_tag_name("failure"))
            .map(|n| {
                let message = n.attribute("message").unwrap_or_default();
                let text = if message.is_empty() {
                    n.text().unwrap_or_default()
                } else {
                    message
                };
                text.lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .take(2)
                    .collect::<Vec<_>>()
                    .join(" ")
            });
        let outcome = match (skip, failure) {
            (Some(reason), _) => Outcome::Skip(reason),
            (None, Some(why)) => Outcome::Fail(why),
            (None, None) => Outcome::Pass,
        };
        results.push(TestResult {
            test: format!("{class}.{name}"),
            outcome,
        });
    }
    Ok(results)
}

/// Counts per group: tests, passed, skipped, failed. Each test counts in the first group whose
/// filter it passes.
pub fn table(groups: &[Group], results: &[TestResult]) -> String {
    let mut counts: BTreeMap<usize, [usize; 3]> = BTreeMap::new();
    for r in results {
        let Some(g) = groups
            .iter()
            .position(|g| filter_matches(&g.filter, &r.test))
        else {
            continue;
        };
        let slot = match r.outcome {
            Outcome::Pass => 0,
            Outcome::Skip(_) => 1,
            Outcome::Fail(_) => 2,
        };
        counts.entry(g).or_default()[slot] += 1;
    }
    let mut out = format!(
        "{:<28} {:>5} {:>5} {:>5} {:>5} {:>6}\n",
        "group", "tests", "pass", "skip", "fail", "pass %"
    );
    let mut total = [0usize; 3];
    for (i, g) in groups.iter().enumerate() {
        let [pass, skip, fail] = counts.get(&i).copied().unwrap_or_default();
        for (t, c) in total.iter_mut().zip([pass, skip, fail]) {
            *t += c;
        }
        out.push_str(&row(&g.name, pass, skip, fail, &g.about));
    }
    out.push_str(&row("all", total[0], total[1], total[2], ""));
    out
}

/// One line of the table; the rate is of the tests that ran (passed or failed).
fn row(name: &str, pass: usize, skip: usize, fail: usize, about: &str) -> String {
    let ran = pass + fail;
    let rate = if ran == 0 {
        "-".to_string()
    } else {
        format!("{:.0}", 100.0 * pass as f64 / ran as f64)
    };
    let mut line = String::new();
    let _ = writeln!(
        line,
        "{name:<28} {:>5} {pass:>5} {skip:>5} {fail:>5} {rate:>6}  {about}",
        pass + skip + fail
    );
    line.trim_end().to_string() + "\n"
}

/// The tests whose outcome differs between `plain` and `waiting` (the same tests with a prompt
/// waiting), one line each; a test that ran in only one of them counts too.
pub fn compare(plain: &[TestResult], waiting: &[TestResult]) -> Vec<String> {
    let before: BTreeMap<&str, &Outcome> = plain
        .iter()
        .map(|r| (r.test.as_str(), &r.outcome))
        .collect();
    let after: BTreeMap<&str, &Outcome> = waiting
        .iter()
        .map(|r| (r.test.as_str(), &r.outcome))
        .collect();
    let mut lines = Vec::new();
    for (test, a) in &before {
        match after.get(test) {
            Some(b) if super::outcome_name(a) == super::outcome_name(b) => {}
            Some(b) => lines.push(format!(
                "with a prompt waiting {test} changed: {} → {} {}",
                super::outcome_name(a),
                super::outcome_name(b),
                match b {
                    Outcome::Fail(why) => why.as_str(),
                    _ => "",
                }
            )),
            None => lines.push(format!("with a prompt waiting {test} did not run")),
        }
    }
    for test in after.keys().filter(|t| !before.contains_key(*t)) {
        lines.push(format!("with a prompt waiting {test} ran, but not without"));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report as WLCS 1.5 writes it: a pass, a WLCS skip (a failure with the property), a
    /// failure, and a disabled test.
    const REPORT: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="4" failures="2" disabled="1" errors="0" name="AllTests">
  <testsuite name="AllSurfaceTypes/TouchTest" tests="2" failures="1" disabled="0">
    <testcase name="touch_on_surface_seen/0" value_param="wl_shell_surface" status="run" result="completed" time="0.2" classname="AllSurfaceTypes/TouchTest">
      <properties>
        <property name="wlcs-skip-test" value="Missing extension: wl_shell&gt;= 2"/>
      </properties>
      <failure message="Missing extension" type=""><![CDATA[Missing extension]]></failure>
    </testcase>
    <testcase name="touch_on_surface_seen/2" status="run" result="completed" time="0.2" classname="AllSurfaceTypes/TouchTest" />
  </testsuite>
  <testsuite name="XdgToplevelStableTest" tests="2" failures="1" disabled="1">
    <testcase name="surface_can_be_moved_interactively" status="run" result="completed" time="0.3" classname="XdgToplevelStableTest">
      <failure message="./tests/xdg_toplevel_stable.cpp:150&#x0A;Value of: moved" type=""><![CDATA[x]]></failure>
    </testcase>
    <testcase name="DISABLED_old" status="notrun" result="suppressed" time="0" classname="XdgToplevelStableTest" />
  </testsuite>
</testsuites>"#;

    fn suite(expected: &[(&str, &str)]) -> Suite {
        Suite {
            groups: vec![
                Group {
                    name: "touch".into(),
                    filter: "AllSurfaceTypes/TouchTest*".into(),
                    about: String::new(),
                },
                Group {
                    name: "toplevel".into(),
                    filter: "XdgToplevelStable*".into(),
                    about: String::new(),
                },
            ],
            expected: expected
                .iter()
                .map(|(t, c)| Expected {
                    test: t.to_string(),
                    cause: c.to_string(),
                })
                .collect(),
        }
    }

    #[test]
    fn a_failure_with_the_skip_property_is_a_skip_and_disabled_tests_did_not_run() {
        let results = parse_xml(REPORT).unwrap();
        let outcomes: Vec<(&str, &str)> = results
            .iter()
            .map(|r| (r.test.as_str(), crate::wlcs::outcome_name(&r.outcome)))
            .collect();
        assert_eq!(
            outcomes,
            [
                ("AllSurfaceTypes/TouchTest.touch_on_surface_seen/0", "skip"),
                ("AllSurfaceTypes/TouchTest.touch_on_surface_seen/2", "pass"),
                (
                    "XdgToplevelStableTest.surface_can_be_moved_interactively",
                    "fail"
                ),
            ]
        );
        assert_eq!(
            results[2].outcome,
            Outcome::Fail("./tests/xdg_toplevel_stable.cpp:150 Value of: moved".into())
        );
    }

    #[test]
    fn unexpected_failures_and_unexpected_passes_both_count() {
        let results = parse_xml(REPORT).unwrap();
        let verdict = suite(&[]).judge(&results);
        assert_eq!(verdict.unexpected_failures.len(), 1);
        assert!(verdict.unexpected_passes.is_empty());
        let listed = suite(&[
            (
                "XdgToplevelStableTest.surface_can_be_moved_*",
                "no move yet",
            ),
            ("AllSurfaceTypes/TouchTest.*", "a skip is not a pass"),
        ]);
        let verdict = listed.judge(&results);
        assert!(verdict.unexpected_failures.is_empty());
        assert_eq!(
            verdict.unexpected_passes,
            [(
                "AllSurfaceTypes/TouchTest.touch_on_surface_seen/2".to_string(),
                "a skip is not a pass".to_string()
            )]
        );
    }

    #[test]
    fn gtest_filters_match_as_gtest_does() {
        assert!(glob(
            "*/SurfacePointerMotionTest*",
            "Edge/SurfacePointerMotionTest.p/0"
        ));
        assert!(glob("Self?est*", "SelfTest.x"));
        assert!(!glob("SelfTest", "SelfTest.x"));
        assert!(filter_matches("A*:B*", "Bx"));
        assert!(!filter_matches("*-*Disabled*", "XDisabled"));
        assert!(filter_matches("-X*", "Y"));
    }

    #[test]
    fn the_table_counts_each_test_in_its_first_group() {
        let results = parse_xml(REPORT).unwrap();
        let table = table(&suite(&[]).groups, &results);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(
            lines[1].split_whitespace().collect::<Vec<_>>(),
            ["touch", "2", "1", "1", "0", "100"]
        );
        assert_eq!(
            lines[2].split_whitespace().collect::<Vec<_>>(),
            ["toplevel", "1", "0", "0", "1", "0"]
        );
        assert_eq!(
            lines[3].split_whitespace().collect::<Vec<_>>(),
            ["all", "3", "1", "1", "1", "50"]
        );
    }

    #[test]
    fn a_changed_outcome_with_a_prompt_waiting_is_named() {
        let plain = parse_xml(REPORT).unwrap();
        let mut waiting = plain.clone();
        waiting[1].outcome = Outcome::Fail("covered".into());
        waiting.pop();
        let lines = compare(&plain, &waiting);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[0].contains("touch_on_surface_seen/2 changed: pass → fail covered"));
        assert!(lines[1].contains("surface_can_be_moved_interactively did not run"));
    }
}
