//! `zkdst fuzz --store DIR`: one folder per failing seed, as Jepsen keeps
//! its store/, with everything needed to look at the failure without
//! re-running it:
//!
//! ```text
//! store/<scenario>/<seed>-<plan hash>/
//!   summary.txt        verdict, violations, exercised counters, fault plan
//!   replay.txt         the replay line (and the shrunk plan's, if shrunk)
//!   history.jsonl.gz   the history, gzipped JSON lines (byte-identical to
//!                      `replay --history history.jsonl.gz`; `zkdst check`
//!                      reads it, and so does `zcat`)
//!   timeline.html      the HTML timeline (`replay --html`)
//!   plan.json          the seed's fault plan (`replay --plan`)
//!   trace.txt          the `replay --trace info` text
//!   shrunk-plan.json   the plan `zkdst shrink` leaves (first K per scenario)
//! ```
//!
//! `record` writes what the fuzz run itself produced as the failure
//! arrives; `finish`, once no other seed runs, replays each stored seed
//! with its trace collected (checking the replay is bit for bit the fuzz
//! run) and shrinks the first K failures of each scenario. Storing reads
//! outcomes; it never changes a run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::WriteError;
use crate::replay::{plan_repro_line, replay_with_trace, report_text, write_history, write_timeline};
use crate::runner::{repro_line, RunOutcome};
use crate::scenario::Scenario;
use crate::shrink;
use crate::trace::TraceLevel;

/// One stored failing seed.
#[derive(Debug, Clone)]
pub struct Stored {
    pub file: PathBuf,
    pub scenario: Arc<Scenario>,
    pub seed: u64,
    pub dir: PathBuf,
    pub fingerprint: u64,
    /// After `finish`: whether the replay gave the fuzz run's history.
    pub replayed: Option<bool>,
    /// After `finish`: faults before and after shrinking, if shrunk.
    pub shrunk: Option<(usize, usize)>,
}

/// The store of a campaign.
#[derive(Debug)]
pub struct Store {
    root: PathBuf,
    shrink_first: usize,
    stored: Vec<Stored>,
}

impl Store {
    /// A store under `root`, shrinking the first `shrink_first` failures
    /// of each scenario.
    pub fn new(root: impl Into<PathBuf>, shrink_first: usize) -> Store {
        Store {
            root: root.into(),
            shrink_first,
            stored: Vec::new(),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn stored(&self) -> &[Stored] {
        &self.stored
    }

    /// The folder of a failing seed: `<root>/<scenario name>/<seed>-<plan hash>`.
    pub fn dir_for(&self, sc: &Scenario, o: &RunOutcome) -> PathBuf {
        let mut dir = self.root.clone();
        for part in sc.name.split('/') {
            dir.push(safe_name(part));
        }
        dir.join(format!("{}-{}", o.seed, o.plan.hash()))
    }

    /// Writes a failing run's summary, replay line, history, timeline and
    /// plan; returns its folder.
    pub fn record(&mut self, file: &Path, sc: &Arc<Scenario>, o: &RunOutcome) -> Result<PathBuf, WriteError> {
        let dir = self.dir_for(sc, o);
        std::fs::create_dir_all(&dir).map_err(WriteError::create(&dir))?;
        write(&dir.join("summary.txt"), &report_text(file, sc, o))?;
        write(
            &dir.join("replay.txt"),
            &format!("{}\n", repro_line(file, sc, o.seed, &o.plan)),
        )?;
        write_history(o, &dir.join("history.jsonl.gz"))?;
        write_timeline(o, &dir.join("timeline.html"))?;
        write(&dir.join("plan.json"), &o.plan.to_json())?;
        if sc.workload.external.is_some() {
            keep_external(file, o, &dir)?;
        }
        self.stored.push(Stored {
            file: file.to_path_buf(),
            scenario: sc.clone(),
            seed: o.seed,
            dir: dir.clone(),
            fingerprint: o.fingerprint,
            replayed: None,
            shrunk: None,
        });
        Ok(dir)
    }

    /// Replays every stored seed with its trace collected (trace.txt) and
    /// shrinks the first K failures (lowest seeds) of each scenario
    /// (shrunk-plan.json); `log` hears of each step. Call once no other
    /// simulation runs.
    pub fn finish(&mut self, mut log: impl FnMut(String)) -> Result<(), WriteError> {
        // Seed order, not the order threads happened to finish in.
        self.stored.sort_by(|a, b| (&a.file, a.seed).cmp(&(&b.file, b.seed)));
        let mut shrunk_per_scenario: BTreeMap<PathBuf, usize> = BTreeMap::new();
        for s in &mut self.stored {
            if s.scenario.workload.external.is_some() {
                // A real client does not replay: its run is what was kept.
                continue;
            }
            let (o, trace) = replay_with_trace(&s.scenario, s.seed, None, TraceLevel::INFO);
            write(&s.dir.join("trace.txt"), &trace)?;
            let same = o.fingerprint == s.fingerprint;
            s.replayed = Some(same);
            if !same {
                log(format!(
                    "NONDETERMINISTIC: {} seed {} replayed to history {:016x}, the fuzz run gave {:016x}",
                    s.file.display(),
                    s.seed,
                    o.fingerprint,
                    s.fingerprint
                ));
                append(
                    &s.dir.join("summary.txt"),
                    &format!(
                        "NONDETERMINISTIC: the replay gave history {:016x}, the fuzz run {:016x} \
                         (a bug of the harness)\n",
                        o.fingerprint, s.fingerprint
                    ),
                )?;
            }
            let n = shrunk_per_scenario.entry(s.file.clone()).or_default();
            if *n >= self.shrink_first {
                continue;
            }
            *n += 1;
            log(format!("shrinking {} seed {}", s.file.display(), s.seed));
            let Ok(r) = shrink::shrink(&s.scenario, s.seed, &mut log) else {
                continue;
            };
            let plan_file = s.dir.join("shrunk-plan.json");
            write(&plan_file, &r.plan.to_json())?;
            append(
                &s.dir.join("replay.txt"),
                &format!(
                    "{}\n",
                    plan_repro_line(&s.file, &s.scenario, s.seed, &plan_file, &r.plan)
                ),
            )?;
            append(
                &s.dir.join("summary.txt"),
                &format!(
                    "shrunk from {} to {} faults ({} runs); still fails {}:\n{}\n",
                    r.original_faults,
                    r.plan.faults.len(),
                    r.runs,
                    r.checks.join(", "),
                    r.plan
                ),
            )?;
            s.shrunk = Some((r.original_faults, r.plan.faults.len()));
        }
        Ok(())
    }

    /// The campaign summary's section on the store.
    pub fn render(&self) -> String {
        if self.stored.is_empty() {
            return String::new();
        }
        let shrunk = self.stored.iter().filter(|s| s.shrunk.is_some()).count();
        let mut t = format!(
            "\nstored {} failing seed(s) in {} (history, timeline, plan, trace, summary, replay line; \
             shrunk {shrunk}: the first {} per scenario, --shrink K):\n",
            self.stored.len(),
            self.root.display(),
            self.shrink_first
        );
        for s in self.stored.iter().take(20) {
            let shrunk = s
                .shrunk
                .map(|(a, b)| format!("  (shrunk {a} -> {b} faults)"))
                .unwrap_or_default();
            let nondet = if s.replayed == Some(false) {
                "  NONDETERMINISTIC replay"
            } else {
                ""
            };
            t.push_str(&format!("  {}{shrunk}{nondet}\n", s.dir.display()));
        }
        if self.stored.len() > 20 {
            t.push_str(&format!("  ... and {} more\n", self.stored.len() - 20));
        }
        t
    }
}

/// A scenario name part as a folder name: letters, digits, `-`, `_`, `.`
/// kept, anything else (and a name of dots only) replaced by `_`.
fn safe_name(part: &str) -> String {
    let s: String = part
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.chars().all(|c| c == '.') {
        "_".into()
    } else {
        s
    }
}

fn write(path: &Path, text: &str) -> Result<(), WriteError> {
    std::fs::write(path, text).map_err(WriteError::at(path))
}

fn append(path: &Path, text: &str) -> Result<(), WriteError> {
    use std::io::Write;
    std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(WriteError::at(path))
}

#[cfg(test)]
mod tests {
    use super::safe_name;

    #[test]
    fn names_stay_inside_the_store() {
        assert_eq!(safe_name("lock"), "lock");
        assert_eq!(safe_name(".."), "_");
        assert_eq!(safe_name(""), "_");
        assert_eq!(safe_name("a b\\c:d"), "a_b_c_d");
    }
}

/// An external workload's seed: its command's record and output and the
/// arrival log join the stored files, and the replay line re-runs the
/// server side from the log (the client side does not replay).
fn keep_external(file: &Path, o: &RunOutcome, dir: &Path) -> Result<(), WriteError> {
    let Some(from) = o.history.meta.get("external_dir").map(PathBuf::from) else {
        return Ok(());
    };
    for (src, dst) in [
        ("record.jsonl", "client-record.jsonl"),
        ("output.txt", "client-output.txt"),
        ("frames.jsonl", "frames.jsonl"),
    ] {
        let (src, dst) = (from.join(src), dir.join(dst));
        if src.exists() {
            std::fs::copy(&src, &dst).map_err(WriteError::at(&dst))?;
        }
    }
    append(
        &dir.join("replay.txt"),
        &format!(
            "# an external workload's client side does not replay; its server side does:\n\
             zkdst replay {} --seed {} --plan {} --frames {}\n",
            file.display(),
            o.seed,
            dir.join("plan.json").display(),
            dir.join("frames.jsonl").display()
        ),
    )
}
