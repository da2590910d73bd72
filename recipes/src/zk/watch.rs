//! Watches as values: a one-shot watch is a future-like handle that yields
//! the single event it was set for; a persistent watch yields events until
//! dropped; a state watch yields every session state transition.
//!
//! Both client implementations (simulated and real) produce these, so recipes
//! wait on them the same way everywhere. They are built on `futures`
//! channels, which are runtime-agnostic and deterministic under madsim.

use std::future::Future;

use futures::channel::{mpsc, oneshot};
use futures::StreamExt;

use super::event::{SessionState, WatchedEvent};

/// A one-shot watch set by `exists`, `get_data` or `get_children`.
///
/// `changed` resolves with the node event, or with a session event when the
/// session ends (`Expired`, `Closed`) before the node changed. Across a
/// reconnect the client re-registers the watch (ZooKeeper's SetWatches), so
/// it survives a Disconnected period — with ZooKeeper's documented miss: a
/// node created and deleted while disconnected is not reported to an
/// `exists` watch.
#[derive(Debug)]
pub struct OneshotWatch {
    rx: oneshot::Receiver<WatchedEvent>,
}

/// The client's end of a one-shot watch.
#[derive(Debug)]
pub struct OneshotWatchSender {
    tx: oneshot::Sender<WatchedEvent>,
}

impl OneshotWatch {
    pub fn channel() -> (OneshotWatchSender, OneshotWatch) {
        let (tx, rx) = oneshot::channel();
        (OneshotWatchSender { tx }, OneshotWatch { rx })
    }

    /// Polls for the event by hand: `Ready(None)` if the client dropped the
    /// watch without an event (it is shutting down).
    pub fn poll_event(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Option<WatchedEvent>> {
        std::pin::Pin::new(&mut self.rx).poll(cx).map(|r| r.ok())
    }

    /// Waits for the event. If the client is dropped first, reports `Closed`.
    pub async fn changed(self) -> WatchedEvent {
        self.rx
            .await
            .unwrap_or_else(|_| WatchedEvent::session(SessionState::Closed))
    }
}

impl OneshotWatchSender {
    /// Delivers the event; false if the watch handle was dropped.
    pub fn send(self, event: WatchedEvent) -> bool {
        self.tx.send(event).is_ok()
    }
    pub fn is_canceled(&self) -> bool {
        self.tx.is_canceled()
    }
    /// Resolves once the watch handle is dropped.
    pub async fn canceled(&mut self) {
        self.tx.cancellation().await
    }
    /// [`canceled`](Self::canceled), polled by hand.
    pub fn poll_canceled(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        self.tx.poll_canceled(cx)
    }
}

/// A persistent (or persistent-recursive) watch set by `add_watch`. Dropping
/// it stops local delivery (the server-side watch stays until the session
/// ends, as with ZooKeeper's `removeWatches(local=true)`).
#[derive(Debug)]
pub struct PersistentWatch {
    rx: mpsc::UnboundedReceiver<WatchedEvent>,
    ended: bool,
}

/// The client's end of a persistent watch.
#[derive(Debug, Clone)]
pub struct PersistentWatchSender {
    tx: mpsc::UnboundedSender<WatchedEvent>,
}

impl PersistentWatch {
    pub fn channel() -> (PersistentWatchSender, PersistentWatch) {
        let (tx, rx) = mpsc::unbounded();
        (PersistentWatchSender { tx }, PersistentWatch { rx, ended: false })
    }

    /// The next event. After the session ends this keeps returning the
    /// terminal session event.
    pub async fn changed(&mut self) -> WatchedEvent {
        if !self.ended {
            if let Some(e) = self.rx.next().await {
                if e.is_session_event() && e.state.is_terminal() {
                    self.ended = true;
                }
                return e;
            }
            self.ended = true;
        }
        WatchedEvent::session(SessionState::Closed)
    }
}

impl PersistentWatchSender {
    pub fn send(&self, event: WatchedEvent) -> bool {
        self.tx.unbounded_send(event).is_ok()
    }
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}

/// Session state transitions of one client handle, in order, none skipped.
#[derive(Debug)]
pub struct StateWatch {
    rx: mpsc::UnboundedReceiver<SessionState>,
    last: SessionState,
}

/// The client's end of a state watch.
#[derive(Debug, Clone)]
pub struct StateWatchSender {
    tx: mpsc::UnboundedSender<SessionState>,
}

impl StateWatch {
    /// A watch whose current state is `now`.
    pub fn channel(now: SessionState) -> (StateWatchSender, StateWatch) {
        let (tx, rx) = mpsc::unbounded();
        (StateWatchSender { tx }, StateWatch { rx, last: now })
    }

    /// The state as of the last transition this watch has returned.
    pub fn state(&self) -> SessionState {
        self.last
    }

    /// Takes every transition already queued, without waiting, and returns
    /// the state as of the newest: a watch subscribed long ago (when an
    /// acquire began) may still hold a Disconnected its client has since
    /// recovered from.
    pub fn catch_up(&mut self) -> SessionState {
        while !self.last.is_terminal() {
            match self.rx.try_recv() {
                Ok(s) => self.last = s,
                Err(mpsc::TryRecvError::Closed) => self.last = SessionState::Closed,
                Err(mpsc::TryRecvError::Empty) => break,
            }
        }
        self.last
    }

    /// The next transition. A terminal state repeats for ever; a dropped
    /// client reads as `Closed`.
    pub async fn changed(&mut self) -> SessionState {
        if self.last.is_terminal() {
            return self.last;
        }
        self.last = self.rx.next().await.unwrap_or(SessionState::Closed);
        self.last
    }
}

impl StateWatchSender {
    pub fn send(&self, state: SessionState) -> bool {
        self.tx.unbounded_send(state).is_ok()
    }
}

/// A client handle's session state and its [`StateWatch`] subscribers: what
/// every `ZkClient` implementation keeps behind `state` and `state_watch`.
#[derive(Debug)]
pub struct StateFanout {
    last: SessionState,
    subscribers: Vec<StateWatchSender>,
}

impl StateFanout {
    pub fn new(now: SessionState) -> Self {
        StateFanout {
            last: now,
            subscribers: Vec::new(),
        }
    }

    pub fn state(&self) -> SessionState {
        self.last
    }

    /// A watch starting from the current state (nothing is kept for it once
    /// the state is terminal: no transition follows).
    pub fn subscribe(&mut self) -> StateWatch {
        let (tx, w) = StateWatch::channel(self.last);
        if !self.last.is_terminal() {
            self.subscribers.push(tx);
        }
        w
    }

    /// Records a transition and passes it to every live subscriber; false
    /// if nothing moved (the same state, or any state after a terminal one).
    pub fn publish(&mut self, state: SessionState) -> bool {
        if self.last.is_terminal() || state == self.last {
            return false;
        }
        self.last = state;
        self.subscribers.retain(|s| s.send(state));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catch_up_takes_every_queued_transition() {
        let mut fanout = StateFanout::new(SessionState::SyncConnected);
        let mut w = fanout.subscribe();
        fanout.publish(SessionState::Disconnected);
        fanout.publish(SessionState::SyncConnected);
        assert_eq!(w.state(), SessionState::SyncConnected);
        assert_eq!(w.catch_up(), SessionState::SyncConnected);
        fanout.publish(SessionState::Disconnected);
        assert_eq!(w.catch_up(), SessionState::Disconnected);
        // Nothing queued: the state stays.
        assert_eq!(w.catch_up(), SessionState::Disconnected);
        fanout.publish(SessionState::Expired);
        fanout.publish(SessionState::SyncConnected);
        assert_eq!(w.catch_up(), SessionState::Expired);
    }
}
