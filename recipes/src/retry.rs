//! Bounded exponential backoff for ConnectionLoss.
//!
//! Only for calls that are idempotent as issued (reads, deletes of our own
//! nodes, creates of fixed names whose NodeExists the caller resolves):
//! a ConnectionLoss may hide an applied write (ZOOKEEPER-22), so retrying a
//! sequential create or a versioned setData blindly duplicates it. Those
//! recipes resolve the ambiguity themselves before retrying.

use std::future::Future;
use std::time::Duration;

use crate::error::{RecipeError, RecipeResult};
use crate::runtime::Clock;
use crate::zk::{ZkError, ZkResult};

/// How often and how patiently to retry an ambiguous failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Delay before the first retry; doubled after each failure.
    pub initial_delay: Duration,
    /// Upper bound of a single delay.
    pub max_delay: Duration,
    /// Attempts in total (the first call included) before giving up.
    pub max_attempts: u32,
}

impl Default for RetryPolicy {
    /// 50 ms doubling up to 2 s, 20 attempts: long enough to ride out a
    /// leader election (~2 s) and a session timeout's worth of partition.
    fn default() -> Self {
        RetryPolicy {
            initial_delay: Duration::from_millis(50),
            max_delay: Duration::from_secs(2),
            max_attempts: 20,
        }
    }
}

impl RetryPolicy {
    /// The delay after the `attempt`-th failure (0-based).
    pub fn delay(&self, attempt: u32) -> Duration {
        let factor = 1u32.checked_shl(attempt.min(31)).unwrap_or(u32::MAX);
        self.initial_delay
            .checked_mul(factor)
            .unwrap_or(self.max_delay)
            .min(self.max_delay)
    }
}

/// True for failures worth retrying: an ambiguous ConnectionLoss, or
/// SessionMoved — the server refused the request (not applied) because the
/// session was moving to another server while it was in flight; the
/// connection is re-established and the same call may simply be reissued.
pub fn retryable(e: &ZkError) -> bool {
    e.is_ambiguous() || matches!(e, ZkError::SessionMoved)
}

/// Runs `op` until it succeeds, fails unambiguously, or the attempts are
/// exhausted (then the last ConnectionLoss is returned). Session loss maps to
/// [`RecipeError::SessionLost`].
pub async fn retry<K, T, F, Fut>(clock: &K, policy: RetryPolicy, mut op: F) -> RecipeResult<T>
where
    K: Clock,
    F: FnMut() -> Fut,
    Fut: Future<Output = ZkResult<T>>,
{
    let mut attempt = 0;
    loop {
        match op().await {
            Ok(v) => return Ok(v),
            Err(e) if retryable(&e) && attempt + 1 < policy.max_attempts => {
                clock.sleep(policy.delay(attempt)).await;
                attempt += 1;
            }
            Err(e) => return Err(RecipeError::from_zk(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delay_doubles_and_caps() {
        let p = RetryPolicy::default();
        assert_eq!(p.delay(0), Duration::from_millis(50));
        assert_eq!(p.delay(1), Duration::from_millis(100));
        assert_eq!(p.delay(5), Duration::from_millis(1600));
        assert_eq!(p.delay(6), Duration::from_secs(2));
        assert_eq!(p.delay(40), Duration::from_secs(2));
    }
}
