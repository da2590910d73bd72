//! The simulated network: typed, ordered, reliable connections between
//! madsim nodes — TCP as madsim models it, minus the bytes. A message is
//! moved, not serialized; it arrives after the link's latency, in order;
//! on a clogged link it stalls (retried with backoff up to 10 s, as madsim's
//! TCP does) and is never lost; dropping a sender is EOF once the queue
//! drains. Connecting across a clog, or to an address nobody listens on,
//! fails at once.
//!
//! madsim's TCP costs a serialization, a boxed buffer, hashed lookups and
//! a task wake-up per flush; this layer keeps only the timer for the
//! arrival, and messages sent in the same instant share it.
//!
//! Link faults are set through [`clog`]/[`unclog`] (the cluster does this);
//! nodes killed or paused by madsim drop or stop their endpoints' tasks.

use std::any::Any;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::future::{poll_fn, Future};
use std::net::SocketAddr;
use std::ops::Range;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use madsim::net::NetSim;
use madsim::rand::Rng;
use madsim::task::NodeId;
use madsim::time::{Instant, TimeHandle};

/// The network of one runtime: link faults, latency, listeners.
struct Net {
    inner: Mutex<NetInner>,
    /// madsim's clock, held to read it without a thread-local lookup.
    time: TimeHandle,
}

struct NetInner {
    clogged: BTreeSet<(NodeId, NodeId)>,
    latency: Range<Duration>,
    listeners: BTreeMap<SocketAddr, (NodeId, Arc<dyn Any + Send + Sync>)>,
}

impl Net {
    fn lock(&self) -> MutexGuard<'_, NetInner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The arrival time of a message sent now, or None if the link is clogged.
    fn arrival(&self, src: NodeId, dst: NodeId) -> Option<Instant> {
        let g = self.lock();
        if !g.clogged.is_empty() && g.clogged.contains(&(src, dst)) {
            return None;
        }
        let latency = madsim::rand::thread_rng().gen_range(g.latency.clone());
        Some(self.time.now_instant() + latency)
    }
}

thread_local! {
    /// The current runtime's network. A runtime runs on one thread; the
    /// weak handle to madsim's NetSim tells runtimes apart.
    static NET: RefCell<Option<(Weak<NetSim>, Arc<Net>)>> = const { RefCell::new(None) };
}

fn net() -> Arc<Net> {
    let sim = NetSim::current();
    NET.with(|cell| {
        let mut cell = cell.borrow_mut();
        if let Some((w, n)) = cell.as_ref() {
            if w.upgrade().is_some_and(|s| Arc::ptr_eq(&s, &sim)) {
                return n.clone();
            }
        }
        let n = Arc::new(Net {
            inner: Mutex::new(NetInner {
                clogged: BTreeSet::new(),
                latency: Duration::from_millis(1)..Duration::from_millis(10),
                listeners: BTreeMap::new(),
            }),
            time: TimeHandle::current(),
        });
        *cell = Some((Arc::downgrade(&sim), n.clone()));
        n
    })
}

/// Stops traffic from node `src` to node `dst` (one direction).
pub fn clog(src: NodeId, dst: NodeId) {
    net().lock().clogged.insert((src, dst));
}

pub fn unclog(src: NodeId, dst: NodeId) {
    net().lock().clogged.remove(&(src, dst));
}

/// Sets the one-way latency range of every link.
pub fn set_latency(latency: Range<Duration>) {
    net().lock().latency = latency;
}

/// One direction of a connection.
struct Pipe<T> {
    net: Arc<Net>,
    src: NodeId,
    dst: NodeId,
    st: Mutex<PipeState<T>>,
}

struct PipeState<T> {
    /// Messages with their arrival time (None: sent over a clogged link).
    queue: VecDeque<(T, Option<Instant>)>,
    /// The last send: when, and its arrival, shared by sends in the same instant.
    last: Option<(Instant, Instant)>,
    tx_closed: bool,
    rx_closed: bool,
    rx_waker: Option<Waker>,
    tx_waker: Option<Waker>,
    /// A madsim timer is pending for the receiver at this instant.
    armed: Option<Instant>,
    /// A stalled head message: next retry of the link, and the backoff.
    retry: Option<(Instant, Duration)>,
}

impl<T> Pipe<T> {
    fn new(net: Arc<Net>, src: NodeId, dst: NodeId) -> Arc<Self> {
        Arc::new(Pipe {
            net,
            src,
            dst,
            st: Mutex::new(PipeState {
                queue: VecDeque::new(),
                last: None,
                tx_closed: false,
                rx_closed: false,
                rx_waker: None,
                tx_waker: None,
                armed: None,
                retry: None,
            }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, PipeState<T>> {
        self.st.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The sending end. Dropping it closes the connection (EOF after the queue).
pub struct Sender<T> {
    pipe: Arc<Pipe<T>>,
}

impl<T> Sender<T> {
    /// Queues `msg`; false if the receiving end is gone (connection reset).
    pub fn send(&self, msg: T) -> bool {
        let mut st = self.pipe.lock();
        if st.rx_closed {
            return false;
        }
        let now = self.pipe.net.time.now_instant();
        let arrival = match st.last {
            Some((at, arrive)) if at == now => Some(arrive),
            _ => {
                let a = self.pipe.net.arrival(self.pipe.src, self.pipe.dst);
                st.last = a.map(|a| (now, a));
                a
            }
        };
        st.queue.push_back((msg, arrival));
        if st.queue.len() == 1 {
            match arrival {
                // In flight: arm the waiting receiver's timer for the arrival
                // instead of waking it just to arm it (one task poll fewer
                // per message).
                Some(at) if at > now => {
                    if let Some(w) = st.rx_waker.clone() {
                        let st = &mut *st;
                        let _ = arm::<()>(
                            &self.pipe.net.time,
                            &mut st.armed,
                            &mut Context::from_waker(&w),
                            at,
                            now,
                        );
                    }
                }
                _ => {
                    if let Some(w) = st.rx_waker.take() {
                        w.wake();
                    }
                }
            }
        }
        true
    }

    /// Resolves once the receiving end is gone.
    pub fn closed(&self) -> impl Future<Output = ()> + Send + 'static
    where
        T: Send + 'static,
    {
        let pipe = self.pipe.clone();
        poll_fn(move |cx| {
            let mut st = pipe.lock();
            if st.rx_closed {
                return Poll::Ready(());
            }
            set_waker(&mut st.tx_waker, cx);
            Poll::Pending
        })
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let mut st = self.pipe.lock();
        st.tx_closed = true;
        st.tx_waker = None;
        if let Some(w) = st.rx_waker.take() {
            w.wake();
        }
    }
}

/// The receiving end.
pub struct Receiver<T> {
    pipe: Arc<Pipe<T>>,
}

impl<T> Receiver<T> {
    /// The node at the other end: who sends on this pipe.
    pub fn peer(&self) -> NodeId {
        self.pipe.src
    }

    /// The next message; None once the sender is gone and the queue drained.
    /// Cancel-safe: a message is taken only when returned.
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let pipe = &*self.pipe;
        let mut st = pipe.lock();
        loop {
            let now = pipe.net.time.now_instant();
            let Some(head) = st.queue.front().map(|(_, at)| *at) else {
                if st.tx_closed {
                    return Poll::Ready(None);
                }
                set_waker(&mut st.rx_waker, cx);
                return Poll::Pending;
            };
            match head {
                Some(at) if at <= now => {
                    let (msg, _) = st.queue.pop_front().expect("head");
                    return Poll::Ready(Some(msg));
                }
                Some(at) => return arm(&pipe.net.time, &mut st.armed, cx, at, now),
                None => match st.retry {
                    Some((at, _)) if now < at => return arm(&pipe.net.time, &mut st.armed, cx, at, now),
                    retry => {
                        // madsim's TCP: retry the link after 1 ms, doubling up to 10 s.
                        if retry.is_some() {
                            if let Some(a) = pipe.net.arrival(pipe.src, pipe.dst) {
                                if let Some(h) = st.queue.front_mut() {
                                    h.1 = Some(a);
                                }
                                st.retry = None;
                                continue;
                            }
                        }
                        let backoff =
                            retry.map_or(Duration::from_millis(1), |(_, b)| (b * 2).min(Duration::from_secs(10)));
                        st.retry = Some((now + backoff, backoff));
                        return arm(&pipe.net.time, &mut st.armed, cx, now + backoff, now);
                    }
                },
            }
        }
    }

    pub async fn recv(&mut self) -> Option<T> {
        poll_fn(|cx| self.poll_recv(cx)).await
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let mut st = self.pipe.lock();
        st.rx_closed = true;
        st.rx_waker = None;
        let queue = std::mem::take(&mut st.queue);
        if let Some(w) = st.tx_waker.take() {
            w.wake();
        }
        drop(st);
        drop(queue);
    }
}

fn set_waker(slot: &mut Option<Waker>, cx: &Context<'_>) {
    match slot {
        Some(w) if w.will_wake(cx.waker()) => {}
        _ => *slot = Some(cx.waker().clone()),
    }
}

/// Waits for `at` with at most one pending madsim timer: a madsim `Sleep`
/// registers a new timer on every poll and never cancels one.
fn arm<R>(time: &TimeHandle, armed: &mut Option<Instant>, cx: &mut Context<'_>, at: Instant, now: Instant) -> Poll<R> {
    // A pending timer that fires by `at` (or by madsim's 1 ms minimum) will do.
    let by = at.max(now + Duration::from_millis(1));
    if !matches!(*armed, Some(a) if a > now && a <= by) {
        // madsim's `Sleep` registers its timer when polled pending.
        let mut sleep = time.sleep_until(at);
        *armed = Some(sleep.deadline());
        let _ = Pin::new(&mut sleep).poll(cx);
    }
    Poll::Pending
}

/// A wake-up at a moving deadline that keeps at most one madsim timer
/// pending (see `arm`).
pub struct Alarm {
    time: TimeHandle,
    armed: Option<Instant>,
}

impl Alarm {
    /// Call inside the runtime.
    pub fn new() -> Self {
        Alarm {
            time: TimeHandle::current(),
            armed: None,
        }
    }

    /// The current virtual time.
    pub fn now(&self) -> Instant {
        self.time.now_instant()
    }

    /// Ready once `at` has passed.
    pub fn poll_at(&mut self, cx: &mut Context<'_>, at: Instant) -> Poll<()> {
        let now = self.time.now_instant();
        if now >= at {
            return Poll::Ready(());
        }
        arm(&self.time, &mut self.armed, cx, at, now)
    }
}

/// A connection as one side sees it.
pub type Conn<Out, In> = (Sender<Out>, Receiver<In>);

struct AcceptQueue<Up, Down> {
    pending: VecDeque<Conn<Down, Up>>,
    waker: Option<Waker>,
    closed: bool,
}

/// Accepts connections whose client sends `Up` and receives `Down`.
pub struct Listener<Up, Down> {
    net: Arc<Net>,
    addr: SocketAddr,
    q: Arc<Mutex<AcceptQueue<Up, Down>>>,
}

impl<Up: Send + 'static, Down: Send + 'static> Listener<Up, Down> {
    /// Listens on `addr` from the current node, replacing any listener a
    /// killed incarnation of the node left behind.
    pub fn bind(addr: SocketAddr) -> Self {
        let net = net();
        let q = Arc::new(Mutex::new(AcceptQueue {
            pending: VecDeque::new(),
            waker: None,
            closed: false,
        }));
        let erased: Arc<dyn Any + Send + Sync> = q.clone();
        net.lock().listeners.insert(addr, (madsim::plugin::node(), erased));
        Listener { net, addr, q }
    }

    /// The next connection (never None while the listener lives).
    pub async fn accept(&self) -> Option<Conn<Down, Up>> {
        poll_fn(|cx| {
            let mut q = self.q.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(c) = q.pending.pop_front() {
                return Poll::Ready(Some(c));
            }
            if q.closed {
                return Poll::Ready(None);
            }
            set_waker(&mut q.waker, cx);
            Poll::Pending
        })
        .await
    }
}

impl<Up, Down> Drop for Listener<Up, Down> {
    fn drop(&mut self) {
        let mut g = self.net.lock();
        let mine = g
            .listeners
            .get(&self.addr)
            .is_some_and(|(_, q)| std::ptr::eq(Arc::as_ptr(q) as *const u8, Arc::as_ptr(&self.q) as *const u8));
        if mine {
            g.listeners.remove(&self.addr);
        }
        drop(g);
        let mut q = self.q.lock().unwrap_or_else(|e| e.into_inner());
        q.closed = true;
        q.waker = None;
        let pending = std::mem::take(&mut q.pending);
        drop(q);
        drop(pending);
    }
}

/// Connects from the current node to `addr`: sends `Up`, receives `Down`.
/// Fails at once if nobody listens there or the link is clogged.
pub async fn connect<Up: Send + 'static, Down: Send + 'static>(addr: SocketAddr) -> std::io::Result<Conn<Up, Down>> {
    let refused = || std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "connection refused");
    // madsim's connect takes a little time too.
    madsim::time::sleep(Duration::from_millis(1)).await;
    let net = net();
    let me = madsim::plugin::node();
    let (node, q) = {
        let g = net.lock();
        let (node, q) = g.listeners.get(&addr).ok_or_else(refused)?;
        if g.clogged.contains(&(me, *node)) {
            return Err(refused());
        }
        (*node, q.clone())
    };
    let q = q.downcast::<Mutex<AcceptQueue<Up, Down>>>().map_err(|_| refused())?;
    let up = Pipe::new(net.clone(), me, node);
    let down = Pipe::new(net, node, me);
    let mut g = q.lock().unwrap_or_else(|e| e.into_inner());
    if g.closed {
        return Err(refused());
    }
    g.pending
        .push_back((Sender { pipe: down.clone() }, Receiver { pipe: up.clone() }));
    if let Some(w) = g.waker.take() {
        w.wake();
    }
    Ok((Sender { pipe: up }, Receiver { pipe: down }))
}
