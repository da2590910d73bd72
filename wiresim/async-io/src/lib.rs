//! async-io's `Timer` on madsim's virtual time.
//!
//! async-io 2.x runs a reactor thread and times on the wall clock; madsim
//! refuses system threads and replays only its own time. This stand-in
//! keeps async-io's `Timer` API (one-shot and periodic, as a `Future` and
//! a `Stream`) over `madsim::time::sleep_until`. Inside a madsim runtime
//! `std::time::Instant` is virtual, so the instants callers pass and get
//! back are the simulation's. Nothing else of async-io is provided: only
//! `Timer` is used by zookeeper-client.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_core::Stream;

/// A future or stream that fires at a point in (virtual) time.
pub struct Timer {
    /// Next firing; None for a timer that never fires.
    when: Option<Instant>,
    /// For a periodic timer, the interval.
    period: Option<Duration>,
    sleep: Option<Pin<Box<madsim::time::Sleep>>>,
}

impl fmt::Debug for Timer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Timer")
            .field("when", &self.when)
            .field("period", &self.period)
            .finish()
    }
}

impl Timer {
    /// A timer that never fires.
    pub fn never() -> Timer {
        Timer {
            when: None,
            period: None,
            sleep: None,
        }
    }

    pub fn after(duration: Duration) -> Timer {
        match Instant::now().checked_add(duration) {
            Some(at) => Timer::at(at),
            None => Timer::never(),
        }
    }

    pub fn at(instant: Instant) -> Timer {
        Timer {
            when: Some(instant),
            period: None,
            sleep: None,
        }
    }

    pub fn interval(period: Duration) -> Timer {
        match Instant::now().checked_add(period) {
            Some(at) => Timer::interval_at(at, period),
            None => Timer::never(),
        }
    }

    pub fn interval_at(start: Instant, period: Duration) -> Timer {
        Timer {
            when: Some(start),
            period: Some(period),
            sleep: None,
        }
    }

    /// Whether this timer will ever fire.
    pub fn will_fire(&self) -> bool {
        self.when.is_some()
    }

    pub fn set_after(&mut self, duration: Duration) {
        *self = Timer::after(duration);
    }

    pub fn set_at(&mut self, instant: Instant) {
        *self = Timer::at(instant);
    }

    pub fn set_interval(&mut self, period: Duration) {
        *self = Timer::interval(period);
    }

    pub fn set_interval_at(&mut self, start: Instant, period: Duration) {
        *self = Timer::interval_at(start, period);
    }

    /// Makes the timer never fire.
    pub fn clear(&mut self) {
        *self = Timer::never();
    }

    fn poll_fire(&mut self, cx: &mut Context<'_>) -> Poll<Option<Instant>> {
        let Some(when) = self.when else {
            return Poll::Pending;
        };
        if Instant::now() < when {
            let sleep = self
                .sleep
                .get_or_insert_with(|| Box::pin(madsim::time::sleep_until(when)));
            if sleep.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
        }
        self.sleep = None;
        self.when = match self.period {
            Some(p) => when.checked_add(p),
            None => None,
        };
        Poll::Ready(Some(when))
    }
}

impl Future for Timer {
    type Output = Instant;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Instant> {
        match self.get_mut().poll_fire(cx) {
            Poll::Ready(Some(at)) => Poll::Ready(at),
            _ => Poll::Pending,
        }
    }
}

impl Stream for Timer {
    type Item = Instant;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Instant>> {
        self.get_mut().poll_fire(cx)
    }
}
