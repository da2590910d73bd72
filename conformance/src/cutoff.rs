//! Session faults as generated steps: a client cut off from the servers
//! (and let back), a session expired by the server. The executor drives
//! them through [`SessionFaults`], which each backend implements with its
//! own faults: `real_cutoff::ProxyFaults` over the fault proxy in front of
//! the real server, `sim_cutoff::SimFaults` over the simulator's fault
//! primitives.
//!
//! The executor waits for the client-visible effect of each fault (its
//! session state) with bounded loops of short sleeps, so the backends'
//! different speeds do not show in the trace.

use std::future::Future;
use std::time::Duration;

use zkdst_recipes::zk::{SessionId, SessionState, ZkClient};

/// Cuts clients off and expires sessions, by client index.
pub trait SessionFaults {
    /// Drops client `client`'s connection now and keeps it from
    /// reconnecting until [`restore`](Self::restore).
    fn cut(&mut self, client: usize) -> impl Future<Output = ()>;
    /// Lets client `client` reconnect.
    fn restore(&mut self, client: usize) -> impl Future<Output = ()>;
    /// Ends `session` (client `client`'s, which is cut off) on the server:
    /// returns once its close transaction was applied.
    fn expire(&mut self, client: usize, session: SessionId) -> impl Future<Output = ()>;
}

/// No faults: for runs whose sequences have no fault steps (a fault step
/// then leaves the client as it is).
pub struct NoFaults;

impl SessionFaults for NoFaults {
    async fn cut(&mut self, _client: usize) {}
    async fn restore(&mut self, _client: usize) {}
    async fn expire(&mut self, _client: usize, _session: SessionId) {}
}

/// How often the executor looks at a client's state while waiting.
const POLL: Duration = Duration::from_millis(5);

/// Waits (at most `limit`) until `done(state)`; the last state seen.
pub async fn wait_state<C, S, F>(
    zk: &C,
    sleep: &S,
    limit: Duration,
    done: impl Fn(SessionState) -> bool,
) -> SessionState
where
    C: ZkClient,
    S: Fn(Duration) -> F,
    F: Future<Output = ()>,
{
    let mut left = limit.as_millis() / POLL.as_millis();
    loop {
        let s = zk.state();
        if done(s) || left == 0 {
            return s;
        }
        left -= 1;
        sleep(POLL).await;
    }
}
