//! The lock holder that distrusts a dropped connection (`on_disconnect =
//! "new-session"`, CURATOR-696's application): it opens a new session,
//! acquires the lock on it at once, and closes the old handle (dropping its
//! guard) a second later — so for a while the old session and its lock node
//! still exist while the new session contends.

use std::time::Duration;

use futures::{select_biased, FutureExt};
use zkdst_checker::history::{Op, OpId};
use zkdst_recipes::zk::{SessionState, StateWatch, ZkClient};
use zkdst_recipes::RecipeResult;
use zkdst_sim::client::AnyClient;

use super::contend::{Contend, MakeLock};
use super::{Env, SimCtx};

/// Holds for one hold time; true if the connection dropped meanwhile.
pub async fn hold_unless_disconnected(env: &mut Env, states: &mut StateWatch) -> bool {
    let ms = env.between(env.scenario.workload.hold_ms).max(1);
    sleep_unless_disconnected(states, Duration::from_millis(ms)).await
}

/// Sleeps for `d`; true (at once) if the connection dropped meanwhile.
pub async fn sleep_unless_disconnected(states: &mut StateWatch, d: Duration) -> bool {
    let hold = madsim::time::sleep(d).fuse();
    futures::pin_mut!(hold);
    loop {
        select_biased! {
            _ = hold => return false,
            st = states.changed().fuse() => if st == SessionState::Disconnected || st.is_terminal() {
                return true;
            },
        }
    }
}

/// Replaces the handle with a new session, hands the old handle and its
/// guard to a task that closes them a second later, and starts the next
/// acquire on the new session (recorded; its result is carried into the
/// workload loop).
pub async fn reacquire_on_new_session<L: Contend>(
    env: &mut Env,
    zk: &mut AnyClient,
    ctx: &mut SimCtx,
    guard: L::Held,
    make: MakeLock<L>,
    dir: &str,
) -> Option<(OpId, RecipeResult<Option<L::Held>>)> {
    let old = zk.clone();
    *zk = env.connect();
    *ctx = ctx.with_client(zk.clone());
    drop(madsim::task::spawn(async move {
        madsim::time::sleep(Duration::from_secs(1)).await;
        old.close().await;
        drop(guard);
    }));
    if !zk.wait_connected(Duration::from_secs(30)).await || !env.running() {
        return None;
    }
    let lock = make(ctx.clone(), env.id);
    let id = env.invoke(
        Some(zk),
        Op::Acquire {
            lock: dir.into(),
            shared: false,
        },
    );
    Some((id, lock.acquire().await.map(Some)))
}
