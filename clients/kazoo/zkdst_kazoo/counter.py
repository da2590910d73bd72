"""Kazoo's Counter, as zkdst's counter workload drives its counter: each
client, in a loop, increments (`counter += 1`, seven in ten) or reads
(`counter.value`) the shared counter.

Records `increment` (delta 1; ok with the counter's `post_value`, the
value the increment wrote; an exception: info, since Kazoo's retry may
have applied it on an earlier attempt) and `counter_read` (ok with the
value; an exception: info)."""

import time

from kazoo.exceptions import KazooException

from .env import Session, run_clients

C = "/counters/c"


def client(env, i):
    rec = env.record
    rng = env.rng(i)
    sess = Session(env, i)
    if not sess.start():
        return
    while env.running():
        if not sess.wait_connected(env.left_s()):
            break
        c = sess.zk.Counter(C)
        sid = sess.session_id
        if rng.random() < 0.7:
            op = rec.invoke(i, sid, {"f": "increment", "counter": C, "delta": 1})
            try:
                c += 1
                rec.ok(i, op, {"kind": "int", "value": c.post_value})
            except KazooException as e:
                rec.info(i, op, f"{type(e).__name__}: {e}")
        else:
            op = rec.invoke(i, sid, {"f": "counter_read", "counter": C})
            try:
                rec.ok(i, op, {"kind": "int", "value": c.value})
            except KazooException as e:
                rec.info(i, op, f"{type(e).__name__}: {e}")
        time.sleep(rng.uniform(0.005, 0.05))
    sess.stop()


def main(env):
    run_clients(env, client)
