//! What zkdst tells an external workload (its environment; see
//! scenarios/src/serve/external.rs), and one client's session.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use zkdst_history::{SessionId, SessionState};
use zkdst_real::{RealClient, RealOptions, TokioRuntime};
use zkdst_recipes::zk::{StateWatch, ZkClient};
use zkdst_recipes::{Ctx, RetryPolicy};

use crate::record::{monotonic_ns, Record};

pub type RealCtx = Ctx<RealClient, TokioRuntime>;

pub struct Env {
    pub connect: Vec<String>,
    t0_ns: u64,
    stop_ms: u64,
    pub seed: u64,
    pub session_timeout: Duration,
    pub record: Record,
}

fn var(name: &str) -> Result<String, String> {
    std::env::var(name).map_err(|_| format!("{name} is not set (run me through zkdst: [workload] external)"))
}

fn num(name: &str) -> Result<u64, String> {
    var(name)?.parse().map_err(|e| format!("{name}: {e}"))
}

impl Env {
    pub fn from_env() -> Result<Env, String> {
        let clients = num("ZKDST_CLIENTS")?;
        let connect = (0..clients)
            .map(|i| var(&format!("ZKDST_CONNECT_{i}")))
            .collect::<Result<Vec<_>, _>>()?;
        let path = var("ZKDST_RECORD")?;
        Ok(Env {
            connect,
            t0_ns: num("ZKDST_T0_NS")?,
            stop_ms: num("ZKDST_STOP_MS")?,
            seed: num("ZKDST_SEED").unwrap_or(0),
            session_timeout: Duration::from_millis(num("ZKDST_SESSION_TIMEOUT_MS").unwrap_or(4000)),
            record: Record::create(&path).map_err(|e| format!("{path}: {e}"))?,
        })
    }

    /// Time left before no operation may start.
    pub fn left(&self) -> Duration {
        let now = monotonic_ns().saturating_sub(self.t0_ns);
        Duration::from_nanos((self.stop_ms * 1_000_000).saturating_sub(now))
    }

    pub fn running(&self) -> bool {
        !self.left().is_zero()
    }
}

/// One session of application client `client`, its state changes recorded.
pub struct Session {
    pub zk: RealClient,
    pub ctx: RealCtx,
    env: Arc<Env>,
    client: u32,
    /// The state watch, and whether a terminal state was recorded.
    states: Arc<Mutex<(StateWatch, bool)>>,
}

impl Session {
    /// Connects, retrying while the run lasts.
    pub async fn connect(env: &Arc<Env>, client: u32) -> Option<Session> {
        let options = RealOptions {
            session_timeout: env.session_timeout,
            connect_timeout: 2 * env.session_timeout,
        };
        while env.running() {
            match RealClient::connect_with(&env.connect[client as usize], options.clone()).await {
                Ok(zk) => {
                    env.record.session(client, zk.session_id(), SessionState::SyncConnected);
                    let ctx = Ctx::new(zk.clone(), TokioRuntime::new()).with_retry(RetryPolicy::default());
                    let s = Session {
                        states: Arc::new(Mutex::new((zk.state_watch(), false))),
                        zk,
                        ctx,
                        env: env.clone(),
                        client,
                    };
                    // Transitions are recorded within a millisecond, and
                    // before any result the workload records (`sync`).
                    let (states, env2, sid) = (s.states.clone(), env.clone(), s.id());
                    tokio::spawn(async move {
                        while !drain(&states, &env2, client, sid) {
                            tokio::time::sleep(Duration::from_millis(1)).await;
                        }
                    });
                    return Some(s);
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
        None
    }

    /// Records the state transitions the client has made so far: call
    /// before recording what a call returned, so that a result that says
    /// "session lost" follows the Expired it learned of.
    pub fn sync(&self) {
        drain(&self.states, &self.env, self.client, self.id());
    }

    pub fn ended(&self) -> bool {
        self.zk.state().is_terminal()
    }

    pub fn id(&self) -> zkdst_history::SessionId {
        self.zk.session_id()
    }
}

/// Records every queued transition; true once a terminal one was.
fn drain(states: &Mutex<(StateWatch, bool)>, env: &Env, client: u32, sid: SessionId) -> bool {
    let mut g = states.lock().unwrap_or_else(|e| e.into_inner());
    let (w, done) = &mut *g;
    while !*done {
        match w.changed().now_or_never() {
            Some(s) => {
                env.record.session(client, sid, s);
                *done = s.is_terminal();
            }
            None => break,
        }
    }
    *done
}
