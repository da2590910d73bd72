//! `zkdst regress add|list|check`: the regression seeds of
//! scenarios/regressions.toml (the logic lives in `zkdst_scenarios::regress`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Result};
use clap::Subcommand;
use zkdst_scenarios::{regress, repro_line, run, RunVerdict};

use super::{exit_for_campaign, load, quiet_seed_panics, EXIT_PASS, EXIT_USAGE};

#[derive(Subcommand)]
pub enum RegressCmd {
    /// Append a regression seed (a seed that once failed and is fixed).
    Add {
        scenario: PathBuf,
        #[arg(long)]
        seed: u64,
        /// What failed, and what fixed it.
        #[arg(long, default_value = "")]
        note: String,
        #[arg(long, default_value = regress::DEFAULT_FILE)]
        file: PathBuf,
    },
    /// The regression seeds.
    List {
        #[arg(long, default_value = regress::DEFAULT_FILE)]
        file: PathBuf,
    },
    /// Replay every regression seed (twice); exit 1 if one fails.
    Check {
        #[arg(long, default_value = regress::DEFAULT_FILE)]
        file: PathBuf,
    },
}

/// `zkdst regress add|list|check`.
pub fn regress(what: RegressCmd) -> Result<ExitCode> {
    match what {
        RegressCmd::Add {
            scenario,
            seed,
            note,
            file,
        } => {
            let sc = load(&scenario)?;
            let here = std::env::current_dir().unwrap_or_default();
            let rel = scenario.strip_prefix(&here).unwrap_or(&scenario);
            let entry = regress::Regression {
                scenario: regress::normalize(&rel.display().to_string()),
                seed,
                note,
            };
            // Refuse a duplicate before spending a run on it.
            if let Some(i) = regress::position(&regress::load(&file)?, &entry) {
                bail!(
                    "{}: {} seed {seed} is already a regression (entry {})",
                    file.display(),
                    entry.scenario,
                    i + 1
                );
            }
            quiet_seed_panics();
            let o = run(&sc, seed, None);
            regress::append(&file, &entry)?;
            println!("added {} seed {seed} to {}", entry.scenario, file.display());
            if o.verdict != RunVerdict::Pass {
                eprintln!(
                    "warning: {} seed {seed} does not pass now ({}): the regression test fails until it is fixed\n  {}",
                    entry.scenario,
                    if o.verdict == RunVerdict::Fail {
                        o.failed_checks().join(",")
                    } else {
                        "undecided".into()
                    },
                    repro_line(&scenario, &sc, seed, &o.plan)
                );
            }
            Ok(ExitCode::from(EXIT_PASS))
        }
        RegressCmd::List { file } => {
            let entries = regress::load(&file)?;
            for r in &entries {
                let note = if r.note.is_empty() {
                    String::new()
                } else {
                    format!("  {}", r.note)
                };
                println!("{} --seed {}{note}", r.scenario, r.seed);
            }
            println!("{} regression seed(s) in {}", entries.len(), file.display());
            Ok(ExitCode::from(EXIT_PASS))
        }
        RegressCmd::Check { file } => {
            quiet_seed_panics();
            let checked = regress::check_file(&file, Path::new("."), |c| println!("{}", c.line()))?;
            let broken = checked.iter().any(|c| matches!(c.verdict, regress::Verdict::Broken(_)));
            let failed = checked.iter().any(|c| {
                matches!(
                    c.verdict,
                    regress::Verdict::Fail { .. } | regress::Verdict::Nondeterministic { .. }
                )
            });
            let unknown = checked.iter().any(|c| c.verdict == regress::Verdict::Unknown);
            println!(
                "{} of {} regression seed(s) pass",
                checked.iter().filter(|c| c.passed()).count(),
                checked.len()
            );
            if broken {
                return Ok(ExitCode::from(EXIT_USAGE));
            }
            Ok(exit_for_campaign(failed, unknown))
        }
    }
}
