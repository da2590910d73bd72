"""What zkdst tells a workload (its environment) and the pieces every
workload shares: one KazooClient per application client, with the
connection-state listener Kazoo's documentation asks applications for."""

import os
import sys
import random
import threading
import time

from kazoo.client import KazooClient, KazooState
from kazoo.retry import KazooRetry

from .record import Record

# The recipe's own "gave up waiting" (zkdst's checkers name it so).
GAVE_UP = "gave up waiting (cancelled)"


class Env:
    def __init__(self):
        e = os.environ
        self.clients = int(e["ZKDST_CLIENTS"])
        self.connect = [e[f"ZKDST_CONNECT_{i}"] for i in range(self.clients)]
        self.t0 = int(e["ZKDST_T0_NS"])
        self.stop_ms = int(e["ZKDST_STOP_MS"])
        self.fault_ms = int(e["ZKDST_FAULT_MS"])
        self.seed = int(e.get("ZKDST_SEED", "0"))
        self.session_timeout_s = int(e.get("ZKDST_SESSION_TIMEOUT_MS", "4000")) / 1000.0
        self.record = Record(e["ZKDST_RECORD"])

    def elapsed_ms(self):
        return (time.monotonic_ns() - self.t0) / 1e6

    def running(self):
        return self.elapsed_ms() < self.stop_ms

    def left_s(self):
        return max(0.0, (self.stop_ms - self.elapsed_ms()) / 1000.0)

    def rng(self, client):
        return random.Random(self.seed * 1000 + client)


class Session:
    """One application client: its KazooClient and what its listener heard.

    As Kazoo's documentation tells applications: SUSPENDED means the
    connection dropped (a lock may no longer be held: pause), LOST means the
    session is gone (every ephemeral node, every lock, is lost); CONNECTED
    again after SUSPENDED means the session survived."""

    def __init__(self, env, client):
        self.env = env
        self.client = client
        self.state = KazooState.LOST
        self.lost = threading.Event()
        self.connected = threading.Condition()
        self.session_id = 0
        # Set by stop(): the LOST that closing brings is not an expiry.
        self.closing = False
        # How many times the connection was SUSPENDED so far.
        self.suspensions = 0
        # Called with each new state, under `connected`, after its record
        # line: a recipe's report the application learns from the state.
        self.hooks = []
        self.zk = KazooClient(
            hosts=env.connect[client],
            timeout=env.session_timeout_s,
            connection_retry=KazooRetry(max_tries=-1, delay=0.05, max_delay=0.5),
        )
        self.zk.add_listener(self._listen)

    def _listen(self, state):
        # The record line, the new state and the hooks, all under the
        # condition: a worker that checks the state before acting (under it)
        # acts either before the line or after seeing the state.
        rec = self.env.record
        with self.connected:
            if state == KazooState.CONNECTED:
                sid = self.zk.client_id[0] if self.zk.client_id else 0
                if sid != self.session_id:
                    self.lost.clear()
                self.session_id = sid
                rec.session(self.client, sid, "connected")
            elif state == KazooState.SUSPENDED:
                self.suspensions += 1
                rec.session(self.client, self.session_id, "disconnected")
            else:
                if self.session_id and not self.closing:
                    rec.session(self.client, self.session_id, "expired")
                self.lost.set()
            self.state = state
            for hook in list(self.hooks):
                hook(state)
            self.connected.notify_all()

    def start(self):
        """Connects, retrying until the run stops; False if it never did."""
        while self.env.running():
            try:
                self.zk.start(timeout=max(1.0, min(10.0, self.env.left_s())))
                return True
            except Exception:
                time.sleep(0.1)
        return False

    def wait_connected(self, limit_s):
        end = time.monotonic() + limit_s
        with self.connected:
            while self.state != KazooState.CONNECTED:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self.connected.wait(left)
        return True

    def stop(self):
        with self.connected:
            # A session the listener already heard LOST (recorded expired)
            # is not closed again: Expired is terminal.
            ended = self.lost.is_set()
            self.closing = True
        try:
            self.zk.stop()
            self.zk.close()
        except Exception:
            pass
        if self.session_id and not ended:
            self.env.record.session(self.client, self.session_id, "closed")


class Resource:
    """The protected resource: rejects a token older than one it accepted."""

    def __init__(self):
        self._mu = threading.Lock()
        self._max = None

    def write(self, token):
        with self._mu:
            if self._max is not None and token < self._max:
                return False
            self._max = token
            return True


def run_clients(env, body):
    """Runs body(env, client) on one thread per client, and waits."""
    threads = [threading.Thread(target=body, args=(env, i), daemon=True) for i in range(env.clients)]
    for t in threads:
        t.start()
    # One deadline for all: a client blocked in its recipe is abandoned.
    end = time.monotonic() + env.left_s() + 4.0
    for t in threads:
        t.join(timeout=max(0.0, end - time.monotonic()))
    env.record.close()
    # A client still blocked in a Kazoo call (its ensemble is about to
    # stop) must not keep the process alive: its call is in the record,
    # unfinished, for the liveness checker.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
