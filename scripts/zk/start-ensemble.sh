#!/usr/bin/env bash
# Starts a three-server ZooKeeper 3.8 ensemble on 127.0.0.1 (free ports, one
# data dir per server) and waits until every server answers `ruok` and one
# of them reports `Mode: leader`.
#
#   scripts/zk/start-ensemble.sh [DIR]
#
# Prints ZK_DIR=..., ZK_CONNECT=127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3 and
# ZK_PIDS="PID1 PID2 PID3" (server i's pid is the i-th), and writes DIR/connect
# and DIR/pids. Stop with scripts/zk/stop.sh DIR. Idempotent for a live DIR.
# Env: ZK_TICK_MS (default 200), ZK_EXTENDED_TYPES, ZK_CONTAINER_CHECK_MS.
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
declare -a CLIENT QUORUM ELECTION
for i in 1 2 3; do
    CLIENT[$i]="$(free_port)"
    QUORUM[$i]="$(free_port)"
    ELECTION[$i]="$(free_port)"
done

PIDS=()
CONNECT=()
for i in 1 2 3; do
    mkdir -p "$DIR/s$i/data"
    echo "$i" >"$DIR/s$i/data/myid"
    cat >"$DIR/s$i/zoo.cfg" <<CFG
tickTime=$TICK
initLimit=10
syncLimit=5
dataDir=$DIR/s$i/data
clientPort=${CLIENT[$i]}
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=srvr,ruok,mntr,stat
maxClientCnxns=0
server.1=127.0.0.1:${QUORUM[1]}:${ELECTION[1]}
server.2=127.0.0.1:${QUORUM[2]}:${ELECTION[2]}
server.3=127.0.0.1:${QUORUM[3]}:${ELECTION[3]}
CFG
    # shellcheck disable=SC2046
    PIDS+=("$(start_java "$DIR/s$i/zoo.cfg" "$DIR/s$i/server.log" $(jvm_flags))")
    CONNECT+=("127.0.0.1:${CLIENT[$i]}")
done
echo "${PIDS[*]}" >"$DIR/pids"
(IFS=,; echo "${CONNECT[*]}") >"$DIR/connect"

fail() {
    echo "$1" >&2
    kill "${PIDS[@]}" 2>/dev/null || true
    exit 1
}
for i in 1 2 3; do
    wait_ruok "${CLIENT[$i]}" 60 || fail "server $i never became ready (log: $DIR/s$i/server.log)"
done
deadline=$((SECONDS + 60))
leader=""
while [[ -z "$leader" ]] && (( SECONDS < deadline )); do
    for i in 1 2 3; do
        [[ "$(server_mode "${CLIENT[$i]}")" == leader ]] && leader=$i
    done
    [[ -z "$leader" ]] && sleep 0.2
done
[[ -n "$leader" ]] || fail "no leader elected in time"

echo "ZK_DIR=$DIR"
echo "ZK_CONNECT=$(cat "$DIR/connect")"
echo "ZK_PIDS=\"${PIDS[*]}\""
echo "ZK_LEADER=$leader"
