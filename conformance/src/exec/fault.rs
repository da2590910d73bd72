//! The fault steps: a client cut off, let back, its session expired; each
//! waits for the client to see it, and logs the events it caused.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use zkdst_recipes::zk::{SessionState, ZkClient};

use super::collector::{collect, Collector, DeliveryLog};
use super::{ExecOptions, Outcome, Trace};
use crate::cutoff::{wait_state, SessionFaults};

/// One fault step being carried out on one client.
pub(super) struct FaultRun<'a, C, S> {
    pub(super) client: &'a C,
    pub(super) index: usize,
    pub(super) sleep: &'a S,
    pub(super) options: &'a ExecOptions,
    pub(super) collectors: &'a [Arc<Collector>],
    pub(super) log: &'a DeliveryLog,
}

impl<C, S, F> FaultRun<'_, C, S>
where
    C: ZkClient,
    S: Fn(Duration) -> F,
    F: Future<Output = ()>,
{
    /// Makes every notification of earlier writes reach the client (they
    /// precede the reply to its sync) and logs them, so that none is in
    /// flight when the connection goes.
    async fn flush(&self, trace: &mut Trace, after: usize) {
        let _ = self.client.sync("/").await;
        (self.sleep)(self.options.step_pause).await;
        collect(self.collectors, self.log, trace, after);
    }

    pub(super) async fn disconnect<N: SessionFaults>(
        &mut self,
        faults: &mut N,
        trace: &mut Trace,
        after: usize,
    ) -> Outcome {
        self.flush(trace, after).await;
        faults.cut(self.index).await;
        let state = wait_state(self.client, self.sleep, self.options.fault_wait, |s| !s.is_connected()).await;
        Outcome::Fault {
            state,
            same_session: true,
        }
    }

    /// Lets the client back and waits until it is connected and has every
    /// event its SetWatches produced (they precede the reply to a sync);
    /// those events are recorded as one burst.
    pub(super) async fn reconnect<N: SessionFaults>(
        &mut self,
        faults: &mut N,
        trace: &mut Trace,
        after: usize,
    ) -> Outcome {
        let session = self.client.session_id();
        collect(self.collectors, self.log, trace, after);
        let from = trace.deliveries.len();
        faults.restore(self.index).await;
        let state = wait_state(self.client, self.sleep, self.options.fault_wait, |s| {
            s.is_connected() || s.is_terminal()
        })
        .await;
        if state.is_connected() {
            self.flush(trace, after).await;
        }
        trace.bursts.push((self.index, from, trace.deliveries.len()));
        Outcome::Fault {
            state,
            same_session: self.client.session_id() == session,
        }
    }

    /// Cuts the client off (unless it is already), has the server end its
    /// session, lets it back, and waits until it learns it is expired.
    pub(super) async fn expire<N: SessionFaults>(
        &mut self,
        faults: &mut N,
        trace: &mut Trace,
        after: usize,
        was_cut: bool,
    ) -> Outcome {
        if !was_cut {
            self.disconnect(faults, trace, after).await;
        }
        faults.expire(self.index, self.client.session_id()).await;
        faults.restore(self.index).await;
        let state = wait_state(
            self.client,
            self.sleep,
            self.options.fault_wait,
            SessionState::is_terminal,
        )
        .await;
        Outcome::Fault {
            state,
            same_session: true,
        }
    }
}
