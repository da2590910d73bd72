//! A client handle's session states as its state watch promises them
//! (`StateWatch`: transitions, in order, none skipped; a terminal state
//! repeats for ever): each recorded state differs from the one before, and
//! none follows Expired or Closed. A state recorded twice in a row, or a
//! session come back from its end, is a client that told its application
//! something that did not happen.

use std::collections::BTreeMap;

use crate::history::{ClientId, Event, History, SessionId, SessionState, Time};
use crate::properties::{ms, CheckResult, Violation, ViolationKind};

pub fn transitions(h: &History, r: &mut CheckResult) {
    let mut last: BTreeMap<(ClientId, SessionId), (Time, SessionState)> = BTreeMap::new();
    for e in &h.events {
        let Event::Session {
            time,
            client,
            session,
            state,
            ..
        } = e
        else {
            continue;
        };
        if *session == 0 {
            continue;
        }
        if let Some((t0, before)) = last.insert((*client, *session), (*time, *state)) {
            let why = if before.is_terminal() {
                "after its session had ended"
            } else if before == *state {
                "twice in a row"
            } else {
                continue;
            };
            r.violation(
                Violation::new(
                    ViolationKind::SessionTransition,
                    format!(
                        "client {client} told session {session:#x} {} {why} ({} at {}, {} at {})",
                        state.name(),
                        before.name(),
                        ms(t0),
                        state.name(),
                        ms(*time)
                    ),
                )
                .clients([*client])
                .times([t0, *time]),
            );
        }
    }
}
