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

#[cfg(test)]
mod tests {
    use crate::history::{Op, SessionState, Value};
    use crate::properties::membership::check_membership;
    use crate::properties::testkit::Builder;
    use crate::properties::{Params, Verdict};

    const G: &str = "/groups/g";
    const S: i64 = 0x51;

    fn act(b: &mut Builder, t: u64) {
        let id = b.invoke_s(
            t,
            1,
            Some(S),
            Op::MemberAct {
                group: G.into(),
                member: "m1".into(),
            },
        );
        b.complete(id, t, crate::history::Outcome::Ok { value: Value::Unit });
    }

    fn kinds(b: &Builder) -> Vec<String> {
        let h = b.clone_build();
        check_membership(&h, &Params::default())
            .violations
            .iter()
            .map(|v| v.kind.to_string())
            .collect()
    }

    /// Connected at 0, an act at 10 ms.
    fn connected() -> Builder {
        let mut b = Builder::new();
        b.session(0, 1, S, SessionState::SyncConnected);
        act(&mut b, 10);
        b
    }

    #[test]
    fn acting_while_connected_passes() {
        let b = connected();
        let r = check_membership(&b.build(), &Params::default());
        assert!(r.violations.is_empty(), "{r:#?}");
        assert_eq!(r.figures["member_acts_judged"], 1.0);
    }

    #[test]
    fn acts_of_every_group_are_counted() {
        let mut b = connected();
        let id = b.invoke_s(
            20,
            1,
            Some(S),
            Op::MemberAct {
                group: "/groups/other".into(),
                member: "m1".into(),
            },
        );
        b.complete(id, 20, crate::history::Outcome::Ok { value: Value::Unit });
        let r = check_membership(&b.build(), &Params::default());
        assert!(r.violations.is_empty(), "{r:#?}");
        assert_eq!(r.figures["member_acts_judged"], 2.0);
    }

    #[test]
    fn acting_while_disconnected_fails() {
        let mut b = connected();
        b.session(20, 1, S, SessionState::Disconnected);
        act(&mut b, 30);
        assert_eq!(kinds(&b), vec!["member-acted-suspended"]);
        // A reconnect before the act: standing again.
        b.session(25, 1, S, SessionState::SyncConnected);
        assert!(kinds(&b).is_empty());
    }

    #[test]
    fn acting_after_the_session_ended_fails() {
        let mut b = connected();
        b.session(20, 1, S, SessionState::Expired);
        act(&mut b, 30);
        assert_eq!(kinds(&b), vec!["member-acted-suspended"]);
    }

    #[test]
    fn acting_the_instant_the_disconnection_is_seen_is_fine() {
        let mut b = connected();
        b.session(20, 1, S, SessionState::Disconnected);
        act(&mut b, 20);
        assert!(kinds(&b).is_empty());
    }

    #[test]
    fn a_paused_client_may_act_once_as_it_wakes() {
        let mut b = connected();
        b.fault_on(15, "pause-client", "client1");
        b.session(20, 1, S, SessionState::Disconnected);
        b.fault_on(40, "resume", "client1");
        act(&mut b, 40);
        assert!(kinds(&b).is_empty());
        // Later than its wake-up, it had time to hear.
        act(&mut b, 50);
        assert_eq!(kinds(&b), vec!["member-acted-suspended"]);
    }

    #[test]
    fn an_act_is_judged_under_its_own_group() {
        let mut b = connected();
        b.session(20, 1, S, SessionState::Disconnected);
        let id = b.invoke_s(
            30,
            1,
            Some(S),
            Op::MemberAct {
                group: "/groups/other".into(),
                member: "m1".into(),
            },
        );
        b.complete(id, 30, crate::history::Outcome::Ok { value: Value::Unit });
        let h = b.build();
        let r = check_membership(&h, &Params::default());
        // Judged under its own group, where it breaks the promise.
        assert_eq!(r.verdict, Verdict::Violation, "{r:#?}");
        assert!(r.violations[0].explanation.contains("/groups/other"));
    }
}
