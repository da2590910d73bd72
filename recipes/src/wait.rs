//! Waiting on a node watch and the session at the same time.
//!
//! A waiter that only awaits its watch hangs if the watch is never re-armed
//! after a reconnect (kazoo #170, CURATOR-623); one that only awaits the
//! session misses the node. Every blocking recipe waits on both, and treats
//! a reconnect as "re-read and re-arm".

use std::future::Future;
use std::pin::pin;

use futures::{select_biased, FutureExt};

use crate::zk::{OneshotWatch, SessionState, StateWatch, WatchedEvent};

/// Why a wait ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Woken {
    /// The watched node changed.
    Node(WatchedEvent),
    /// The session reconnected (or a non-terminal session event arrived):
    /// re-read, the watch may have been lost.
    Reconnected,
    /// The session expired or was closed.
    SessionLost,
}

/// Waits for `watch` to fire or for the session to reconnect or end.
/// Disconnected alone does not end the wait: the watch survives it.
pub async fn watch_or_session(watch: OneshotWatch, states: &mut StateWatch) -> Woken {
    event_or_session(watch.changed(), states).await
}

/// Like [`watch_or_session`] for any future yielding a watch event (e.g.
/// the first of several watches).
pub async fn event_or_session(event: impl Future<Output = WatchedEvent>, states: &mut StateWatch) -> Woken {
    let mut node = pin!(event.fuse());
    loop {
        select_biased! {
            ev = node => {
                return if !ev.is_session_event() {
                    Woken::Node(ev)
                } else if ev.state.is_terminal() {
                    Woken::SessionLost
                } else {
                    Woken::Reconnected
                };
            }
            s = states.changed().fuse() => match s {
                SessionState::Disconnected => continue,
                s if s.is_terminal() => return Woken::SessionLost,
                _ => return Woken::Reconnected,
            },
        }
    }
}

/// Polls an optional future; an absent one never completes. For futures
/// that come and go between iterations of a `select_biased!` loop.
pub async fn maybe<F: Future + Unpin>(f: &mut Option<F>) -> F::Output {
    match f {
        Some(f) => f.await,
        None => std::future::pending().await,
    }
}
