"""Kazoo's DoubleBarrier, as zkdst's double-barrier workload drives its
double barrier: every client enters, works a while and leaves, round
after round, each round in its own directory (a Kazoo double barrier's
`ready` node makes a directory single-use); client 0 decides the last
round, three seconds before the run stops, so nobody enters a round the
others will not.

Kazoo's enter() and leave() wait without a time limit and hear nothing of
the session (its documentation asks the application to listen for session
loss: the participant is out of the barrier once its session is gone), and
enter() swallows its errors (then `participating` is False). So each call
runs on a helper thread; the client waits for it or for its listener to
hear LOST, and then rejoins the round under its new session, as zkdst's
workload does; a call still waiting two seconds after the run stops is
left pending (the thread gives up on it).

Records `barrier_enter` (ok with the participant's node name, as the
checker asks; fail "session lost (LOST)" when the session ended under it;
info when Kazoo's enter() gave up on an error) and `barrier_leave` (ok;
fail "session lost (LOST)": the node went with the session)."""

import threading

from .env import Session, run_clients

DIR = "/barriers/double"
LOST = "session lost (LOST): the participant's node went with it"
shared = {"last": 0}


def call(sess, fn):
    """Runs fn on a helper thread: True if it returned with the session it
    began in alive, False if that session was LOST (the helper is
    abandoned, maybe blocked for good)."""
    sid = sess.session_id
    done = threading.Event()

    def run():
        try:
            fn()
        finally:
            done.set()

    threading.Thread(target=run, daemon=True).start()
    gone = lambda: sess.lost.is_set() or sess.session_id != sid
    while not done.wait(0.05):
        if gone():
            return False
        if sess.env.elapsed_ms() > sess.env.stop_ms + 2000:
            return None  # still waiting as the run ends: left pending
    return not gone()


def client(env, i):
    rec = env.record
    rng = env.rng(i)
    sess = Session(env, i)
    if not sess.start():
        return
    k = 0
    while True:
        k += 1
        path = f"{DIR}/round-{k}"
        while True:
            if not sess.wait_connected(env.left_s() + 3):
                sess.stop()
                return
            b = sess.zk.DoubleBarrier(path, env.clients, f"client{i}")
            op = rec.invoke(i, sess.session_id, {"f": "barrier_enter", "barrier": DIR})
            r = call(sess, b.enter)
            if r is None:
                return
            if not r:
                rec.fail(i, op, LOST)
                continue  # rejoin the round with the new session
            if b.participating:
                rec.ok(i, op, {"kind": "str", "value": b.node_name})
                break
            rec.info(i, op, "Kazoo's enter() failed (participating is False)")
            if sess.lost.is_set():
                continue
            sess.stop()
            return
        if i == 0 and env.elapsed_ms() > env.stop_ms - 3000:
            shared["last"] = k
        env_sleep = rng.uniform(0.001, 0.2)
        threading.Event().wait(env_sleep)
        op = rec.invoke(i, sess.session_id, {"f": "barrier_leave", "barrier": DIR})
        r = call(sess, b.leave)
        if r is None:
            return
        if r:
            rec.ok(i, op)
        else:
            rec.fail(i, op, LOST)
        if shared["last"] and k >= shared["last"]:
            break
        threading.Event().wait(rng.uniform(0.005, 0.05))
    sess.stop()


def main(env):
    run_clients(env, client)
