//! Running a recipe across sessions: connect, run until the session ends,
//! connect again — for recipes whose state must outlive one session
//! (group membership, watched values).

use futures::channel::oneshot;
use futures::future::Fuse;
use futures::{select_biased, FutureExt};

use crate::ctx::{Connect, Ctx};
use crate::runtime::Runtime;
use crate::zk::ZkClient;

/// How one session's run ended.
pub enum SessionEnd {
    /// The session expired or closed: connect again.
    Lost,
    /// The owner asked to stop.
    Stopped,
}

/// The stop signal of a background recipe task.
pub type Stop = Fuse<oneshot::Receiver<()>>;

/// Connects (retrying failed connects with the context's backoff), then
/// runs `per_session` on each new session until it reports `Stopped` or the
/// stop signal fires. Closes each session it opened before returning.
pub async fn run_sessions<C, R, K, F, Fut>(
    connect: K,
    rt: R,
    retry: crate::retry::RetryPolicy,
    mut stop: Stop,
    mut per_session: F,
) where
    C: ZkClient,
    R: Runtime,
    K: Connect<C>,
    F: FnMut(Ctx<C, R>, Stop) -> Fut,
    Fut: std::future::Future<Output = (SessionEnd, Stop)>,
{
    let mut attempt = 0u32;
    loop {
        // A stop that already fired wins before connecting: the connect
        // function may open a session as it is called, not as it is polled.
        if (&mut stop).now_or_never().is_some() {
            return;
        }
        let connected = select_biased! {
            _ = stop => return,
            c = connect.connect().fuse() => c,
        };
        let client = match connected {
            Ok(c) => c,
            Err(e) => {
                tracing::debug!(error = %e, "connect failed; retrying");
                select_biased! {
                    _ = stop => return,
                    _ = rt.sleep(retry.delay(attempt)).fuse() => {}
                }
                attempt = attempt.saturating_add(1);
                continue;
            }
        };
        attempt = 0;
        let ctx = Ctx::new(client.clone(), rt.clone()).with_retry(retry);
        let (end, s) = per_session(ctx, stop).await;
        stop = s;
        client.close().await;
        if let SessionEnd::Stopped = end {
            return;
        }
    }
}
