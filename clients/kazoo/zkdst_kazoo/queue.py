"""Kazoo's Queue (at-most-once: `get()` deletes the entry before the
application processes it) and LockingQueue (at-least-once: `get()` locks
an entry, `consume()` removes it, `release()` gives it back), driven as
zkdst's queue workload drives its queues: clients 0 and 1 produce unique
items (`put`, pausing while the queue holds more than 50) until a second
after the faults heal; the others take items until the run stops, which
drains the queue (the scenario's `drained`).

Records `enqueue` (ok; an exception: info, it may have been created),
`dequeue` (ok with the item; ok with item null when the queue had nothing
to give, as `Value::Item` allows; an exception: info) and, for the
LockingQueue, `complete` for each `consume()` (ok when it returned True;
fail when it returned False or found its lock node gone, the claim lost;
an exception: info). A claim whose session the listener heard end is not
completed (another consumer may hold the item), as zkdst's workload does.

An empty take is recorded as ok with item null, not as zkdst's
"nothing to take" / "nothing to claim" failure: the checker judges those
by the take's own getChildren calls, which a client record cannot hold."""

import time

from kazoo.exceptions import KazooException, NoNodeError

from .env import Session, run_clients

Q = "/queues/q"
PRODUCERS = 2
BACKLOG = 50


def make(zk, locking):
    # The plain queue's entries go in Q/items, where the checker looks
    # for items left in a drained queue; the LockingQueue's go in
    # Q/entries (its claims in Q/taken).
    return zk.LockingQueue(Q) if locking else zk.Queue(Q + "/items")


def err(e):
    return f"{type(e).__name__}: {e}"


def produce(env, sess, rng, locking):
    rec, i = env.record, sess.client
    q = make(sess.zk, locking)
    n = 0
    # Producing ends a second after the heal: the rest of the run drains.
    until = env.fault_ms + 1000
    while env.running() and env.elapsed_ms() < until:
        if not sess.wait_connected(env.left_s()):
            break
        try:
            if len(q) > BACKLOG:
                time.sleep(rng.uniform(0.02, 0.1))
                continue
        except KazooException:
            continue
        n += 1
        item = f"p{i}-{n}"
        op = rec.invoke(i, sess.session_id, {"f": "enqueue", "queue": Q, "item": item, "priority": 0})
        try:
            q.put(item.encode())
            rec.ok(i, op)
        except KazooException as e:
            rec.info(i, op, err(e))
        time.sleep(rng.uniform(0.005, 0.05))


def took(rec, i, op, data):
    rec.ok(i, op, {"kind": "item", "item": data.decode() if data is not None else None})


def consume_at_most_once(env, sess, rng):
    rec, i = env.record, sess.client
    q = make(sess.zk, False)
    while env.running():
        if not sess.wait_connected(env.left_s()):
            break
        op = rec.invoke(i, sess.session_id, {"f": "dequeue", "queue": Q})
        try:
            took(rec, i, op, q.get())
        except KazooException as e:
            rec.info(i, op, err(e))
        time.sleep(rng.uniform(0.005, 0.05))


def process(env, sess, rng, sid):
    """Processes a claimed item; one in five during the faults for 1.5-3
    session timeouts, stopping once the session is known lost."""
    if env.elapsed_ms() < env.fault_ms and rng.random() < 0.2:
        end = time.monotonic() + rng.uniform(1.5, 3.0) * env.session_timeout_s
        while time.monotonic() < end and env.elapsed_ms() < env.fault_ms:
            if sess.lost.is_set() or sess.session_id != sid:
                return
            time.sleep(rng.uniform(0.05, 0.3))
    time.sleep(rng.uniform(0.005, 0.05))


def complete(env, sess, q, item):
    rec, i = env.record, sess.client
    op = rec.invoke(i, sess.session_id, {"f": "complete", "queue": Q, "item": item})
    try:
        if q.consume():
            rec.ok(i, op)
        else:
            rec.fail(i, op, "claim lost: the lock is not ours")
    except NoNodeError as e:
        # holds_lock() read our lock node: it is gone, so is the claim.
        rec.fail(i, op, f"claim lost: {err(e)}")
    except KazooException as e:
        rec.info(i, op, err(e))


def consume_at_least_once(env, sess, rng):
    rec, i = env.record, sess.client
    while env.running():
        if not sess.wait_connected(env.left_s()):
            break
        # A fresh LockingQueue per take: one whose consume failed keeps
        # its element and would hand it out again.
        q = make(sess.zk, True)
        sid = sess.session_id
        op = rec.invoke(i, sid, {"f": "dequeue", "queue": Q})
        blocking = env.elapsed_ms() < env.fault_ms and rng.random() < 0.3
        try:
            data = q.get(timeout=rng.uniform(0.01, 2.0) if blocking else 0)
        except KazooException as e:
            rec.info(i, op, err(e))
            continue
        took(rec, i, op, data)
        if data is None:
            time.sleep(rng.uniform(0.005, 0.05))
            continue
        process(env, sess, rng, sid)
        if sess.lost.is_set() or sess.session_id != sid:
            continue  # the claim went with the session: not ours to finish
        if env.elapsed_ms() < env.fault_ms and rng.random() < 0.1:
            try:
                q.release()  # processing failed: give the item back
            except KazooException:
                pass
            continue
        complete(env, sess, q, data.decode())
        time.sleep(rng.uniform(0.005, 0.05))


def client(env, i, locking):
    rng = env.rng(i)
    sess = Session(env, i)
    if not sess.start():
        return
    if i < PRODUCERS:
        produce(env, sess, rng, locking)
    elif locking:
        consume_at_least_once(env, sess, rng)
    else:
        consume_at_most_once(env, sess, rng)
    sess.stop()


def main(env):
    run_clients(env, lambda env, i: client(env, i, False))


def main_locking(env):
    run_clients(env, lambda env, i: client(env, i, True))
