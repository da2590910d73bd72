"""Kazoo's Party and ShallowParty, as zkdst's membership workload drives
its group members: every client is a member of two groups, a `Party`
(/parties/deep: the member's identifier is its node's data) and a
`ShallowParty` (/parties/shallow: the identifier is in its node's name);
one party object per client and group for the whole run. Round after
round it picks one of its groups and joins (`join()`), or leaves
(`leave()`, one time in five), or reads the members (iterating the party)
and, if it stands in the group, acts as a member. Once the faults have
healed (two seconds after), every client makes sure it is joined to both
groups, waits for the others (outside ZooKeeper), reads both groups'
members a last time and stays until every client read them.

As Kazoo's documentation tells applications: SUSPENDED means the member
may be out of the group (it does not act), LOST means the session and its
ephemeral node are gone: the member is out of the group, and the
application joins again on the client's next session. A member acts
(`member_act`) only while its listener has the connection CONNECTED on the
session its last join ran on.

The membership checker names a member by its node under the group
(`{group}/{member}` must exist when a join is acknowledged), so the
member's name in the record is its party's node name (`party.node`); a
party's iteration yields identifiers (Party: the node's data; ShallowParty:
the name after its uuid), and the application, which gave each member its
identifier (`c{client}`), maps each to that member's node name, one to
one. Kazoo reports no zxid with a view, so a view is recorded as
`names` (the membership checker judges convergence and the joins and
leaves by it; a `view` with a zxid would also be judged against the
commit log).

Records what zkdst's membership workload records: `join` (ok, or info
with the error), `leave`, `members` (ok with the names, or info), and
`member_act`."""

import threading
import time

from .env import Session, run_clients

GROUPS = [("/parties/deep", "Party"), ("/parties/shallow", "ShallowParty")]
# (group, identifier) -> the node name of the member that has it.
registry = {}
registry_mu = threading.Lock()
# The final phase's meeting points (set in main).
meet = {}


def err_text(e):
    return f"{type(e).__name__}: {e}"


class Member:
    """One client's party object in one group."""

    def __init__(self, sess, group, kind):
        self.sess = sess
        self.group = group
        self.ident = f"c{sess.client}"
        self.party = getattr(sess.zk, kind)(group, self.ident)
        self.name = self.party.node
        with registry_mu:
            registry[(group, self.ident)] = self.name
        # The session the last acknowledged join ran on (None: not joined,
        # left, or the join's outcome unknown).
        self.joined = None

    def op(self, f):
        return {"f": f, "group": self.group, "member": self.name}

    def standing(self):
        """Joined on the live, connected session it joined on (call under
        sess.connected)."""
        s = self.sess
        return (
            self.joined is not None
            and self.joined == s.session_id
            and not s.lost.is_set()
            and s.state == "CONNECTED"
            and self.party.participating
        )

    def out(self):
        """Not in the group as far as the application knows: never joined,
        left, or its session was LOST since."""
        s = self.sess
        with s.connected:
            return self.joined is None or self.joined != s.session_id or s.lost.is_set()

    def join(self):
        s, rec, i = self.sess, self.sess.env.record, self.sess.client
        with s.connected:
            sid = s.session_id
        call = rec.begin(i, sid, self.op("join"))
        try:
            self.party.join()
        except Exception as e:
            self.joined = None
            rec.info(i, rec.finish(call), err_text(e))
            return False
        with s.connected:
            # Kazoo's join retries across a session expiry: it ran on the
            # session the client has now.
            sid = s.session_id
        self.joined = sid
        rec.ok(i, rec.finish(call, sid))
        return True

    def leave(self):
        s, rec, i = self.sess, self.sess.env.record, self.sess.client
        with s.connected:
            sid = s.session_id
        call = rec.begin(i, sid, self.op("leave"))
        self.joined = None
        try:
            self.party.leave()
        except Exception as e:
            rec.info(i, rec.finish(call), err_text(e))
            return
        rec.ok(i, rec.finish(call))

    def members(self):
        """Reads the members; True if it got a view."""
        s, rec, i = self.sess, self.sess.env.record, self.sess.client
        with s.connected:
            sid = s.session_id
        call = rec.begin(i, sid, {"f": "members", "group": self.group})
        try:
            idents = list(self.party)
        except Exception as e:
            rec.info(i, rec.finish(call), err_text(e))
            return False
        with registry_mu:
            names = sorted(registry.get((self.group, x), x) for x in idents)
        rec.ok(i, rec.finish(call), {"kind": "names", "names": names})
        return True

    def act(self):
        s, rec = self.sess, self.sess.env.record
        with s.connected:
            if self.standing():
                rec.report(s.client, s.session_id, self.op("member_act"))


def final(env, sess, members):
    """After the heal: joined to every group, then the last views."""
    for m in members:
        while m.out() and env.running():
            if not sess.wait_connected(env.left_s()):
                break
            if not m.join():
                time.sleep(0.1)
    try:
        meet["joined"].wait(timeout=max(0.5, env.left_s()))
    except threading.BrokenBarrierError:
        pass
    # Let every server apply the last joins.
    time.sleep(1.0)
    for m in members:
        for _ in range(5):
            if not sess.wait_connected(max(0.5, env.left_s())):
                break
            if m.members():
                break
            time.sleep(0.1)
    try:
        meet["read"].wait(timeout=max(0.5, env.left_s()))
    except threading.BrokenBarrierError:
        pass


def client(env, i):
    rng = env.rng(i)
    sess = Session(env, i)
    if not sess.start():
        for b in meet.values():
            b.abort()
        return
    members = [Member(sess, g, kind) for g, kind in GROUPS]
    until_ms = env.fault_ms + 2000
    while env.elapsed_ms() < until_ms and env.running():
        if not sess.wait_connected(max(0.0, (until_ms - env.elapsed_ms()) / 1000.0)):
            break
        m = rng.choice(members)
        if m.out():
            m.join()
        elif rng.random() < 0.2:
            m.leave()
        else:
            m.members()
            m.act()
        time.sleep(rng.uniform(0.05, 0.6))
    final(env, sess, members)
    sess.stop()


def main(env):
    meet["joined"] = threading.Barrier(env.clients)
    meet["read"] = threading.Barrier(env.clients)
    run_clients(env, client)
