//! `zkdst-client bench CONNECTS SECONDS SESSIONS`: how many operations per
//! second a served ensemble (or a real one) sustains from external
//! clients. CONNECTS is one connect string, or several separated by `;`
//! (a served ensemble's per-client strings, used round robin). Each
//! session loops set_data then get_data on its own node; prints the
//! totals and latency percentiles as one line.

use std::time::{Duration, Instant};

use zkdst_real::{RealClient, RealOptions};
use zkdst_recipes::zk::{CreateMode, ZkClient};

pub async fn run(connects: &str, seconds: u64, sessions: usize) -> Result<String, String> {
    let strings: Vec<String> = connects.split(';').map(str::to_string).collect();
    let options = RealOptions {
        session_timeout: Duration::from_secs(10),
        connect_timeout: Duration::from_secs(20),
    };
    let mut tasks = Vec::new();
    let end = Instant::now() + Duration::from_secs(seconds);
    for i in 0..sessions {
        let connect = strings[i % strings.len()].clone();
        let options = options.clone();
        tasks.push(tokio::spawn(async move {
            let zk = RealClient::connect_with(&connect, options)
                .await
                .map_err(|e| e.to_string())?;
            let path = format!("/bench-{}-{i}", std::process::id());
            let _ = zk.create(&path, b"0", CreateMode::Ephemeral).await;
            let mut lat = Vec::new();
            let mut errors = 0u64;
            while Instant::now() < end {
                let t = Instant::now();
                let ok = zk.set_data(&path, b"1", -1).await.is_ok() && zk.get_data(&path).await.is_ok();
                if ok {
                    lat.push(t.elapsed());
                } else {
                    errors += 1;
                }
            }
            zk.close().await;
            Ok::<_, String>((lat, errors))
        }));
    }
    let mut lat = Vec::new();
    let mut errors = 0;
    for t in tasks {
        let (l, e) = t.await.map_err(|e| e.to_string())??;
        lat.extend(l);
        errors += e;
    }
    lat.sort();
    let pct = |p: f64| {
        lat.get(((lat.len() as f64 * p) as usize).min(lat.len().saturating_sub(1)))
            .copied()
            .unwrap_or_default()
    };
    let ops = lat.len() as f64 * 2.0;
    Ok(format!(
        "ops {ops:.0} in {seconds} s: {:.0} ops/s (set+get pairs; {sessions} sessions), pair latency p50 {:.1} ms p99 {:.1} ms, errors {errors}",
        ops / seconds as f64,
        pct(0.5).as_secs_f64() * 1e3,
        pct(0.99).as_secs_f64() * 1e3
    ))
}
