"""Kazoo's Semaphore (2 leases), as zkdst's semaphore workload drives its
semaphore: each client acquires a lease (a quarter of the acquires give up
after 0.2-2 s, the rest at the end of the run), holds it a while (pausing
while SUSPENDED, stopping once the session is LOST), and releases it.

Records `acquired` (ok with the lease node's czxid as token; fail "gave up
waiting (cancelled)" on LockTimeout or False; an exception: info) and
`returned` (ok; an exception: info). A lease Kazoo's retry took under a
later session than the acquire began in is recorded info: the checker
ties a lease to the acquire's session."""

import time

from kazoo.exceptions import KazooException, LockTimeout

from .env import GAVE_UP, Session, run_clients

SEM = "/semaphores/s"
PERMITS = 2


def hold(env, sess, rng, sid):
    for _ in range(rng.randint(1, 3)):
        if not sess.wait_connected(2 * env.session_timeout_s) or sess.session_id != sid:
            return
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
        sem = sess.zk.Semaphore(SEM, f"client{i}", max_leases=PERMITS)
        sid = sess.session_id
        op = rec.invoke(i, sid, {"f": "acquired", "semaphore": SEM})
        limit = rng.uniform(0.2, 2.0) if rng.random() < 0.25 else max(0.5, env.left_s())
        try:
            got = sem.acquire(timeout=limit)
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
            st = sess.zk.retry(sess.zk.exists, sem.create_path)
        except KazooException:
            st = None
        if st is None:
            rec.info(i, op, "the lease's node was gone before its token was read")
        elif st.ephemeralOwner != sid:
            rec.info(i, op, f"leased under a later session {st.ephemeralOwner:#x}")
        else:
            rec.ok(i, op, {"kind": "token", "token": st.czxid})
            hold(env, sess, rng, sid)
        rid = rec.invoke(i, sid, {"f": "returned", "semaphore": SEM})
        try:
            sem.release()
            rec.ok(i, rid)
        except KazooException as e:
            rec.info(i, rid, f"{type(e).__name__}: {e}")
        time.sleep(rng.uniform(0.005, 0.050))
    sess.stop()


def main(env):
    run_clients(env, client)
