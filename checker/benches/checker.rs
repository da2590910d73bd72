//! Linearizability engine speed on the Porcupine corpus, in release:
//! `cargo bench -p zkdst-checker`. Each figure is the best and the median of
//! several runs of the check alone (files are read and parsed beforehand).
//!
//! Arguments that are not flags select cases by substring, e.g.
//! `cargo bench -p zkdst-checker -- etcd_002 c50` runs only those (the whole
//! etcd set is the case `etcd-all`). The corpus is the one committed
//! in `tests/corpora/porcupine`; `ZKDST_CORPUS` names another directory of the
//! same layout; `ZKDST_BENCH_RUNS`
//! sets the number of runs (default 7). Peak memory (VmHWM) is printed last:
//! run a single case to read its peak alone.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use zkdst_checker::check_history;
use zkdst_checker::formats::Format;
use zkdst_checker::history::History;
use zkdst_checker::linearizability::Budget;

/// The corpus committed under `tests/corpora/porcupine`, or the directory
/// `ZKDST_CORPUS` names (another corpus of the same layout).
fn corpus() -> PathBuf {
    if let Some(dir) = std::env::var_os("ZKDST_CORPUS") {
        return PathBuf::from(dir);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpora/porcupine")
}

fn load(file: &str, format: Format) -> History {
    format.read(&corpus().join(file)).unwrap_or_else(|e| panic!("{e}"))
}

fn runs() -> usize {
    std::env::var("ZKDST_BENCH_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .filter(|&r| r > 0)
        .unwrap_or(7)
}

/// Best and median time of `runs()` runs of `f`, and the verdict lines it
/// produced.
fn measure(histories: &[History], f: impl Fn(&History) -> String) -> (Duration, Duration, Vec<String>) {
    let mut times = Vec::new();
    let mut verdicts = Vec::new();
    for _ in 0..runs() {
        let start = Instant::now();
        verdicts = histories.iter().map(&f).collect();
        times.push(start.elapsed());
    }
    times.sort();
    (times[0], times[times.len() / 2], verdicts)
}

fn check(h: &History) -> String {
    match check_history(h, None, Budget::unlimited()) {
        Ok(r) => r.text.lines().next().unwrap_or("").to_string(),
        Err(e) => format!("error: {e}"),
    }
}

fn peak_memory() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .map(|l| l["VmHWM:".len()..].trim().to_string())
}

fn report(name: &str, histories: &[History], note: impl Fn(&[String]) -> String) {
    let (best, median, verdicts) = measure(histories, check);
    println!(
        "{name:<26} best {:>9.1} ms  median {:>9.1} ms  {}",
        ms(best),
        ms(median),
        note(&verdicts)
    );
}

fn main() {
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let wanted = |name: &str| filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()));
    let etcd_names: Vec<String> = (0..=102)
        .map(|i| format!("jepsen/etcd_{i:03}.log"))
        .filter(|f| f != "jepsen/etcd_095.log")
        .collect();
    if wanted("etcd-all") {
        let all: Vec<History> = etcd_names.iter().map(|f| load(f, Format::JepsenEtcd)).collect();
        report(&format!("etcd-all ({} files)", all.len()), &all, |v| {
            let refuted = v.iter().filter(|v| *v == "NOT linearizable").count();
            format!("({} linearizable, {} not)", v.len() - refuted, refuted)
        });
    }
    for name in ["jepsen/etcd_002.log", "jepsen/etcd_007.log"] {
        if wanted(name) {
            report(name, &[load(name, Format::JepsenEtcd)], |v| v.join(""));
        }
    }
    for name in ["kv/c50-ok.txt", "kv/c50-bad.txt"] {
        if wanted(name) {
            report(name, &[load(name, Format::PorcupineKv)], |v| v.join(""));
        }
    }
    println!(
        "peak memory (VmHWM): {}",
        peak_memory().unwrap_or_else(|| "unavailable".to_string())
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
