"""Kazoo's ReadLock and WriteLock on one path, as zkdst's rwlock workload
drives its read/write lock: each client takes the read side (six in ten)
or the write side (a quarter of the acquires give up after 0.2-2 s, the
rest at the end of the run), reads the token (the czxid of its lock node),
holds it a while, a writer writing the protected resource with the token
(pausing while SUSPENDED, stopping once the session is LOST), and
releases.

Records `acquire` {shared} (ok with the token; fail "gave up waiting
(cancelled)" on LockTimeout or False; an exception: info), `fenced_write`
(writers; ok, or the resource's StaleToken error), `hold_lost` when the
session ended under a hold, and `release`. A lock Kazoo's retry took under
a later session than the acquire began in is recorded info: the checkers
tie a hold to the acquire's session."""

import time

from kazoo.exceptions import KazooException, LockTimeout

from .env import GAVE_UP, Resource, Session, run_clients

RW = "/locks/rw"
resource = Resource()


def hold(env, sess, token, rng, sid, shared):
    rec = env.record
    for _ in range(rng.randint(1, 3)):
        with sess.connected:
            # SUSPENDED: the lock may be gone; wait for CONNECTED or LOST.
            end = time.monotonic() + 2 * env.session_timeout_s
            while sess.state == "SUSPENDED" and not sess.lost.is_set() and time.monotonic() < end:
                sess.connected.wait(end - time.monotonic())
            if sess.lost.is_set() or sess.session_id != sid:
                rec.report(sess.client, sid, {"f": "hold_lost", "lock": RW, "token": token})
                return
            if sess.state == "SUSPENDED":
                continue
            if not shared:
                wid = rec.invoke(sess.client, sid, {"f": "fenced_write", "resource": RW, "token": token})
        if not shared:
            time.sleep(rng.uniform(0.001, 0.003))
            ok = resource.write(token)
            rec.ok(sess.client, wid, None if ok else {"kind": "error", "code": "StaleToken"})
        time.sleep(rng.uniform(0.001, 0.040))


def client(env, i):
    rec = env.record
    rng = env.rng(i)
    sess = Session(env, i)
    if not sess.start():
        return
    while env.running():
        if not sess.wait_connected(env.left_s()):
            break
        shared = rng.random() < 0.6
        lock = (sess.zk.ReadLock if shared else sess.zk.WriteLock)(RW, f"client{i}")
        sid = sess.session_id
        op = rec.invoke(i, sid, {"f": "acquire", "lock": RW, "shared": shared})
        limit = rng.uniform(0.2, 2.0) if rng.random() < 0.25 else max(0.5, env.left_s())
        try:
            got = lock.acquire(timeout=limit)
        except LockTimeout:
            rec.fail(i, op, GAVE_UP)
            continue
        except KazooException as e:
            rec.info(i, op, f"{type(e).__name__}: {e}")
            continue
        if not got:
            rec.fail(i, op, GAVE_UP)
            continue
        try:
            st = sess.zk.retry(sess.zk.exists, lock.path + "/" + lock.node) if lock.node else None
        except KazooException:
            st = None
        if st is None:
            rec.info(i, op, "the lock's node was gone before its token was read")
        elif st.ephemeralOwner != sid:
            rec.info(i, op, f"locked under a later session {st.ephemeralOwner:#x}")
        else:
            rec.ok(i, op, {"kind": "token", "token": st.czxid})
            hold(env, sess, st.czxid, rng, sid, shared)
        rid = rec.invoke(i, sid, {"f": "release", "lock": RW})
        try:
            lock.release()
            rec.ok(i, rid)
        except KazooException as e:
            rec.info(i, rid, f"{type(e).__name__}: {e}")
        time.sleep(rng.uniform(0.005, 0.050))
    sess.stop()


def main(env):
    run_clients(env, client)
