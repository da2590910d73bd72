//! Per-simulation setup for code that uses zookeeper-client.

use spawns_core::{Spawn, Task};

/// Spawns zookeeper-client's tasks (`asyncs::spawn`) onto madsim, on the
/// node of the task that spawns them: a paused or killed client node stops
/// its library's session task too.
struct MadsimSpawner;

impl Spawn for MadsimSpawner {
    fn spawn(&self, task: Task) {
        drop(madsim::task::spawn(Box::into_pin(task.future)));
    }
}

static SPAWNER: MadsimSpawner = MadsimSpawner;

/// Prepares this thread's simulation for zookeeper-client: call it first
/// inside the madsim runtime of each seed (each seed runs on a fresh
/// thread). `fastrand` (endpoint shuffling, reconnect jitter) otherwise
/// seeds itself from the thread id and the clock; here it is seeded from
/// madsim's RNG, so the library's choices are part of the seed's one random
/// stream and replay with it.
pub fn enter() {
    use madsim::rand::Rng;
    fastrand::seed(madsim::rand::thread_rng().gen());
    zkdst_sim::wire::stream::reset_registry();
    // The scope lasts for the thread, which is the seed's: never restored.
    std::mem::forget(spawns_core::enter(&SPAWNER));
}
