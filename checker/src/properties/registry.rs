//! Checkers by name, so scenario files can list them.

use crate::history::History;
use crate::zk_consistency;

use super::replicas;
use super::result::CheckResult;
use super::{barrier, counter, election, fencing, liveness, membership, mutex, queue, two_phase, Params};

/// A checker: a pure function of a history and parameters.
pub type CheckFn = fn(&History, &Params) -> CheckResult;

/// Every checker, by registry name.
pub const CHECKERS: &[(&str, CheckFn)] = &[
    (mutex::NAME, mutex::check),
    (fencing::NAME, fencing::check),
    (queue::NAME, queue::check),
    (election::NAME, election::check),
    (barrier::NAME, barrier::check),
    (barrier::DOUBLE, barrier::check_double),
    (counter::NAME, counter::check),
    (two_phase::NAME, two_phase::check),
    (membership::MEMBERSHIP, membership::check_membership),
    (membership::CONFIG, membership::check_config),
    (liveness::NAME, liveness::check),
    (zk_consistency::NAME, zk_consistency::check),
    (super::progress::NAME, super::progress::check),
    (super::semaphore::NAME, super::semaphore::check),
    (replicas::NAME, replicas::check),
];

/// A checker name that is not registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown checker {name:?}; known checkers: {known}")]
pub struct UnknownChecker {
    pub name: String,
    pub known: String,
}

/// The registered names, in registry order.
pub fn names() -> Vec<&'static str> {
    CHECKERS.iter().map(|(n, _)| *n).collect()
}

/// The checker registered under `name`.
pub fn lookup(name: &str) -> Result<CheckFn, UnknownChecker> {
    CHECKERS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, f)| *f)
        .ok_or_else(|| UnknownChecker {
            name: name.to_string(),
            known: names().join(", "),
        })
}

/// Runs one checker by name.
pub fn run(name: &str, history: &History, params: &Params) -> Result<CheckResult, UnknownChecker> {
    Ok(lookup(name)?(history, params))
}

/// Runs the named checkers in order; every name is resolved before any runs.
pub fn run_all<S: AsRef<str>>(
    names: &[S],
    history: &History,
    params: &Params,
) -> Result<Vec<CheckResult>, UnknownChecker> {
    let fs = names
        .iter()
        .map(|n| lookup(n.as_ref()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(fs.into_iter().map(|f| f(history, params)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_documented_name_is_registered_and_reports_its_name() {
        let want = [
            "mutex",
            "fencing",
            "queue",
            "election",
            "barrier",
            "double-barrier",
            "counter",
            "two-phase-commit",
            "membership",
            "config",
            "liveness",
            "zk-consistency",
            "progress",
            "semaphore",
            "replicas",
        ];
        assert_eq!(names(), want);
        let h = History::new();
        for r in run_all(&want, &h, &Params::default()).unwrap() {
            assert_ne!(r.verdict, super::super::Verdict::Violation, "{}", r.checker);
        }
        for n in want {
            assert_eq!(run(n, &h, &Params::default()).unwrap().checker, n);
        }
    }

    #[test]
    fn unknown_names_are_errors_that_list_the_known_ones() {
        let e = run_all(&["mutex", "mutexx"], &History::new(), &Params::default()).unwrap_err();
        assert_eq!(e.name, "mutexx");
        assert!(e.to_string().contains("zk-consistency"));
    }
}
