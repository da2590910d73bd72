//! Forwarding `zookeeper-client`'s watchers into the interface's
//! channel-based watches: one task per session for its one-shot watches,
//! one per persistent watch (spawned through `asyncs`, as zookeeper-client
//! spawns its own).

use std::time::Duration;

use futures::channel::mpsc;
use futures::future::{select, BoxFuture, Either};
use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt};
use zookeeper_client as zkc;

use crate::convert;
use zkdst_recipes::zk::{OneshotWatch, PersistentWatch};

/// How often a persistent watch's task checks whether its handle was dropped.
const CANCEL_POLL: Duration = Duration::from_millis(500);

/// Forwards a session's one-shot watchers, all on one task: its
/// `FuturesUnordered` polls them in the order they were woken, so their
/// events reach the watches in the order zookeeper-client delivered them.
/// (A task per watcher would leave that order to the runtime's scheduler;
/// madsim's picks among ready tasks at random.)
#[derive(Clone)]
pub(crate) struct Forwarder {
    tx: mpsc::UnboundedSender<BoxFuture<'static, ()>>,
}

impl Forwarder {
    /// Starts the forwarding task (on the `asyncs` spawner).
    pub(crate) fn start() -> Forwarder {
        let (tx, mut rx) = mpsc::unbounded::<BoxFuture<'static, ()>>();
        asyncs::spawn(async move {
            let mut running = FuturesUnordered::new();
            loop {
                if running.is_empty() {
                    match rx.next().await {
                        Some(f) => running.push(f),
                        None => return,
                    }
                    continue;
                }
                match select(rx.next(), running.next()).await {
                    Either::Left((Some(f), _)) => running.push(f),
                    // The session's handles are gone: finish what is set.
                    Either::Left((None, _)) => {
                        while running.next().await.is_some() {}
                        return;
                    }
                    Either::Right(_) => {}
                }
            }
        });
        Forwarder { tx }
    }

    /// A one-shot watch fed by `watcher`: its node event, or the terminal
    /// session event (`Expired`, `Closed`, `AuthFailed`) that
    /// zookeeper-client delivers to every outstanding watcher. Dropping the
    /// `OneshotWatch` drops the watcher at once, which removes it from the
    /// client.
    pub(crate) fn oneshot(&self, watcher: zkc::OneshotWatcher) -> OneshotWatch {
        let (mut tx, rx) = OneshotWatch::channel();
        let forward = async move {
            let event = {
                let changed = std::pin::pin!(watcher.changed());
                let canceled = std::pin::pin!(tx.canceled());
                match select(changed, canceled).await {
                    Either::Left((event, _)) => event,
                    Either::Right(_) => return,
                }
            };
            tx.send(convert::event(event));
        };
        // The task ends only when every handle is gone; then so is `rx`'s owner.
        let _ = self.tx.unbounded_send(forward.boxed());
        rx
    }
}

/// A persistent watch fed by `watcher` until the session ends (the terminal
/// session event is forwarded, then the task stops: `zookeeper-client`
/// panics when polled after it) or the `PersistentWatch` is dropped.
pub(crate) fn persistent(mut watcher: zkc::PersistentWatcher) -> PersistentWatch {
    let (tx, rx) = PersistentWatch::channel();
    asyncs::spawn(async move {
        let mut poll = async_io::Timer::interval(CANCEL_POLL);
        loop {
            let event = {
                let changed = std::pin::pin!(watcher.changed());
                match select(changed, poll.next()).await {
                    Either::Left((event, _)) => Some(event),
                    Either::Right(_) => None,
                }
            };
            match event {
                Some(event) => {
                    let event = convert::event(event);
                    let terminal = event.is_session_event() && event.state.is_terminal();
                    if !tx.send(event) || terminal {
                        return;
                    }
                }
                None if tx.is_closed() => return,
                None => {}
            }
        }
    });
    rx
}
