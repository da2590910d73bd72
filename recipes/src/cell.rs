//! A value that background tasks update and callers read or await: the
//! state of a hold, a group view, a watched value.

use std::sync::{Arc, Mutex, MutexGuard};

use futures::channel::oneshot;

struct Inner<T> {
    value: T,
    waiters: Vec<oneshot::Sender<()>>,
}

/// A shared value with change notification (like a watch channel, built on
/// `futures` only so it runs under any executor).
pub struct WatchCell<T> {
    inner: Arc<Mutex<Inner<T>>>,
}

impl<T> Clone for WatchCell<T> {
    fn clone(&self) -> Self {
        WatchCell {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<T: Clone> WatchCell<T> {
    pub fn new(value: T) -> Self {
        WatchCell {
            inner: Arc::new(Mutex::new(Inner {
                value,
                waiters: Vec::new(),
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner<T>> {
        // A panic while holding the lock cannot leave `value` half-written
        // (every update is a plain assignment), so poisoning is ignored.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn get(&self) -> T {
        self.lock().value.clone()
    }

    /// Changes the value with `f`; waiters wake if `f` returns true.
    pub fn update(&self, f: impl FnOnce(&mut T) -> bool) {
        let mut inner = self.lock();
        if f(&mut inner.value) {
            for w in inner.waiters.drain(..) {
                let _ = w.send(());
            }
        }
    }

    pub fn set(&self, value: T) {
        self.update(|v| {
            *v = value;
            true
        });
    }

    /// Waits until `f` maps the value to `Some`, and returns that.
    pub async fn wait_for<U>(&self, f: impl Fn(&T) -> Option<U>) -> U {
        loop {
            let rx = {
                let mut inner = self.lock();
                if let Some(u) = f(&inner.value) {
                    return u;
                }
                let (tx, rx) = oneshot::channel();
                inner.waiters.push(tx);
                rx
            };
            // The sender lives in `inner`, which we keep alive: a cancel
            // cannot happen, and a spurious wake only re-checks.
            let _ = rx.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;
    use futures::FutureExt;

    #[test]
    fn waiter_wakes_on_matching_update() {
        let cell = WatchCell::new(0u32);
        let c2 = cell.clone();
        let mut wait = Box::pin(c2.wait_for(|v| (*v >= 2).then_some(*v)));
        assert!(wait.as_mut().now_or_never().is_none());
        cell.set(1);
        assert!(wait.as_mut().now_or_never().is_none());
        cell.set(2);
        assert_eq!(block_on(wait), 2);
    }
}
