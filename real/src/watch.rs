//! Forwarding `zookeeper-client`'s watchers into the interface's
//! channel-based watches, one small task per watch (spawned through
//! `asyncs`, as zookeeper-client spawns its own).

use std::time::Duration;

use futures::future::{select, Either};
use futures::StreamExt;
use zookeeper_client as zkc;

use crate::convert;
use zkdst_recipes::zk::{OneshotWatch, PersistentWatch};

/// How often a persistent watch's task checks whether its handle was dropped.
const CANCEL_POLL: Duration = Duration::from_millis(500);

/// A one-shot watch fed by `watcher`: its node event, or the terminal session
/// event (`Expired`, `Closed`, `AuthFailed`) that `zookeeper-client` delivers
/// to every outstanding watcher. Dropping the `OneshotWatch` drops the
/// watcher at once, which removes it from the client.
pub(crate) fn oneshot(watcher: zkc::OneshotWatcher) -> OneshotWatch {
    let (mut tx, rx) = OneshotWatch::channel();
    asyncs::spawn(async move {
        let event = {
            let changed = std::pin::pin!(watcher.changed());
            let canceled = std::pin::pin!(tx.canceled());
            match select(changed, canceled).await {
                Either::Left((event, _)) => event,
                Either::Right(_) => return,
            }
        };
        tx.send(convert::event(event));
    });
    rx
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
