"""Kazoo's Election, as an application stands in it: campaign with
`election.run(lead)` (three in ten give up after a while via
`election.cancel()`, the rest at the end of the run), and while `lead` runs
act as leader on a protected resource with the leadership's token (the
czxid of the election node it won with), a few times or, one term in
three, for 1.5-3 session timeouts; then return (Kazoo deletes the node).

Records what zkdst's election workload records: `campaign` (ok with the
token, or fail "gave up waiting (cancelled)"), `leader_act` (ok, or the
resource's StaleToken error), `resign`, and `leadership_lost` the instant
the application learns its leadership may be gone: its connection listener
hears SUSPENDED or LOST (Kazoo's documentation: SUSPENDED means the
leadership may be lost, so a leader stops acting; the scenario's
leader_grace_ms = 0 says so to the checker)."""

import threading
import time

from kazoo.client import KazooState
from kazoo.exceptions import KazooException

from .env import GAVE_UP, Resource, Session, run_clients

ELECTION = "/elections/e"
resource = Resource()


def campaign_op():
    return {"f": "campaign", "election": ELECTION}


class Leading:
    """This client's leadership, as its listener may end it: the token it
    leads with (None: not leading). Guarded by the session's condition."""

    def __init__(self, sess):
        self.sess = sess
        self.token = None
        self.session = 0
        sess.hooks.append(self._on_state)

    def _on_state(self, state):
        if self.token is None or state == KazooState.CONNECTED:
            return
        reason = "suspended: the connection was lost" if state == KazooState.SUSPENDED else "session lost (LOST)"
        op = {"f": "leadership_lost", "election": ELECTION, "token": self.token, "reason": reason}
        self.sess.env.record.report(self.sess.client, self.session, op)
        self.token = None


def serve(env, sess, leading, token, sid, rng):
    """Acts as leader while the listener has not ended the leadership."""
    rec = env.record
    t = env.session_timeout_s
    until = time.monotonic() + rng.uniform(1.5 * t, 3 * t) if rng.random() < 0.33 else None
    acts = rng.randint(1, 3)
    while True:
        with sess.connected:
            if leading.token != token:
                return
            aid = rec.invoke(sess.client, sid, {"f": "leader_act", "election": ELECTION, "token": token})
        time.sleep(rng.uniform(0.001, 0.003))
        if resource.write(token):
            rec.ok(sess.client, aid)
        else:
            rec.ok(sess.client, aid, {"kind": "error", "code": "StaleToken"})
        if until is not None:
            if time.monotonic() >= until or not env.running():
                return
            time.sleep(rng.uniform(0.05, 0.3))
        else:
            acts -= 1
            if acts == 0:
                return
            time.sleep(rng.uniform(0.005, 0.05))


def campaign(env, sess, leading, rng):
    """One campaign and, if elected, one term."""
    rec, i = env.record, sess.client
    election = sess.zk.Election(ELECTION, f"client{i}")
    sid = sess.session_id
    op = rec.invoke(i, sid, campaign_op())
    mu = threading.Lock()
    state = {"elected": False, "resign": None}

    def give_up():
        with mu:
            if not state["elected"]:
                election.cancel()

    limit = rng.uniform(0.2, 2.0) if rng.random() < 0.3 else max(0.5, env.left_s())
    timer = threading.Timer(limit, give_up)
    timer.daemon = True
    timer.start()

    def lead():
        with mu:
            state["elected"] = True
        lock = election.lock
        try:
            st = sess.zk.retry(sess.zk.exists, lock.path + "/" + lock.node) if lock.node else None
        except KazooException:
            st = None
        with sess.connected:
            if st is None or st.ephemeralOwner != sid or sess.session_id != sid:
                # Elected on a node of a later session, or the node is gone:
                # not a leadership of the session the campaign began in.
                rec.info(i, op, "elected, but not on a live node of the campaign's session")
            else:
                rec.ok(i, op, {"kind": "token", "token": st.czxid})
                leading.token, leading.session = st.czxid, sid
                if sess.state != KazooState.CONNECTED:
                    # Already suspended: the listener spoke before we led.
                    leading._on_state(sess.state)
        if st is not None and leading.token == st.czxid:
            serve(env, sess, leading, st.czxid, sid, rng)
        with sess.connected:
            leading.token = None
            state["resign"] = rec.invoke(i, sid, {"f": "resign", "election": ELECTION})

    try:
        election.run(lead)
    except KazooException as e:
        if state["resign"] is not None:
            rec.info(i, state["resign"], f"{type(e).__name__}: {e}")
        elif not state["elected"]:
            rec.info(i, op, f"{type(e).__name__}: {e}")
        return
    finally:
        timer.cancel()
    if state["resign"] is not None:
        rec.ok(i, state["resign"])
    elif not state["elected"]:
        rec.fail(i, op, GAVE_UP)


def client(env, i):
    rng = env.rng(i)
    sess = Session(env, i)
    if not sess.start():
        return
    leading = Leading(sess)
    while env.running():
        if not sess.wait_connected(env.left_s()):
            break
        campaign(env, sess, leading, rng)
        time.sleep(rng.uniform(0.005, 0.05))
    sess.stop()


def main(env):
    run_clients(env, client)
