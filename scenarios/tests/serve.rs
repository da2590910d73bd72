//! `zkdst serve` with real clients over real 127.0.0.1 sockets: zkdst's
//! own adapter (zookeeper-client on tokio) is served, a client fault
//! reaches its socket, the servers' record judges it, and the arrival log
//! replays the server side bit for bit. And garbage on a socket closes
//! only that connection: the served ensemble loses nothing.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use zkdst_checker::history::{ConnEvent, Event};
use zkdst_real::{RealClient, RealOptions};
use zkdst_recipes::zk::{CreateMode, SessionState, ZkClient};
use zkdst_scenarios::serve::{self, frames::Input, ServeOptions};
use zkdst_scenarios::{Fault, FaultPlan, RunVerdict, Scenario, TimedFault};

static NEVER: AtomicBool = AtomicBool::new(false);

fn scenario() -> Scenario {
    Scenario::parse(
        "name = \"serve-test\"\n\
         [ensemble]\nservers = 3\nclients = 3\ntick_ms = 500\nsession_timeout_ms = 4000\n\
         [workload]\nrecipe = \"lock\"\nduration_s = 4\nliveness_s = 2\n",
        "serve-test.toml",
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// What one real client did: writes acknowledged, and whether its
/// application was told Disconnected.
#[derive(Debug, Default, Clone)]
struct Did {
    written: Vec<String>,
    disconnected: bool,
    errors: Vec<String>,
}

/// Creates nodes under `/c{client}` until `until`, then reads them back.
async fn client(connect: String, client: u32, until: Instant) -> Did {
    let mut did = Did::default();
    let options = RealOptions {
        session_timeout: Duration::from_secs(4),
        connect_timeout: Duration::from_secs(8),
    };
    let zk = match RealClient::connect_with(&connect, options).await {
        Ok(zk) => zk,
        Err(e) => {
            did.errors.push(format!("connect: {e}"));
            return did;
        }
    };
    let mut states = zk.state_watch();
    let disconnected = Arc::new(AtomicBool::new(false));
    let seen = disconnected.clone();
    tokio::spawn(async move {
        loop {
            let s = states.changed().await;
            if s == SessionState::Disconnected {
                seen.store(true, Ordering::SeqCst);
            }
            if s.is_terminal() {
                return;
            }
        }
    });
    let root = format!("/c{client}");
    let _ = zk.create(&root, b"", CreateMode::Persistent).await;
    let mut i = 0;
    while Instant::now() < until {
        let path = format!("{root}/n{i}");
        match zk.create(&path, b"x", CreateMode::Persistent).await {
            Ok(_) => did.written.push(path),
            Err(e) => did.errors.push(format!("create {path}: {e}")),
        }
        i += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    did.disconnected = disconnected.load(Ordering::SeqCst);
    // Nothing acknowledged is lost.
    for p in &did.written {
        match zk.get_data(p).await {
            Ok(_) => {}
            Err(e) => did.errors.push(format!("read back {p}: {e}")),
        }
    }
    zk.close().await;
    did
}

#[test]
fn a_real_client_is_served_faulted_judged_and_replayed() {
    let sc = scenario();
    let plan = FaultPlan {
        faults: vec![TimedFault {
            at_ms: 1500,
            duration_ms: 0,
            fault: Fault::DropConnection { client: 0 },
        }],
        max_ops_per_client: None,
    };
    let opts = ServeOptions {
        port_base: None,
        plan: Some(plan.clone()),
    };
    let dids: Arc<Mutex<Vec<(u32, Did)>>> = Arc::default();
    let worker = Arc::new(Mutex::new(None));
    let o = serve::serve(&sc, 7, &opts, &NEVER, Duration::from_secs(6), |connect, _| {
        let connect = connect.to_vec();
        let dids = dids.clone();
        *worker.lock().unwrap() = Some(std::thread::spawn(move || {
            let rt = runtime();
            let until = Instant::now() + Duration::from_millis(4500);
            let got = rt.block_on(async move {
                let a = tokio::spawn(client(connect[0].clone(), 0, until));
                let b = tokio::spawn(client(connect[1].clone(), 1, until));
                (a.await.unwrap_or_default(), b.await.unwrap_or_default())
            });
            dids.lock().unwrap().extend([(0, got.0), (1, got.1)]);
        }));
    })
    .expect("serves");
    if let Some(w) = worker.lock().unwrap().take() {
        w.join().expect("the clients' thread");
    }
    let dids = dids.lock().unwrap().clone();
    assert_eq!(dids.len(), 2);
    for (c, d) in &dids {
        assert!(
            d.written.len() >= 20,
            "client {c} wrote only {}: {:?}",
            d.written.len(),
            d.errors
        );
        assert!(
            d.errors.iter().all(|e| e.starts_with("create")),
            "client {c} lost an acknowledged write or never connected: {:?}",
            d.errors
        );
    }
    // The fault reached client 0's socket, and only client 0's.
    assert!(dids.iter().any(|(c, d)| *c == 0 && d.disconnected), "{dids:?}");
    assert!(dids.iter().any(|(c, d)| *c == 1 && !d.disconnected), "{dids:?}");
    assert_eq!(o.verdict, RunVerdict::Pass, "{:?}", o.results);
    // The servers' record: both clients' connections, their requests.
    let h = &o.served.history;
    for c in [0, 1] {
        let requests = h
            .events
            .iter()
            .filter(|e| matches!(e, Event::Conn { client: Some(x), event: ConnEvent::Request { .. }, .. } if *x == c))
            .count();
        assert!(requests >= 20, "client {c}: {requests} requests recorded");
    }
    assert!(
        o.served
            .pumped
            .arrivals
            .iter()
            .filter(|a| a.input == Input::Open)
            .count()
            >= 3
    );
    // The server side re-runs from the arrivals, bit for bit.
    let again = serve::replay(&sc, 7, Some(&plan), o.served.pumped.arrivals.clone()).expect("replays");
    assert_eq!(again.served.history.fingerprint(), h.fingerprint());
    assert_eq!(again.served.history.events.len(), h.events.len());
}

/// Bytes a broken client might send as the start of a connection.
fn garbage() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        // Anything at all.
        proptest::collection::vec(any::<u8>(), 0..200),
        // A frame longer than any ZooKeeper accepts (jute.maxbuffer).
        (0x0100_0000u32..=u32::MAX).prop_map(|n| n.to_be_bytes().to_vec()),
        // A negative length.
        (i32::MIN..0).prop_map(|n| n.to_be_bytes().to_vec()),
        // A plausible length, then a truncated or scrambled body.
        (8u32..64, proptest::collection::vec(any::<u8>(), 0..64)).prop_map(|(n, body)| {
            let mut b = n.to_be_bytes().to_vec();
            b.extend(body);
            b
        }),
    ]
}

/// Sends `bytes` on a fresh connection and closes it after `patience`,
/// unless the server closed it first: whether it did.
fn send_garbage(addr: &str, bytes: &[u8], patience: Duration) -> std::io::Result<bool> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_millis(100)))?;
    let _ = s.write_all(bytes);
    let mut buf = [0u8; 512];
    let end = Instant::now() + patience;
    while Instant::now() < end {
        match s.read(&mut buf) {
            Ok(0) => return Ok(true),
            Ok(_) => {}
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(_) => return Ok(true),
        }
    }
    Ok(false)
}

/// A first frame whose length ZooKeeper refuses (negative, or above
/// jute.maxbuffer's default of 1 MiB): it closes the connection at once.
fn refused_length(bytes: &[u8]) -> bool {
    bytes.len() >= 4 && {
        let n = i32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        !(0..=0xfffff).contains(&n)
    }
}

#[test]
fn garbage_on_a_socket_closes_that_connection_only() {
    let sc = scenario();
    let opts = ServeOptions {
        port_base: None,
        plan: Some(FaultPlan::default()),
    };
    let dids: Arc<Mutex<Vec<Did>>> = Arc::default();
    let sent = Arc::new(Mutex::new(0u32));
    let worker = Arc::new(Mutex::new(Vec::new()));
    // Served until both threads are done (at most two minutes).
    static DONE: AtomicBool = AtomicBool::new(false);
    let finished = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let o = serve::serve(&sc, 11, &opts, &DONE, Duration::from_secs(120), |connect, _| {
        let good = connect[0].clone();
        let bad: Vec<String> = connect[2].split(',').map(str::to_string).collect();
        let dids = dids.clone();
        let sent = sent.clone();
        let (f1, f2) = (finished.clone(), finished.clone());
        let done = move |f: &std::sync::atomic::AtomicUsize| {
            if f.fetch_add(1, Ordering::SeqCst) == 1 {
                DONE.store(true, Ordering::SeqCst);
            }
        };
        let done2 = done;
        let mut w = worker.lock().unwrap();
        w.push(std::thread::spawn(move || {
            let until = Instant::now() + Duration::from_millis(4500);
            let d = runtime().block_on(client(good, 0, until));
            dids.lock().unwrap().push(d);
            done(&f1);
        }));
        w.push(std::thread::spawn(move || {
            struct Done<F: Fn()>(F);
            impl<F: Fn()> Drop for Done<F> {
                fn drop(&mut self) {
                    (self.0)()
                }
            }
            // Even if a case fails: the serve must end.
            let _done = Done(move || done2(&f2));
            let mut runner = TestRunner::new(Config {
                cases: 24,
                failure_persistence: None,
                ..Config::default()
            });
            let result = runner.run(&garbage(), |bytes| {
                let addr = &bad[bytes.len() % bad.len()];
                // A refused length is closed at once (a busy machine may
                // take a while to get there); anything else waits for more
                // bytes, and the sender gives up first.
                let refused = refused_length(&bytes);
                let patience = Duration::from_millis(if refused { 5000 } else { 300 });
                let closed =
                    send_garbage(addr, &bytes, patience).map_err(|e| TestCaseError::fail(format!("{addr}: {e}")))?;
                prop_assert!(
                    closed || !refused,
                    "a frame of refused length {:02x?} left the connection open",
                    &bytes[..4]
                );
                *sent.lock().unwrap() += 1;
                Ok(())
            });
            result.expect("every garbage connection ends");
        }));
    })
    .expect("serves");
    for w in worker.lock().unwrap().drain(..) {
        w.join().expect("a test thread");
    }
    assert!(*sent.lock().unwrap() >= 24);
    let d = dids.lock().unwrap()[0].clone();
    assert!(
        d.written.len() >= 20,
        "the good client wrote only {}: {:?}",
        d.written.len(),
        d.errors
    );
    assert!(d.errors.is_empty(), "the good client met errors: {:?}", d.errors);
    assert!(!d.disconnected, "the good client was disconnected");
    assert_eq!(o.verdict, RunVerdict::Pass, "{:?}", o.results);
    assert!(o.served.error.is_none(), "{:?}", o.served.error);
}
