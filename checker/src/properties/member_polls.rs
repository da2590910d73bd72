//! A group member whose id is held by another session (an older session of
//! its own, not yet expired) waits for that node to go on a watch; it does
//! not poll it. Each try at the id reads the node at most twice (whose is
//! it, then the watch), and tries again only when something could have
//! changed the answer: a commit to the node, an event of the member's
//! session, or a read of the node that failed. A member whose answered
//! reads of its id's node, from its `Join` to its next `Join` or `Leave`,
//! exceed twice those wake-ups (and the first try) plus a little slack is
//! `member-polls`: a wait that returns at once, a watch never awaited. No
//! view goes wrong, but a member held off for a session timeout sends
//! requests as fast as the ensemble answers them.

use crate::history::{History, Op, Operation, Time};

use super::common::{by_client, describe, has_commit_log, session_event_times};
use super::node_reads::{answered_and_failed, node_lives, polled, read_path, NodeLife};
use super::result::{CheckResult, Violation};
use super::ViolationKind;

/// Adds a `member-polls` violation to `r` for each `Join` whose member read
/// its id's node more often than anything could have made it.
pub fn check_into(h: &History, ops: &[Operation], r: &mut CheckResult) {
    if !has_commit_log(h) {
        return;
    }
    let lives = node_lives(h);
    let session_times = session_event_times(h);
    let reads = by_client(ops.iter().filter(|o| read_path(o).is_some()));
    let none = NodeLife::default();
    let mut judged = 0u64;
    for join in ops {
        let Op::Join { group, member } = &join.op else {
            continue;
        };
        let Some(reads) = reads.get(&join.client) else {
            continue;
        };
        let path = format!("{group}/{member}");
        let from = join.invoked;
        // Up to the member's next Join or Leave of the same id.
        let to = ops
            .iter()
            .filter(|o| o.client == join.client && o.invoked > from)
            .filter(|o| match &o.op {
                Op::Join { group: g, member: m } | Op::Leave { group: g, member: m } => g == group && m == member,
                _ => false,
            })
            .map(|o| o.invoked)
            .min()
            .unwrap_or(Time::MAX);
        judged += 1;
        let of_node: Vec<&&Operation> = reads
            .iter()
            .filter(|o| read_path(o) == Some(path.as_str()) && (from..to).contains(&o.invoked))
            .collect();
        // An error reply is a failed read: the member tries again.
        let (answered, failed) = answered_and_failed(&of_node);
        let within = |ts: &[Time]| ts.iter().filter(|t| (from..to).contains(*t)).count();
        let sessions = session_times.get(&join.client).map_or(0, |ts| within(ts));
        let commits = lives.get(path.as_str()).unwrap_or(&none).changes_within(&(from..to));
        let wakeups = 1 + commits + sessions + failed;
        if polled(answered, wakeups) {
            r.violation(
                Violation::new(
                    ViolationKind::MemberPolls,
                    format!(
                        "client {} read its member node {path} {answered} times, though only {wakeups} wake-up(s) (the first try, changes of the node, events of its sessions, failed reads) could have made it: {}",
                        join.client,
                        describe(join)
                    ),
                )
                .ops([join.id])
                .clients([join.client]),
            );
        }
    }
    r.figure("joins_judged_for_polling", judged as f64);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{Data, SessionState, TxnRecord, Value};
    use crate::properties::member_fixtures::{exists, held, join, leave, NODE};
    use crate::properties::testkit::{kinds_found, Builder};

    fn judged(b: &Builder) -> Vec<String> {
        kinds_found(&b.clone_build(), check_into)
    }
    /// Client 1 joins as m1 at 10 while an older session 0x20 holds the
    /// node (created at 2, still held at the end); `reads` answered reads
    /// of it at 20, 30, ...
    fn held_off(reads: u64) -> Builder {
        let mut b = Builder::new();
        b.commit(
            2,
            2,
            TxnRecord::Create {
                path: NODE.into(),
                data: Data::default(),
                ephemeral_owner: 0x20,
                session: 0x20,
            },
        );
        b.session(5, 1, 0x10, SessionState::SyncConnected);
        b.invoke(10, 1, join());
        for i in 0..reads {
            b.ok(20 + 10 * i, 21 + 10 * i, 1, exists(), held());
        }
        b
    }

    #[test]
    fn a_member_reading_a_held_id_with_nothing_to_wake_it_polls() {
        // One wake-up (the first try): up to 2 + 4 reads.
        assert_eq!(judged(&held_off(6)), Vec::<String>::new());
        assert_eq!(judged(&held_off(7)), vec!["member-polls"]);
        // Another client's reads are not this member's.
        let mut b = held_off(6);
        for i in 0..20 {
            b.ok(300 + i, 301 + i, 2, exists(), held());
        }
        assert_eq!(judged(&b), Vec::<String>::new());
    }

    #[test]
    fn changes_session_events_and_failed_reads_each_allow_another_try() {
        // 12 reads need 3 wake-ups more than the first try: a change of
        // the node, a session event and a failed read.
        let mut b = held_off(12);
        assert_eq!(judged(&b), vec!["member-polls"]);
        b.commit(
            400,
            5,
            TxnRecord::SetData {
                path: NODE.into(),
                data: Data(b"x".to_vec()),
                version: 1,
            },
        );
        b.session(500, 1, 0x10, SessionState::Disconnected);
        assert_eq!(judged(&b), vec!["member-polls"]);
        b.info(600, 610, 1, exists());
        assert_eq!(judged(&b), Vec::<String>::new());
    }

    #[test]
    fn a_leave_ends_the_join_it_follows() {
        // 6 reads before the leave, 20 after it: the join read 6.
        let mut b = held_off(6);
        b.ok(90, 95, 1, leave(), Value::Unit);
        for i in 0..20 {
            b.ok(1100 + i, 1101 + i, 1, exists(), held());
        }
        assert_eq!(judged(&b), Vec::<String>::new());
        // Without the leave, the 20 are the join's.
        let mut c = held_off(6);
        for i in 0..20 {
            c.ok(1100 + i, 1101 + i, 1, exists(), held());
        }
        assert_eq!(judged(&c), vec!["member-polls"]);
    }
}
