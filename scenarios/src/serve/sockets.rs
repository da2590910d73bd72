//! The real side of a served ensemble: one TCP listener on 127.0.0.1 per
//! (application client, server), so that the port a connection came in on
//! names the client the nemesis aims at — a client needs nothing but its
//! connect string. Each accepted connection gets a reader thread (bytes in,
//! to the bridge) and a writer thread (bytes out, from the bridge), so the
//! simulation never blocks on a socket.
//!
//! Every thread here is started outside the simulation (madsim refuses
//! system threads inside it) and ends by itself once [`Sockets::stop`] ran.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::frames::Input;

/// Something a real client delivered.
#[derive(Debug)]
pub struct Inbound {
    pub client: u32,
    pub server: u32,
    pub conn: u64,
    pub input: Input,
}

/// What the bridge sends a real connection.
#[derive(Debug)]
pub enum Outbound {
    Data(Vec<u8>),
    /// Close it (the server closed, or the simulated link was reset).
    Close,
}

/// The writers of the open connections, by connection number.
pub type Writers = Arc<Mutex<BTreeMap<u64, Sender<Outbound>>>>;

/// The listeners and their connections.
pub struct Sockets {
    /// `ports[client][server - 1]`.
    pub ports: Vec<Vec<u16>>,
    pub inbound: Option<Receiver<Inbound>>,
    pub writers: Writers,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Sockets {
    /// Opens `clients × servers` listeners on 127.0.0.1: at
    /// `base + client × servers + (server − 1)`, or on free ports when
    /// `base` is None.
    pub fn open(clients: u32, servers: u32, base: Option<u16>) -> io::Result<Sockets> {
        let (tx, rx) = channel();
        let writers: Writers = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let next_conn = Arc::new(AtomicU64::new(1));
        let mut ports = Vec::new();
        let mut threads = Vec::new();
        for client in 0..clients {
            let mut row = Vec::new();
            for server in 1..=servers {
                let port = match base {
                    Some(b) => {
                        let p = u32::from(b) + client * servers + (server - 1);
                        u16::try_from(p).map_err(|_| {
                            io::Error::new(
                                io::ErrorKind::InvalidInput,
                                format!("--port-base {b}: port {p} is past 65535"),
                            )
                        })?
                    }
                    None => 0,
                };
                let l = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port)))
                    .map_err(|e| io::Error::new(e.kind(), format!("127.0.0.1:{port}: {e}")))?;
                l.set_nonblocking(true)?;
                row.push(l.local_addr()?.port());
                let (tx, writers, stop, next_conn) = (tx.clone(), writers.clone(), stop.clone(), next_conn.clone());
                threads.push(std::thread::spawn(move || {
                    accept_loop(l, client, server, tx, writers, stop, next_conn)
                }));
            }
            ports.push(row);
        }
        Ok(Sockets {
            ports,
            inbound: Some(rx),
            writers,
            stop,
            threads,
        })
    }

    /// The connect string of application client `client`.
    pub fn connect_string(&self, client: u32) -> String {
        self.ports[client as usize]
            .iter()
            .map(|p| format!("127.0.0.1:{p}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Closes every connection and listener, and waits for the listeners.
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for (_, w) in std::mem::take(&mut *lock(&self.writers)) {
            let _ = w.send(Outbound::Close);
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for Sockets {
    fn drop(&mut self) {
        self.stop();
    }
}

fn accept_loop(
    l: TcpListener,
    client: u32,
    server: u32,
    tx: Sender<Inbound>,
    writers: Writers,
    stop: Arc<AtomicBool>,
    next_conn: Arc<AtomicU64>,
) {
    while !stop.load(Ordering::SeqCst) {
        match l.accept() {
            Ok((s, _)) => {
                let conn = next_conn.fetch_add(1, Ordering::SeqCst);
                if s.set_nonblocking(false).is_err() {
                    continue;
                }
                let _ = s.set_nodelay(true);
                let Ok(w) = s.try_clone() else { continue };
                let (wtx, wrx) = channel();
                // Registered before Open reaches the bridge: a reply can
                // never find its connection's writer missing.
                lock(&writers).insert(conn, wtx);
                if tx
                    .send(Inbound {
                        client,
                        server,
                        conn,
                        input: Input::Open,
                    })
                    .is_err()
                {
                    return;
                }
                let rtx = tx.clone();
                let stop_r = stop.clone();
                std::thread::spawn(move || read_loop(s, client, server, conn, rtx, stop_r));
                let writers = writers.clone();
                std::thread::spawn(move || {
                    write_loop(w, wrx);
                    lock(&writers).remove(&conn);
                });
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(5)),
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
}

fn read_loop(mut s: TcpStream, client: u32, server: u32, conn: u64, tx: Sender<Inbound>, stop: Arc<AtomicBool>) {
    // A short timeout, so the thread notices the end of the run.
    let _ = s.set_read_timeout(Some(Duration::from_millis(100)));
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let input = Input::Data(buf[..n].to_vec());
                if tx
                    .send(Inbound {
                        client,
                        server,
                        conn,
                        input,
                    })
                    .is_err()
                {
                    return;
                }
            }
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {
                if stop.load(Ordering::SeqCst) {
                    return;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    let _ = tx.send(Inbound {
        client,
        server,
        conn,
        input: Input::Eof,
    });
}

fn write_loop(mut s: TcpStream, rx: Receiver<Outbound>) {
    while let Ok(out) = rx.recv() {
        match out {
            Outbound::Data(b) => {
                if s.write_all(&b).is_err() {
                    break;
                }
            }
            Outbound::Close => break,
        }
    }
    let _ = s.shutdown(Shutdown::Both);
}
