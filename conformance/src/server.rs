//! Real ZooKeeper 3.8 servers on loopback, managed from Rust: a standalone
//! [`RealServer`] and a three-member [`RealEnsemble`]. Each writes its
//! configs into a fresh temp dir, spawns `java ... QuorumPeerMain cfg`, waits
//! for `ruok` → `imok` (and, for the ensemble, a leader via `srvr`), and kills
//! its JVMs (only those) on drop.
//!
//! The server comes from Debian's `zookeeper` package; when its jar is missing
//! `ensure_installed` runs `scripts/zk/install.sh` (apt-get, needs root).

use std::fs;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The server and client jars of Debian's `zookeeper` package.
pub const ZOOKEEPER_JAR: &str = "/usr/share/java/zookeeper.jar";
const CLASSPATH: &str = "/etc/zookeeper/conf:/usr/share/java/zookeeper.jar";
const MAIN_CLASS: &str = "org.apache.zookeeper.server.quorum.QuorumPeerMain";

/// What can go wrong managing a real server.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("ZooKeeper is not installed and scripts/zk/install.sh failed: {0}")]
    Install(String),
    #[error("I/O error {what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("server {member} on 127.0.0.1:{port} not ready within {waited:?} (log: {log})")]
    NotReady {
        member: usize,
        port: u16,
        waited: Duration,
        log: String,
    },
    #[error("no leader elected within {0:?}")]
    NoLeader(Duration),
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> ServerError {
    let what = what.into();
    move |source| ServerError::Io { what, source }
}

/// Installs ZooKeeper through `scripts/zk/install.sh` when its jar is
/// missing. Idempotent and cheap when it is installed.
pub fn ensure_installed() -> Result<(), ServerError> {
    if Path::new(ZOOKEEPER_JAR).exists() {
        return Ok(());
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/zk/install.sh");
    let out = Command::new("bash")
        .arg(&script)
        .output()
        .map_err(|e| ServerError::Install(format!("running {}: {e}", script.display())))?;
    if !out.status.success() || !Path::new(ZOOKEEPER_JAR).exists() {
        return Err(ServerError::Install(format!(
            "{} exited with {}: {}",
            script.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    Ok(())
}

/// Server settings.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// ZooKeeper's tickTime. Sessions negotiate timeouts within
    /// [2, 20] × tick.
    pub tick_ms: u32,
    /// `-Dzookeeper.extendedTypesEnabled=true`: TTL nodes.
    pub extended_types: bool,
    /// `-Dznode.container.checkIntervalMs`: how often empty containers (and
    /// expired TTL nodes) are reaped. `None` keeps ZooKeeper's 60 s.
    pub container_check_ms: Option<u64>,
    /// How long to wait for readiness (and a leader).
    pub start_timeout: Duration,
    /// `forceSync`: fsync the transaction log before acknowledging (3.8's
    /// default). Off only to show how much of a measurement is the disk.
    pub force_sync: bool,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            tick_ms: 200,
            extended_types: true,
            container_check_ms: Some(1000),
            start_timeout: Duration::from_secs(60),
            force_sync: true,
        }
    }
}

/// A fresh directory under the system temp dir, removed on drop.
#[derive(Debug)]
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<TempDir, ServerError> {
        static N: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let path = std::env::temp_dir().join(format!(
            "zkdst-zk-rs.{}.{}.{nanos}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        fs::create_dir_all(&path).map_err(io(format!("creating {}", path.display())))?;
        Ok(TempDir(path))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// A loopback TCP port that was free a moment ago.
pub fn free_port() -> Result<u16, ServerError> {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(io("binding a probe port"))?;
    l.local_addr().map(|a| a.port()).map_err(io("reading a probe port"))
}

/// Sends a four-letter word to 127.0.0.1:`port`; the answer, or `None`.
pub fn four_letter(port: u16, word: &str) -> Option<String> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_millis(500)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    s.set_write_timeout(Some(Duration::from_secs(2))).ok()?;
    s.write_all(word.as_bytes()).ok()?;
    let mut out = Vec::new();
    // The server closes the connection after answering; cap the size anyway.
    s.take(64 * 1024).read_to_end(&mut out).ok()?;
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// The `Mode:` of the server on `port` (`standalone`, `leader`, `follower`).
pub fn server_mode(port: u16) -> Option<String> {
    let srvr = four_letter(port, "srvr")?;
    srvr.lines()
        .find_map(|l| l.strip_prefix("Mode: "))
        .map(|m| m.trim().to_string())
}

/// One ZooKeeper JVM: its config, log and (while running) process.
#[derive(Debug)]
struct Member {
    index: usize,
    client_port: u16,
    cfg: PathBuf,
    log: PathBuf,
    jvm_flags: Vec<String>,
    child: Option<Child>,
}

impl Member {
    fn spawn(&mut self) -> Result<(), ServerError> {
        if self.child.is_some() {
            return Ok(());
        }
        let log = fs::File::create(&self.log).map_err(io(format!("creating {}", self.log.display())))?;
        let log2 = log.try_clone().map_err(io("cloning the log handle"))?;
        let child = Command::new("java")
            .arg("-Xmx256m")
            .args(&self.jvm_flags)
            .arg("-cp")
            .arg(CLASSPATH)
            .arg(MAIN_CLASS)
            .arg(&self.cfg)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2)
            .spawn()
            .map_err(io("spawning java"))?;
        self.child = Some(child);
        Ok(())
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    fn wait_ready(&self, timeout: Duration) -> Result<(), ServerError> {
        let start = Instant::now();
        while start.elapsed() < timeout {
            if four_letter(self.client_port, "ruok").as_deref() == Some("imok") {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(ServerError::NotReady {
            member: self.index,
            port: self.client_port,
            waited: timeout,
            log: self.log.display().to_string(),
        })
    }
}

fn jvm_flags(options: &ServerOptions) -> Vec<String> {
    let mut flags = Vec::new();
    if options.extended_types {
        flags.push("-Dzookeeper.extendedTypesEnabled=true".to_string());
    }
    if let Some(ms) = options.container_check_ms {
        flags.push(format!("-Dznode.container.checkIntervalMs={ms}"));
    }
    flags
}

fn base_config(options: &ServerOptions, data_dir: &Path, client_port: u16) -> String {
    format!(
        "tickTime={}\ndataDir={}\nclientPort={client_port}\nclientPortAddress=127.0.0.1\n\
         admin.enableServer=false\n4lw.commands.whitelist=srvr,ruok,mntr,stat\nmaxClientCnxns=0\n\
         forceSync={}\n",
        options.tick_ms,
        data_dir.display(),
        if options.force_sync { "yes" } else { "no" }
    )
}

/// A standalone ZooKeeper on 127.0.0.1, killed on drop.
#[derive(Debug)]
pub struct RealServer {
    member: Member,
    options: ServerOptions,
    _dir: TempDir,
}

impl RealServer {
    /// Starts a server and waits until it answers `ruok` (blocking).
    pub fn start(options: ServerOptions) -> Result<RealServer, ServerError> {
        ensure_installed()?;
        let dir = TempDir::new()?;
        let data = dir.0.join("data");
        fs::create_dir_all(&data).map_err(io("creating the data dir"))?;
        let port = free_port()?;
        let cfg = dir.0.join("zoo.cfg");
        fs::write(&cfg, base_config(&options, &data, port)).map_err(io("writing zoo.cfg"))?;
        let mut member = Member {
            index: 0,
            client_port: port,
            cfg,
            log: dir.0.join("server.log"),
            jvm_flags: jvm_flags(&options),
            child: None,
        };
        member.spawn()?;
        if let Err(e) = member.wait_ready(options.start_timeout) {
            member.kill();
            return Err(e);
        }
        Ok(RealServer {
            member,
            options,
            _dir: dir,
        })
    }

    /// `127.0.0.1:PORT`.
    pub fn connect_string(&self) -> String {
        format!("127.0.0.1:{}", self.member.client_port)
    }

    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.member.client_port))
    }

    pub fn options(&self) -> &ServerOptions {
        &self.options
    }

    pub fn pid(&self) -> Option<u32> {
        self.member.child.as_ref().map(|c| c.id())
    }

    /// Kills the JVM (SIGKILL); the data dir stays.
    pub fn kill(&mut self) {
        self.member.kill();
    }

    /// Starts the JVM again on the same port and data and waits for `ruok`.
    pub fn restart(&mut self) -> Result<(), ServerError> {
        self.member.spawn()?;
        self.member.wait_ready(self.options.start_timeout)
    }
}

impl Drop for RealServer {
    fn drop(&mut self) {
        self.member.kill();
    }
}

/// A three-server ensemble on 127.0.0.1, killed on drop.
#[derive(Debug)]
pub struct RealEnsemble {
    members: Vec<Member>,
    options: ServerOptions,
    _dir: TempDir,
}

impl RealEnsemble {
    /// Starts three servers and waits until all answer `ruok` and one is the
    /// leader (blocking).
    pub fn start(options: ServerOptions) -> Result<RealEnsemble, ServerError> {
        ensure_installed()?;
        let dir = TempDir::new()?;
        let mut ports = Vec::new();
        // Hold the probe listeners until every port is chosen, so that no
        // port is handed out twice.
        let mut probes = Vec::new();
        for _ in 0..9 {
            let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(io("binding a probe port"))?;
            ports.push(l.local_addr().map_err(io("reading a probe port"))?.port());
            probes.push(l);
        }
        drop(probes);
        let servers: String = (0..3)
            .map(|i| format!("server.{}=127.0.0.1:{}:{}\n", i + 1, ports[3 + i], ports[6 + i]))
            .collect();
        let mut members = Vec::new();
        for (i, &client_port) in ports.iter().take(3).enumerate() {
            let sdir = dir.0.join(format!("s{}", i + 1));
            let data = sdir.join("data");
            fs::create_dir_all(&data).map_err(io("creating a data dir"))?;
            fs::write(data.join("myid"), format!("{}\n", i + 1)).map_err(io("writing myid"))?;
            let cfg = sdir.join("zoo.cfg");
            let text = format!(
                "{}initLimit=10\nsyncLimit=5\n{servers}",
                base_config(&options, &data, client_port)
            );
            fs::write(&cfg, text).map_err(io("writing zoo.cfg"))?;
            members.push(Member {
                index: i,
                client_port,
                cfg,
                log: sdir.join("server.log"),
                jvm_flags: jvm_flags(&options),
                child: None,
            });
        }
        let mut ensemble = RealEnsemble {
            members,
            options,
            _dir: dir,
        };
        for m in &mut ensemble.members {
            m.spawn()?;
        }
        for m in &ensemble.members {
            m.wait_ready(ensemble.options.start_timeout)?;
        }
        ensemble.wait_for_leader(ensemble.options.start_timeout)?;
        Ok(ensemble)
    }

    /// `127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3`.
    pub fn connect_string(&self) -> String {
        self.members
            .iter()
            .map(|m| format!("127.0.0.1:{}", m.client_port))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Client address of member `i` (0-based).
    pub fn addr(&self, i: usize) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.members[i].client_port))
    }

    pub fn len(&self) -> usize {
        self.members.len()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// The index of the running member that says `Mode: leader`.
    pub fn leader(&self) -> Option<usize> {
        self.members
            .iter()
            .position(|m| m.child.is_some() && server_mode(m.client_port).as_deref() == Some("leader"))
    }

    /// Waits (bounded) until some member is the leader; its index.
    pub fn wait_for_leader(&self, timeout: Duration) -> Result<usize, ServerError> {
        let start = Instant::now();
        while start.elapsed() < timeout {
            if let Some(i) = self.leader() {
                return Ok(i);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(ServerError::NoLeader(timeout))
    }

    /// Kills member `i` (SIGKILL).
    pub fn kill(&mut self, i: usize) {
        self.members[i].kill();
    }

    /// Starts member `i` again and waits for its `ruok`.
    pub fn restart(&mut self, i: usize) -> Result<(), ServerError> {
        self.members[i].spawn()?;
        self.members[i].wait_ready(self.options.start_timeout)
    }
}

impl Drop for RealEnsemble {
    fn drop(&mut self) {
        for m in &mut self.members {
            m.kill();
        }
    }
}
