//! The README's `zkdst check` examples run as written from the repository
//! root (their files are committed) and give the verdicts the README says.

use std::path::Path;
use std::process::Command;

/// Each example's first output line and exit code: the files are a passing
/// lock seed, a planted bug's seed (two holders: mutex and fencing), and a
/// linearizable Porcupine history.
const EXPECTED: &[(&str, &str, i32)] = &[
    ("docs/examples/lock-seed-0.jsonl.gz", "zk-consistency: pass", 0),
    (
        "docs/examples/lock-stale-session-seed-0.jsonl.gz",
        "mutex: violation, fencing: violation",
        1,
    ),
    ("checker/tests/corpora/porcupine/jepsen/etcd_002.log", "linearizable", 0),
];

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The indented `zkdst check ...` lines of README.md, split into arguments.
fn readme_examples() -> Vec<Vec<String>> {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    readme
        .lines()
        .filter_map(|l| l.strip_prefix("    zkdst check "))
        .map(|rest| rest.split_whitespace().map(str::to_string).collect())
        .collect()
}

#[test]
fn the_readme_check_examples_run_as_written() {
    let examples = readme_examples();
    assert_eq!(
        examples.len(),
        EXPECTED.len(),
        "README.md's `zkdst check` examples changed: {examples:?}; list each here with its verdict"
    );
    for args in examples {
        let file = args[0].as_str();
        let Some(&(_, first, code)) = EXPECTED.iter().find(|(f, ..)| *f == file) else {
            panic!("README.md checks {file}, which this test does not know: add its verdict");
        };
        let out = Command::new(env!("CARGO_BIN_EXE_zkdst"))
            .current_dir(root())
            .arg("check")
            .args(&args)
            .output()
            .expect("run zkdst");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            stdout.lines().next().unwrap_or(""),
            first,
            "zkdst check {}: stderr {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(code), "zkdst check {}", args.join(" "));
    }
}
