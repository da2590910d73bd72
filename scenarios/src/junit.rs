//! A campaign as a JUnit XML report (`zkdst fuzz --junit FILE`, `zkdst
//! merge --junit FILE`), the format CI systems display: one `testsuite`
//! per scenario file; in it one `testcase` for the seed range (the seeds
//! that passed), one per failing seed with a `failure` carrying the
//! violation kinds and the replay line, one per undecided seed with an
//! `error`, and — when the campaign checked them — one for the scenario's
//! `[expect.min]` minimums.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::fuzz::SeedRecord;
use crate::runner::RunVerdict;

/// What the report says beyond the seed records, per scenario file.
#[derive(Debug, Clone, Default)]
pub struct Extra {
    /// Campaign minimums checked, per file: the unmet ones (empty: met).
    pub minimums: BTreeMap<String, Vec<String>>,
    /// Where a failing seed was stored, by (file, seed).
    pub stored: BTreeMap<(String, u64), String>,
}

/// The JUnit XML of `records` (in any order).
pub fn render(records: &[SeedRecord], extra: &Extra) -> String {
    let mut by_file: BTreeMap<&str, Vec<&SeedRecord>> = BTreeMap::new();
    for r in records {
        by_file.entry(&r.file).or_default().push(r);
    }
    let mut suites = String::new();
    let (mut tests, mut failures, mut errors, mut wall_ms) = (0usize, 0usize, 0usize, 0u64);
    for (file, mut recs) in by_file {
        recs.sort_by_key(|r| r.seed);
        let mut cases = String::new();
        let (mut s_tests, mut s_fail, mut s_err, mut s_ms) = (0usize, 0usize, 0usize, 0u64);
        let first = recs.first().map(|r| r.seed).unwrap_or(0);
        let last = recs.last().map(|r| r.seed).unwrap_or(0);
        let passed: Vec<&&SeedRecord> = recs.iter().filter(|r| r.verdict == RunVerdict::Pass).collect();
        let pass_ms: u64 = passed.iter().map(|r| r.wall_ms).sum();
        s_tests += 1;
        s_ms += pass_ms;
        let _ = write!(
            cases,
            "    <testcase classname=\"{c}\" name=\"seeds {first}..{end}\" time=\"{t}\">\n      \
             <system-out>{out}</system-out>\n    </testcase>\n",
            c = escape(file),
            end = last + 1,
            t = secs(pass_ms),
            out = escape(&format!(
                "{} of {} seeds passed; the others are test cases of their own",
                passed.len(),
                recs.len()
            )),
        );
        for r in recs.iter().filter(|r| r.verdict != RunVerdict::Pass) {
            s_tests += 1;
            s_ms += r.wall_ms;
            let (tag, kind, message) = if r.verdict == RunVerdict::Fail {
                s_fail += 1;
                let kinds = if r.violations.is_empty() {
                    r.failed.join(", ")
                } else {
                    r.violations.join(", ")
                };
                ("failure", "violation", kinds)
            } else {
                s_err += 1;
                ("error", "unknown", "a checker could not decide".to_string())
            };
            let mut body = String::new();
            if let Some(line) = &r.repro {
                let _ = writeln!(body, "{line}");
            } else {
                let _ = writeln!(
                    body,
                    "{} replay {file} --seed {}",
                    zkdst_sim::client::library::command(),
                    r.seed
                );
            }
            if !r.failed.is_empty() {
                let _ = writeln!(body, "failed: {}", r.failed.join(", "));
            }
            if !r.violations.is_empty() {
                let _ = writeln!(body, "violations: {}", r.violations.join(", "));
            }
            if let Some(e) = &r.error {
                let _ = writeln!(body, "run failed: {e}");
            }
            if let Some(dir) = extra.stored.get(&(file.to_string(), r.seed)) {
                let _ = writeln!(body, "stored in {dir}");
            }
            let _ = write!(
                cases,
                "    <testcase classname=\"{c}\" name=\"seed {seed}\" time=\"{t}\">\n      \
                 <{tag} type=\"{kind}\" message=\"{m}\">{b}</{tag}>\n    </testcase>\n",
                c = escape(file),
                seed = r.seed,
                t = secs(r.wall_ms),
                m = escape(&message),
                b = escape(&body),
            );
        }
        if let Some(unmet) = extra.minimums.get(file) {
            s_tests += 1;
            let _ = writeln!(
                cases,
                "    <testcase classname=\"{}\" name=\"expect.min\" time=\"0.000\">",
                escape(file)
            );
            if !unmet.is_empty() {
                s_fail += 1;
                let _ = writeln!(
                    cases,
                    "      <failure type=\"unmet-minimum\" message=\"{}\">{}</failure>",
                    escape(&format!("{} campaign minimum(s) not met", unmet.len())),
                    escape(&unmet.join("\n"))
                );
            }
            cases.push_str("    </testcase>\n");
        }
        let _ = write!(
            suites,
            "  <testsuite name=\"{}\" tests=\"{s_tests}\" failures=\"{s_fail}\" errors=\"{s_err}\" \
             skipped=\"0\" time=\"{}\">\n{cases}  </testsuite>\n",
            escape(file),
            secs(s_ms)
        );
        tests += s_tests;
        failures += s_fail;
        errors += s_err;
        wall_ms += s_ms;
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"zkdst fuzz\" tests=\"{tests}\" \
         failures=\"{failures}\" errors=\"{errors}\" time=\"{}\">\n{suites}</testsuites>\n",
        secs(wall_ms)
    )
}

fn secs(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// Text as XML 1.0 character data or attribute value: markup characters
/// as entities, and characters XML 1.0 cannot carry at all (control
/// characters other than tab and newline, lone surrogates cannot occur in
/// a Rust string) as U+FFFD. Carriage returns and tabs become character
/// references so attribute values keep them.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push('\n'),
            '\t' => out.push_str("&#9;"),
            '\r' => out.push_str("&#13;"),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escapes_markup_and_drops_what_xml_cannot_carry() {
        assert_eq!(escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
        assert_eq!(escape("x\u{1}y\u{FFFF}"), "x\u{FFFD}y\u{FFFD}");
        assert_eq!(escape("t\tr\r\n"), "t&#9;r&#13;\n");
    }
}
