//! `zkdst serve`: the scenario's ensemble on 127.0.0.1 in real time, for
//! any client; and `zkdst replay --frames`, its server side re-run.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use zkdst_scenarios::serve::{self, frames, ServeOptions, ServeOutcome};
use zkdst_scenarios::{FaultPlan, RunVerdict, Scenario};

use super::{exit_for, load, load_plan, quiet_seed_panics};

#[derive(clap::Args)]
pub struct ServeArgs {
    pub scenario: PathBuf,
    /// The seed: the ensemble's choices and the fault plan (default: the
    /// scenario's first seed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Listen from this port: client C's port for server S is
    /// BASE + C × servers + S − 1 (default: free ports).
    #[arg(long)]
    pub port_base: Option<u16>,
    /// An explicit fault plan (JSON, as `shrink` writes).
    #[arg(long, conflicts_with = "no_faults")]
    pub plan: Option<PathBuf>,
    /// Serve without faults (a client's own test suite, say).
    #[arg(long)]
    pub no_faults: bool,
    /// Where the record goes (default: serve/<scenario>-<seed>/).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

fn options(plan: Option<PathBuf>, no_faults: bool, port_base: Option<u16>) -> Result<ServeOptions> {
    let plan = if no_faults {
        Some(FaultPlan::default())
    } else {
        plan.as_deref().map(load_plan).transpose()?
    };
    Ok(ServeOptions { port_base, plan })
}

/// `zkdst serve`.
pub fn serve(args: ServeArgs) -> Result<ExitCode> {
    let sc = load(&args.scenario)?;
    let seed = args.seed.unwrap_or(sc.seeds.start);
    let opts = options(args.plan, args.no_faults, args.port_base)?;
    let out = args
        .out
        .unwrap_or_else(|| PathBuf::from("serve").join(format!("{}-{seed}", sc.name)));
    quiet_seed_panics();
    let length = serve::run::served_length(&sc);
    let o = serve::serve(&sc, seed, &opts, serve::interrupt_flag(), length, |connect, _| {
        println!(
            "serving {} seed {seed} on 127.0.0.1 for {} s (Ctrl-C ends it early)",
            sc.name,
            length.as_secs()
        );
        for (c, s) in connect.iter().enumerate() {
            println!("client {c}: {s}");
        }
    })
    .context("cannot listen")?;
    let paths = serve::write_record(&out, &o).with_context(|| format!("{}: cannot write the record", out.display()))?;
    print_outcome(&sc, &o);
    println!("record: {}", paths.dir.display());
    println!(
        "server side re-runs with: zkdst replay {} --seed {seed} --plan {} --frames {}",
        args.scenario.display(),
        paths.plan.display(),
        paths.frames.display()
    );
    Ok(exit_for(o.verdict))
}

pub fn print_outcome(sc: &Scenario, o: &ServeOutcome) {
    let verdict = match o.verdict {
        RunVerdict::Pass => "PASS",
        RunVerdict::Fail => "FAIL",
        RunVerdict::Unknown => "UNKNOWN",
    };
    let conns = o
        .served
        .pumped
        .arrivals
        .iter()
        .filter(|a| a.input == frames::Input::Open)
        .count();
    println!(
        "{verdict}  {} seed {} served  ({} events, fingerprint {:016x}, {} connections, {:.1} s real, worst lag {} ms{})",
        sc.name,
        o.seed,
        o.served.history.events.len(),
        o.served.history.fingerprint(),
        conns,
        o.wall.as_secs_f64(),
        o.served.pumped.max_lag.as_millis(),
        if o.served.pumped.interrupted { ", interrupted" } else { "" }
    );
    for r in &o.results {
        println!("{}: {:?}", r.checker, r.verdict);
        for v in r.violations.iter().take(5) {
            println!("  {}: {}", v.kind, v.explanation);
        }
    }
    let stats: Vec<String> = o.served.stats.iter().map(|(k, v)| format!("{k}={v}")).collect();
    println!("exercised: {}", stats.join(" "));
    if let Some(e) = &o.served.error {
        println!("run failed: {e}");
    }
}

/// `zkdst replay --frames`: a served seed's server side, re-run.
pub fn replay(
    sc: &Scenario,
    seed: u64,
    plan: Option<&FaultPlan>,
    frames_file: &Path,
    history: Option<&Path>,
) -> Result<ExitCode> {
    let arrivals = frames::read(frames_file).map_err(anyhow::Error::msg)?;
    quiet_seed_panics();
    let o = serve::replay(sc, seed, plan, arrivals).map_err(|e| anyhow::anyhow!("{}: {e}", frames_file.display()))?;
    print_outcome(sc, &o);
    if let Some(p) = history {
        let f = std::fs::File::create(p).with_context(|| format!("{}: cannot write", p.display()))?;
        o.served
            .history
            .write_to(zkdst_checker::history::Encoding::for_path(p), f)
            .with_context(|| format!("{}: cannot write", p.display()))?;
        println!("history written to {}", p.display());
    }
    Ok(exit_for(o.verdict))
}
