#!/usr/bin/env bash
# Did a change alter what the harness finds? Runs the same seeds of each
# scenario with two zkdst binaries (release builds of the two commits) and
# compares, per seed, the verdict, failed checkers, violations, error and
# every exercised stat; with --bytes, the history fingerprint too (the
# history's bytes).
#
#   scripts/ab.sh [--bytes] BIN_A BIN_B SEEDS SCENARIO.toml...
#   scripts/ab.sh out/zkdst-before target/release/zkdst 0..60 scenarios/*.toml
#
# Prints one line per scenario (identical, or the first differing seeds) and
# exits 1 if any differed.
set -euo pipefail
bytes=0
if [[ "${1:-}" == --bytes ]]; then bytes=1; shift; fi
if (($# < 4)); then sed -n '2,12p' "$0"; exit 2; fi
a=$1 b=$2 seeds=$3
shift 3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for sc in "$@"; do
    for side in a b; do
        bin=${!side}
        "$bin" fuzz "$sc" --seeds "$seeds" --json --no-store --shrink 0 >"$tmp/$side.jsonl" 2>"$tmp/$side.err" || true
        python3 - "$tmp/$side.jsonl" "$bytes" >"$tmp/$side.txt" <<'PY'
import json, sys
keep = ["seed", "verdict", "failed", "violations", "error", "stats"] + (["fingerprint"] if sys.argv[2] == "1" else [])
rows = []
for line in open(sys.argv[1]):
    d = json.loads(line)
    if "seed" in d:
        rows.append({k: d.get(k) for k in keep})
for r in sorted(rows, key=lambda r: r["seed"]):
    print(json.dumps(r, sort_keys=True))
PY
    done
    n=$(wc -l <"$tmp/a.txt")
    if ((n == 0)); then
        echo "$sc: no seeds ran: $(head -c 300 "$tmp/a.err")"
        status=1
        continue
    fi
    fails=$(grep -vc '"verdict": "pass"' "$tmp/a.txt" || true)
    if cmp -s "$tmp/a.txt" "$tmp/b.txt"; then
        echo "$sc: identical over $n seeds ($fails not passing)"
    else
        status=1
        diffs=$(python3 - "$tmp/a.txt" "$tmp/b.txt" <<'PY'
import json, sys
a = {json.loads(l)["seed"]: l for l in open(sys.argv[1])}
b = {json.loads(l)["seed"]: l for l in open(sys.argv[2])}
print(" ".join(str(s) for s in sorted(set(a) | set(b)) if a.get(s) != b.get(s))[:300])
PY
)
        echo "$sc: DIFFERENT ($n vs $(wc -l <"$tmp/b.txt") seeds); differing seeds: $diffs"
    fi
done
exit $status
