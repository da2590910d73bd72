//! Forwarding `zookeeper-client`'s watchers into the interface's
//! channel-based watches, one small tokio task per watch.

use std::time::Duration;

use tokio::runtime::Handle;
use zookeeper_client as zkc;

use super::convert;
use crate::zk::{OneshotWatch, PersistentWatch, SessionState, StateWatchSender};

/// How often a forwarding task checks whether its watch handle was dropped.
const CANCEL_POLL: Duration = Duration::from_millis(500);

/// A one-shot watch fed by `watcher`: its node event, or the terminal session
/// event (`Expired`, `Closed`, `AuthFailed`) that `zookeeper-client` delivers
/// to every outstanding watcher. Dropping the `OneshotWatch` drops the
/// watcher (within `CANCEL_POLL`), which removes it from the client.
pub(crate) fn oneshot(rt: &Handle, watcher: zkc::OneshotWatcher) -> OneshotWatch {
    let (tx, rx) = OneshotWatch::channel();
    rt.spawn(async move {
        let changed = watcher.changed();
        tokio::pin!(changed);
        let mut poll = tokio::time::interval(CANCEL_POLL);
        loop {
            tokio::select! {
                biased;
                event = &mut changed => {
                    tx.send(convert::event(event));
                    return;
                }
                _ = poll.tick() => {
                    if tx.is_canceled() {
                        return;
                    }
                }
            }
        }
    });
    rx
}

/// A persistent watch fed by `watcher` until the session ends (the terminal
/// session event is forwarded, then the task stops: `zookeeper-client`
/// panics when polled after it) or the `PersistentWatch` is dropped.
pub(crate) fn persistent(rt: &Handle, mut watcher: zkc::PersistentWatcher) -> PersistentWatch {
    let (tx, rx) = PersistentWatch::channel();
    rt.spawn(async move {
        let mut poll = tokio::time::interval(CANCEL_POLL);
        loop {
            tokio::select! {
                biased;
                event = watcher.changed() => {
                    let event = convert::event(event);
                    let terminal = event.is_session_event() && event.state.is_terminal();
                    if !tx.send(event) || terminal {
                        return;
                    }
                }
                _ = poll.tick() => {
                    if tx.is_closed() {
                        return;
                    }
                }
            }
        }
    });
    rx
}

/// Session state subscribers of one client, fed by one task reading
/// `zookeeper-client`'s state watcher.
#[derive(Debug)]
pub(crate) struct StateFanout {
    pub(crate) last: SessionState,
    pub(crate) subscribers: Vec<StateWatchSender>,
}

impl StateFanout {
    pub(crate) fn new(now: SessionState) -> Self {
        StateFanout {
            last: now,
            subscribers: Vec::new(),
        }
    }

    /// Records a transition and passes it to every live subscriber. Nothing
    /// moves after a terminal state.
    pub(crate) fn publish(&mut self, state: SessionState) {
        if self.last.is_terminal() || state == self.last {
            return;
        }
        self.last = state;
        self.subscribers.retain(|s| s.send(state));
    }
}
