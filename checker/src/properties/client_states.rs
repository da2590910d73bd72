//! What each client saw of its sessions, and when its node was paused:
//! the evidence for "could the application have known?" that checkers of
//! recipe promises (a leader's grace, a member's standing) share.

use std::collections::BTreeMap;

use crate::history::{
    ClientId, Event, FaultEnd, FaultEvent, FaultKind, FaultStep, History, SessionId, SessionState, Time,
};

use super::NS_PER_MS;

/// How long an application may take to hear what its recipe learned: its
/// task and the recipe's run one after the other at the same instant, and
/// the simulator's clock moves a few nanoseconds per step.
pub(super) const STEP: Time = NS_PER_MS;

/// Every session's states as its client saw them, in time order.
pub(super) struct SessionStates(BTreeMap<(ClientId, SessionId), Vec<(Time, SessionState)>>);

impl SessionStates {
    pub(super) fn of(h: &History) -> Self {
        let mut m: BTreeMap<(ClientId, SessionId), Vec<(Time, SessionState)>> = BTreeMap::new();
        for e in &h.events {
            if let Event::Session {
                time,
                client,
                session,
                state,
                ..
            } = e
            {
                m.entry((*client, *session)).or_default().push((*time, *state));
            }
        }
        for v in m.values_mut() {
            v.sort_by_key(|(t, _)| *t);
        }
        SessionStates(m)
    }

    /// Whether the session was connected at `from` and every state its
    /// client saw of it up to `to` was a connected one.
    pub(super) fn connected_throughout(&self, client: ClientId, session: SessionId, from: Time, to: Time) -> bool {
        let Some(v) = self.0.get(&(client, session)) else {
            return false;
        };
        let first = v.partition_point(|(time, _)| *time <= from);
        let last = v.partition_point(|(time, _)| *time <= to);
        first > 0 && v[first - 1..last].iter().all(|(_, s)| s.is_connected())
    }

    /// The session's last state at or before `t`: (state, since).
    pub(super) fn at(&self, client: ClientId, session: SessionId, t: Time) -> Option<(SessionState, Time)> {
        let v = self.0.get(&(client, session))?;
        let n = v.partition_point(|(time, _)| *time <= t);
        n.checked_sub(1).map(|i| (v[i].1, v[i].0))
    }
}

/// When each client's node was paused: `[pause, resume]`, `Time::MAX`
/// for a pause never resumed.
pub(super) struct Pauses(BTreeMap<ClientId, Vec<(Time, Time)>>);

impl Pauses {
    pub(super) fn of(h: &History) -> Self {
        let mut m: BTreeMap<ClientId, Vec<(Time, Time)>> = BTreeMap::new();
        for e in &h.events {
            let Event::Fault(FaultEvent {
                time, kind, targets, ..
            }) = e
            else {
                continue;
            };
            for c in targets
                .iter()
                .filter_map(|t| t.strip_prefix("client")?.parse::<ClientId>().ok())
            {
                let v = m.entry(c).or_default();
                match kind {
                    FaultStep::Start(FaultKind::PauseClient) => v.push((*time, Time::MAX)),
                    FaultStep::End(FaultEnd::Resume) => {
                        if let Some(last) = v.last_mut().filter(|p| p.1 == Time::MAX) {
                            last.1 = *time;
                        }
                    }
                    _ => {}
                }
            }
        }
        Pauses(m)
    }

    /// The pause of `client` that covers `[a, b]`, if one does.
    pub(super) fn covering(&self, client: ClientId, a: Time, b: Time) -> Option<(Time, Time)> {
        self.0.get(&client)?.iter().copied().find(|&(p, q)| p <= a && b <= q)
    }
}
