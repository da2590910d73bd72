//! A partitioner on group membership (kazoo's SetPartitioner shape):
//! every client joins the group once and stays; partition p belongs to the
//! member at p mod n of the sorted view, and an owner writes to its
//! partitions with the view's zxid as its ownership epoch. The partitions
//! do not check epochs, so the `fencing` checker sees two owners of one
//! partition as an accepted write with an older epoch after a newer one.
//!
//! Members act only once every member saw the whole group, and only during
//! the fault phase: after the heal a re-joining member and the others'
//! lagging views would race by design of view-based ownership (no recipe
//! can prevent it), which is not the bug under test.

use std::time::Duration;

use madsim::time::Instant;
use zkdst_checker::history::{Op, Value};
use zkdst_recipes::membership::{GroupMember, MemberStatus, Steps};
use zkdst_sim::runtime::SimRuntime;

use super::Env;

const G: &str = "/groups/partitioned";

pub async fn client<S: Steps>(mut env: Env, steps: S) {
    let partitions = env.scenario.workload.partitions.unwrap_or(1);
    let me = format!("m{}", env.id);
    let heal = env.stop - Duration::from_secs(env.scenario.workload.liveness_s);
    let m = GroupMember::join_with_steps(env.connector(), SimRuntime::new(), G, &me, Vec::new(), steps);
    let mut saw_all = false;
    while Instant::now() < heal {
        madsim::time::sleep(Duration::from_millis(200)).await;
        let Some(view) = m.view() else { continue };
        if !saw_all && view.members.len() >= env.clients as usize {
            saw_all = true;
            let n = env.shared.round("partitioner-saw-all");
            env.shared.set_round("partitioner-saw-all", n + 1);
        }
        let go = env.shared.round("partitioner-saw-all") >= env.clients as i64;
        if !go || m.status() != MemberStatus::Joined || view.members.is_empty() {
            continue;
        }
        for p in 0..partitions as usize {
            if view.members[p % view.members.len()] == me {
                let id = env.invoke(
                    None,
                    Op::FencedWrite {
                        resource: format!("partition-{p}"),
                        token: view.zxid,
                    },
                );
                env.ok(id, Value::Unit);
            }
        }
    }
    // Stay in the group until the run ends (leaving would change the
    // others' views, not test anything).
    while env.running() {
        madsim::time::sleep(Duration::from_millis(200)).await;
    }
    m.leave();
}
