//! Hand-built histories for unit tests. Times are given in milliseconds.

use crate::history::{
    ClientId, Event, FaultEvent, FaultStep, History, Op, OpId, Outcome, SessionId, SessionState, Time, TxnRecord,
    Value, Zxid,
};

pub const MS: Time = 1_000_000;

#[derive(Default)]
pub struct Builder {
    pub h: History,
    next: OpId,
}

impl Builder {
    pub fn new() -> Self {
        Builder {
            h: History::new(),
            next: 1,
        }
    }

    /// Invokes `op` for `client` at `t` ms; returns the op id.
    pub fn invoke(&mut self, t: u64, client: ClientId, op: Op) -> OpId {
        self.invoke_s(t, client, None, op)
    }

    pub fn invoke_s(&mut self, t: u64, client: ClientId, session: Option<SessionId>, op: Op) -> OpId {
        let id = self.next;
        self.next += 1;
        self.h.events.push(Event::Invoke {
            id,
            time: t * MS,
            client,
            session,
            op,
            background: false,
        });
        id
    }

    /// Marks op `id` as sent by a recipe's background task.
    pub fn background(&mut self, id: OpId) {
        for e in &mut self.h.events {
            if let Event::Invoke { id: i, background, .. } = e {
                if *i == id {
                    *background = true;
                }
            }
        }
    }

    pub fn complete(&mut self, id: OpId, t: u64, outcome: Outcome) {
        self.complete_z(id, t, outcome, None)
    }

    pub fn complete_z(&mut self, id: OpId, t: u64, outcome: Outcome, zxid: Option<Zxid>) {
        let client = self
            .h
            .events
            .iter()
            .find_map(|e| match e {
                Event::Invoke { id: i, client, .. } if *i == id => Some(*client),
                _ => None,
            })
            .unwrap_or(0);
        self.h.events.push(Event::Complete {
            id,
            time: t * MS,
            client,
            outcome,
            zxid,
        });
    }

    /// Invoke + Ok completion.
    pub fn ok(&mut self, t0: u64, t1: u64, client: ClientId, op: Op, value: Value) -> OpId {
        let id = self.invoke(t0, client, op);
        self.complete(id, t1, Outcome::Ok { value });
        id
    }

    /// Invoke + Info (unknown) completion.
    pub fn info(&mut self, t0: u64, t1: u64, client: ClientId, op: Op) -> OpId {
        let id = self.invoke(t0, client, op);
        self.complete(
            id,
            t1,
            Outcome::Info {
                error: "ConnectionLoss".into(),
            },
        );
        id
    }

    /// Invoke + Fail completion.
    pub fn fail(&mut self, t0: u64, t1: u64, client: ClientId, op: Op) -> OpId {
        let id = self.invoke(t0, client, op);
        self.complete(
            id,
            t1,
            Outcome::Fail {
                error: "rejected".into(),
            },
        );
        id
    }

    pub fn commit(&mut self, t: u64, zxid: Zxid, txn: TxnRecord) {
        self.h.events.push(Event::Commit {
            session: None,
            xid: None,
            time: t * MS,
            server: 1,
            zxid,
            txn,
        });
    }

    pub fn session(&mut self, t: u64, client: ClientId, session: SessionId, state: SessionState) {
        self.h.events.push(Event::Session {
            time: t * MS,
            client,
            session,
            state,
            server: None,
        });
    }

    /// A fault by its history word (`partition-halves`, `heal`).
    pub fn fault(&mut self, t: u64, kind: &str) {
        self.push_fault(t, kind, vec![]);
    }

    /// A fault with targets (`pause-client` of `client2`, `expire-session` of `0x5`).
    pub fn fault_on(&mut self, t: u64, kind: &str, target: &str) {
        self.push_fault(t, kind, vec![target.into()]);
    }

    fn push_fault(&mut self, t: u64, kind: &str, targets: Vec<String>) {
        let step = FaultStep::from_name(kind).unwrap_or_else(|| panic!("no fault {kind:?}"));
        self.h
            .events
            .push(Event::Fault(FaultEvent::new(t * MS, step, targets, "")));
    }

    pub fn watch(&mut self, t: u64, client: ClientId, event: &str, path: &str) {
        self.watch_s(t, client, 0, event, path);
    }

    /// A node event on `session`'s connection.
    pub fn watch_s(&mut self, t: u64, client: ClientId, session: SessionId, event: &str, path: &str) {
        self.h.events.push(Event::Watch {
            time: t * MS,
            client,
            session,
            event: event.into(),
            path: Some(path.into()),
        });
    }

    /// Any event, as is.
    pub fn push(&mut self, e: Event) {
        self.h.events.push(e);
    }

    pub fn meta(&mut self, key: &str, value: &str) {
        self.h.meta.insert(key.into(), value.into());
    }

    /// The history with events sorted by time (stable), as a recorder emits.
    pub fn build(mut self) -> History {
        self.h.events.sort_by_key(Event::time);
        self.h
    }
}

impl Builder {
    /// The history so far, keeping the builder.
    pub fn clone_build(&self) -> History {
        let mut h = self.h.clone();
        h.events.sort_by_key(Event::time);
        h
    }
}

impl Builder {
    /// A note at `t` ms (extends the history's end).
    pub fn note_at(&mut self, t: u64) {
        self.h.events.push(Event::Note {
            time: t * MS,
            client: None,
            text: "end".into(),
        });
    }
}

/// The violation kinds a `check_into`-style checker finds in `h`.
pub fn kinds_found(
    h: &History,
    check: fn(&History, &[crate::history::Operation], &mut super::CheckResult),
) -> Vec<String> {
    let ops = h.operations().expect("a well-formed history");
    let mut r = super::CheckResult::new("test");
    check(h, &ops, &mut r);
    r.kinds().into_iter().map(String::from).collect()
}
