//! Watch events taken out of the client the moment it delivers them, so
//! that the trace holds each client's events in delivery order.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use futures::stream::{BoxStream, StreamExt};
use zkdst_recipes::zk::WatchedEvent;

use super::Trace;

/// Pumps every collector (in case an event arrived without a wake) and
/// moves newly logged deliveries into the trace.
pub(super) fn collect(collectors: &[Arc<Collector>], log: &DeliveryLog, trace: &mut Trace, after: usize) {
    for c in collectors {
        c.pump();
    }
    let new: Vec<(usize, WatchedEvent)> = std::mem::take(&mut *log.lock().unwrap_or_else(|e| e.into_inner()));
    for (i, event) in new {
        let w = &mut trace.watches[i];
        if w.event.is_none() {
            w.event = Some(event.clone());
            w.seen_after = Some(after);
        }
        w.events.push(event);
        trace.deliveries.push(i);
    }
}

pub(super) fn oneshot(w: zkdst_recipes::zk::OneshotWatch) -> BoxStream<'static, WatchedEvent> {
    futures::stream::once(w.changed()).boxed()
}

/// A persistent watch's events until (and including) a terminal session
/// event.
pub(super) fn persistent_events(w: zkdst_recipes::zk::PersistentWatch) -> BoxStream<'static, WatchedEvent> {
    futures::stream::unfold(Some(w), |w| async move {
        let mut w = w?;
        let e = w.changed().await;
        let end = e.is_session_event() && e.state.is_terminal();
        Some((e, (!end).then_some(w)))
    })
    .boxed()
}

pub(super) type DeliveryLog = Arc<Mutex<Vec<(usize, WatchedEvent)>>>;

/// One watch's events, taken out of the client's channel the moment the
/// client delivers them: the collector is its own stream's waker, and when
/// woken (inside the client's send) it drains the stream into the run's
/// delivery log. So the log holds every client's events in the order that
/// client delivered them, across watches.
pub struct Collector {
    pub(super) watch: usize,
    pub(super) stream: Mutex<Option<BoxStream<'static, WatchedEvent>>>,
    /// Set by a wake that found the stream busy: the holder polls again.
    pub(super) again: AtomicBool,
    pub(super) log: DeliveryLog,
}

impl Collector {
    pub(super) fn pump(self: &Arc<Self>) {
        self.again.store(true, Ordering::SeqCst);
        loop {
            let Ok(mut stream) = self.stream.try_lock() else {
                // The holder sees `again` and polls once more.
                return;
            };
            let waker = Waker::from(self.clone());
            let mut cx = Context::from_waker(&waker);
            while self.again.swap(false, Ordering::SeqCst) {
                while let Some(s) = stream.as_mut() {
                    match s.poll_next_unpin(&mut cx) {
                        Poll::Ready(Some(e)) => {
                            self.log.lock().unwrap_or_else(|p| p.into_inner()).push((self.watch, e))
                        }
                        Poll::Ready(None) => *stream = None,
                        Poll::Pending => break,
                    }
                }
            }
            drop(stream);
            if !self.again.load(Ordering::SeqCst) {
                return;
            }
        }
    }
}

impl Wake for Collector {
    fn wake(self: Arc<Self>) {
        self.pump();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.pump();
    }
}
