//! The simulated servers speak ZooKeeper's wire protocol: a raw jute client
//! (the `zkdst-wire` codec over a `WireStream`) talks to the ensemble and
//! sees what a 3.8 server sends — the handshake, pipelined requests before
//! the ConnectResponse, replies in order with their xids, notifications
//! with zxid -1, pings, failed multis, the refusal of a bad password, and
//! the transport faults.

use std::time::Duration;

use futures::io::{AsyncReadExt, AsyncWriteExt};
use rand::Rng;
use zkdst_sim::cluster::{Cluster, EnsembleConfig};
use zkdst_sim::recorder::Recorder;
use zkdst_sim::runner::run_seed;
use zkdst_sim::wire::convert::open_acl;
use zkdst_sim::wire::{session_passwd, WireStream, WIRE_PORT};
use zkdst_wire::records::multi::WriteOp;
use zkdst_wire::{
    decode_connect_response, decode_server_message, encode_connect_request, encode_request, ClientRequest,
    ConnectRequest, ConnectResponse, CreateRequest, ErrorCode, FrameDecoder, Limits, MultiResult, OpCode, PathRequest,
    RemoveWatchesRequest, Request, Response, ServerMessage, SetDataRequest, VersionedPath, WatchRequest,
};

fn cfg() -> EnsembleConfig {
    EnsembleConfig {
        tick_ms: 500,
        wire: true,
        ..Default::default()
    }
}

fn create(xid: i32, path: &str, data: &[u8], flags: i32) -> ClientRequest {
    ClientRequest {
        xid,
        request: Request::Create2(CreateRequest {
            path: path.into(),
            data: Some(data.to_vec()),
            acl: open_acl(),
            flags,
        }),
    }
}

/// A minimal jute client: frames out, frames in, opcodes looked up by xid.
struct Raw {
    s: WireStream,
    dec: FrameDecoder,
    sent: Vec<(i32, OpCode)>,
}

impl Raw {
    async fn open(server: &str) -> std::io::Result<Raw> {
        Ok(Raw {
            s: WireStream::connect(server, WIRE_PORT).await?,
            dec: FrameDecoder::new(Limits::default()),
            sent: Vec::new(),
        })
    }

    async fn connect(&mut self, session_id: i64, passwd: Vec<u8>) {
        let req = ConnectRequest {
            session_id,
            passwd,
            ..ConnectRequest::new_session(6000)
        };
        self.s.write_all(&encode_connect_request(&req)).await.unwrap();
    }

    async fn send(&mut self, r: ClientRequest) {
        self.sent.push((r.xid, r.opcode()));
        self.s.write_all(&encode_request(&r)).await.unwrap();
    }

    /// The next frame's payload: None at EOF or a reset, an error for bytes
    /// that do not frame (streams the test itself corrupted).
    async fn next(&mut self) -> Option<Result<Vec<u8>, zkdst_wire::WireError>> {
        loop {
            match self.dec.next_frame() {
                Ok(Some(f)) => return Some(Ok(f)),
                Err(e) => return Some(Err(e)),
                Ok(None) => {}
            }
            let mut buf = [0u8; 4096];
            match self.s.read(&mut buf).await {
                Ok(0) | Err(_) => return None,
                Ok(n) => self.dec.push(&buf[..n]),
            }
        }
    }

    /// The next frame's payload, or None at EOF/reset.
    async fn frame(&mut self) -> Option<Vec<u8>> {
        self.next().await.map(|f| f.expect("server frames decode"))
    }

    async fn connect_response(&mut self) -> ConnectResponse {
        decode_connect_response(&self.frame().await.expect("a ConnectResponse")).expect("decodes")
    }

    async fn message(&mut self) -> Option<ServerMessage> {
        let f = self.frame().await?;
        let sent = self.sent.clone();
        Some(
            decode_server_message(&f, |xid| sent.iter().rev().find(|(x, _)| *x == xid).map(|(_, op)| *op))
                .expect("server message decodes"),
        )
    }

    async fn reply(&mut self) -> (i32, Result<Response, ErrorCode>) {
        loop {
            match self.message().await.expect("a reply") {
                ServerMessage::Reply(r) => return (r.xid, r.result),
                ServerMessage::Notification { .. } => continue,
            }
        }
    }
}

fn run(name: &str, seeds: u64, f: fn(u64) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>) {
    for seed in 0..seeds {
        run_seed(seed, Some(Duration::from_secs(600)), move || f(seed)).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

/// A wire ensemble under `seed` whose servers all serve (which implies
/// an established leader).
async fn serving(seed: u64) -> Cluster {
    let c = Cluster::start(cfg(), Recorder::new(), seed);
    assert!(
        c.wait_serving(Duration::from_secs(30)).await,
        "servers never all served"
    );
    c
}

async fn handshake_and_requests(seed: u64) {
    let mut c = serving(seed).await;
    let node = c.client_node(1);
    node.spawn(async move {
        let mut a = Raw::open("zk1").await.expect("connect");
        a.connect(0, vec![0; 16]).await;
        // Pipelined before the ConnectResponse: held, then answered in order.
        a.send(create(1, "/a", b"v0", 0)).await;
        a.send(ClientRequest {
            xid: 2,
            request: Request::GetData(WatchRequest {
                path: "/a".into(),
                watch: true,
            }),
        })
        .await;
        let hello = a.connect_response().await;
        assert!(hello.session_id != 0 && hello.time_out > 0);
        assert_eq!(hello.passwd, session_passwd(hello.session_id));
        let (x1, r1) = a.reply().await;
        assert_eq!(x1, 1);
        assert!(
            matches!(r1, Ok(Response::Create2(ref c)) if c.path == "/a" && c.stat.version == 0),
            "{r1:?}"
        );
        let (x2, r2) = a.reply().await;
        assert_eq!(x2, 2);
        assert!(
            matches!(r2, Ok(Response::GetData(ref g)) if g.data.as_deref() == Some(&b"v0"[..])),
            "{r2:?}"
        );

        // A second session changes /a: the first gets the notification, zxid -1.
        let mut b = Raw::open("zk2").await.expect("connect");
        b.connect(0, vec![0; 16]).await;
        b.connect_response().await;
        b.send(ClientRequest {
            xid: 1,
            request: Request::SetData(SetDataRequest {
                path: "/a".into(),
                data: Some(b"v1".to_vec()),
                version: 0,
            }),
        })
        .await;
        assert!(matches!(b.reply().await, (1, Ok(Response::SetData { .. }))));
        match a.message().await.expect("a notification") {
            ServerMessage::Notification { zxid, event } => {
                assert_eq!(zxid, -1);
                assert_eq!(event.path, "/a");
                assert_eq!(event.event_type, zkdst_wire::EventType::NodeDataChanged);
            }
            other => panic!("expected a notification, got {other:?}"),
        }

        // Replies keep request order, a ping included.
        a.send(create(3, "/a/x", b"", 0)).await;
        a.send(ClientRequest::ping()).await;
        a.send(ClientRequest {
            xid: 4,
            request: Request::GetAllChildrenNumber(PathRequest { path: "/a".into() }),
        })
        .await;
        assert!(matches!(a.reply().await, (3, Ok(Response::Create2(_)))));
        assert!(matches!(a.reply().await, (-2, Ok(Response::Ping))));
        assert!(matches!(
            a.reply().await,
            (4, Ok(Response::GetAllChildrenNumber { total_number: 1 }))
        ));

        // A failed multi: a success at the header, the results say why.
        a.send(ClientRequest {
            xid: 5,
            request: Request::Multi(vec![
                WriteOp::Create2(CreateRequest {
                    path: "/m".into(),
                    data: None,
                    acl: open_acl(),
                    flags: 0,
                }),
                WriteOp::Check(VersionedPath {
                    path: "/a".into(),
                    version: 7,
                }),
            ]),
        })
        .await;
        let (x5, r5) = a.reply().await;
        assert_eq!(x5, 5);
        assert_eq!(
            r5,
            Ok(Response::Multi(vec![
                MultiResult::Error(ErrorCode::Ok),
                MultiResult::Error(ErrorCode::BadVersion),
            ]))
        );
        // Errors travel in the header; unmodelled ACLs are refused loudly.
        a.send(ClientRequest {
            xid: 6,
            request: Request::Delete(VersionedPath {
                path: "/nope".into(),
                version: -1,
            }),
        })
        .await;
        assert_eq!(a.reply().await, (6, Err(ErrorCode::NoNode)));
        a.send(ClientRequest {
            xid: 7,
            request: Request::Create2(CreateRequest {
                path: "/acl".into(),
                data: None,
                acl: Vec::new(),
                flags: 0,
            }),
        })
        .await;
        assert_eq!(a.reply().await, (7, Err(ErrorCode::InvalidAcl)));
        a.send(ClientRequest {
            xid: 8,
            request: Request::GetEphemerals(PathRequest { path: "/".into() }),
        })
        .await;
        assert_eq!(a.reply().await, (8, Ok(Response::GetEphemerals { ephemerals: vec![] })));

        // A reconnect with the wrong password: timeOut 0, session 0, zeros, close.
        let mut bad = Raw::open("zk3").await.expect("connect");
        bad.connect(hello.session_id, vec![1; 16]).await;
        let refused = bad.connect_response().await;
        assert_eq!((refused.time_out, refused.session_id), (0, 0));
        assert_eq!(refused.passwd, vec![0; 16]);
        assert!(bad.frame().await.is_none(), "the server closes after refusing");

        // The right password moves the session; a write on the old
        // connection is SessionMoved, which the server answers by closing.
        let mut moved = Raw::open("zk3").await.expect("connect");
        moved.connect(hello.session_id, hello.passwd.clone()).await;
        let again = moved.connect_response().await;
        assert_eq!(again.session_id, hello.session_id);
        a.send(create(10, "/stale", b"", 0)).await;
        assert!(a.frame().await.is_none(), "the old connection is closed");

        // closeSession: reply, then EOF.
        moved
            .send(ClientRequest {
                xid: 9,
                request: Request::CloseSession,
            })
            .await;
        assert_eq!(moved.reply().await, (9, Ok(Response::CloseSession)));
        assert!(moved.frame().await.is_none());
    })
    .await
    .expect("client node");
    c.shutdown();
}

#[test]
fn a_raw_jute_client_gets_what_a_3_8_server_sends() {
    run("handshake", 5, |s| Box::pin(handshake_and_requests(s)));
}

/// A session's requests apply in order, also those its connection answers
/// itself: a RemoveWatches queued behind a sync removes the watch set
/// before it, never the one a later exists sets (found by zookeeper-client's
/// lock recipe under `client = "wire"`: the core applied the exists as soon
/// as the sync let it, and the RemoveWatches ran after).
async fn own_requests_keep_their_place(seed: u64) {
    let mut c = serving(seed).await;
    let node = c.client_node(1);
    node.spawn(async move {
        let watch = |xid, path: &str| ClientRequest {
            xid,
            request: Request::Exists(WatchRequest {
                path: path.into(),
                watch: true,
            }),
        };
        let mut a = Raw::open("zk2").await.expect("connect");
        a.connect(0, vec![0; 16]).await;
        a.connect_response().await;
        a.send(create(1, "/w", b"", 0)).await;
        assert!(matches!(a.reply().await, (1, Ok(Response::Create2(_)))));
        a.send(watch(2, "/w")).await;
        assert!(matches!(a.reply().await, (2, Ok(Response::Exists { .. }))));
        // Pipelined: the sync holds what follows until the leader answers.
        a.send(ClientRequest {
            xid: 3,
            request: Request::Sync(PathRequest { path: "/w".into() }),
        })
        .await;
        a.send(ClientRequest {
            xid: 4,
            request: Request::RemoveWatches(RemoveWatchesRequest {
                path: "/w".into(),
                watcher_type: 2,
            }),
        })
        .await;
        a.send(watch(5, "/w")).await;
        assert!(matches!(a.reply().await, (3, Ok(Response::Sync { .. }))));
        assert_eq!(a.reply().await, (4, Ok(Response::RemoveWatches)));
        assert!(matches!(a.reply().await, (5, Ok(Response::Exists { .. }))));

        let mut b = Raw::open("zk3").await.expect("connect");
        b.connect(0, vec![0; 16]).await;
        b.connect_response().await;
        b.send(ClientRequest {
            xid: 1,
            request: Request::Delete(VersionedPath {
                path: "/w".into(),
                version: -1,
            }),
        })
        .await;
        assert!(matches!(b.reply().await, (1, Ok(Response::Delete))));
        match madsim::time::timeout(Duration::from_secs(5), a.message()).await {
            Ok(Some(ServerMessage::Notification { event, .. })) => {
                assert_eq!(
                    (event.event_type, event.path.as_str()),
                    (zkdst_wire::EventType::NodeDeleted, "/w")
                );
            }
            other => panic!("the exists watch set after the RemoveWatches must fire; got {other:?}"),
        }
    })
    .await
    .expect("client node");
    c.shutdown();
}

#[test]
fn requests_the_connection_answers_keep_their_place_in_the_session() {
    run("own requests", 5, |s| Box::pin(own_requests_keep_their_place(s)));
}

async fn garbage_closes(seed: u64) {
    let mut c = serving(seed).await;
    let node = c.client_node(1);
    node.spawn(async move {
        // A negative frame length: the server closes without a word.
        let mut g = Raw::open("zk1").await.expect("connect");
        g.s.write_all(&[0xff, 0xff, 0xff, 0xf0, 1, 2, 3]).await.unwrap();
        assert!(g.frame().await.is_none());
        // A four-letter word gets the whitelist refusal, then the close.
        let mut w = WireStream::connect("zk1", WIRE_PORT).await.expect("connect");
        // In two pieces: the server must look at the first 4 bytes, not the
        // first read.
        w.write_all(b"ru").await.unwrap();
        madsim::time::sleep(Duration::from_millis(20)).await;
        w.write_all(b"ok").await.unwrap();
        let mut text = Vec::new();
        let _ = w.read_to_end(&mut text).await;
        assert_eq!(
            String::from_utf8_lossy(&text),
            "ruok is not executed because it is not in the whitelist.\n"
        );
        // An unknown host is a clear error.
        let e = WireStream::connect("db1", WIRE_PORT).await.unwrap_err();
        assert!(e.to_string().contains("db1"), "{e}");
    })
    .await
    .expect("client node");
    c.shutdown();
}

#[test]
fn garbage_and_four_letter_words_close_the_connection() {
    run("garbage", 3, |s| Box::pin(garbage_closes(s)));
}

async fn transport_faults(seed: u64) {
    let mut c = serving(seed).await;
    let node = c.client_node(1);
    let id = node.id();
    node.spawn(async move {
        let mut a = Raw::open("zk1").await.expect("connect");
        a.connect(0, vec![0; 16]).await;
        let hello = a.connect_response().await;
        // lose-reply: the write is applied, its reply becomes a reset.
        zkdst_sim::wire::lose_next_write_reply(id);
        a.send(create(1, "/lost", b"", 0)).await;
        assert!(a.frame().await.is_none(), "the reply is replaced by a reset");
        let mut b = Raw::open("zk2").await.expect("connect");
        b.connect(hello.session_id, hello.passwd.clone()).await;
        assert_eq!(b.connect_response().await.session_id, hello.session_id);
        b.send(ClientRequest {
            xid: 1,
            request: Request::Exists(WatchRequest {
                path: "/lost".into(),
                watch: false,
            }),
        })
        .await;
        // A follower may lag: sync first.
        assert!(matches!(b.reply().await, (1, _)));
        b.send(ClientRequest {
            xid: 2,
            request: Request::Sync(PathRequest { path: "/lost".into() }),
        })
        .await;
        assert!(matches!(b.reply().await, (2, Ok(Response::Sync { .. }))));
        b.send(ClientRequest {
            xid: 3,
            request: Request::Exists(WatchRequest {
                path: "/lost".into(),
                watch: false,
            }),
        })
        .await;
        assert!(
            matches!(b.reply().await, (3, Ok(Response::Exists { .. }))),
            "the lost write was applied"
        );
        // drop-connection: the stream is reset at once.
        assert_eq!(zkdst_sim::wire::reset_connections(id), 1);
        assert!(b.frame().await.is_none());
    })
    .await
    .expect("client node");
    c.shutdown();
}

#[test]
fn lose_reply_applies_the_write_and_resets_and_drop_resets() {
    run("faults", 3, |s| Box::pin(transport_faults(s)));
}

/// Mutates a valid frame: flips bytes, truncates, rewrites the length or
/// the opcode, or appends noise — what a broken or hostile client sends.
fn mutate(rng: &mut rand_chacha::ChaCha8Rng, mut f: Vec<u8>) -> Vec<u8> {
    match rng.gen_range(0..6) {
        0 => {
            for _ in 0..rng.gen_range(1..4) {
                let i = rng.gen_range(0..f.len());
                f[i] ^= rng.gen::<u8>() | 1;
            }
        }
        1 => f.truncate(rng.gen_range(0..f.len())),
        2 => {
            let len: i32 = rng.gen();
            f[..4].copy_from_slice(&len.to_be_bytes());
        }
        3 if f.len() >= 12 => {
            let op: i32 = rng.gen_range(-20..120);
            f[8..12].copy_from_slice(&op.to_be_bytes());
        }
        4 => {
            // A length field inside the body claims a huge vector or buffer.
            if f.len() >= 20 {
                let i = rng.gen_range(12..f.len() - 4);
                f[i..i + 4].copy_from_slice(&i32::MAX.to_be_bytes());
            }
        }
        _ => f.extend((0..rng.gen_range(1..64)).map(|_| rng.gen::<u8>())),
    }
    f
}

async fn garbage_after_the_handshake(seed: u64) {
    use rand::SeedableRng;
    let mut c = serving(seed).await;
    let node = c.client_node(1);
    node.spawn(async move {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let valid = [
            encode_request(&create(1, "/g", b"data", 0)),
            encode_request(&ClientRequest {
                xid: 2,
                request: Request::Multi(vec![WriteOp::Delete(VersionedPath {
                    path: "/g".into(),
                    version: -1,
                })]),
            }),
            encode_request(&ClientRequest {
                xid: 3,
                request: Request::GetChildren2(WatchRequest {
                    path: "/".into(),
                    watch: true,
                }),
            }),
            encode_request(&ClientRequest::ping()),
        ];
        for round in 0..20 {
            let server = ["zk1", "zk2", "zk3"][round % 3];
            let mut raw = Raw::open(server).await.expect("connect");
            raw.connect(0, vec![0; 16]).await;
            if round % 4 == 0 {
                // Garbage in place of the handshake's first frame too.
                let f = mutate(
                    &mut rng,
                    encode_connect_request(&ConnectRequest {
                        read_only: None,
                        ..ConnectRequest::new_session(6000)
                    }),
                );
                let _ = raw.s.write_all(&f).await;
            }
            for _ in 0..5 {
                let pick = rng.gen_range(0..valid.len());
                let f = mutate(&mut rng, valid[pick].clone());
                if raw.s.write_all(&f).await.is_err() {
                    break;
                }
            }
            // Whatever the server makes of it, it answers or closes; it
            // never wedges: read until EOF, or give up after a while.
            let _ = madsim::time::timeout(Duration::from_secs(2), async {
                while let Some(Ok(_)) = raw.next().await {}
            })
            .await;
        }
        // The ensemble still serves a well-behaved client.
        let mut ok = Raw::open("zk1").await.expect("connect");
        ok.connect(0, vec![0; 16]).await;
        assert!(ok.connect_response().await.time_out > 0);
        ok.send(create(1, "/after-garbage", b"", 0)).await;
        assert!(matches!(ok.reply().await, (1, Ok(Response::Create2(_)))));
    })
    .await
    .expect("client node");
    c.shutdown();
}

/// 100 mutated frames per seed (20 connections of 5, a quarter of them
/// with a mutated handshake too); `ZKDST_WIRE_GARBAGE_SEEDS` raises the
/// seed count for a campaign (1,000 seeds: 100,000 frames).
#[test]
fn garbage_and_mutated_frames_never_break_a_server() {
    let seeds = std::env::var("ZKDST_WIRE_GARBAGE_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    run("mutated", seeds, |s| Box::pin(garbage_after_the_handshake(s)));
}
