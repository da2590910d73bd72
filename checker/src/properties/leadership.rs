//! What an election promises its leaders, judged from the recipe's own
//! reports rather than from what a fenced resource accepted.
//!
//! A leadership lasts from the campaign's successful return (the recipe
//! said "you lead, with this token") until the application learned it
//! ended: a `LeadershipLost` report, its own `Resign`, or its next
//! `Campaign`. The promises:
//!
//! 1. **One leader at a time** (`leaders-overlap`): two clients' leaderships
//!    never overlap — except where the older leader could not know: the
//!    ensemble ended its session while its client still heard from its
//!    server (a GC pause, a forced expiry, a server that answered the
//!    client's pings while its touches no longer reached the leader), or
//!    while it was Disconnected for less than its grace. That is the case
//!    fencing exists for; there its stale acts must be rejected, which the
//!    `election` checker's token rules judge.
//! 2. **A leader that lost contact stops acting within its grace**
//!    (`acted-past-grace`): no `LeaderAct` is invoked later than the grace
//!    after the session's last Disconnected with no reconnect since, and
//!    none after the application was told the session ended
//!    (`acted-after-session-end`), allowing one scheduling step (1 ms) for
//!    the application to hear it. The grace is the application's setting
//!    (`Params::leader_grace_ms`, else the history's meta `leader_grace_ms`).
//! 3. **Told it lost, a leader stops** (`acted-after-loss`): no act with a
//!    token after the recipe reported that leadership lost (its
//!    `is_leader()` must agree with its own report).
//! 4. **Rejected acts need an excuse** (`stale-act-rejected`): every act the
//!    resource rejected is counted (`stale_acts_rejected`), and one whose
//!    leader has no such excuse is a violation: a correct election never
//!    lets a leader fall that far behind.
//! 5. **A disconnection shorter than the grace costs nothing**
//!    (`lost-within-grace`): with a grace above zero, a leadership the
//!    recipe reports lost while its session is Disconnected, sooner than the
//!    grace after the disconnection began, is a violation — unless the
//!    recipe could have learned of a real loss: its session's CloseSession
//!    or its candidate node's delete committed before the report. The grace
//!    is both a ceiling (2) and a floor (5): a recipe that ignores it in
//!    either direction breaks what the application configured.
//! 6. **Nothing lost, nothing given up** (`lost-while-connected`): whatever
//!    the grace, a leadership the recipe reports lost while its client had
//!    stayed connected since the campaign returned, its session's
//!    CloseSession and its candidate node's delete not committed, is a
//!    violation: nothing happened that could end it.
//!
//! A loss an application learned by polling (`is_leader()` before each
//! act, its `LeadershipLost` reason starting [`POLLED_PREFIX`]) happened
//! at some instant between its last act and the poll: such a term is held
//! to have ended at its last act (each act followed a poll that said "you
//! lead"), and promises 5 and 6, which time the recipe's report, do not
//! judge it.

use std::collections::BTreeMap;

use crate::history::{
    ClientId, Event, History, Op, Operation, Outcome, SessionId, SessionState, Time, TxnRecord, Value,
};

use super::client_states::{Pauses, SessionStates, STEP};
use super::common::{describe, ok_value, token};
use super::result::{ms, CheckResult, Violation};
use super::ViolationKind;
use super::{Params, NS_PER_MS};

/// How a `LeadershipLost` reason says the application learned the loss
/// from a poll, not from the recipe's report.
pub const POLLED_PREFIX: &str = "polled: ";

/// One leadership as the application saw it.
#[derive(Debug, Clone)]
struct Term<'a> {
    campaign: &'a Operation,
    token: i64,
    start: Time,
    /// When the application learned it ended; `Time::MAX`: never. For a
    /// polled loss, its last act (or its start).
    end: Time,
    /// Ended by a polled loss.
    polled: bool,
}

/// The leaderships of `election`, in start order.
fn terms<'a>(ops: &'a [Operation], election: &str) -> Vec<Term<'a>> {
    let mut open: BTreeMap<ClientId, Term<'a>> = BTreeMap::new();
    let mut done = Vec::new();
    for o in ops {
        let (close, opens) = match &o.op {
            Op::Campaign { election: e } if e == election => (true, true),
            Op::Resign { election: e } if e == election => (true, false),
            Op::LeadershipLost {
                election: e, token: t, ..
            } if e == election => (open.get(&o.client).is_some_and(|x| x.token == *t), false),
            _ => (false, false),
        };
        if close {
            if let Some(mut t) = open.remove(&o.client) {
                t.end = o.invoked;
                if let Op::LeadershipLost { reason, .. } = &o.op {
                    if reason.starts_with(POLLED_PREFIX) {
                        t.polled = true;
                        t.end = last_act(ops, election, &t, o.invoked).unwrap_or(t.start);
                    }
                }
                done.push(t);
            }
        }
        if opens {
            if let (Some(t), Some(Outcome::Ok { .. }), Some(start)) = (token(o), &o.outcome, o.completed) {
                open.insert(
                    o.client,
                    Term {
                        campaign: o,
                        token: t,
                        start,
                        end: Time::MAX,
                        polled: false,
                    },
                );
            }
        }
    }
    done.extend(open.into_values());
    done.sort_by_key(|t| (t.start, t.campaign.id));
    done
}

/// The invocation of term `t`'s last act before `before`.
fn last_act(ops: &[Operation], election: &str, t: &Term, before: Time) -> Option<Time> {
    ops.iter()
        .filter(|o| {
            o.client == t.campaign.client
                && (t.start..=before).contains(&o.invoked)
                && matches!(&o.op, Op::LeaderAct { election: e, token } if e == election && *token == t.token)
        })
        .map(|o| o.invoked)
        .max()
}

/// When each session ended on the servers (its CloseSession commits).
struct SessionEnds(BTreeMap<SessionId, Vec<Time>>);

impl SessionEnds {
    fn of(h: &History) -> Self {
        let mut m: BTreeMap<SessionId, Vec<Time>> = BTreeMap::new();
        for e in &h.events {
            if let Event::Commit {
                time,
                txn: TxnRecord::CloseSession { session, .. },
                ..
            } = e
            {
                m.entry(*session).or_default().push(*time);
            }
        }
        SessionEnds(m)
    }
}

/// What the judgements share.
struct Context {
    ends: SessionEnds,
    states: SessionStates,
    pauses: Pauses,
    /// When each candidate node (by czxid) was deleted; `Time::MAX`: never.
    candidates: BTreeMap<i64, Time>,
    grace: Option<u64>,
    end: Time,
}

impl Context {
    /// Whether the recipe could have learned of a real loss of `t` by its
    /// end: its session's end or its candidate node's delete committed.
    fn loss_known(&self, session: SessionId, t: &Term) -> bool {
        let ended = self.ends.0.get(&session).is_some_and(|e| e.iter().any(|&x| x <= t.end));
        let deleted = self.candidates.get(&t.token).is_some_and(|&gone| gone <= t.end);
        ended || deleted
    }

    /// Whether the leader could still believe it led at `at`: its client
    /// heard from its server, or was Disconnected for less than the grace,
    /// or was paused from the end of its grace until `at` (a GC pause: it
    /// could not step down).
    fn could_not_know(&self, client: ClientId, session: SessionId, at: Time) -> bool {
        let Some((state, since)) = self.states.at(client, session, at) else {
            return true;
        };
        match state {
            SessionState::Disconnected => self.grace.is_none_or(|g| {
                let deadline = since + g * NS_PER_MS;
                at <= deadline + STEP || self.pauses.covering(client, deadline, at).is_some()
            }),
            s => s.is_connected(),
        }
    }

    /// Why a leader could not have known it was deposed, if it could not:
    /// the ensemble ended its session within `[from, to]` while it could
    /// not know. That covers a GC pause (the paused client records
    /// nothing), a forced expiry, and a client whose server answered its
    /// pings while its touches no longer reached the leader.
    fn excuse(&self, client: ClientId, session: Option<SessionId>, from: Time, to: Time) -> Option<Time> {
        let session = session?;
        let ends = self.ends.0.get(&session)?;
        ends.iter()
            .copied()
            .find(|&c| (from..=to).contains(&c) && self.could_not_know(client, session, c))
    }
}

fn overlaps(ctx: &Context, r: &mut CheckResult, election: &str, terms: &[Term]) {
    // The term with the latest end among those started so far.
    let mut latest: Option<&Term> = None;
    let mut excused = 0;
    for t in terms {
        if let Some(old) = latest.filter(|o| o.campaign.client != t.campaign.client && o.end > t.start) {
            let c = old.campaign;
            match ctx.excuse(c.client, c.session, c.invoked, t.start) {
                Some(_) => excused += 1,
                None => {
                    let until = if old.end == Time::MAX {
                        "the end of the history".to_string()
                    } else {
                        ms(old.end)
                    };
                    r.violation(
                        Violation::new(
                            ViolationKind::LeadersOverlap,
                            format!(
                                "election {election}: client {} led with token {} from {} until {until}, but client {} \
                                 was elected with token {} at {} ({}); the older leader's session had not ended while \
                                 it could not know",
                                c.client,
                                old.token,
                                ms(old.start),
                                t.campaign.client,
                                t.token,
                                ms(t.start),
                                describe(t.campaign)
                            ),
                        )
                        .ops([c.id, t.campaign.id])
                        .clients([c.client, t.campaign.client])
                        .times([t.start, old.end.min(ctx.end)]),
                    );
                }
            }
        }
        if latest.is_none_or(|l| t.end > l.end) {
            latest = Some(t);
        }
    }
    r.figure("overlaps_excused", excused as f64);
}

fn acts_within_grace(ctx: &Context, grace: u64, r: &mut CheckResult, election: &str, ops: &[Operation]) {
    for o in ops {
        let (Op::LeaderAct { election: e, token }, Some(session)) = (&o.op, o.session) else {
            continue;
        };
        if e != election {
            continue;
        }
        let Some((state, since)) = ctx.states.at(o.client, session, o.invoked) else {
            continue;
        };
        let deadline = since + grace * NS_PER_MS;
        // Paused when its grace ran out, it acted as it resumed: the
        // recipe and the application woke together.
        let woke = |t: Time| {
            ctx.pauses
                .covering(o.client, deadline, deadline)
                .is_some_and(|(_, q)| t <= q.saturating_add(STEP))
        };
        let kind = match state {
            SessionState::Disconnected if o.invoked > deadline + STEP && !woke(o.invoked) => {
                ViolationKind::ActedPastGrace
            }
            SessionState::Expired | SessionState::Closed if o.invoked > since + STEP => {
                ViolationKind::ActedAfterSessionEnd
            }
            _ => continue,
        };
        r.violation(Violation::of_op_since(
            kind,
            format!(
                "election {election}: client {} acted as leader with token {token} at {}, but its session \
                     {session:#x} was {state} since {} (grace {grace} ms, no reconnect since): {}",
                o.client,
                ms(o.invoked),
                ms(since),
                describe(o)
            ),
            o,
            since,
        ));
    }
}

/// Leaderships the recipe gave up within the grace of a disconnection
/// (promise 5). A term's candidate node is the create its token names.
fn losses_within_grace(
    ctx: &Context,
    grace: u64,
    r: &mut CheckResult,
    election: &str,
    ops: &[Operation],
    terms: &[Term],
) {
    if grace == 0 {
        return;
    }
    for t in terms.iter().filter(|t| t.end != Time::MAX && !t.polled) {
        let c = t.campaign;
        let Some(session) = c.session else {
            continue;
        };
        let Some(lost) = lost_report(ops, election, t) else {
            continue;
        };
        let Some((SessionState::Disconnected, since)) = ctx.states.at(c.client, session, t.end) else {
            continue;
        };
        if t.end + STEP >= since + grace * NS_PER_MS {
            continue;
        }
        if ctx.loss_known(session, t) {
            continue;
        }
        r.violation(
            Violation::new(
                ViolationKind::LostWithinGrace,
                format!(
                    "election {election}: the recipe told client {} its leadership (token {}) was lost at {}, after \
                     {} of disconnection (since {}), within its grace of {grace} ms; its session and candidate \
                     node were still alive: {}",
                    c.client,
                    t.token,
                    ms(t.end),
                    ms(t.end - since),
                    ms(since),
                    describe(lost)
                ),
            )
            .ops([c.id, lost.id])
            .clients([c.client])
            .times([since, t.end]),
        );
    }
}

/// The recipe's report that term `t` was lost, if that is how it ended.
fn lost_report<'o>(ops: &'o [Operation], election: &str, t: &Term) -> Option<&'o Operation> {
    ops.iter().find(|o| {
        o.client == t.campaign.client
            && o.invoked == t.end
            && matches!(&o.op, Op::LeadershipLost { election: e, token, .. } if e == election && *token == t.token)
    })
}

/// Promise 6: leaderships the recipe reported lost though nothing happened
/// to them — the client connected from the campaign's return to the
/// report (and a step after), its session and candidate node alive.
fn losses_while_connected(ctx: &Context, r: &mut CheckResult, election: &str, ops: &[Operation], terms: &[Term]) {
    for t in terms.iter().filter(|t| t.end != Time::MAX && !t.polled) {
        let c = t.campaign;
        let (Some(session), Some(lost)) = (c.session, lost_report(ops, election, t)) else {
            continue;
        };
        if !ctx
            .states
            .connected_throughout(c.client, session, t.start, t.end + STEP)
        {
            continue;
        }
        if ctx.loss_known(session, t) {
            continue;
        }
        r.violation(Violation::of_pair(
            ViolationKind::LostWhileConnected,
            format!(
                "election {election}: the recipe told client {} its leadership (token {}) was lost at {}, \
                     though its client had stayed connected since the campaign returned at {} and its session \
                     and candidate node were alive: {}",
                c.client,
                t.token,
                ms(t.end),
                ms(t.start),
                describe(lost)
            ),
            c,
            lost,
            t.start,
            t.end,
        ));
    }
}

/// Acts the leader made after the recipe told it the leadership ended:
/// the recipe's `is_leader()` contradicts its own report.
fn acts_after_loss(r: &mut CheckResult, election: &str, ops: &[Operation], terms: &[Term]) {
    for t in terms.iter().filter(|t| t.end != Time::MAX) {
        if lost_report(ops, election, t).is_none() {
            continue;
        }
        let late = ops.iter().find(|o| {
            o.client == t.campaign.client
                && o.invoked > t.end + STEP
                && matches!(&o.op, Op::LeaderAct { election: e, token } if e == election && *token == t.token)
        });
        if let Some(o) = late {
            r.violation(
                Violation::new(
                    ViolationKind::ActedAfterLoss,
                    format!(
                        "election {election}: client {} acted as leader with token {} at {}, after the recipe \
                         reported that leadership lost at {}: {}",
                        o.client,
                        t.token,
                        ms(o.invoked),
                        ms(t.end),
                        describe(o)
                    ),
                )
                .ops([t.campaign.id, o.id])
                .clients([o.client])
                .times([t.end, o.invoked]),
            );
        }
    }
}

fn rejected_acts(ctx: &Context, r: &mut CheckResult, election: &str, ops: &[Operation], terms: &[Term]) {
    let mut rejected = 0;
    for o in ops {
        let Op::LeaderAct { election: e, token: t } = &o.op else {
            continue;
        };
        if e != election || !matches!(ok_value(o), Some(Value::Error { .. })) {
            continue;
        }
        rejected += 1;
        let term = terms
            .iter()
            .rev()
            .find(|x| x.campaign.client == o.client && x.token == *t && x.start <= o.invoked);
        let from = term.map_or(0, |x| x.campaign.invoked);
        // The resource judged the act when it completed.
        if ctx
            .excuse(o.client, o.session, from, o.completed.unwrap_or(o.invoked))
            .is_none()
        {
            r.violation(
                Violation::new(
                    ViolationKind::StaleActRejected,
                    format!(
                        "election {election}: the resource rejected {} (a newer leader had acted), yet the \
                         ensemble never ended client {}'s session while it could not know: the election let it fall \
                         behind",
                        describe(o),
                        o.client
                    ),
                )
                .ops([o.id])
                .clients([o.client])
                .times([o.invoked]),
            );
        }
    }
    r.figure("stale_acts_rejected", rejected as f64);
}

/// Judges the leaderships of every election in the history into `r`.
pub fn check_into(h: &History, p: &Params, ops: &[Operation], r: &mut CheckResult) {
    let mut elections: Vec<&str> = ops
        .iter()
        .filter_map(|o| match &o.op {
            Op::Campaign { election } | Op::LeaderAct { election, .. } => Some(election.as_str()),
            _ => None,
        })
        .collect();
    elections.sort_unstable();
    elections.dedup();
    let grace = p
        .leader_grace_ms
        .or_else(|| h.meta.get("leader_grace_ms").and_then(|g| g.trim().parse().ok()));
    let ctx = Context {
        ends: SessionEnds::of(h),
        states: SessionStates::of(h),
        pauses: Pauses::of(h),
        candidates: super::common::node_ends(h),
        grace,
        end: super::end_of_history(h),
    };
    if grace.is_none() && !elections.is_empty() {
        r.note("no leader grace recorded (meta leader_grace_ms): acts after a disconnection were not judged");
    }
    for e in elections {
        let terms = terms(ops, e);
        overlaps(&ctx, r, e, &terms);
        if let Some(g) = grace {
            acts_within_grace(&ctx, g, r, e, ops);
        }
        if let Some(g) = grace {
            losses_within_grace(&ctx, g, r, e, ops, &terms);
        }
        losses_while_connected(&ctx, r, e, ops, &terms);
        acts_after_loss(r, e, ops, &terms);
        rejected_acts(&ctx, r, e, ops, &terms);
    }
}

#[cfg(test)]
#[path = "leadership_tests.rs"]
mod tests;
