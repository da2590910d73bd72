#!/usr/bin/env bash
# A benchmark of `zkdst serve` (not a test): operations per second a served
# ensemble sustains from external clients, the worst real-time lag, and
# seeds per minute of an external-workload campaign with --jobs 2 — beside
# the same client load against a real 3-server ZooKeeper 3.8 on 127.0.0.1.
# Release builds; everything listens on 127.0.0.1 and ends by itself.
#
#   scripts/bench-serve.sh [SECONDS] [SESSIONS]     (defaults 15 and 5)
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_RUN="${1:-15}"
SESSIONS="${2:-5}"
cargo build --release -q -p zkdst-scenarios --bin zkdst -p zkdst-client
ZKDST=target/release/zkdst
CLIENT=target/release/zkdst-client
work="$(mktemp -d /tmp/zkdst-bench-serve.XXXXXX)"
trap 'kill $(jobs -p) 2>/dev/null || true; [[ -f "$work/zk/pids" ]] && bash scripts/zk/stop.sh "$work/zk" >/dev/null 2>&1 || true' EXIT

echo "== served ensemble (scenarios/served/lock.toml, no faults)"
"$ZKDST" serve scenarios/served/lock.toml --seed 0 --no-faults --out "$work/serve" > "$work/serve.log" 2>&1 &
for _ in $(seq 1 300); do grep -q '^client 4:' "$work/serve.log" && break; sleep 0.1; done
connects="$(grep '^client [0-9]*:' "$work/serve.log" | awk '{print $3}' | paste -sd';')"
served="$("$CLIENT" bench "$connects" "$SECONDS_RUN" "$SESSIONS")"
echo "served: $served"
wait
grep -o 'worst lag [0-9]* ms' "$work/serve.log" | sed 's/^/served: /'

echo "== real ZooKeeper 3.8, 3 servers"
ZK_TICK_MS=500 bash scripts/zk/start-ensemble.sh "$work/zk" > "$work/zk.env"
real_connect="$(grep '^ZK_CONNECT=' "$work/zk.env" | cut -d= -f2)"
real="$("$CLIENT" bench "$real_connect" "$SECONDS_RUN" "$SESSIONS")"
echo "real:   $real"
bash scripts/zk/stop.sh "$work/zk" >/dev/null 2>&1 || true

echo "== campaign: scenarios/served/lock.toml seeds 0..4, --jobs 2"
"$ZKDST" fuzz scenarios/served/lock.toml --seeds 0..4 --jobs 2 --no-store 2>&1 | tail -1

s="$(echo "$served" | grep -o '[0-9]* ops/s' | cut -d' ' -f1)"
r="$(echo "$real" | grep -o '[0-9]* ops/s' | cut -d' ' -f1)"
if [[ -n "$s" && -n "$r" && "$r" != 0 ]]; then
    echo "== served / real ops/s: $(awk -v s="$s" -v r="$r" 'BEGIN { printf "%.3f", s / r }') (the simulated links add 1-10 ms per hop by design)"
fi
