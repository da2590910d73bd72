//! What a run exercised: faults that fired, and interesting things found in
//! the history afterwards (ConnectionLoss during a create, a session expiry
//! while holding a lock, a leader change in the middle of a recipe
//! operation ...). Summed over a campaign, they show what a fuzz run
//! actually tested; a scenario's `[expect] min` demands a minimum.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use zkdst_checker::history::{Event, History, Op, Operation, Outcome, Time, TxnRecord};
use zkdst_model::{Exercised, Situation};

/// The counters of a run or a campaign, by [`Exercised`] name (kept in
/// name order, as they are printed).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Stats(BTreeMap<String, u64>);

impl Stats {
    pub fn add(&mut self, what: impl Into<Exercised>, n: u64) {
        *self.0.entry(what.into().to_string()).or_insert(0) += n;
    }

    pub fn get(&self, what: impl Into<Exercised>) -> u64 {
        self.0.get(&what.into().to_string()).copied().unwrap_or(0)
    }

    /// Every counter, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        self.0.iter().map(|(k, v)| (k.as_str(), *v))
    }

    pub fn merge(&mut self, other: &Stats) {
        for (k, v) in &other.0 {
            *self.0.entry(k.clone()).or_insert(0) += v;
        }
    }

    /// The demanded minimums not met: (counter, wanted, got).
    pub fn unmet(&self, min: &BTreeMap<Exercised, u64>) -> Vec<(Exercised, u64, u64)> {
        min.iter()
            .filter(|(k, v)| self.get(**k) < **v)
            .map(|(k, v)| (*k, *v, self.get(*k)))
            .collect()
    }
}

pub use zkdst_checker::properties::progress::is_recipe_op;

fn is_create(op: &Op) -> bool {
    match op {
        Op::Create { .. } => true,
        Op::Multi { ops } => ops.iter().any(is_create),
        _ => false,
    }
}

/// Counts the interesting events of a history into `stats`.
pub fn analyse(h: &History, ops: &[Operation], stats: &mut Stats) {
    let mut epochs: Vec<(Time, i64)> = Vec::new();
    for e in &h.events {
        match e {
            Event::Commit { time, zxid, .. } => {
                let epoch = zxid >> 32;
                if epochs.last().is_none_or(|(_, ep)| *ep != epoch) {
                    epochs.push((*time, epoch));
                }
            }
            Event::Session { state, .. } => stats.add(Exercised::Session(*state), 1),
            Event::Note { text, .. } => {
                if let Some(what) = Exercised::from_note(text) {
                    stats.add(what, 1);
                }
            }
            _ => {}
        }
    }
    stats.add(Situation::LeaderEpochs, epochs.len() as u64);
    let epoch_at = |t: Time| {
        let i = epochs.partition_point(|(et, _)| *et <= t);
        if i == 0 {
            -1
        } else {
            epochs[i - 1].1
        }
    };
    let mut recipe_ops = 0;
    for o in ops {
        let recipe = is_recipe_op(&o.op);
        match &o.outcome {
            Some(Outcome::Info { .. }) if is_create(&o.op) => stats.add(Situation::ConnlossDuringCreate, 1),
            Some(Outcome::Info { .. }) if !recipe => stats.add(Situation::ZkIndeterminate, 1),
            Some(Outcome::Info { .. }) => stats.add(Situation::RecipeAmbiguous, 1),
            _ => {}
        }
        if recipe {
            recipe_ops += 1;
            if let Some(done) = o.completed {
                if epoch_at(o.invoked) != epoch_at(done) {
                    stats.add(Situation::LeaderChangeMidOp, 1);
                }
            }
        }
    }
    stats.add(Situation::RecipeOps, recipe_ops);
    // Expiry while holding: the leader expired the session (a closeSession
    // transaction it issued itself) of a client that held a lock / lease /
    // leadership (acquired, not yet released). The server's commit is the
    // moment that matters: the client itself may only learn of it much
    // later, or never, and usually gives up the role on Disconnected first.
    for e in &h.events {
        let Event::Commit {
            time,
            txn: TxnRecord::CloseSession {
                session, expired: true, ..
            },
            ..
        } = e
        else {
            continue;
        };
        let holding = ops.iter().any(|a| {
            a.session == Some(*session)
                && matches!(a.op, Op::Acquire { .. } | Op::Campaign { .. } | Op::Acquired { .. })
                && matches!(a.outcome, Some(Outcome::Ok { .. }))
                && a.completed.is_some_and(|t| t <= *time)
                && !ops.iter().any(|r| {
                    r.client == a.client
                        && matches!(r.op, Op::Release { .. } | Op::Resign { .. } | Op::Returned { .. })
                        && r.invoked >= a.completed.unwrap_or(0)
                        && r.invoked <= *time
                })
        });
        if holding {
            stats.add(Situation::ExpiryWhileHolding, 1);
        }
    }
}
