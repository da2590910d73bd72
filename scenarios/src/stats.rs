//! What a run exercised: faults that fired, and interesting things found in
//! the history afterwards (ConnectionLoss during a create, a session expiry
//! while holding a lock, a leader change in the middle of a recipe
//! operation ...). Summed over a campaign, they show what a fuzz run
//! actually tested; a scenario's `[expect] min` demands a minimum.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use zkdst_checker::history::{ClientId, Event, History, Op, Operation, Outcome, Time, TxnRecord, Value};
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
    stats.add(Situation::SequenceWrapped, wrapped_creates(h));
    stats.add(Situation::FateReadLost, fate_reads_lost(ops));
    stats.add(Situation::ContainerReaped, containers_reaped(h));
}

/// Deletions the leader committed on no client's behalf (session 0): the
/// containers it reaped (a TTL node's expiry is one too; no recipe makes
/// them). A reaping that found the node changed commits an error, not a
/// deletion.
fn containers_reaped(h: &History) -> u64 {
    h.events
        .iter()
        .filter(|e| {
            matches!(
                e,
                Event::Commit {
                    txn: TxnRecord::Delete { .. },
                    session: Some(0),
                    ..
                }
            )
        })
        .count() as u64
}

/// Creates whose reply was lost and whose retry (by the same client, on
/// the same path) met NodeExists, then read back (`exists` or `getData`
/// of that path) only to lose the reply again.
fn fate_reads_lost(ops: &[Operation]) -> u64 {
    // Per client: paths whose create was lost, and those whose retry then
    // met NodeExists, awaiting the read of their fate.
    let mut lost: BTreeMap<(ClientId, &str), bool> = BTreeMap::new();
    let mut n = 0;
    let mut ops: Vec<&Operation> = ops.iter().collect();
    ops.sort_by_key(|o| (o.client, o.invoked, o.id));
    for o in ops {
        let indeterminate = matches!(o.outcome, Some(Outcome::Info { .. }));
        match &o.op {
            Op::Create { path, .. } => {
                let exists = matches!(&o.outcome,
                    Some(Outcome::Ok { value: Value::Error { code, .. } }) if code == "NodeExists");
                let key = (o.client, path.as_str());
                match lost.get(&key) {
                    _ if indeterminate => {
                        lost.insert(key, false);
                    }
                    Some(false) if exists => {
                        lost.insert(key, true);
                    }
                    _ => {
                        lost.remove(&key);
                    }
                }
            }
            Op::Exists { path, .. } | Op::GetData { path, .. } => {
                let key = (o.client, path.as_str());
                if lost.get(&key) == Some(&true) {
                    lost.remove(&key);
                    n += u64::from(indeterminate);
                }
            }
            _ => {}
        }
    }
    n
}

/// The parent of `path`.
fn dir(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..i])
}

/// The sequence number ZooKeeper appended to a node path (`%010d` of an
/// i32: ten characters, eleven for i32::MIN), if it ends with one after a
/// separator (`lock-0000000007`, `/q/0000000001`; not a guid's hex digits).
fn sequence_of(path: &str) -> Option<i32> {
    let split = |n: usize| {
        let i = path.len().checked_sub(n)?;
        let before = path.get(..i)?.chars().next_back()?;
        (!before.is_ascii_alphanumeric()).then(|| path.get(i..)).flatten()
    };
    // Ten digits and a sign (below -999999999) take eleven characters.
    split(11)
        .and_then(|t| t.parse().ok())
        .filter(|&s: &i32| s < -999_999_999)
        .or_else(|| split(10).and_then(|t| t.parse().ok()))
}

/// Committed sequential creates numbered below a live node of the same
/// directory, read as i32 or as u32: past the signed wrap (2^31 - 1 to
/// -2^31) or the unsigned one (-1 to 0), where one reading of the numbers
/// no longer gives creation order.
fn wrapped_creates(h: &History) -> u64 {
    // Live sequential nodes per directory: path → sequence.
    let mut live: BTreeMap<&str, BTreeMap<&str, i32>> = BTreeMap::new();
    let mut wrapped = 0;
    for (_, _, t) in h.committed_parts() {
        let gone: Vec<&str> = match t {
            TxnRecord::Create { path, .. } => {
                let Some(seq) = sequence_of(path) else { continue };
                let siblings = live.entry(dir(path)).or_default();
                if siblings.values().any(|&s| s > seq || s as u32 > seq as u32) {
                    wrapped += 1;
                }
                siblings.insert(path, seq);
                continue;
            }
            TxnRecord::Delete { path } => vec![path],
            TxnRecord::CloseSession { deleted, .. } => deleted.iter().map(String::as_str).collect(),
            _ => continue,
        };
        for p in gone {
            if let Some(siblings) = live.get_mut(dir(p)) {
                siblings.remove(p);
            }
        }
    }
    wrapped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_numbers_are_read_as_zookeeper_writes_them() {
        assert_eq!(sequence_of("/l/g0a-lock-0000000007"), Some(7));
        assert_eq!(sequence_of("/l/n--000000005"), Some(-5));
        assert_eq!(sequence_of("/l/n--2147483648"), Some(i32::MIN));
        assert_eq!(sequence_of("/l/n--2147483647"), Some(-2147483647));
        assert_eq!(sequence_of("/l/n-2147483647"), Some(2147483647));
        assert_eq!(sequence_of("/q/-1000000000"), Some(-1000000000));
        assert_eq!(sequence_of("/q/0000000001"), Some(1));
        // A guid's last hex digits are not a sequence number.
        assert_eq!(sequence_of("/m/g03000100000000020000000000000007"), None);
        assert_eq!(sequence_of("/config"), None);
    }

    fn call(id: u64, client: u32, op: Op, outcome: Outcome) -> Operation {
        Operation {
            id,
            client,
            session: Some(1),
            op,
            invoked: id * 10,
            completed: Some(id * 10 + 5),
            outcome: Some(outcome),
            zxid: None,
            background: false,
        }
    }

    #[test]
    fn a_fate_read_counts_only_after_a_lost_create_and_its_retrys_node_exists() {
        let create = |p: &str| Op::Create {
            path: p.into(),
            data: Default::default(),
            mode: zkdst_checker::history::CreateMode::Ephemeral,
        };
        let exists = |p: &str| Op::Exists {
            path: p.into(),
            watch: false,
        };
        let lost = || Outcome::Info {
            error: "ConnectionLoss".into(),
        };
        let node_exists = || Outcome::Ok {
            value: Value::Error {
                code: "NodeExists".into(),
                results: vec![],
            },
        };
        let ops = vec![
            // Client 1: lost, NodeExists, read lost: counted.
            call(1, 1, create("/c"), lost()),
            call(2, 1, create("/c"), node_exists()),
            call(3, 1, exists("/c"), lost()),
            // A second lost read of the same fate is the same decision.
            call(4, 1, exists("/c"), lost()),
            // Client 2: NodeExists with no lost create first (another's
            // node), then a lost read: not counted.
            call(5, 2, create("/d"), node_exists()),
            call(6, 2, exists("/d"), lost()),
            // Client 3: the fate read answered: not counted.
            call(7, 3, create("/e"), lost()),
            call(8, 3, create("/e"), node_exists()),
            call(9, 3, exists("/e"), Outcome::Ok { value: Value::Unit }),
            // Client 4: another client's NodeExists does not arm client 4.
            call(10, 4, create("/f"), lost()),
            call(11, 5, create("/f"), node_exists()),
            call(12, 4, exists("/f"), lost()),
        ];
        assert_eq!(fate_reads_lost(&ops), 1);
    }

    #[test]
    fn a_reaped_container_is_a_delete_the_leader_committed_for_no_session() {
        let commit = |zxid: i64, txn: TxnRecord, session: Option<i64>| Event::Commit {
            time: zxid as u64,
            server: 1,
            zxid,
            txn,
            session,
            xid: Some(0),
        };
        let delete = |p: &str| TxnRecord::Delete { path: p.into() };
        let mut h = History::default();
        h.events = vec![
            // The leader's reaper: counted.
            commit(1, delete("/locks/l"), Some(0)),
            // A client's delete (a release, an operator's delete-recipe-dir):
            // not counted.
            commit(2, delete("/locks/l/n-0000000001"), Some(7)),
            // A reaping that found the node changed commits an error.
            commit(
                3,
                TxnRecord::Error {
                    code: "NotEmpty".into(),
                },
                Some(0),
            ),
            // An expiry the leader issued is a close, not a delete.
            commit(
                4,
                TxnRecord::CloseSession {
                    session: 7,
                    expired: true,
                    deleted: vec!["/e".into()],
                },
                Some(0),
            ),
            commit(5, delete("/queues/q/items"), Some(0)),
        ];
        assert_eq!(containers_reaped(&h), 2);
    }
}
