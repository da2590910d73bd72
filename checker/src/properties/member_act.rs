//! A group member acts on its standing only while it has it.
//!
//! The promise (ZooKeeper's group membership as Curator and kazoo serve
//! it): a member reports Joined only while its session is connected; the
//! instant the connection is lost it reports Suspended, because the
//! ensemble may be expiring the session and handing its share of the
//! group's work to the others (kazoo's SetPartitioner bug); once the
//! session ended it is no longer Joined at all.
//!
//! The application records a `MemberAct` only while the recipe said
//! Joined, so (`member-acted-suspended`) no `MemberAct` may be invoked
//! while its session had been Disconnected, Expired or Closed for more
//! than one scheduling step (the application and the recipe hear the same
//! event one after the other). A paused client is excused for the step it
//! takes to wake: paused, it could not have heard anything, and as it
//! resumes it may act once before its recipe processes what happened.

use crate::history::{History, Op, Operation, SessionState, Time};

use super::client_states::{Pauses, SessionStates, STEP};
use super::common::describe;
use super::result::{ms, CheckResult, Violation};
use super::ViolationKind;

/// Judges every member's act among `ops` (of any group) into `r`. The
/// session and pause evidence is built once, for all groups.
pub fn check_into(h: &History, ops: &[Operation], r: &mut CheckResult) {
    let acts: Vec<(&Operation, &str)> = ops
        .iter()
        .filter_map(|o| match &o.op {
            Op::MemberAct { group, .. } => Some((o, group.as_str())),
            _ => None,
        })
        .collect();
    if acts.is_empty() {
        return;
    }
    let states = SessionStates::of(h);
    let pauses = Pauses::of(h);
    let mut judged = 0;
    for (o, group) in acts {
        let Some(session) = o.session else {
            continue;
        };
        let Some((state, since)) = states.at(o.client, session, o.invoked) else {
            continue;
        };
        judged += 1;
        let lost_contact = matches!(
            state,
            SessionState::Disconnected | SessionState::Expired | SessionState::Closed
        );
        let woke = |t: Time| {
            pauses
                .covering(o.client, since, since)
                .is_some_and(|(_, q)| t <= q.saturating_add(STEP))
        };
        if !lost_contact || o.invoked <= since + STEP || woke(o.invoked) {
            continue;
        }
        r.violation(Violation::of_op_since(
            ViolationKind::MemberActedSuspended,
            format!(
                "group {group}: client {} acted as a member at {}, but its session {session:#x} was {state} \
                     since {} (no reconnect since): the recipe still reported it Joined: {}",
                o.client,
                ms(o.invoked),
                ms(since),
                describe(o)
            ),
            o,
            since,
        ));
    }
    r.figure("member_acts_judged", judged as f64);
}
