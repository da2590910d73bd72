//! A client library's one-shot watch, handed to its owner the instant the
//! library delivers the event: the relay is the waker the library wakes,
//! and it polls the library's watch right there (no task in between), so a
//! session's events are recorded, and reach their owners' wakers, in the
//! order the library delivered them. A task per watch would leave that
//! order to madsim's scheduler, which picks among ready tasks at random.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use zkdst_recipes::zk::{OneshotWatch, OneshotWatchSender, WatchedEvent};

type Deliver = Box<dyn FnOnce(&WatchedEvent) + Send>;

struct Relay {
    /// The library's watch and the owner's channel, until one of them ends.
    slot: Mutex<Option<(OneshotWatch, OneshotWatchSender, Deliver)>>,
    /// Woken while a pump was running (a future that wakes itself).
    again: AtomicBool,
}

impl Wake for Relay {
    fn wake(self: Arc<Self>) {
        self.pump();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.pump();
    }
}

impl Relay {
    fn pump(self: &Arc<Self>) {
        loop {
            let Ok(mut slot) = self.slot.try_lock() else {
                self.again.store(true, Ordering::SeqCst);
                return;
            };
            self.again.store(false, Ordering::SeqCst);
            let Some((event, tx, _)) = slot.as_mut() else { return };
            let waker = Waker::from(self.clone());
            let mut cx = Context::from_waker(&waker);
            // The owner dropped its watch: drop the library's too (the
            // library may then tell the server, as RemoveWatches).
            if tx.poll_canceled(&mut cx).is_ready() {
                *slot = None;
                return;
            }
            match event.poll_event(&mut cx) {
                Poll::Ready(Some(e)) => {
                    let (_, tx, deliver) = slot.take().expect("checked above");
                    drop(slot);
                    deliver(&e);
                    tx.send(e);
                    return;
                }
                // The library dropped the watch unanswered (it is shutting
                // down): so does the relay, and the owner hears `Closed`.
                Poll::Ready(None) => {
                    *slot = None;
                    return;
                }
                Poll::Pending => {}
            }
            drop(slot);
            if !self.again.load(Ordering::SeqCst) {
                return;
            }
        }
    }
}

/// The owner's end of `watch`, the library's; `deliver` runs with the
/// event as the library delivers it, before the owner is woken.
pub(super) fn relay(watch: OneshotWatch, deliver: impl FnOnce(&WatchedEvent) + Send + 'static) -> OneshotWatch {
    let (tx, rx) = OneshotWatch::channel();
    let relay = Arc::new(Relay {
        slot: Mutex::new(Some((watch, tx, Box::new(deliver)))),
        again: AtomicBool::new(false),
    });
    relay.pump();
    rx
}
