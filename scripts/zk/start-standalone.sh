#!/usr/bin/env bash
# Starts a standalone ZooKeeper 3.8 on 127.0.0.1 (free port, data in a temp
# dir) and waits until it answers `ruok`.
#
#   scripts/zk/start-standalone.sh [DIR]
#
# DIR defaults to a new temp dir. Prints shell assignments:
#   ZK_DIR=...  ZK_CONNECT=127.0.0.1:PORT  ZK_PIDS=PID
# and writes DIR/connect and DIR/pids. Stop with scripts/zk/stop.sh DIR.
# Running it again with the same DIR while the server lives is a no-op.
# Env: ZK_TICK_MS (default 200; sessions then negotiate within [2, 20] ticks),
#      ZK_EXTENDED_TYPES=1 (TTL nodes), ZK_CONTAINER_CHECK_MS (default 1000).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=common.sh
source "$HERE/common.sh"

bash "$HERE/install.sh" >&2

DIR="${1:-$(mktemp -d /tmp/zkdst-zk.XXXXXX)}"
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"

if [[ -f "$DIR/pids" && -f "$DIR/connect" ]]; then
    alive=1
    for pid in $(cat "$DIR/pids"); do is_our_server "$pid" "$DIR" || alive=0; done
    if (( alive )); then
        echo "ZK_DIR=$DIR"
        echo "ZK_CONNECT=$(cat "$DIR/connect")"
        echo "ZK_PIDS=\"$(cat "$DIR/pids")\""
        exit 0
    fi
fi

TICK="${ZK_TICK_MS:-200}"
PORT="$(free_port)"
mkdir -p "$DIR/data"
cat >"$DIR/zoo.cfg" <<CFG
tickTime=$TICK
dataDir=$DIR/data
clientPort=$PORT
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=srvr,ruok,mntr,stat
maxClientCnxns=0
CFG

# shellcheck disable=SC2046
PID="$(start_java "$DIR/zoo.cfg" "$DIR/server.log" $(jvm_flags))"
echo "$PID" >"$DIR/pids"
echo "127.0.0.1:$PORT" >"$DIR/connect"

if ! wait_ruok "$PORT" 60; then
    tail -20 "$DIR/server.log" >&2 || true
    kill "$PID" 2>/dev/null || true
    exit 1
fi
echo "ZK_DIR=$DIR"
echo "ZK_CONNECT=127.0.0.1:$PORT"
echo "ZK_PIDS=\"$PID\""
