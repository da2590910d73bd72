"""The operation record (JSON lines in the history's vocabulary; see
scenarios/src/serve/record.rs): thread-safe, one line per event, times
from CLOCK_MONOTONIC in nanoseconds."""

import json
import threading
import time


class Record:
    def __init__(self, path):
        self._f = open(path, "w", buffering=1)
        self._mu = threading.Lock()
        self._next = 1
        # Calls begun (begin) whose invocation is not written yet.
        self._pending = {}

    def _write(self, obj, at=None):
        # The time is read under the lock: lines are in time order (except
        # invocations written late with their own time, see invoke_at).
        with self._mu:
            obj["time"] = time.monotonic_ns() if at is None else at
            self._f.write(json.dumps(obj, separators=(",", ":")) + "\n")

    def invoke(self, client, session, op):
        with self._mu:
            op_id = self._next
            self._next += 1
        line = {"type": "invoke", "id": op_id, "client": client, "op": op}
        if session:
            line["session"] = session
        self._write(line)
        return op_id

    def invoke_at(self, at, client, session, op):
        """An invocation written once its session is known (at completion),
        stamped with `at`, the time.monotonic_ns() it began: a Kazoo call
        can outlive its session and finish on the client's next one."""
        with self._mu:
            op_id = self._next
            self._next += 1
        line = {"type": "invoke", "id": op_id, "client": client, "op": op}
        if session:
            line["session"] = session
        self._write(line, at)
        return op_id

    def begin(self, client, session, op):
        """A call whose invocation is written when it returns (finish), with
        the session it turned out to run on. One never finished is written
        at close, without a completion: it was still running."""
        with self._mu:
            key = self._next
            self._next += 1
            self._pending[key] = (time.monotonic_ns(), client, session, op)
        return key

    def finish(self, key, session=None):
        """Writes a begun call's invocation (on `session` if given) and
        returns its operation id, for complete/ok/fail/info."""
        with self._mu:
            begun = self._pending.pop(key, None)
        if begun is None:
            return key
        at, client, s, op = begun
        line = {"type": "invoke", "id": key, "client": client, "op": op}
        if session or s:
            line["session"] = session or s
        self._write(line, at)
        return key

    def complete(self, client, op_id, outcome):
        self._write({"type": "complete", "id": op_id, "client": client, "outcome": outcome})

    def ok(self, client, op_id, value=None):
        self.complete(client, op_id, {"type": "ok", "value": value or {"kind": "unit"}})

    def fail(self, client, op_id, error):
        """Definitely did not take effect."""
        self.complete(client, op_id, {"type": "fail", "error": error})

    def info(self, client, op_id, error):
        """May or may not have taken effect."""
        self.complete(client, op_id, {"type": "info", "error": error})

    def report(self, client, session, op):
        """What the recipe told the application, invoked and completed at once."""
        self.ok(client, self.invoke(client, session, op))

    def session(self, client, session, state):
        self._write({"type": "session", "client": client, "session": session, "state": state})

    def close(self):
        for key in list(self._pending):
            self.finish(key)
        with self._mu:
            self._f.close()
