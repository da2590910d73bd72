#!/usr/bin/env bash
# Runs Kazoo 2.11.0's OWN recipe tests (kazoo/tests/test_lock.py, with the
# semaphore tests, test_queue.py, test_barrier.py, test_election.py,
# test_party.py, test_counter.py) against a simulated 3.8 ensemble served by
# `zkdst serve scenarios/kazoo/serve-long.toml --seed 0 --no-faults`.
#
#   scripts/kazoo-own-tests.sh [TEST_FILE ...]
#
# TEST_FILEs are paths inside kazoo's source tree (default: the six above,
# e.g. kazoo/tests/test_cache.py to run another). Env:
#   ZKDST          the zkdst binary (default target/release/zkdst)
#   SEED           the serve seed (default 0)
#   TEST_TIMEOUT   per-test timeout in seconds (pytest-timeout; default 60)
#   KEEP=1         keep the temp dir (sdist, venv, logs, junit xml)
#
# End to end: downloads kazoo's sdist (it carries kazoo/tests and
# kazoo/testing) into a temp dir, makes a venv there with kazoo 2.11.0,
# pytest and pytest-timeout (and pyopenssl/pyjks, which kazoo.testing
# imports), writes a conftest.py at the sdist's root that points kazoo's
# harness at the served hosts, starts the serve, runs pytest, ends the serve
# (SIGINT, so it writes its record and verdict), and prints pytest's summary.
#
# Kazoo's harness (kazoo.testing.harness.get_global_cluster) always starts
# its own JVM cluster from ZOOKEEPER_PATH/CLASSPATH/VERSION and has no
# setting for an existing ensemble: the conftest replaces that one function
# with a stand-in cluster of the served hosts (stopping a server raises).
# CI=true and ZOOKEEPER_VERSION=3.8.4 are set so that the LockingQueue tests
# take the server version from the environment instead of asking the server
# with the `envi` four-letter word (kazoo's own cluster whitelists every 4lw;
# a served ensemble, like a default 3.8 server, answers "envi is not executed
# because it is not in the whitelist").
#
# Exit status: pytest's (0 all passed), or 2 when the setup failed.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
ZKDST="${ZKDST:-target/release/zkdst}"
SEED="${SEED:-0}"
TEST_TIMEOUT="${TEST_TIMEOUT:-60}"
SCENARIO=scenarios/kazoo/serve-long.toml
KAZOO_VERSION=2.11.0
if (($# > 0)); then
    MODULES=("$@")
else
    MODULES=(kazoo/tests/test_lock.py kazoo/tests/test_queue.py kazoo/tests/test_barrier.py
        kazoo/tests/test_election.py kazoo/tests/test_party.py kazoo/tests/test_counter.py)
fi

if [[ ! -x "$ZKDST" ]]; then
    echo "kazoo-own-tests: $ZKDST is not an executable (build it, or set ZKDST)" >&2
    exit 2
fi

WORK="$(mktemp -d /tmp/kazoo-own-tests.XXXXXX)"
SERVE_PID=""
stop_serve() {
    if [[ -n "$SERVE_PID" ]] && kill -0 "$SERVE_PID" 2>/dev/null; then
        kill -INT "$SERVE_PID" 2>/dev/null || true
        for _ in $(seq 1 100); do
            kill -0 "$SERVE_PID" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$SERVE_PID" 2>/dev/null || true
        wait "$SERVE_PID" 2>/dev/null || true
    fi
    SERVE_PID=""
}
cleanup() {
    stop_serve
    if [[ "${KEEP:-0}" == 1 ]]; then
        echo "kazoo-own-tests: kept $WORK"
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== kazoo $KAZOO_VERSION sdist and test venv in $WORK"
python3 -m venv "$WORK/venv"
PY="$WORK/venv/bin/python"
"$PY" -m pip install -q --disable-pip-version-check \
    "kazoo==$KAZOO_VERSION" pytest pytest-timeout pyopenssl pyjks
"$PY" -m pip download -q --disable-pip-version-check \
    "kazoo==$KAZOO_VERSION" --no-binary :all: --no-deps -d "$WORK"
tar -xzf "$WORK/kazoo-$KAZOO_VERSION.tar.gz" -C "$WORK"
SRC="$WORK/kazoo-$KAZOO_VERSION"
[[ -d "$SRC/kazoo/tests" ]] || { echo "kazoo-own-tests: no kazoo/tests in the sdist" >&2; exit 2; }

cat >"$SRC/conftest.py" <<'PY'
"""Point kazoo's own test harness at the ensemble in $ZK_HOSTS (written by
scripts/kazoo-own-tests.sh). Loaded before kazoo/tests/conftest.py."""
import os

import kazoo.testing.harness as harness

_HOSTS = os.environ.get("ZK_HOSTS", "").strip()
if not _HOSTS:
    raise RuntimeError("set ZK_HOSTS to the ensemble's connect string")


class _ServedServer(object):
    def __init__(self, address):
        self.address = address
        self.secure_address = address  # no TLS port on a served ensemble
        self.running = True

    def run(self):
        pass

    def stop(self):
        raise RuntimeError("served ensemble: cannot stop %s" % self.address)

    reset = stop
    destroy = run

    def get_logs(self, num_lines=100):
        return []


class _ServedCluster(object):
    def __init__(self, hosts):
        self._servers = [_ServedServer(h) for h in hosts.split(",") if h]

    def __getitem__(self, k):
        return self._servers[k]

    def __iter__(self):
        return iter(self._servers)

    def start(self):
        pass

    def stop(self):
        raise RuntimeError("served ensemble: cannot stop the cluster")

    reset = stop

    def terminate(self):
        pass  # KazooTestCase.tearDownClass calls this after every class

    def get_logs(self):
        return []


_CLUSTER = _ServedCluster(_HOSTS)
harness.get_global_cluster = lambda: _CLUSTER
PY

echo "== $ZKDST serve $SCENARIO --seed $SEED --no-faults"
"$ZKDST" serve "$SCENARIO" --seed "$SEED" --no-faults --out "$WORK/serve-record" >"$WORK/serve.log" 2>&1 &
SERVE_PID=$!
HOSTS=""
for _ in $(seq 1 300); do
    HOSTS="$(sed -n 's/^client 0: //p' "$WORK/serve.log" | head -1)"
    [[ -n "$HOSTS" ]] && break
    kill -0 "$SERVE_PID" 2>/dev/null || break
    sleep 0.1
done
if [[ -z "$HOSTS" ]]; then
    echo "kazoo-own-tests: the serve printed no connect string:" >&2
    cat "$WORK/serve.log" >&2
    exit 2
fi
head -1 "$WORK/serve.log"
echo "client 0: $HOSTS"

echo "== pytest (per-test timeout ${TEST_TIMEOUT} s): ${MODULES[*]}"
set +e
(
    cd "$SRC"
    ZK_HOSTS="$HOSTS" CI=true ZOOKEEPER_VERSION=3.8.4 \
        timeout -k 10 1500 "$PY" -m pytest -p no:cacheprovider --color=no -o log_cli=false \
        --timeout "$TEST_TIMEOUT" -rA --junitxml="$WORK/junit.xml" "${MODULES[@]}"
) >"$WORK/pytest.log" 2>&1
RC=$?
set -e

stop_serve
echo "== the serve's own verdict (servers' checkers: replicas, client-protocol)"
sed -n '/^\(PASS\|FAIL\|UNKNOWN\)  /,$p' "$WORK/serve.log"

echo "== per module"
grep -E '^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) ' "$WORK/pytest.log" |
    awk '{split($2, a, "::"); n[a[1] " " $1]++} END {for (k in n) print "  " k ": " n[k]}' | sort || true
echo "== pytest summary"
sed -n '/short test summary info/,$p' "$WORK/pytest.log" | grep -v '^PASSED ' || tail -5 "$WORK/pytest.log"
exit "$RC"
