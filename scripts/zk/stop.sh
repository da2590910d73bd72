#!/usr/bin/env bash
# Stops the servers started by start-standalone.sh / start-ensemble.sh in DIR
# (only those pids, and only if they still run a ZooKeeper with a config in
# DIR) and removes DIR unless --keep is given. Idempotent.
#
#   scripts/zk/stop.sh DIR [--keep]
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=common.sh
source "$HERE/common.sh"

DIR="${1:?usage: stop.sh DIR [--keep]}"
KEEP="${2:-}"
if [[ ! -d "$DIR" ]]; then
    echo "nothing to stop: $DIR does not exist"
    exit 0
fi
DIR="$(cd "$DIR" && pwd)"

if [[ -f "$DIR/pids" ]]; then
    for pid in $(cat "$DIR/pids"); do
        if is_our_server "$pid" "$DIR"; then
            kill "$pid" 2>/dev/null || true
        fi
    done
    for pid in $(cat "$DIR/pids"); do
        for _ in $(seq 1 50); do
            is_our_server "$pid" "$DIR" || break
            sleep 0.1
        done
        if is_our_server "$pid" "$DIR"; then
            kill -9 "$pid" 2>/dev/null || true
        fi
    done
    rm -f "$DIR/pids"
fi

if [[ "$KEEP" != --keep ]]; then
    case "$DIR" in
        /tmp/zkdst-zk.*) rm -rf "$DIR" ;;
        *) echo "kept $DIR (only /tmp/zkdst-zk.* dirs are removed)" ;;
    esac
fi
echo "stopped servers in $DIR"
