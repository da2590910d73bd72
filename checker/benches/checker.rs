//! Linearizability engine speed on the Porcupine corpus, in release:
//! `cargo bench -p zkdst-checker`. Each figure is the best of several runs
//! of the check alone (files are read and parsed beforehand).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use zkdst_checker::check_history;
use zkdst_checker::formats::Format;
use zkdst_checker::history::History;
use zkdst_checker::linearizability::Budget;

const RUNS: usize = 7;

fn corpus() -> PathBuf {
    let documented = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpora/porcupine"));
    if documented.is_dir() {
        return documented.to_path_buf();
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|a| a.join("shared/corpora/porcupine"))
        .find(|p| p.is_dir())
        .unwrap_or_else(|| documented.to_path_buf())
}

fn load(file: &str, format: Format) -> History {
    format.read(&corpus().join(file)).unwrap_or_else(|e| panic!("{e}"))
}

/// Best time of `RUNS` runs of `f`, and the verdict lines it produced.
fn best(histories: &[History], f: impl Fn(&History) -> String) -> (Duration, Vec<String>) {
    let mut best = Duration::MAX;
    let mut verdicts = Vec::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        verdicts = histories.iter().map(&f).collect();
        best = best.min(start.elapsed());
    }
    (best, verdicts)
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

fn main() {
    let etcd: Vec<(String, History)> = (0..=102)
        .map(|i| format!("jepsen/etcd_{i:03}.log"))
        .filter(|f| f != "jepsen/etcd_095.log")
        .map(|f| {
            let h = load(&f, Format::JepsenEtcd);
            (f, h)
        })
        .collect();
    let all: Vec<History> = etcd.iter().map(|(_, h)| h.clone()).collect();
    let (t, verdicts) = best(&all, check);
    let refuted = verdicts.iter().filter(|v| *v == "NOT linearizable").count();
    println!(
        "etcd, all {} files: {:>9.1} ms  ({} linearizable, {} not)",
        all.len(),
        ms(t),
        verdicts.len() - refuted,
        refuted
    );
    for name in ["jepsen/etcd_002.log", "jepsen/etcd_007.log"] {
        let h = etcd
            .iter()
            .find(|(f, _)| f == name)
            .map(|(_, h)| h.clone())
            .into_iter()
            .collect::<Vec<_>>();
        let (t, v) = best(&h, check);
        println!("{name:<26} {:>9.1} ms  {}", ms(t), v.join(""));
    }
    for name in ["kv/c50-ok.txt", "kv/c50-bad.txt"] {
        let h = [load(name, Format::PorcupineKv)];
        let (t, v) = best(&h, check);
        println!("{name:<26} {:>9.1} ms  {}", ms(t), v.join(""));
    }
    println!(
        "peak memory (VmHWM): {}",
        peak_memory().unwrap_or_else(|| "unavailable".to_string())
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
