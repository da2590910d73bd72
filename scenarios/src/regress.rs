//! Regression seeds, as proptest-regressions keeps them: a checked-in file
//! (`scenarios/regressions.toml`) of seeds that once failed and must pass
//! from now on, each replayed by `cargo test` (tests/regressions.rs) and
//! `zkdst regress check`, and required to replay bit for bit.
//!
//! ```toml
//! [[regression]]
//! scenario = "scenarios/double-barrier.toml"   # relative to the repository root
//! seed = 149
//! note = "two enters ended on SessionMoved"
//! ```
//!
//! `zkdst regress add` appends an entry as text, so the file's comments
//! and order stay as they are.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::runner::{repro_line, run, RunVerdict};
use crate::scenario::Scenario;

/// The file `zkdst regress` uses unless told otherwise.
pub use crate::scenario::REGRESSIONS_FILE as DEFAULT_FILE;

/// One regression seed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Regression {
    /// The scenario file, relative to the repository root.
    pub scenario: String,
    pub seed: u64,
    /// What failed, and what fixed it.
    #[serde(default)]
    pub note: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RegressionFile {
    #[serde(default)]
    regression: Vec<Regression>,
}

/// Why a regressions file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum RegressError {
    #[error("{file}: cannot read: {message}")]
    Read { file: String, message: String },
    #[error("{file}: cannot write: {message}")]
    Write { file: String, message: String },
    #[error("{file}: {message}")]
    Malformed { file: String, message: String },
    #[error("{file}: {scenario} seed {seed} is already a regression (entry {entry})")]
    Duplicate {
        file: String,
        scenario: String,
        seed: u64,
        entry: usize,
    },
    #[error(transparent)]
    Scenario(#[from] crate::scenario::ScenarioError),
}

/// Reads a regressions file; a missing file has no entries.
pub fn load(path: &Path) -> Result<Vec<Regression>, RegressError> {
    let file = path.display().to_string();
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(RegressError::Read {
                file,
                message: e.to_string(),
            })
        }
    };
    parse(&text, &file)
}

/// Parses a regressions file's text; `file` names it in errors, which also
/// name the entry (`entry 3 (regression[2].seed)`).
pub fn parse(text: &str, file: &str) -> Result<Vec<Regression>, RegressError> {
    let malformed = |message: String| RegressError::Malformed {
        file: file.to_string(),
        message,
    };
    let de = toml::Deserializer::parse(text).map_err(|e| malformed(e.to_string().trim().to_string()))?;
    let parsed: RegressionFile = serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().message().trim().to_string();
        match entry_of(&path) {
            Some(i) => malformed(format!("entry {} (`{path}`): {inner}", i + 1)),
            None => malformed(format!("`{path}`: {inner}")),
        }
    })?;
    let entries = parsed.regression;
    for (i, r) in entries.iter().enumerate() {
        if r.scenario.trim().is_empty() {
            return Err(malformed(format!(
                "entry {} (`regression[{i}].scenario`): empty path",
                i + 1
            )));
        }
        if let Some(j) = entries[..i].iter().position(|p| same(p, r)) {
            return Err(malformed(format!(
                "entries {} and {} are both {} seed {}",
                j + 1,
                i + 1,
                r.scenario,
                r.seed
            )));
        }
    }
    Ok(entries)
}

/// The entry index in a path such as `regression[2].seed`.
fn entry_of(path: &str) -> Option<usize> {
    let rest = path.strip_prefix("regression[")?;
    rest[..rest.find(']')?].parse().ok()
}

/// The index of the entry naming the same scenario and seed as `r`.
pub fn position(entries: &[Regression], r: &Regression) -> Option<usize> {
    entries.iter().position(|e| same(e, r))
}

fn same(a: &Regression, b: &Regression) -> bool {
    a.seed == b.seed && normalize(&a.scenario) == normalize(&b.scenario)
}

/// A scenario path as entries spell it: `/` separators, no leading `./`.
pub fn normalize(path: &str) -> String {
    let p = path.trim().replace('\\', "/");
    let mut s = p.as_str();
    while let Some(rest) = s.strip_prefix("./") {
        s = rest;
    }
    s.to_string()
}

/// Appends `r` to the file (creating it with a header), refusing an entry
/// that is already there. The file's existing text is kept as it is.
pub fn append(path: &Path, r: &Regression) -> Result<(), RegressError> {
    let file = path.display().to_string();
    let entries = load(path)?;
    if let Some(i) = position(&entries, r) {
        return Err(RegressError::Duplicate {
            file,
            scenario: r.scenario.clone(),
            seed: r.seed,
            entry: i + 1,
        });
    }
    let mut text = std::fs::read_to_string(path).unwrap_or_else(|_| HEADER.to_string());
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&entry_text(r));
    // The text written must read back as the entries plus the new one.
    let mut want = entries;
    want.push(r.clone());
    if parse(&text, &file)? != want {
        return Err(RegressError::Malformed {
            file,
            message: "the appended entry did not read back; the file was left unchanged".into(),
        });
    }
    std::fs::write(path, text).map_err(|e| RegressError::Write {
        file,
        message: e.to_string(),
    })
}

const HEADER: &str = "\
# Regression seeds: each once failed and must pass from now on.
# `cargo test -p zkdst-scenarios --release --test regressions` replays
# every entry (twice: it must replay bit for bit); `zkdst regress add
# SCENARIO --seed N --note TEXT` appends one. Scenario paths are relative
# to the repository root.
";

fn entry_text(r: &Regression) -> String {
    let quote = |s: &str| toml::Value::String(s.to_string()).to_string();
    let mut t = format!(
        "\n[[regression]]\nscenario = {}\nseed = {}\n",
        quote(&r.scenario),
        r.seed
    );
    if !r.note.is_empty() {
        t.push_str(&format!("note = {}\n", quote(&r.note)));
    }
    t
}

/// How one regression seed fared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Passed, twice, with the same history.
    Pass,
    /// Failed: the violation kinds (or failed checks) and the replay line.
    Fail { kinds: Vec<String>, repro: String },
    /// No violation, but a checker could not decide.
    Unknown,
    /// Two runs gave different histories.
    Nondeterministic { first: u64, second: u64 },
    /// The scenario file could not be loaded.
    Broken(String),
}

/// One entry's result.
#[derive(Debug, Clone)]
pub struct Checked {
    pub regression: Regression,
    pub verdict: Verdict,
}

impl Checked {
    pub fn passed(&self) -> bool {
        self.verdict == Verdict::Pass
    }

    /// One line: the scenario, the seed, the verdict and the note.
    pub fn line(&self) -> String {
        let r = &self.regression;
        let what = match &self.verdict {
            Verdict::Pass => "pass".to_string(),
            Verdict::Fail { kinds, repro } => format!("FAIL [{}]\n    {repro}", kinds.join(",")),
            Verdict::Unknown => "UNKNOWN (a checker could not decide)".to_string(),
            Verdict::Nondeterministic { first, second } => {
                format!("NONDETERMINISTIC (histories {first:016x} and {second:016x})")
            }
            Verdict::Broken(e) => format!("BROKEN: {e}"),
        };
        let note = if r.note.is_empty() {
            String::new()
        } else {
            format!("  ({})", r.note)
        };
        format!("{} seed {}: {what}{note}", r.scenario, r.seed)
    }
}

/// Runs one regression seed twice; `root` is the directory the scenario
/// path is relative to (the repository root).
pub fn check(root: &Path, r: &Regression) -> Checked {
    let path: PathBuf = root.join(&r.scenario);
    let verdict = match Scenario::load(&path) {
        Err(e) => Verdict::Broken(e.to_string()),
        Ok(sc) => {
            let a = run(&sc, r.seed, None);
            let b = run(&sc, r.seed, None);
            if a.fingerprint != b.fingerprint {
                Verdict::Nondeterministic {
                    first: a.fingerprint,
                    second: b.fingerprint,
                }
            } else {
                match a.verdict {
                    RunVerdict::Pass => Verdict::Pass,
                    RunVerdict::Unknown => Verdict::Unknown,
                    RunVerdict::Fail => {
                        let kinds = if a.violation_kinds().is_empty() {
                            a.failed_checks()
                        } else {
                            a.violation_kinds()
                        };
                        Verdict::Fail {
                            kinds,
                            repro: repro_line(Path::new(&r.scenario), &sc, r.seed, &a.plan),
                        }
                    }
                }
            }
        }
    };
    Checked {
        regression: r.clone(),
        verdict,
    }
}

/// Checks every entry of a regressions file, calling `each` as each ends.
pub fn check_file(path: &Path, root: &Path, mut each: impl FnMut(&Checked)) -> Result<Vec<Checked>, RegressError> {
    let entries = load(path)?;
    Ok(entries
        .iter()
        .map(|r| {
            let c = check(root, r);
            each(&c);
            c
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_entries_are_named() {
        let text =
            "[[regression]]\nscenario = \"a.toml\"\nseed = 1\n\n[[regression]]\nscenario = \"b.toml\"\nseed = \"x\"\n";
        let e = parse(text, "r.toml").unwrap_err().to_string();
        assert!(e.starts_with("r.toml: entry 2 (`regression[1].seed`)"), "{e}");
        let e = parse("[[regression]]\nscenario = \"a.toml\"\n", "r.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("entry 1") && e.contains("seed"), "{e}");
        let e = parse(
            "[[regression]]\nscenario = \"a.toml\"\nseed = 1\nnote = 2\nwho = 3\n",
            "r.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("entry 1"), "{e}");
        let dup =
            "[[regression]]\nscenario = \"a.toml\"\nseed = 1\n[[regression]]\nscenario = \"./a.toml\"\nseed = 1\n";
        let e = parse(dup, "r.toml").unwrap_err().to_string();
        assert!(e.contains("entries 1 and 2"), "{e}");
        let e = parse("[[regression]\n", "r.toml").unwrap_err().to_string();
        assert!(e.starts_with("r.toml: "), "{e}");
    }

    #[test]
    fn append_keeps_the_text_and_refuses_duplicates() {
        let p = std::env::temp_dir().join(format!("zkdst-regress-unit-{}.toml", std::process::id()));
        let _ = std::fs::remove_file(&p);
        let r = |seed, note: &str| Regression {
            scenario: "scenarios/lock.toml".into(),
            seed,
            note: note.into(),
        };
        append(&p, &r(1, "a \"quoted\" note\nover two lines")).unwrap();
        append(&p, &r(2, "")).unwrap();
        assert!(matches!(
            append(&p, &r(1, "again")),
            Err(RegressError::Duplicate { entry: 1, .. })
        ));
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.starts_with("# Regression seeds"), "{text}");
        assert_eq!(
            load(&p).unwrap(),
            vec![r(1, "a \"quoted\" note\nover two lines"), r(2, "")]
        );
        std::fs::remove_file(&p).ok();
    }
}
