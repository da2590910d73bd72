//! Java's own ZooKeeper client (Debian's zookeeper 3.8 jar) against `zkdst
//! serve`, a smoke: clients/java/ZkSmoke.java, compiled here with javac,
//! creates, gets, sets (its data watch fires), runs a multi that commits
//! and one that fails, syncs, and then is cut off from every server past
//! its session timeout: it sees Disconnected, then Expired on reconnect,
//! and a new session reads back what the old one wrote. The servers'
//! record must show all of it, and the run must pass its checkers.
//!
//! Needs javac and /usr/share/java/zookeeper.jar: scripts/zk/install.sh
//! (no silent skip: without them the test fails and says so).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use zkdst_checker::history::{ConnEvent, Event};
use zkdst_model::ErrorCode;
use zkdst_scenarios::serve::{self, ServeOptions};
use zkdst_scenarios::{Fault, FaultPlan, RunVerdict, Scenario, TimedFault};

/// Set when the Java program is over: the served run ends at its next tick.
static DONE: AtomicBool = AtomicBool::new(false);

const INSTALL: &str = "run scripts/zk/install.sh (Debian's zookeeper package: its client jar and a JRE; \
                       javac comes with a JDK: apt-get install -y default-jdk-headless)";

/// The client jar and what it needs at run time (its manifest's Class-Path
/// names more, for the server; the JVM follows it, so they may be absent).
const JARS: &[&str] = &[
    "/usr/share/java/zookeeper.jar",
    "/usr/share/java/zookeeper-jute.jar",
    "/usr/share/java/slf4j-api.jar",
];
/// A logger binding: warnings and worse, to stderr (without it slf4j 1.7
/// falls back to no logging at all and says so).
const LOGGER: &str = "/usr/share/java/slf4j-simple.jar";

/// When, in simulated (= real) time from the ready signal, the cut starts
/// and for how long: past the 4 s session timeout and its 500 ms tick.
const CUT_AT_MS: u64 = 6000;
const CUT_MS: u64 = 6000;
/// The served run's length at most (it ends once the program is done).
const SERVE_S: u64 = 30;
/// The Java program's bound (its own waits are 20 s each).
const JAVA_S: u64 = 60;

fn scenario() -> Scenario {
    Scenario::parse(
        "name = \"java-smoke\"\n\
         [ensemble]\nservers = 3\nclients = 1\ntick_ms = 500\nsession_timeout_ms = 4000\n\
         [workload]\nrecipe = \"lock\"\nduration_s = 16\nliveness_s = 14\n",
        "java-smoke.toml",
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_path_buf()
}

/// Compiles ZkSmoke.java into a fresh directory: the classpath to run it.
fn compile(dir: &Path) -> String {
    for jar in JARS {
        assert!(Path::new(jar).exists(), "{jar} is missing: {INSTALL}");
    }
    for tool in ["javac", "java"] {
        let v = Command::new(tool).arg("-version").output();
        assert!(
            v.as_ref().is_ok_and(|o| o.status.success()),
            "`{tool} -version` failed ({:?}): {INSTALL}",
            v.map(|o| o.status)
        );
    }
    let classes = dir.join("classes");
    std::fs::create_dir_all(&classes).expect("a classes directory");
    let src = workspace().join("clients/java/ZkSmoke.java");
    let out = Command::new("javac")
        .arg("-nowarn")
        .arg("-d")
        .arg(&classes)
        .arg("-cp")
        .arg(JARS.join(":"))
        .arg(&src)
        .output()
        .expect("runs javac");
    assert!(
        out.status.success(),
        "javac {}: {}\n{}",
        src.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut cp = vec![classes.display().to_string()];
    cp.extend(JARS.iter().map(|j| j.to_string()));
    if Path::new(LOGGER).exists() {
        cp.push(LOGGER.into());
    }
    cp.join(":")
}

/// What the Java program did.
#[derive(Debug, Clone)]
struct Ran {
    /// None: killed after JAVA_S.
    status: Option<ExitStatus>,
    stdout: String,
    stderr: String,
    took: Duration,
}

/// Runs ZkSmoke against `connect` in `mode`, killing it after JAVA_S.
fn run_java(classpath: &str, dir: &Path, connect: &str, mode: &str) -> Ran {
    let started = Instant::now();
    let out_path = dir.join("stdout.txt");
    let err_path = dir.join("stderr.txt");
    let mut child = Command::new("java")
        .arg("-Xss512k")
        .arg("-XX:TieredStopAtLevel=1")
        .arg("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn")
        .arg("-Dorg.slf4j.simpleLogger.showDateTime=true")
        .arg("-cp")
        .arg(classpath)
        .arg("ZkSmoke")
        .arg(connect)
        .arg(mode)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).expect("stdout file"))
        .stderr(std::fs::File::create(&err_path).expect("stderr file"))
        .spawn()
        .unwrap_or_else(|e| panic!("starting java: {e}: {INSTALL}"));
    let deadline = started + Duration::from_secs(JAVA_S);
    let status = loop {
        match child.try_wait().expect("waits for java") {
            Some(s) => break Some(s),
            None if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            None => std::thread::sleep(Duration::from_millis(100)),
        }
    };
    Ran {
        status,
        stdout: std::fs::read_to_string(&out_path).unwrap_or_default(),
        stderr: std::fs::read_to_string(&err_path).unwrap_or_default(),
        took: started.elapsed(),
    }
}

/// The checks ZkSmoke must report as passed in mode "expire".
const MUST: &[&str] = &[
    "ok connect",
    "ok create /java-smoke",
    "ok get /java-smoke",
    "ok set /java-smoke at version 0",
    "ok data watch fires",
    "ok multi commits",
    "ok multi with a stale check fails with BadVersion",
    "ok a failed multi applies nothing",
    "ok sync /java-smoke",
    "ok get after sync",
    "ok Disconnected when cut off",
    "ok Expired on reconnect",
    "ok an op on the expired handle fails with SessionExpired",
    "ok a new session",
    "ok read back /java-smoke",
    "ok the expired session's ephemeral is gone",
    "ok close",
];

#[test]
fn javas_own_client_is_served_watched_and_expired() {
    let dir = std::env::temp_dir().join(format!("zkdst-java-smoke-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let compiling = Instant::now();
    let classpath = compile(&dir);
    let compiled_in = compiling.elapsed();

    let sc = scenario();
    let plan = FaultPlan {
        faults: vec![TimedFault {
            at_ms: CUT_AT_MS,
            duration_ms: CUT_MS,
            fault: Fault::ExpireSession { client: 0 },
        }],
        max_ops_per_client: None,
    };
    let opts = ServeOptions {
        port_base: None,
        plan: Some(plan),
    };
    let ran: Arc<Mutex<Option<Ran>>> = Arc::default();
    let worker = Arc::new(Mutex::new(None));
    DONE.store(false, Ordering::SeqCst);
    let o = serve::serve(&sc, 5, &opts, &DONE, Duration::from_secs(SERVE_S), |connect, _| {
        let (connect, classpath, dir, ran) = (connect[0].clone(), classpath.clone(), dir.clone(), ran.clone());
        *worker.lock().unwrap() = Some(std::thread::spawn(move || {
            let r = run_java(&classpath, &dir, &connect, "expire");
            *ran.lock().unwrap() = Some(r);
            // Let the last frames (the close) reach the record, then end.
            std::thread::sleep(Duration::from_millis(600));
            DONE.store(true, Ordering::SeqCst);
        }));
    })
    .expect("serves");
    if let Some(w) = worker.lock().unwrap().take() {
        w.join().expect("the java thread");
    }
    let ran = ran
        .lock()
        .unwrap()
        .clone()
        .expect("the ensemble became ready and the program ran");
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "javac took {compiled_in:?}; java took {:?}; served {:?} (worst lag {:?})",
        ran.took, o.served.pumped.end, o.served.pumped.max_lag
    );
    println!("--- ZkSmoke stdout\n{}--- stderr\n{}---", ran.stdout, ran.stderr);

    // The program: every check passed, within its bound.
    let shown = format!("stdout:\n{}\nstderr:\n{}", ran.stdout, ran.stderr);
    let status = ran
        .status
        .unwrap_or_else(|| panic!("ZkSmoke ran past {JAVA_S} s and was killed\n{shown}"));
    assert!(status.success(), "ZkSmoke exited with {status}\n{shown}");
    assert!(!ran.stdout.lines().any(|l| l.starts_with("FAIL")), "{shown}");
    for m in MUST {
        assert!(ran.stdout.lines().any(|l| l.starts_with(m)), "no {m:?}\n{shown}");
    }
    assert_eq!(o.verdict, RunVerdict::Pass, "{:?}", o.results);
    assert!(o.served.error.is_none(), "{:?}", o.served.error);

    // The servers' record: client 0's connections, its requests, the
    // notification, the errors, and the expiry's handshakes.
    let h = &o.served.history;
    let mine: Vec<(u32, u64, &ConnEvent)> = h
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Conn {
                client: Some(0),
                server,
                conn,
                event,
                ..
            } => Some((*server, *conn, event)),
            _ => None,
        })
        .collect();
    let ops: BTreeSet<&str> = mine
        .iter()
        .filter_map(|(_, _, e)| match e {
            ConnEvent::Request { op, .. } => Some(op.as_str()),
            _ => None,
        })
        .collect();
    for op in [
        "Create",
        "GetData",
        "SetData",
        "Multi",
        "Sync",
        "Exists",
        "Ping",
        "CloseSession",
    ] {
        assert!(ops.contains(op), "no {op} request recorded; requests: {ops:?}");
    }
    let errors: BTreeSet<ErrorCode> = mine
        .iter()
        .filter_map(|(_, _, e)| match e {
            ConnEvent::Reply { err: Some(c), .. } => Some(*c),
            _ => None,
        })
        .collect();
    for c in [ErrorCode::NodeExists, ErrorCode::BadVersion] {
        assert!(errors.contains(&c), "no {c:?} reply recorded; errors: {errors:?}");
    }
    assert!(
        mine.iter().any(|(_, _, e)| matches!(e,
            ConnEvent::Notification { path, event, .. } if path == "/java-smoke" && event == "NodeDataChanged")),
        "no NodeDataChanged notification for /java-smoke recorded"
    );
    // The session S, a reconnect with S refused (timeout 0), then a new one.
    let mut asked: BTreeMap<(u32, u64), i64> = BTreeMap::new();
    let mut story = Vec::new();
    for (server, conn, e) in &mine {
        match e {
            ConnEvent::Connect { session, .. } => {
                asked.insert((*server, *conn), *session);
            }
            ConnEvent::Established { session, .. } => {
                story.push((asked.get(&(*server, *conn)).copied().unwrap_or(-1), *session));
            }
            _ => {}
        }
    }
    let first = story.first().map(|&(_, s)| s).unwrap_or(0);
    assert!(first != 0 && story[0].0 == 0, "handshakes (asked, got): {story:x?}");
    let refused = story.iter().position(|&(a, g)| a == first && g == 0);
    assert!(
        refused.is_some(),
        "no reconnect with session {first:#x} answered expired; handshakes (asked, got): {story:x?}"
    );
    assert!(
        story[refused.unwrap_or(0)..]
            .iter()
            .any(|&(a, g)| a == 0 && g != 0 && g != first),
        "no new session after the expiry; handshakes (asked, got): {story:x?}"
    );
    let conns: BTreeSet<(u32, u64)> = mine.iter().map(|(s, c, _)| (*s, *c)).collect();
    assert!(conns.len() >= 3, "client 0's connections: {conns:?}");
}
