//! Byte-level conformance: the same request frames go to a real ZooKeeper
//! 3.8 (over TCP, loopback) and to the simulated server's wire port; the
//! response frames must match once what must differ is normalised — zxids
//! (an order-preserving map, first seen first), ctime/mtime, session ids
//! and passwords, and the order of children (a HashSet on the server).
//!
//! One session sends one request at a time and reads every frame up to its
//! reply, so notifications the request fires are compared in place.
//! `ZKDST_BYTES_CASES` sets the number of generated sequences (default 150).
#![cfg(feature = "real")]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use futures::io::{AsyncReadExt, AsyncWriteExt};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use zkdst_conformance::{RealServer, ServerOptions, SimOptions};
use zkdst_sim::cluster::Cluster;
use zkdst_sim::recorder::Recorder;
use zkdst_sim::runner::run_seed;
use zkdst_sim::wire::convert::open_acl;
use zkdst_sim::wire::{WireStream, WIRE_PORT};
use zkdst_wire::records::multi::{ReadOp, WriteOp};
use zkdst_wire::{
    decode_connect_response, decode_server_message, encode_connect_request, encode_request, peek_xid, AddWatchRequest,
    ClientRequest, ConnectRequest, CreateRequest, FrameDecoder, Limits, MultiResult, PathRequest, RemoveWatchesRequest,
    Request, Response, ServerMessage, SetDataRequest, Stat, VersionedPath, WatchRequest,
};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn connect_frame() -> Vec<u8> {
    encode_connect_request(&ConnectRequest::new_session(6000))
}

/// A generated sequence: the requests of one session under `root`.
fn sequence(seed: u64, root: &str) -> Vec<ClientRequest> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let names = ["a", "b", "a/c", "a/c/d", "e"];
    let path = |rng: &mut ChaCha8Rng| -> String {
        if rng.gen_ratio(1, 25) {
            return format!("{root}/bad/");
        }
        format!("{root}/{}", names[rng.gen_range(0..names.len())])
    };
    let mut out = vec![ClientRequest {
        xid: 1,
        request: Request::Create2(CreateRequest {
            path: root.to_string(),
            data: Some(b"root".to_vec()),
            acl: open_acl(),
            flags: 0,
        }),
    }];
    let steps = rng.gen_range(5..30);
    for i in 0..steps {
        let xid = i + 2;
        let version = [-1, 0, 1][rng.gen_range(0..3)];
        let data = Some(vec![b'v'; rng.gen_range(0..4)]);
        let request = match rng.gen_range(0..19) {
            0 | 1 => Request::Create2(CreateRequest {
                path: path(&mut rng),
                data,
                acl: open_acl(),
                flags: rng.gen_range(0..4),
            }),
            2 => Request::CreateContainer(CreateRequest {
                path: path(&mut rng),
                data,
                acl: open_acl(),
                flags: 4,
            }),
            3 => Request::Delete(VersionedPath {
                path: path(&mut rng),
                version,
            }),
            4 => Request::Exists(WatchRequest {
                path: path(&mut rng),
                watch: rng.gen(),
            }),
            5 => Request::GetData(WatchRequest {
                path: path(&mut rng),
                watch: rng.gen(),
            }),
            6 => Request::SetData(SetDataRequest {
                path: path(&mut rng),
                data,
                version,
            }),
            7 => Request::GetChildren2(WatchRequest {
                path: path(&mut rng),
                watch: rng.gen(),
            }),
            8 => Request::GetChildren(WatchRequest {
                path: path(&mut rng),
                watch: rng.gen(),
            }),
            9 => Request::Sync(PathRequest { path: path(&mut rng) }),
            10 => {
                let n = rng.gen_range(1..4);
                Request::Multi(
                    (0..n)
                        .map(|_| match rng.gen_range(0..4) {
                            0 => WriteOp::Create2(CreateRequest {
                                path: path(&mut rng),
                                data: Some(b"m".to_vec()),
                                acl: open_acl(),
                                flags: rng.gen_range(0..2),
                            }),
                            1 => WriteOp::Delete(VersionedPath {
                                path: path(&mut rng),
                                version: -1,
                            }),
                            2 => WriteOp::SetData(SetDataRequest {
                                path: path(&mut rng),
                                data: Some(b"x".to_vec()),
                                version: -1,
                            }),
                            _ => WriteOp::Check(VersionedPath {
                                path: path(&mut rng),
                                version: [-1, 0][rng.gen_range(0..2)],
                            }),
                        })
                        .collect(),
                )
            }
            11 => Request::MultiRead(
                (0..rng.gen_range(1..3))
                    .map(|_| {
                        let w = WatchRequest {
                            path: path(&mut rng),
                            watch: false,
                        };
                        if rng.gen() {
                            ReadOp::GetData(w)
                        } else {
                            ReadOp::GetChildren(w)
                        }
                    })
                    .collect(),
            ),
            12 => Request::GetAllChildrenNumber(PathRequest { path: path(&mut rng) }),
            13 => Request::GetEphemerals(PathRequest { path: root.to_string() }),
            14 => Request::AddWatch(AddWatchRequest {
                path: path(&mut rng),
                mode: rng.gen_range(0..2),
            }),
            15 => Request::CheckWatches(RemoveWatchesRequest {
                path: path(&mut rng),
                watcher_type: rng.gen_range(1..4),
            }),
            16 => Request::RemoveWatches(RemoveWatchesRequest {
                path: path(&mut rng),
                watcher_type: rng.gen_range(1..4),
            }),
            17 => Request::GetAcl(PathRequest { path: path(&mut rng) }),
            _ => Request::Create(CreateRequest {
                path: path(&mut rng),
                data,
                acl: open_acl(),
                flags: rng.gen_range(0..2),
            }),
        };
        out.push(ClientRequest { xid, request });
    }
    out
}

/// What one side answered: the negotiated timeout, then per request the
/// frames up to and including its reply (or "EOF").
#[derive(Debug, Default)]
struct Exchange {
    timeout: i32,
    steps: Vec<Vec<Vec<u8>>>,
}

impl Exchange {
    /// Starts the frames of the next request.
    fn begin(&mut self) {
        self.steps.push(Vec::new());
    }

    /// One more frame for the current request (None: the stream ended).
    /// Whether the request is done: answered, or no answer will come.
    fn take(&mut self, xid: i32, frame: Option<Vec<u8>>) -> bool {
        let step = self.steps.last_mut().expect("begin first");
        match frame {
            None => {
                step.push(b"EOF".to_vec());
                true
            }
            Some(f) => {
                let done = peek_xid(&f) == Some(xid);
                step.push(f);
                done
            }
        }
    }

    fn ended(&self) -> bool {
        self.steps.last().and_then(|s| s.last()).is_some_and(|f| f == b"EOF")
    }
}

fn next_real(s: &mut TcpStream, dec: &mut FrameDecoder) -> Option<Vec<u8>> {
    loop {
        if let Ok(Some(f)) = dec.next_frame() {
            return Some(f);
        }
        let mut buf = [0u8; 8192];
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(n) => dec.push(&buf[..n]),
        }
    }
}

fn run_real(server: &RealServer, reqs: &[ClientRequest]) -> Exchange {
    // A server that has just started may close a first connection while it
    // is not yet serving: retry the handshake for a while.
    let mut attempt = 0;
    let (mut s, mut dec, hello) = loop {
        attempt += 1;
        let mut s = TcpStream::connect(server.addr()).expect("connect to the real server");
        s.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
        let mut dec = FrameDecoder::new(Limits::default());
        s.write_all(&connect_frame()).expect("write");
        if let Some(f) = next_real(&mut s, &mut dec) {
            break (s, dec, decode_connect_response(&f).expect("ConnectResponse decodes"));
        }
        assert!(attempt < 50, "the real server never answered a ConnectRequest");
        std::thread::sleep(Duration::from_millis(200));
    };
    let mut ex = Exchange {
        timeout: hello.time_out,
        steps: Vec::new(),
    };
    for r in reqs {
        ex.begin();
        let sent = s.write_all(&encode_request(r)).is_ok();
        while !ex.take(r.xid, sent.then(|| next_real(&mut s, &mut dec)).flatten()) {}
        if ex.ended() {
            break;
        }
    }
    let _ = s.write_all(&encode_request(&ClientRequest {
        xid: 9999,
        request: Request::CloseSession,
    }));
    ex
}

fn run_sim(seed: u64, reqs: Vec<ClientRequest>) -> Exchange {
    let opts = SimOptions::default();
    run_seed(seed, Some(Duration::from_secs(600)), move || async move {
        let mut cfg = opts.ensemble();
        cfg.wire = true;
        cfg.tick_ms = u64::from(ServerOptions::default().tick_ms);
        let mut c = Cluster::start(cfg, Recorder::new(), seed);
        c.wait_for_leader(Duration::from_secs(30)).await.expect("leader");
        let ex = c
            .client_node(1)
            .spawn(async move {
                let mut s = WireStream::connect("zk1", WIRE_PORT).await.expect("connect");
                let mut dec = FrameDecoder::new(Limits::default());
                async fn next(s: &mut WireStream, dec: &mut FrameDecoder) -> Option<Vec<u8>> {
                    loop {
                        if let Ok(Some(f)) = dec.next_frame() {
                            return Some(f);
                        }
                        let mut buf = [0u8; 8192];
                        let read = madsim::time::timeout(Duration::from_secs(5), s.read(&mut buf)).await;
                        match read {
                            Ok(Ok(n)) if n > 0 => dec.push(&buf[..n]),
                            _ => return None,
                        }
                    }
                }
                s.write_all(&connect_frame()).await.expect("write");
                let hello =
                    decode_connect_response(&next(&mut s, &mut dec).await.expect("ConnectResponse")).expect("decodes");
                let mut ex = Exchange {
                    timeout: hello.time_out,
                    steps: Vec::new(),
                };
                for r in &reqs {
                    ex.begin();
                    let sent = s.write_all(&encode_request(r)).await.is_ok();
                    loop {
                        let frame = if sent { next(&mut s, &mut dec).await } else { None };
                        if ex.take(r.xid, frame) {
                            break;
                        }
                    }
                    if ex.ended() {
                        break;
                    }
                }
                ex
            })
            .await
            .expect("client node");
        c.shutdown();
        ex
    })
    .expect("the simulation runs")
}

/// Zxids renamed in order of first appearance (both sides see them rise).
#[derive(Default)]
struct Zxids(Vec<i64>);

impl Zxids {
    fn map(&mut self, z: i64) -> i64 {
        if z <= 0 {
            return z;
        }
        match self.0.iter().position(|x| *x == z) {
            Some(i) => i as i64 + 1,
            None => {
                self.0.push(z);
                self.0.len() as i64
            }
        }
    }
}

fn stat(s: &Stat, z: &mut Zxids) -> String {
    format!(
        "stat(c{} m{} p{} v{} cv{} av{} eph{} len{} kids{})",
        z.map(s.czxid),
        z.map(s.mzxid),
        z.map(s.pzxid),
        s.version,
        s.cversion,
        s.aversion,
        s.ephemeral_owner != 0,
        s.data_length,
        s.num_children
    )
}

fn sorted(v: &[String]) -> Vec<String> {
    let mut v = v.to_vec();
    v.sort();
    v
}

fn result(r: &MultiResult, z: &mut Zxids) -> String {
    match r {
        MultiResult::Create2(c) => format!("create2 {} {}", c.path, stat(&c.stat, z)),
        MultiResult::SetData { stat: s } => format!("setData {}", stat(s, z)),
        MultiResult::GetData(g) => format!("data {:?} {}", g.data, stat(&g.stat, z)),
        MultiResult::GetChildren { children } => format!("children {:?}", sorted(children)),
        other => format!("{other:?}"),
    }
}

/// A frame as the comparison sees it.
fn normal(frame: &[u8], reqs: &[ClientRequest], z: &mut Zxids) -> String {
    if frame == b"EOF" {
        return "EOF".into();
    }
    let op = |xid: i32| reqs.iter().find(|r| r.xid == xid).map(|r| r.opcode());
    let msg = match decode_server_message(frame, op) {
        Ok(m) => m,
        Err(e) => return format!("undecodable: {e}"),
    };
    match msg {
        ServerMessage::Notification { zxid, event } => format!("event zxid{zxid} {event:?}"),
        ServerMessage::Reply(r) => {
            let body = match &r.result {
                Err(code) => format!("err {code:?}"),
                Ok(Response::Create2(c)) => format!("create2 {} {}", c.path, stat(&c.stat, z)),
                Ok(Response::Exists { stat: s }) | Ok(Response::SetData { stat: s }) => stat(s, z),
                Ok(Response::GetData(g)) => format!("data {:?} {}", g.data, stat(&g.stat, z)),
                Ok(Response::GetAcl(g)) => format!("acl {:?} {}", g.acl, stat(&g.stat, z)),
                Ok(Response::GetChildren { children }) => format!("children {:?}", sorted(children)),
                Ok(Response::GetChildren2(g)) => format!("children {:?} {}", sorted(&g.children), stat(&g.stat, z)),
                Ok(Response::GetEphemerals { ephemerals }) => format!("ephemerals {:?}", sorted(ephemerals)),
                Ok(Response::Multi(rs)) | Ok(Response::MultiRead(rs)) => {
                    rs.iter().map(|x| result(x, z)).collect::<Vec<_>>().join("; ")
                }
                Ok(other) => format!("{other:?}"),
            };
            // A read's header carries the server's last zxid, which counts
            // transactions outside this session (the reaper, earlier
            // sessions closing): only a write's own zxid is compared.
            let zxid = match op(r.xid) {
                Some(o) if o.is_write() => z.map(r.zxid).to_string(),
                _ => "-".into(),
            };
            format!("xid{} zxid{zxid} {body}", r.xid)
        }
    }
}

fn describe(r: &ClientRequest) -> String {
    format!("xid{} {:?}", r.xid, r.request)
}

#[test]
fn response_bytes_match_a_real_zookeeper() {
    let _g = serial();
    zkdst_conformance::server::ensure_installed().unwrap_or_else(|e| panic!("installing ZooKeeper: {e}"));
    let server = RealServer::start(ServerOptions::default()).unwrap_or_else(|e| panic!("starting ZooKeeper: {e}"));
    let cases: u64 = std::env::var("ZKDST_BYTES_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(150);
    let base: u64 = std::env::var("ZKDST_BYTES_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut frames = 0;
    for case in base..base + cases {
        let root = format!("/bytes-{case}");
        let reqs = sequence(case, &root);
        let real = run_real(&server, &reqs);
        let sim = run_sim(case, reqs.clone());
        assert_eq!(real.timeout, sim.timeout, "case {case}: negotiated session timeout");
        let (mut zr, mut zs) = (Zxids::default(), Zxids::default());
        for (i, r) in reqs.iter().enumerate() {
            let (Some(a), Some(b)) = (real.steps.get(i), sim.steps.get(i)) else {
                assert_eq!(
                    real.steps.len(),
                    sim.steps.len(),
                    "case {case}: one side stopped early at step {i}"
                );
                break;
            };
            let a: Vec<String> = a.iter().map(|f| normal(f, &reqs, &mut zr)).collect();
            let b: Vec<String> = b.iter().map(|f| normal(f, &reqs, &mut zs)).collect();
            frames += a.len();
            assert_eq!(
                a,
                b,
                "case {case} (ZKDST_BYTES_SEED={case} ZKDST_BYTES_CASES=1), request {}\nrequests so far:\n{}",
                describe(r),
                reqs[..=i].iter().map(describe).collect::<Vec<_>>().join("\n")
            );
        }
    }
    eprintln!("byte-level conformance: {cases} sequences, {frames} response frames compared");
}
