//! The simulated side of a served ensemble. A pump, ticking every
//! millisecond of simulated time, takes in what the real connections
//! delivered (live: from [`Sockets`](super::sockets::Sockets), paced to the
//! wall clock; replay: from the arrival log, at the recorded instants) and
//! hands it to one proxy task per real connection. The proxy runs on the
//! application client's simulated node and speaks to its server through a
//! simulated [`WireStream`]: the nemesis's client faults (reset, lost
//! reply, pause, partition, latency) act on it as on any simulated client,
//! and the real client sees their effect on its socket.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use futures::channel::mpsc::{unbounded, UnboundedReceiver, UnboundedSender};
use futures::io::{AsyncReadExt, AsyncWriteExt};
use futures::{FutureExt, StreamExt};
use madsim::runtime::NodeHandle;
use madsim::time::Instant;
use zkdst_sim::wire::{WireStream, WIRE_PORT};

use super::frames::{Arrival, Input};
use super::pace::Pacer;
use super::sockets::{Inbound, Outbound, Writers};

/// The pump's period: the resolution of arrival instants.
pub const TICK: Duration = Duration::from_millis(1);

/// Where arrivals come from.
pub enum Source {
    /// Real sockets, paced to the wall clock.
    Live {
        inbound: Receiver<Inbound>,
        writers: Writers,
        /// Set (by Ctrl-C) to end the run at the next tick.
        interrupt: &'static AtomicBool,
    },
    /// A recorded arrival log, fed at its instants; replies go nowhere.
    Replay(VecDeque<Arrival>),
}

/// What the pump leaves behind.
#[derive(Debug, Default)]
pub struct Pumped {
    pub arrivals: Vec<Arrival>,
    /// Simulated time since the start when the pump stopped.
    pub end: Duration,
    /// Worst lag of simulated behind real time (live only).
    pub max_lag: Duration,
    /// Ended by an interrupt, not by reaching its end.
    pub interrupted: bool,
}

/// The pump and its proxies.
pub struct Bridge {
    source: Source,
    nodes: BTreeMap<u32, NodeHandle>,
    conns: BTreeMap<u64, UnboundedSender<Input>>,
    out: Pumped,
}

impl Bridge {
    /// `nodes`: each application client's simulated node.
    pub fn new(source: Source, nodes: BTreeMap<u32, NodeHandle>) -> Bridge {
        Bridge {
            source,
            nodes,
            conns: BTreeMap::new(),
            out: Pumped::default(),
        }
    }

    /// Pumps from now until `length` of simulated time has passed (a
    /// replayed log: until its recorded end), then closes every real
    /// connection still open.
    /// `pacer` started at this instant.
    pub async fn run(mut self, length: Duration, mut pacer: Pacer) -> Pumped {
        let t0 = Instant::now();
        let mut tick: u32 = 0;
        loop {
            tick += 1;
            let at = TICK * tick;
            madsim::time::sleep_until(t0 + at).await;
            let at_ns = at.as_nanos() as u64;
            let mut batch = Vec::new();
            let mut stop = false;
            match &mut self.source {
                Source::Live { inbound, interrupt, .. } => {
                    pacer.wait_until(at);
                    while let Ok(i) = inbound.try_recv() {
                        batch.push(Arrival {
                            at_ns,
                            client: i.client,
                            server: i.server,
                            conn: i.conn,
                            input: i.input,
                        });
                    }
                    if interrupt.load(Ordering::SeqCst) {
                        self.out.interrupted = true;
                        stop = true;
                    }
                }
                Source::Replay(log) => {
                    while log.front().is_some_and(|a| a.at_ns <= at_ns) {
                        let a = log.pop_front().expect("front exists");
                        if a.input == Input::End {
                            stop = true;
                            break;
                        }
                        batch.push(a);
                    }
                }
            }
            for a in batch {
                self.take(a);
            }
            // A replayed log ends at its own end line; this bounds it.
            stop |= at >= length;
            if stop {
                self.out.end = at;
                break;
            }
        }
        self.out.max_lag = pacer.max_lag;
        self.out.arrivals.push(Arrival {
            at_ns: self.out.end.as_nanos() as u64,
            client: 0,
            server: 0,
            conn: 0,
            input: Input::End,
        });
        if let Source::Live { writers, .. } = &self.source {
            for (_, w) in std::mem::take(&mut *writers.lock().unwrap_or_else(|e| e.into_inner())) {
                let _ = w.send(Outbound::Close);
            }
        }
        self.out
    }

    fn take(&mut self, a: Arrival) {
        match &a.input {
            Input::Open => {
                let (tx, rx) = unbounded();
                self.conns.insert(a.conn, tx);
                let writers = match &self.source {
                    Source::Live { writers, .. } => Some(writers.clone()),
                    Source::Replay(_) => None,
                };
                if let Some(node) = self.nodes.get(&a.client) {
                    drop(node.spawn(proxy(a.server, a.conn, rx, writers)));
                }
            }
            Input::Data(b) => {
                if let Some(tx) = self.conns.get(&a.conn) {
                    let _ = tx.unbounded_send(Input::Data(b.clone()));
                }
            }
            Input::Eof => {
                if let Some(tx) = self.conns.remove(&a.conn) {
                    let _ = tx.unbounded_send(Input::Eof);
                }
            }
            Input::End => {}
        }
        self.out.arrivals.push(a);
    }
}

fn send_out(writers: &Option<Writers>, conn: u64, out: Outbound) {
    if let Some(w) = writers {
        if let Some(tx) = w.lock().unwrap_or_else(|e| e.into_inner()).get(&conn) {
            let _ = tx.send(out);
        }
    }
}

/// One real connection, carried over the simulated network to `server`.
async fn proxy(server: u32, conn: u64, mut from_client: UnboundedReceiver<Input>, writers: Option<Writers>) {
    let stream = match WireStream::connect(&format!("zk{server}"), WIRE_PORT).await {
        Ok(s) => s,
        // Nobody listens (the server is down) or the link is cut: the
        // real client's connection, already accepted on its port, is
        // closed at once (a real cut would refuse or time out; either way
        // the client moves on to its next server).
        Err(_) => {
            send_out(&writers, conn, Outbound::Close);
            return;
        }
    };
    let (mut r, mut w) = stream.split();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        futures::select_biased! {
            input = from_client.next() => match input {
                Some(Input::Data(b)) => {
                    if w.write_all(&b).await.is_err() {
                        break;
                    }
                }
                _ => {
                    let _ = w.close().await;
                    break;
                }
            },
            n = r.read(&mut buf).fuse() => match n {
                Ok(n) if n > 0 => send_out(&writers, conn, Outbound::Data(buf[..n].to_vec())),
                _ => break,
            },
        }
    }
    send_out(&writers, conn, Outbound::Close);
}
