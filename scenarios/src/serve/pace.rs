//! Paces simulated time to the wall clock: one simulated second per real
//! second, so real clients' timeouts and the ensemble's agree.
//!
//! madsim answers `clock_gettime` with virtual time on the simulation's
//! thread; the real monotonic clock is read with the raw system call.

use std::time::Duration;

fn real_now() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec for the kernel to fill in.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_clock_gettime,
            libc::CLOCK_MONOTONIC,
            &mut ts as *mut libc::timespec,
        )
    };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Holds the simulation back to the wall clock, and measures how far it
/// ever fell behind it.
#[derive(Debug)]
pub struct Pacer {
    start: Duration,
    /// The worst lag of simulated behind real time seen.
    pub max_lag: Duration,
}

impl Pacer {
    /// Real time starts counting now, at simulated time zero.
    pub fn start() -> Pacer {
        Pacer {
            start: real_now(),
            max_lag: Duration::ZERO,
        }
    }

    /// Blocks until real time reaches `sim` (time since the start); when
    /// real time is already past it, records the lag instead.
    pub fn wait_until(&mut self, sim: Duration) {
        let real = real_now().saturating_sub(self.start);
        if sim > real {
            std::thread::sleep(sim - real);
        } else {
            self.max_lag = self.max_lag.max(real - sim);
        }
    }

    /// The monotonic clock's reading at the start, ns: what a client's
    /// `CLOCK_MONOTONIC` read at simulated time zero.
    pub fn start_ns(&self) -> u64 {
        self.start.as_nanos() as u64
    }

    /// Real time since the start.
    pub fn elapsed(&self) -> Duration {
        real_now().saturating_sub(self.start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_raw_clock_moves_forward() {
        let a = real_now();
        std::thread::sleep(Duration::from_millis(2));
        assert!(real_now() > a);
    }
}
