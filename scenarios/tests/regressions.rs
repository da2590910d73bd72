//! Every seed in scenarios/regressions.toml once failed and must pass from
//! now on, replaying bit for bit; and the check does catch a bug brought
//! back (a planted variant failing its known seed).

use std::path::{Path, PathBuf};

use zkdst_scenarios::regress::{self, Regression, Verdict};

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

#[test]
fn every_regression_seed_passes_and_replays_bit_for_bit() {
    let file = root().join(regress::DEFAULT_FILE);
    let entries = regress::load(&file).unwrap_or_else(|e| panic!("{e}"));
    assert!(!entries.is_empty(), "{} has no entries", file.display());
    let checked = regress::check_file(&file, &root(), |_| {}).unwrap_or_else(|e| panic!("{e}"));
    let failed: Vec<String> = checked.iter().filter(|c| !c.passed()).map(|c| c.line()).collect();
    assert!(failed.is_empty(), "regressions:\n{}", failed.join("\n"));
}

/// A temporary regressions file, removed when dropped.
struct Temp(PathBuf);

impl Drop for Temp {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The planted stale-session lock fails seed 0 (tests/planted.rs): as a
/// regression entry it is what a reintroduced bug looks like.
#[test]
fn a_reintroduced_bug_fails_its_regression_naming_the_seed() {
    let t = Temp(std::env::temp_dir().join(format!("zkdst-regressions-{}.toml", std::process::id())));
    let planted = Regression {
        scenario: "scenarios/planted/lock-stale-session.toml".into(),
        seed: 0,
        note: "a holder adopting a stale session".into(),
    };
    regress::append(&t.0, &planted).unwrap();
    let checked = regress::check_file(&t.0, &root(), |_| {}).unwrap();
    assert_eq!(checked.len(), 1);
    match &checked[0].verdict {
        Verdict::Fail { kinds, repro } => {
            assert!(kinds.iter().any(|k| k == "mutex:mutex-overlap"), "{kinds:?}");
            assert!(
                repro.starts_with("zkdst replay scenarios/planted/lock-stale-session.toml --seed 0 "),
                "{repro}"
            );
        }
        other => panic!("expected a failure, got {other:?}"),
    }
    let line = checked[0].line();
    assert!(
        line.starts_with("scenarios/planted/lock-stale-session.toml seed 0: FAIL [mutex:mutex-overlap"),
        "{line}"
    );
}

#[test]
fn a_missing_scenario_is_reported_not_run() {
    let c = regress::check(
        &root(),
        &Regression {
            scenario: "scenarios/no-such.toml".into(),
            seed: 1,
            note: String::new(),
        },
    );
    match c.verdict {
        Verdict::Broken(e) => assert!(e.contains("no-such.toml: cannot read"), "{e}"),
        other => panic!("{other:?}"),
    }
    assert!(!Path::new(&root().join("scenarios/no-such.toml")).exists());
}
