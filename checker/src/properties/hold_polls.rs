//! A holder watches its node, it does not poll it. A lock guard, lease or
//! leadership learns that its node was deleted, that someone asked it to
//! release (the node's data changed), or that its session ended, from a
//! watch on the node and from its session's events; it reads the node again
//! only when one of those could have changed what it knows: a commit to the
//! node, an event of its session, or a read of the node that failed
//! (ConnectionLoss, or an error reply: its retry is the retry policy's
//! business). A holder whose answered reads of its node by its own session,
//! from its `HoldNode` report to the node's deletion, exceed twice those
//! wake-ups (and the first read) plus a little slack is `hold-polls`: a watch re-armed while one is set, a re-arm
//! timer that runs while the hold is quiet. Such a holder breaks no safety
//! promise, but it loads the ensemble in proportion to its holders and its
//! hold times, as a waiter that polls does ([`super::busy_wait`]).

use crate::history::{History, Op, Operation, Time};

use super::common::{by_client, describe, has_commit_log, session_event_times};
use super::node_reads::{answered_and_failed, node_lives, polled, read_path, NodeLife};
use super::result::{CheckResult, Violation};
use super::ViolationKind;

/// Adds a `hold-polls` violation to `r` for each `HoldNode` report whose
/// holder read that node more often than anything could have made it.
pub fn check_into(h: &History, ops: &[Operation], r: &mut CheckResult) {
    if !has_commit_log(h) {
        return;
    }
    let lives = node_lives(h);
    let session_times = session_event_times(h);
    let reads = by_client(ops.iter().filter(|o| read_path(o).is_some()));
    let none = NodeLife::default();
    let mut judged = 0u64;
    for report in ops {
        let Op::HoldNode { path, .. } = &report.op else {
            continue;
        };
        let Some(reads) = reads.get(&report.client) else {
            continue;
        };
        let from = report.invoked;
        let life = lives.get(path.as_str()).unwrap_or(&none);
        // The hold ends, for its node, when the node goes; a node gone
        // before the report is another checker's business.
        let to = life.deleted.first().copied().unwrap_or(Time::MAX);
        if to < from {
            continue;
        }
        judged += 1;
        // The holder's own session's reads (a client's next session may
        // read the node, as a leader query reads the head's data).
        let of_node: Vec<&&Operation> = reads
            .iter()
            .filter(|o| {
                read_path(o) == Some(path.as_str())
                    && o.session == report.session
                    && o.invoked >= from
                    && o.invoked <= to
            })
            .collect();
        // An error reply (NoNode) is a failed read: the holder re-arms.
        let (answered, failed) = answered_and_failed(&of_node);
        let within = |ts: &[Time]| ts.iter().filter(|t| (from..to).contains(*t)).count();
        let sessions = session_times.get(&report.client).map_or(0, |ts| within(ts));
        let wakeups = 1 + within(&life.sets) + sessions + failed;
        if polled(answered, wakeups) {
            r.violation(
                Violation::new(
                    ViolationKind::HoldPolls,
                    format!(
                        "client {} read its held node {path} {answered} times, though only {wakeups} wake-up(s) (the first read, changes of the node, events of its session, failed reads) could have made it: {}",
                        report.client,
                        describe(report)
                    ),
                )
                .ops([report.id])
                .clients([report.client]),
            );
        }
    }
    r.figure("holds_judged_for_polling", judged as f64);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{Data, SessionState, Stat, TxnRecord, Value};
    use crate::properties::testkit::{kinds_found, Builder};

    const NODE: &str = "/l/g-lock-0000000003";

    fn hold_node() -> Op {
        Op::HoldNode {
            lock: "/l".into(),
            token: 2,
            path: NODE.into(),
            name: "g-lock-0000000003".into(),
            sequence: 3,
            stat: Stat::default(),
        }
    }
    fn get_data() -> Op {
        Op::GetData {
            path: NODE.into(),
            watch: true,
        }
    }
    fn data() -> Value {
        Value::Data {
            data: Data::default(),
            stat: Stat::default(),
        }
    }
    fn judged(b: &Builder) -> Vec<String> {
        kinds_found(&b.clone_build(), check_into)
    }
    /// A hold of client 1 reported at 10, its node created at 2 and
    /// deleted at 1000; `reads` answered reads of it at 20, 30, ...
    fn hold(reads: u64) -> Builder {
        let mut b = Builder::new();
        b.commit(
            2,
            2,
            TxnRecord::Create {
                path: NODE.into(),
                data: Data::default(),
                ephemeral_owner: 0x10,
                session: 0x10,
            },
        );
        b.session(1, 1, 0x10, SessionState::SyncConnected);
        b.ok(10, 10, 1, hold_node(), Value::Unit);
        for i in 0..reads {
            b.ok(20 + 10 * i, 21 + 10 * i, 1, get_data(), data());
        }
        b.commit(1000, 3, TxnRecord::Delete { path: NODE.into() });
        b
    }

    #[test]
    fn a_holder_reading_its_node_with_nothing_to_wake_it_polls() {
        // One wake-up (the first read): up to 2 + 4 reads.
        assert_eq!(judged(&hold(6)), Vec::<String>::new());
        assert_eq!(judged(&hold(7)), vec!["hold-polls"]);
        // Another client's reads, or reads after the node went, are not
        // this hold's.
        let mut b = hold(6);
        for i in 0..20 {
            b.ok(300 + i, 301 + i, 2, get_data(), data());
            b.ok(1100 + i, 1101 + i, 1, get_data(), data());
        }
        assert_eq!(judged(&b), Vec::<String>::new());
    }

    #[test]
    fn changes_session_events_and_failed_reads_each_allow_a_reread() {
        let mut b = hold(14);
        // 14 reads need 4 more wake-ups than the first: two revocation
        // requests, a reconnect and a read lost to ConnectionLoss.
        for (t, z) in [(400, 4), (500, 5)] {
            b.commit(
                t,
                z,
                TxnRecord::SetData {
                    path: NODE.into(),
                    data: Data(b"revoke".to_vec()),
                    version: 1,
                },
            );
        }
        assert_eq!(judged(&b), vec!["hold-polls"]);
        b.session(600, 1, 0x10, SessionState::SyncConnected);
        assert_eq!(judged(&b), vec!["hold-polls"]);
        b.info(700, 710, 1, get_data());
        assert_eq!(judged(&b), Vec::<String>::new());
    }

    #[test]
    fn only_the_holders_session_reading_a_live_node_counts() {
        // Reads with an error reply (NoNode) are failed reads: each allows
        // a re-read, as a failed arm makes the holder re-arm.
        let mut b = hold(6);
        for i in 0..10 {
            let no_node = Value::Error {
                code: "NoNode".into(),
                results: vec![],
            };
            b.ok(200 + 2 * i, 201 + 2 * i, 1, get_data(), no_node);
            b.ok(201 + 2 * i, 202 + 2 * i, 1, get_data(), data());
        }
        assert_eq!(judged(&b), Vec::<String>::new());
        // A node deleted before the hold was reported is not judged.
        let mut c = Builder::new();
        c.commit(2, 2, TxnRecord::Delete { path: NODE.into() });
        c.ok(10, 10, 1, hold_node(), Value::Unit);
        for i in 0..20 {
            c.ok(20 + i, 21 + i, 1, get_data(), data());
        }
        assert_eq!(judged(&c), Vec::<String>::new());
    }
}
