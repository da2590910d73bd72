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
/// thread). Seeds `fastrand` (endpoint shuffling and reconnect jitter) from
/// `seed`, so the library's choices replay with the seed.
pub fn enter(seed: u64) {
    fastrand::seed(seed ^ 0x7a6b_6473_7477_6972);
    zkdst_sim::wire::stream::reset_registry();
    // The scope lasts for the thread, which is the seed's: never restored.
    std::mem::forget(spawns_core::enter(&SPAWNER));
}
