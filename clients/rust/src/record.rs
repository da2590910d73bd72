//! The operation record zkdst reads back (scenarios/src/serve/record.rs):
//! history events, one JSON line each, stamped with CLOCK_MONOTONIC.

use std::io::Write;
use std::sync::Mutex;

use zkdst_history::{Event, Op, OpId, Outcome, SessionId, SessionState, Value};

/// CLOCK_MONOTONIC, ns: the clock `ZKDST_T0_NS` is read on.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec for the kernel to fill in.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A record shared by the clients of one process.
pub struct Record {
    out: Mutex<(std::io::BufWriter<std::fs::File>, OpId)>,
}

impl Record {
    pub fn create(path: &str) -> std::io::Result<Record> {
        Ok(Record {
            out: Mutex::new((std::io::BufWriter::new(std::fs::File::create(path)?), 1)),
        })
    }

    fn write(&self, make: impl FnOnce(&mut OpId, u64) -> Event) {
        let mut g = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let (w, next) = &mut *g;
        // Read under the lock: the lines are in time order.
        let e = make(next, monotonic_ns());
        let _ = serde_json::to_writer(&mut *w, &e);
        let _ = w.write_all(b"\n");
    }

    pub fn invoke(&self, client: u32, session: SessionId, op: Op) -> OpId {
        let mut id = 0;
        self.write(|next, time| {
            id = *next;
            *next += 1;
            Event::Invoke {
                id,
                time,
                client,
                session: (session != 0).then_some(session),
                op,
                background: false,
            }
        });
        id
    }

    pub fn complete(&self, client: u32, id: OpId, outcome: Outcome) {
        self.write(|_, time| Event::Complete {
            id,
            time,
            client,
            outcome,
            zxid: None,
        });
    }

    pub fn ok(&self, client: u32, id: OpId, value: Value) {
        self.complete(client, id, Outcome::Ok { value });
    }

    /// What the recipe told the application, invoked and completed at once.
    pub fn report(&self, client: u32, session: SessionId, op: Op) {
        let id = self.invoke(client, session, op);
        self.ok(client, id, Value::Unit);
    }

    pub fn session(&self, client: u32, session: SessionId, state: SessionState) {
        self.write(|_, time| Event::Session {
            time,
            client,
            session,
            state,
            server: None,
        });
    }

    pub fn flush(&self) {
        let mut g = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let _ = g.0.flush();
    }
}
