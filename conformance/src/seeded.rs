//! How the differential suites seed themselves: a run's seed (from
//! `ZKDST_CONFORMANCE_SEED` to replay one, else the clock, printed by the
//! caller), the proptest runner it drives, and the madsim seed of a
//! generated sequence.

use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use crate::ops::Step;

/// A non-negative integer from the environment variable `name`.
pub fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// `ZKDST_CONFORMANCE_SEED` when set (a replay), else a fresh seed from
/// the clock.
pub fn run_seed() -> u64 {
    env_u64("ZKDST_CONFORMANCE_SEED").unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
    })
}

/// A proptest runner whose generation and shrinking follow `seed` alone
/// (ChaCha, no failure persistence).
pub fn seeded_runner(seed: u64, cases: u32, max_shrink_iters: u32) -> TestRunner {
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    TestRunner::new_with_rng(
        Config {
            cases,
            max_shrink_iters,
            failure_persistence: None,
            ..Config::default()
        },
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes),
    )
}

/// A deterministic madsim seed for a sequence (the same steps, the same
/// simulated run — also while shrinking).
pub fn sim_seed(steps: &[Step]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    format!("{steps:?}").hash(&mut h);
    h.finish()
}
