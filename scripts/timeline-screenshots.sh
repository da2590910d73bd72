#!/usr/bin/env bash
# Screenshots of the HTML timeline of failing planted seeds, as a person
# sees them: headless Chromium renders the self-contained page (whole run,
# and zoomed on the violation through the page's `#t=FROM-TO` ms hash).
# Not part of CI. Needs chromium (Debian: `apt-get install chromium`).
#
#   scripts/timeline-screenshots.sh [OUT_DIR]    # default store/screenshots
#
# PNGs and HTML land in OUT_DIR (git-ignored under store/).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-store/screenshots}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

browser="$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)"
if [ -z "$browser" ]; then
    echo "no chromium found: apt-get install chromium" >&2
    exit 3
fi

cargo build --release -p zkdst-scenarios
target="${CARGO_TARGET_DIR:-target}"
zkdst="$target/release/zkdst"

# name  scenario  seed  zoom window (ms, around the first violation)
# - lock-stale-session seed 0: a holder reconnects on a new session after a
#   dropped connection and adopts its old lock node; two holders at once
#   (mutex-overlap). Dozens of drop-connection faults, three clients.
# - election-predecessor-gone seed 5: the election swarm over a 41 s run;
#   both leaders killed in turn (five epochs), clients paused, the leader
#   partitioned away; a candidate that takes its predecessor's deletion
#   for its turn leaves two leaders (leaders-overlap).
runs=(
    "lock-stale-session scenarios/planted/lock-stale-session.toml 0 3000-6500"
    "election-predecessor-gone scenarios/planted/election-predecessor-gone.toml 5 7000-15000"
)

shot() { # html png hash height
    "$browser" --headless --disable-gpu --no-sandbox --hide-scrollbars \
        --window-size=1600,"$4" --virtual-time-budget=3000 \
        --screenshot="$2" "file://$1$3" >/dev/null 2>&1
    echo "wrote $2"
}

for run in "${runs[@]}"; do
    read -r name scenario seed zoom <<<"$run"
    html="$out/$name-seed$seed.html"
    if "$zkdst" replay "$scenario" --seed "$seed" --trace off --html "$html" >/dev/null; then
        echo "$scenario seed $seed passed: expected a failing seed" >&2
        exit 1
    fi
    [ -s "$html" ] || { echo "no timeline written for $scenario" >&2; exit 1; }
    shot "$html" "$out/$name-full.png" "" 1400
    shot "$html" "$out/$name-zoom.png" "#t=$zoom" 1400
done
