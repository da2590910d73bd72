"""Kazoo's Lock, as an application holds it: acquire (some with a timeout),
read the fencing token (the czxid of the lock's node), write to the
protected resource a few times while holding, release; pause while the
connection is SUSPENDED and stop acting the moment the session is LOST,
as Kazoo's documentation tells lock users."""

import time

from kazoo.exceptions import KazooException, LockTimeout

from .env import GAVE_UP, Resource, Session, run_clients

LOCK = "/locks/l"
RESOURCE = LOCK
resource = Resource()


def acquire_op():
    return {"f": "acquire", "lock": LOCK, "shared": False}


def stat_of(sess, lock):
    """The Stat of the node the lock stands on (its czxid is the fencing
    token, its ephemeralOwner the holding session), or None if it is gone."""
    if not lock.node:
        return None
    return sess.zk.retry(sess.zk.exists, lock.path + "/" + lock.node)


def hold(env, sess, lock, token, rng, session_at_acquire):
    rec = env.record
    for _ in range(rng.randint(1, 3)):
        with sess.connected:
            # SUSPENDED: the lock may be gone; wait for CONNECTED or LOST.
            end = time.monotonic() + 2 * env.session_timeout_s
            while sess.state == "SUSPENDED" and not sess.lost.is_set() and time.monotonic() < end:
                sess.connected.wait(end - time.monotonic())
            if sess.lost.is_set() or sess.session_id != session_at_acquire:
                rec.report(sess.client, session_at_acquire, {"f": "hold_lost", "lock": LOCK, "token": token})
                return
            if sess.state == "SUSPENDED":
                continue
            wid = rec.invoke(sess.client, session_at_acquire, {"f": "fenced_write", "resource": RESOURCE, "token": token})
        time.sleep(rng.uniform(0.001, 0.003))
        if resource.write(token):
            rec.ok(sess.client, wid)
        else:
            rec.ok(sess.client, wid, {"kind": "error", "code": "StaleToken"})
        time.sleep(rng.uniform(0.001, 0.040))


def client(env, i, make_lock=None):
    rec = env.record
    rng = env.rng(i)
    sess = Session(env, i)
    if not sess.start():
        return
    lock = make_lock(sess.zk, LOCK, f"client{i}") if make_lock else sess.zk.Lock(LOCK, f"client{i}")
    while env.running():
        if not sess.wait_connected(env.left_s()):
            break
        sid = sess.session_id
        call = rec.begin(i, sid, acquire_op())
        try:
            # A quarter of the acquires give up after a while; the rest
            # wait until the run ends.
            limit = rng.uniform(0.2, 2.0) if rng.random() < 0.25 else max(0.5, env.left_s())
            got = lock.acquire(timeout=limit)
        except LockTimeout:
            rec.fail(i, rec.finish(call), GAVE_UP)
            continue
        except KazooException as e:
            rec.info(i, rec.finish(call), f"{type(e).__name__}: {e}")
            continue
        if not got:
            rec.fail(i, rec.finish(call), GAVE_UP)
            continue
        try:
            st = stat_of(sess, lock)
        except KazooException:
            st = None
        if st is None:
            rec.info(i, rec.finish(call), "the lock's node was gone before its token was read")
        else:
            # Kazoo's acquire retries across a session expiry and may take
            # the lock on the client's next session: the hold is the
            # session that owns the node.
            sid = st.ephemeralOwner
            rec.ok(i, rec.finish(call, sid), {"kind": "token", "token": st.czxid})
            hold(env, sess, lock, st.czxid, rng, sid)
        rid = rec.invoke(i, sid, {"f": "release", "lock": LOCK})
        try:
            lock.release()
            rec.ok(i, rid)
        except KazooException as e:
            rec.info(i, rid, f"{type(e).__name__}: {e}")
        time.sleep(rng.uniform(0.005, 0.050))
    sess.stop()


def main(env, broken=None):
    if broken is None:
        run_clients(env, client)
        return
    from .broken import LOCKS

    run_clients(env, lambda env, i: client(env, i, LOCKS[broken]))
