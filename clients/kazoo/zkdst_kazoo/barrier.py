"""Kazoo's Barrier, as zkdst's single-barrier workload drives its barrier:
client 0 puts barrier k up (`create()`), holds it up 50-800 ms and takes it
down (`remove()`, tried again until it succeeds: the waiters hang
otherwise), round after round, each round its own node; the others wait on
each new barrier (`wait()`), three in ten with a time limit of two or three
session timeouts (longer than any stall a connected session sees), the rest
without one. Client 0 announces a round (outside ZooKeeper) only once its
`create()` returned, so every wait is invoked after its barrier was set.

Kazoo's Barrier documents that `wait()` "does not handle connection loss
and may raise ConnectionLossException": a wait that raises is recorded as
what it is (info with the error) once the application's listener heard the
connection go (or two seconds passed), and the waiter moves on to the next
round as zkdst's workload does. A wait still blocked when the run ends is
left unfinished, for the liveness checker.

Records what zkdst's barrier workload records: `barrier_set`,
`barrier_remove` (ok, or info with the error) and `barrier_wait` (ok when
it passed; fail "gave up waiting (cancelled)" when a timed wait returned
False; info with the error)."""

import threading
import time

from .env import GAVE_UP, Session, run_clients

DIR = "/barriers"
shared = {"round": 0}
shared_mu = threading.Lock()


def name(k):
    return f"{DIR}/b{k}"


def err_text(e):
    return f"{type(e).__name__}: {e}"


def heard_drop(sess, before, limit_s=2.0):
    """Waits (up to limit_s) until the listener has heard the connection
    drop, the session end, or anything else since `before` suspensions:
    Kazoo fails the pending calls before it tells the listener."""
    end = time.monotonic() + limit_s
    with sess.connected:
        while sess.suspensions == before and not sess.lost.is_set() and sess.state == "CONNECTED":
            left = end - time.monotonic()
            if left <= 0:
                return
            sess.connected.wait(left)


def setter(env, sess, rng):
    rec, i = env.record, sess.client
    k = 0
    while env.running():
        if not sess.wait_connected(env.left_s()):
            return
        k += 1
        b = sess.zk.Barrier(name(k))
        op = rec.invoke(i, sess.session_id, {"f": "barrier_set", "barrier": name(k)})
        try:
            b.create()
            rec.ok(i, op)
        except Exception as e:
            rec.info(i, op, err_text(e))
        with shared_mu:
            shared["round"] = k
        time.sleep(rng.uniform(0.05, 0.8))
        # Removal must succeed eventually, or the waiters hang.
        while True:
            sess.wait_connected(max(1.0, env.left_s() + 3))
            op = rec.invoke(i, sess.session_id, {"f": "barrier_remove", "barrier": name(k)})
            try:
                b.remove()
                rec.ok(i, op)
                break
            except Exception as e:
                rec.info(i, op, err_text(e))
            if env.elapsed_ms() > env.stop_ms + 3000:
                return
            time.sleep(0.1)
        time.sleep(rng.uniform(0.005, 0.05))


def waiter(env, sess, rng):
    rec, i = env.record, sess.client
    last = 0
    while env.running():
        with shared_mu:
            k = shared["round"]
        if k > last:
            last = k
            if not sess.wait_connected(env.left_s()):
                return
            b = sess.zk.Barrier(name(k))
            timed = rng.random() < 0.3
            limit = env.session_timeout_s * rng.randint(2, 3) if timed else None
            before = sess.suspensions
            call = rec.begin(i, sess.session_id, {"f": "barrier_wait", "barrier": name(k)})
            try:
                cleared = b.wait(limit)
            except Exception as e:
                heard_drop(sess, before)
                rec.info(i, rec.finish(call), err_text(e))
                continue
            if cleared:
                rec.ok(i, rec.finish(call))
            else:
                rec.fail(i, rec.finish(call), GAVE_UP)
        time.sleep(rng.uniform(0.005, 0.05))


def client(env, i):
    rng = env.rng(i)
    sess = Session(env, i)
    if not sess.start():
        return
    if i == 0:
        setter(env, sess, rng)
    else:
        waiter(env, sess, rng)
    sess.stop()


def main(env):
    run_clients(env, client)
