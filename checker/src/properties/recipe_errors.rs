//! Errors a recipe cannot honestly return: every recipe promises that it
//! reads the format it writes and accepts the arguments its API documents.
//! In a simulated run only the recipes write their nodes and the workload
//! passes valid arguments, so a recipe call that fails with "bad data" (it
//! could not parse a node a recipe wrote: a decision, a vote, a counter
//! value) or "invalid argument" (it refused an input it accepts: an
//! increment that does not overflow, a barrier count of 3) is the recipe
//! contradicting itself. So is a "protocol conflict": it says another
//! participant broke the recipe's protocol (a second vote, an item deleted
//! under a claim, a site's node held by another session), but every
//! participant runs the same recipe and the workload never asks for
//! conflicting things (one vote per site, unique transactions, items
//! removed only through their claim). Other checkers often miss it: a call that fails
//! breaks no safety property, and `progress` is satisfied by the calls that
//! still succeed.
//!
//! Judged on recipe operations only, by the start of the recorded error
//! (the recipes' `RecipeError::BadData` / `InvalidArgument` / `Conflict`
//! messages; a
//! scenarios test pins the two together). Runs on every seed, beside
//! `progress` and `session-lost`. It also judges the one error a recipe
//! may always return, Ambiguous, against the writes the call sent
//! ([`super::needless_ambiguity`]), and a queue's enqueue against its
//! retry budget ([`super::retry_budget`]).

use crate::history::{History, Operation};

use super::common::{describe, error_text, with_operations};
use super::progress::is_recipe_op;
use super::result::{ms, CheckResult, Violation};
use super::{Params, ViolationKind};

pub const NAME: &str = "recipe-errors";

/// How recorded errors say "bad data" and "invalid argument".
pub const BAD_DATA_PREFIX: &str = "bad data at ";
pub const INVALID_ARGUMENT_PREFIX: &str = "invalid argument: ";
pub const PROTOCOL_CONFLICT_PREFIX: &str = "protocol conflict: ";

fn self_contradicting(o: &Operation) -> Option<&str> {
    error_text(o).filter(|e| {
        [BAD_DATA_PREFIX, INVALID_ARGUMENT_PREFIX, PROTOCOL_CONFLICT_PREFIX]
            .iter()
            .any(|p| e.starts_with(p))
    })
}

pub fn check(h: &History, p: &Params) -> CheckResult {
    with_operations(h, NAME, p, check_ops)
}

/// As [`check`], over the history's already-paired operations.
pub fn check_ops(h: &History, ops: &[Operation], _p: &Params) -> CheckResult {
    let mut r = CheckResult::new(NAME);
    let mut judged = 0u64;
    for o in ops.iter().filter(|o| is_recipe_op(&o.op)) {
        judged += 1;
        let Some(error) = self_contradicting(o) else { continue };
        r.violation(
            Violation::new(
                ViolationKind::UnexplainedRecipeError,
                format!(
                    "{} failed at {} with '{error}', though only recipes wrote its nodes and its arguments were valid",
                    describe(o),
                    o.completed.map(ms).unwrap_or_else(|| "?".into()),
                ),
            )
            .ops([o.id])
            .clients([o.client])
            .times(o.completed),
        );
    }
    r.figure("recipe_calls_judged", judged as f64);
    super::needless_ambiguity::check_into(h, ops, &mut r);
    super::retry_budget::check_into(h, ops, &mut r);
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{Op, Outcome};
    use crate::properties::testkit::Builder;

    fn vote() -> Op {
        Op::Vote {
            txn: "t1".into(),
            site: "s1".into(),
            commit: true,
        }
    }

    fn kinds(h: &History) -> Vec<ViolationKind> {
        check(h, &Params::default()).violations.iter().map(|v| v.kind).collect()
    }

    #[test]
    fn bad_data_and_invalid_arguments_from_a_recipe_are_flagged() {
        let mut b = Builder::new();
        let id = b.invoke_s(10, 0, Some(0x10), vote());
        b.complete(
            id,
            20,
            Outcome::Info {
                error: "bad data at /2pc/t1/decision: not a decision: \"commit\"".into(),
            },
        );
        let id = b.invoke_s(10, 1, Some(0x11), vote());
        b.complete(
            id,
            30,
            Outcome::Fail {
                error: "invalid argument: 3 + 1 overflows".into(),
            },
        );
        let id = b.invoke_s(10, 2, Some(0x12), vote());
        b.complete(
            id,
            40,
            Outcome::Fail {
                error: "protocol conflict: /2pc/t1/votes/s1 already holds another vote".into(),
            },
        );
        let h = b.build();
        assert_eq!(kinds(&h), vec![ViolationKind::UnexplainedRecipeError; 3]);
    }

    #[test]
    fn fault_errors_and_raw_calls_are_not_judged() {
        let mut b = Builder::new();
        for (i, e) in [
            "session lost (expired or closed)",
            "zookeeper: connection loss",
            "ambiguous outcome: x",
        ]
        .into_iter()
        .enumerate()
        {
            let id = b.invoke_s(10, i as u32, Some(0x10), vote());
            b.complete(id, 20, Outcome::Info { error: e.into() });
        }
        let id = b.invoke_s(
            10,
            5,
            Some(0x20),
            Op::GetData {
                path: "/a".into(),
                watch: false,
            },
        );
        b.complete(
            id,
            20,
            Outcome::Info {
                error: "bad data at /a: raw calls do not parse".into(),
            },
        );
        let r = check(&b.build(), &Params::default());
        assert!(r.violations.is_empty(), "{:?}", r.violations);
        assert_eq!(r.figures.get("recipe_calls_judged"), Some(&3.0));
    }
}
