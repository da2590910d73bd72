//! `zkdst fuzz --store DIR --junit FILE`: a failing seed's folder holds
//! what `replay` would write (the same history byte for byte, the same
//! trace), and the JUnit report is well-formed XML naming the failure.

mod xml;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use zkdst_scenarios::fuzz::SeedRecord;
use zkdst_scenarios::junit;
use zkdst_scenarios::{RunVerdict, Stats};

fn zkdst(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_zkdst"))
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .args(args)
        .output()
        .expect("run zkdst")
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("zkdst-ci-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The lines `replay` prints before its verdict line: the trace.
fn trace_of(stdout: &str) -> String {
    stdout
        .lines()
        .take_while(|l| !l.starts_with("PASS") && !l.starts_with("FAIL") && !l.starts_with("UNKNOWN"))
        .map(|l| format!("{l}\n"))
        .collect()
}

const PLANTED: &str = "scenarios/planted/lock-stale-session.toml";

#[test]
fn a_stored_failure_is_what_replay_writes_and_junit_names_it() {
    let dir = scratch("store");
    let (store, report) = (dir.join("store"), dir.join("junit.xml"));
    let o = zkdst(&[
        "fuzz",
        PLANTED,
        "--seeds",
        "0..2",
        "--jobs",
        "2",
        "--store",
        store.to_str().unwrap(),
        "--shrink",
        "1",
        "--junit",
        report.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "seed 0 fails: {o:?}");
    assert!(stdout.contains("stored "), "the summary names the store: {stdout}");

    // store/planted/lock-stale-session/0-<plan hash>/
    let parent = store.join("planted/lock-stale-session");
    let seed0: Vec<PathBuf> = std::fs::read_dir(&parent)
        .unwrap_or_else(|e| panic!("{}: {e}", parent.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with("0-"))
        .collect();
    assert_eq!(seed0.len(), 1, "{seed0:?}");
    let seed0 = &seed0[0];
    for f in [
        "history.jsonl.gz",
        "timeline.html",
        "plan.json",
        "shrunk-plan.json",
        "trace.txt",
        "summary.txt",
        "replay.txt",
    ] {
        assert!(seed0.join(f).is_file(), "{} missing", seed0.join(f).display());
    }
    let read = |f: &str| std::fs::read_to_string(seed0.join(f)).unwrap();
    let replay_txt = read("replay.txt");
    assert!(
        replay_txt.starts_with(&format!("zkdst replay {PLANTED} --seed 0  # commit ")),
        "{replay_txt}"
    );
    assert!(
        replay_txt.contains("--plan "),
        "the shrunk plan's replay line: {replay_txt}"
    );
    let summary = read("summary.txt");
    assert!(summary.starts_with("FAIL"), "{summary}");
    assert!(
        summary.contains("exercised: ") && summary.contains("mutex"),
        "{summary}"
    );
    assert!(!summary.contains("NONDETERMINISTIC"), "{summary}");

    // `zkdst replay --history --trace info` writes the same history, byte
    // for byte, and prints the same trace.
    let h = dir.join("replayed.jsonl.gz");
    let r = zkdst(&[
        "replay",
        PLANTED,
        "--seed",
        "0",
        "--trace",
        "info",
        "--history",
        h.to_str().unwrap(),
    ]);
    assert_eq!(r.status.code(), Some(1), "{r:?}");
    assert!(
        std::fs::read(&h).unwrap() == std::fs::read(seed0.join("history.jsonl.gz")).unwrap(),
        "the stored history differs from replay's"
    );
    let trace = trace_of(&String::from_utf8_lossy(&r.stdout));
    assert!(trace.lines().count() > 100, "{trace}");
    assert!(read("trace.txt") == trace, "the stored trace differs from replay's");

    // The stored history is compact, and `zkdst check` reads it as it is.
    let gz = std::fs::read(seed0.join("history.jsonl.gz")).unwrap();
    let history = zkdst_checker::history::History::decode(&gz).unwrap();
    assert_eq!(history.meta.get("seed").map(String::as_str), Some("0"));
    let pretty = history.encode(zkdst_checker::history::Encoding::Json);
    assert!(
        gz.len() * 10 < pretty.len(),
        "{} bytes gzipped, {} as JSON",
        gz.len(),
        pretty.len()
    );
    let stored = seed0.join("history.jsonl.gz");
    let c = zkdst(&[
        "check",
        stored.to_str().unwrap(),
        "--format",
        "zkdst",
        "--checker",
        "mutex",
    ]);
    assert_eq!(c.status.code(), Some(1), "{c:?}");
    assert!(
        String::from_utf8_lossy(&c.stdout).starts_with("mutex: violation"),
        "{c:?}"
    );

    // The JUnit report: one suite, the range, the failing seed.
    let text = std::fs::read_to_string(&report).unwrap();
    let root = xml::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(root.name, "testsuites");
    let suites = root.all("testsuite");
    assert_eq!(suites.len(), 1);
    assert_eq!(suites[0].attr("name"), Some(PLANTED));
    let failing: Vec<_> = suites[0]
        .all("testcase")
        .into_iter()
        .filter(|c| c.attr("name") == Some("seed 0"))
        .collect();
    assert_eq!(failing.len(), 1, "{text}");
    let failure = failing[0].all("failure");
    assert_eq!(failure.len(), 1, "{text}");
    assert!(
        failure[0].attr("message").unwrap().contains("mutex:mutex-overlap"),
        "{text}"
    );
    assert!(failure[0].text.contains("zkdst replay "), "{text}");
    assert!(failure[0].text.contains("stored in "), "{text}");
    assert!(suites[0]
        .all("testcase")
        .iter()
        .any(|c| c.attr("name") == Some("seeds 0..2")));
    std::fs::remove_dir_all(&dir).ok();
}

fn record(file: &str, seed: u64, verdict: RunVerdict, violations: &[&str]) -> SeedRecord {
    SeedRecord {
        scenario: "x".into(),
        file: file.into(),
        seed,
        verdict,
        failed: violations
            .iter()
            .map(|v| v.split(':').next().unwrap().to_string())
            .collect(),
        violations: violations.iter().map(|v| v.to_string()).collect(),
        error: (verdict == RunVerdict::Fail).then(|| "panicked: <oops> & \"more\"\u{7}".to_string()),
        stats: Stats::default(),
        fingerprint: "0".into(),
        plan: "p".into(),
        wall_ms: 1234,
        repro: (verdict == RunVerdict::Fail).then(|| format!("zkdst replay {file} --seed {seed}  # x")),
    }
}

#[test]
fn junit_reports_escape_what_they_carry() {
    let nasty = "scenarios/a&b <c> \"d\" 'e'.toml";
    let records = vec![
        record(nasty, 3, RunVerdict::Fail, &["mutex:<overlap>&"]),
        record(nasty, 1, RunVerdict::Pass, &[]),
        record(nasty, 2, RunVerdict::Unknown, &[]),
        record("scenarios/lock.toml", 7, RunVerdict::Pass, &[]),
    ];
    let mut extra = junit::Extra::default();
    extra.minimums.insert(
        "scenarios/lock.toml".into(),
        vec!["expected fault.kill-leader >= 1, got 0".into()],
    );
    let text = junit::render(&records, &extra);
    let root = xml::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(
        (root.attr("tests"), root.attr("failures"), root.attr("errors")),
        (Some("5"), Some("2"), Some("1")),
        "{text}"
    );
    let suites = root.all("testsuite");
    assert_eq!(suites.len(), 2);
    let s = suites
        .iter()
        .find(|s| s.attr("name") == Some(nasty))
        .expect("the nasty name read back");
    let cases = s.all("testcase");
    assert_eq!(
        cases.iter().map(|c| c.attr("name").unwrap()).collect::<Vec<_>>(),
        ["seeds 1..4", "seed 2", "seed 3"]
    );
    let f = &cases[2].all("failure")[0];
    assert_eq!(f.attr("message"), Some("mutex:<overlap>&"));
    assert!(
        f.text.contains("run failed: panicked: <oops> & \"more\"\u{FFFD}"),
        "{}",
        f.text
    );
    assert_eq!(cases[1].all("error").len(), 1);
    let lock = suites
        .iter()
        .find(|s| s.attr("name") == Some("scenarios/lock.toml"))
        .unwrap();
    let min = lock
        .all("testcase")
        .into_iter()
        .find(|c| c.attr("name") == Some("expect.min"))
        .unwrap();
    assert!(min.all("failure")[0].text.contains("kill-leader"));
}

#[test]
fn store_and_no_store_are_a_usage_error_together() {
    let o = zkdst(&["fuzz", "scenarios/lock.toml", "--store", "x", "--no-store"]);
    assert_eq!(o.status.code(), Some(3), "{o:?}");
    assert!(!Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../x")).exists());
}
