//! `zkdst-client lock|election|queue`: zkdst's own recipes as an external workload —
//! zookeeper-client on tokio over real sockets, against the ensemble
//! `zkdst serve` runs (scenarios/served/*.toml). It checks the served
//! path: the same recipes pass their simulated scenarios, so a failure
//! here is the server side's or the bridge's, not the recipe's.

mod bench;
mod election;
mod env;
mod lock;
mod queue;
mod record;

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use zkdst_history::{Op, SessionId, Value};

use env::Env;
use record::Record;

/// The protected resource: rejects a token older than one it accepted.
#[derive(Default)]
pub struct Resource {
    max: Mutex<BTreeMap<String, i64>>,
}

impl Resource {
    /// A write with `token` (taking 1–3 ms), recorded as `op`.
    pub async fn write(&self, rec: &Record, client: u32, session: SessionId, name: &str, token: i64, op: Op) {
        let id = rec.invoke(client, session, op);
        tokio::time::sleep(Duration::from_millis(2)).await;
        let accepted = {
            let mut m = self.max.lock().unwrap_or_else(|e| e.into_inner());
            let cur = m.entry(name.to_string()).or_insert(i64::MIN);
            let ok = token >= *cur;
            if ok {
                *cur = token;
            }
            ok
        };
        let value = if accepted {
            Value::Unit
        } else {
            Value::Error {
                code: "StaleToken".into(),
                results: Vec::new(),
            }
        };
        rec.ok(client, id, value);
    }
}

/// A small seeded generator (xorshift): pacing only.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64, client: u32) -> Rng {
        Rng(
            (seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (u64::from(client) + 1).wrapping_mul(0xbf58_476d_1ce4_e5b9))
                | 1,
        )
    }

    pub fn between(&mut self, lo: u64, hi: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        lo + self.0 % (hi - lo + 1)
    }
}

fn main() -> ExitCode {
    let recipe = std::env::args().nth(1).unwrap_or_default();
    if recipe == "bench" {
        return bench_main();
    }
    if !matches!(recipe.as_str(), "lock" | "election" | "queue") {
        eprintln!("usage: zkdst-client {{lock|election|queue}} (run by zkdst: [workload] external)");
        return ExitCode::from(3);
    }
    let env = match Env::from_env() {
        Ok(e) => Arc::new(e),
        Err(e) => {
            eprintln!("zkdst-client: {e}");
            return ExitCode::from(3);
        }
    };
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("zkdst-client: no tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let resource = Arc::new(Resource::default());
    rt.block_on(async {
        let mut tasks = Vec::new();
        for i in 0..env.connect.len() as u32 {
            let (env, resource) = (env.clone(), resource.clone());
            tasks.push(match recipe.as_str() {
                "lock" => tokio::spawn(lock::client(env, i, resource)),
                "queue" => tokio::spawn(queue::client(env, i)),
                _ => tokio::spawn(election::client(env, i, resource)),
            });
        }
        for t in tasks {
            let _ = t.await;
        }
    });
    env.record.flush();
    ExitCode::SUCCESS
}

fn bench_main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(2).collect();
    let (Some(connects), Some(Ok(seconds)), Some(Ok(sessions))) = (
        args.first(),
        args.get(1).map(|s| s.parse::<u64>()),
        args.get(2).map(|s| s.parse::<usize>()),
    ) else {
        eprintln!("usage: zkdst-client bench CONNECTS SECONDS SESSIONS");
        return ExitCode::from(3);
    };
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("zkdst-client: no tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(bench::run(connects, seconds, sessions)) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("zkdst-client bench: {e}");
            ExitCode::FAILURE
        }
    }
}
