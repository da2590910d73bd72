//! Every verdict of the Porcupine corpus (etcd logs and kv files) matches
//! the one in its expected.csv.

use std::path::{Path, PathBuf};

use zkdst_checker::check_file;
use zkdst_checker::formats::Format;
use zkdst_checker::linearizability::{Budget, Verdict};

/// The corpus is committed beside this test (its origin and license in its
/// README): found relative to the crate, never outside the checkout.
fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpora/porcupine")
}

fn expected() -> Vec<(String, bool)> {
    let text = std::fs::read_to_string(corpus().join("expected.csv")).expect("corpus expected.csv");
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| {
            let (file, verdict) = l.split_once(',')?;
            match verdict.trim() {
                "true" => Some((file.to_string(), true)),
                "false" => Some((file.to_string(), false)),
                _ => None, // no verdict (etcd_095)
            }
        })
        .collect()
}

fn check_all(prefix: &str, format: Format, expected_count: usize) {
    let cases: Vec<_> = expected().into_iter().filter(|(f, _)| f.starts_with(prefix)).collect();
    assert_eq!(cases.len(), expected_count, "cases under {prefix}");
    let mut wrong = Vec::new();
    for (file, linearizable) in &cases {
        let report = check_file(&corpus().join(file), format, None, Budget::unlimited())
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        let ok = match report.verdict {
            Verdict::Linearizable => *linearizable,
            Verdict::NotLinearizable(_) => !*linearizable,
            Verdict::Unknown(_) => false,
        };
        let first = report.text.lines().next().unwrap_or("");
        assert_eq!(
            first,
            if report.verdict.is_linearizable() {
                "linearizable"
            } else {
                "NOT linearizable"
            },
            "{file}"
        );
        if !ok {
            wrong.push(format!("{file}: expected linearizable={linearizable}, got {first}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong verdicts:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn etcd_verdicts_match() {
    check_all("jepsen/", Format::JepsenEtcd, 102);
}

#[test]
fn kv_verdicts_match() {
    check_all("kv/", Format::PorcupineKv, 6);
}

#[test]
fn etcd_095_is_empty_and_trivially_linearizable() {
    let report = check_file(
        &corpus().join("jepsen/etcd_095.log"),
        Format::JepsenEtcd,
        None,
        Budget::unlimited(),
    )
    .unwrap();
    assert_eq!(report.operations, 0);
    assert!(report.verdict.is_linearizable());
}
