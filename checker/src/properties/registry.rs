//! Checkers by name, so scenario files can list them.

use crate::history::{History, Operation};
use crate::zk_consistency;

use super::common::{with_operations, OpsCheckFn};
use super::replicas;
use super::result::CheckResult;
use super::{barrier, counter, election, fencing, liveness, membership, mutex, queue, two_phase, Params};

/// A checker: a pure function of a history and parameters.
pub type CheckFn = fn(&History, &Params) -> CheckResult;

/// Every checker, by registry name, over operations already paired (see
/// [`run_ops`]): a run pairs its history once for all its checkers.
pub const CHECKERS: &[(&str, OpsCheckFn)] = &[
    (mutex::NAME, mutex::check_ops),
    (fencing::NAME, fencing::check_ops),
    (queue::NAME, queue::check_ops),
    (election::NAME, election::check_ops),
    (barrier::NAME, barrier::check_ops),
    (barrier::DOUBLE, barrier::check_double_ops),
    (counter::NAME, counter::check_ops),
    (two_phase::NAME, two_phase::check_ops),
    (membership::MEMBERSHIP, membership::check_membership_ops),
    (membership::CONFIG, membership::check_config_ops),
    (liveness::NAME, liveness::check_ops),
    (zk_consistency::NAME, zk_consistency::check_ops),
    (super::progress::NAME, super::progress::check_ops),
    (super::semaphore::NAME, super::semaphore::check_ops),
    (replicas::NAME, |h, _ops, p| replicas::check(h, p)),
    (super::session_lost::NAME, super::session_lost::check_ops),
    (super::recipe_errors::NAME, super::recipe_errors::check_ops),
    (zk_consistency::watches::NAME, zk_consistency::watches::check_ops),
    (super::client_protocol::NAME, super::client_protocol::check_ops),
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
pub fn lookup(name: &str) -> Result<OpsCheckFn, UnknownChecker> {
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
    Ok(with_operations(history, name, params, lookup(name)?))
}

/// Runs one checker by name over `history`'s operations, paired by the
/// caller (`history.operations()`).
pub fn run_ops(
    name: &str,
    history: &History,
    ops: &[Operation],
    params: &Params,
) -> Result<CheckResult, UnknownChecker> {
    Ok(lookup(name)?(history, ops, params))
}

/// Runs the named checkers in order; every name is resolved before any
/// runs. The history is paired once; a malformed one is every checker's
/// Unknown.
pub fn run_all<S: AsRef<str>>(
    names: &[S],
    history: &History,
    params: &Params,
) -> Result<Vec<CheckResult>, UnknownChecker> {
    let fs = names
        .iter()
        .map(|n| Ok((n.as_ref(), lookup(n.as_ref())?)))
        .collect::<Result<Vec<_>, UnknownChecker>>()?;
    Ok(match history.operations() {
        Ok(ops) => fs.into_iter().map(|(_, f)| f(history, &ops, params)).collect(),
        Err(e) => fs
            .into_iter()
            .map(|(n, _)| CheckResult::unknown(n, format!("malformed history: {e}")))
            .collect(),
    })
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
            "session-lost",
            "recipe-errors",
            "watches",
            "client-protocol",
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
