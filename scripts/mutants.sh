#!/usr/bin/env bash
# Mutation score of the recipes under the fuzzer: cargo-mutants mutates one
# recipe file at a time (on a copy of the tree), and a mutant is judged by
# building the zkdst binary from the mutated tree and fuzzing the shipped
# scenarios that exercise that file, seeds 0..N in chunks, in seed order
# (scenarios/tests/mutants.rs): killed at the first failing seed, survived
# if all N seeds of every scenario pass, timed out past 5x the unmutated
# run (at least 60 s; --timeout sets it), unviable if it does not build.
# The zkdst binary is built by `cargo test` (dev-dependencies unified), so
# the simulator carries its planted-bug feature, dormant unless a scenario
# names a planted bug (none of the shipped ones does).
#
#   scripts/mutants.sh [--file recipes/src/election/mod.rs]... [--seeds 200]
#       [--shard K/N] [--out out/mutants] [--jobs 2] [--chunk 10]
#       [--profile mutants]
#       [--timeout SECS] [--no-baseline] [--list] [-- CARGO_MUTANTS_ARGS...]
#   scripts/mutants.sh --report DIR...    # report of finished runs (shards)
#
# Without --file: every recipe file in the table below. Writes, per file,
# cargo-mutants' output under OUT/<file>/mutants.out, then OUT/report.md
# (per file: mutants, killed, survived, timeout, unviable, median first
# failing seed; the surviving mutants) and OUT/report.json.
#
# Needs cargo-mutants (`cargo install cargo-mutants --locked`) and python3.
# The zkdst binary is built in the `mutants` profile (Cargo.toml: release,
# incremental, many codegen units; --profile release for run 1's) with .cargo/config.toml's rustflags
# (--cfg madsim): do not set RUSTFLAGS without it. cargo-mutants' --cap-lints
# would replace those rustflags, so it is off.
set -euo pipefail
cd "$(dirname "$0")/.."
# One target dir for every scratch copy cargo-mutants makes, so that the
# dependencies are built once (target/ itself is not copied: .gitignore).
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"

# ---------------------------------------------------------------------------
# Which shipped scenarios exercise which recipe file. Derived from the
# `use crate::...` graph of recipes/src and from the recipe each workload
# (scenarios/src/workload) drives: a file maps to every scenario whose recipe
# reaches it. Every workload uses Ctx (ctx.rs -> error, guid -> seq, retry,
# runtime); lock::core (-> lock::guard -> monitor -> cell, wait; nodes) is
# used by every waiting recipe; zk/* is the interface the simulator itself
# implements. A file missing here is an error (keep the table whole).
RECIPES="lock rwlock revocable-lock revocable-mutex semaphore queue queue-at-least-once priority-queue election leader-latch barrier double-barrier counter membership config two-phase-commit"
WAITING="lock rwlock revocable-lock revocable-mutex semaphore queue queue-at-least-once priority-queue election leader-latch barrier double-barrier two-phase-commit"
ALL="ensemble ensemble-5 $RECIPES"
read -r -d '' TABLE <<EOF || true
barrier.rs               barrier double-barrier
cell.rs                  $WAITING membership config
config.rs                config
counter.rs               counter
ctx.rs                   $RECIPES
election/latch.rs        leader-latch
election/mod.rs          election leader-latch
error.rs                 $RECIPES
guid.rs                  $RECIPES
lib.rs                   $RECIPES
lock/blocker.rs          $WAITING
lock/core.rs             $WAITING
lock/guard.rs            $WAITING
lock/mod.rs              lock rwlock revocable-lock revocable-mutex
lock/mutex.rs            lock revocable-mutex
lock/revoke.rs           lock rwlock revocable-lock revocable-mutex
lock/rwlock.rs           rwlock revocable-lock
lock/steps.rs            lock rwlock revocable-lock revocable-mutex semaphore election leader-latch
membership.rs            membership
monitor.rs               $WAITING
nodes.rs                 $RECIPES
queue/at_least_once.rs   queue-at-least-once
queue/at_most_once.rs    queue priority-queue
queue/mod.rs             queue queue-at-least-once priority-queue
queue/names.rs           queue queue-at-least-once priority-queue
queue/steps.rs           queue queue-at-least-once priority-queue
retry.rs                 $RECIPES
runtime.rs               $ALL
semaphore.rs             semaphore
seq.rs                   $RECIPES
session_loop.rs          membership config
two_phase.rs             two-phase-commit
wait.rs                  $WAITING membership config
zk/client.rs             $ALL
zk/error.rs              $ALL
zk/event.rs              $ALL
zk/mod.rs                $ALL
zk/path.rs               $ALL
zk/types.rs              $ALL
zk/watch.rs              $ALL
EOF
# Not mutated: recipes/src/planted/ (bugs planted on purpose) and
# recipes/src/real/ (the real-ZooKeeper adapter, not built for the simulator).
# ---------------------------------------------------------------------------

# `RecipeResult<T>` is an alias of `Result`, which cargo-mutants does not
# see: on the tree as written it proposes `RecipeResult::new()` and the like
# (which cannot compile) and never `Ok(true)` / `Ok(false)` / `Ok(None)`.
# So cargo-mutants runs on a copy of the tree whose recipes spell the alias
# out on the same lines (scripts/spell-result.py; runs 1-5 had not); any
# alias left (none is) would still be skipped rather than counted unviable.
EXCLUDE_RE='with RecipeResult::'

scenarios_of() { # FILE (relative to recipes/src) -> scenario names
    awk -v f="$1" '$1 == f { $1 = ""; print; found = 1 } END { exit !found }' <<<"$TABLE"
}

report() { python3 - "$@" <<'PY'
import json, os, re, statistics, sys
out = sys.argv[1]; dirs = sys.argv[2:]
files = {}
for d in dirs:
    for root, _, names in os.walk(d):
        if 'outcomes.json' not in names or not root.endswith('mutants.out'):
            continue
        data = json.load(open(os.path.join(root, 'outcomes.json')))
        for o in data.get('outcomes', []):
            sc = o.get('scenario')
            if not isinstance(sc, dict) or 'Mutant' not in sc:
                continue  # the baseline
            m = sc['Mutant']
            f = m.get('file', '?')
            name = m.get('name') or f"{f}: {m.get('genre', '')}"
            e = files.setdefault(f, {'mutants': 0, 'killed': 0, 'survived': 0, 'timeout': 0,
                                     'unviable': 0, 'first_seeds': [], 'survivors': [], 'timeouts': [],
                                     'wall_s': []})
            e['mutants'] += 1
            e['wall_s'].append(sum(p.get('duration', 0) for p in o.get('phase_results', [])))
            s = o.get('summary')
            if s == 'CaughtMutant':
                e['killed'] += 1
                log = os.path.join(root, o['log_path']) if o.get('log_path') else None
                if log and os.path.exists(log):
                    hits = re.findall(r'zkdst-mutants: killed first_seed=(\d+)', open(log, errors='replace').read())
                    if hits:
                        e['first_seeds'].append(int(hits[-1]))
            elif s == 'MissedMutant':
                e['survived'] += 1; e['survivors'].append(name)
            elif s == 'Timeout':
                e['timeout'] += 1; e['timeouts'].append(name)
            elif s == 'Unviable':
                e['unviable'] += 1
rows = []
lines = ['| file | mutants | killed | survived | timeout | unviable | median first failing seed | score | median s per mutant |',
         '|---|---:|---:|---:|---:|---:|---:|---:|---:|']
for f in sorted(files):
    e = files[f]
    med = statistics.median(e['first_seeds']) if e['first_seeds'] else None
    viable = e['mutants'] - e['unviable']
    score = (e['killed'] + e['timeout']) / viable if viable else None
    e['median_first_seed'] = med; e['score'] = score
    e['median_wall_s'] = statistics.median(e['wall_s']) if e['wall_s'] else None
    lines.append(f"| {f} | {e['mutants']} | {e['killed']} | {e['survived']} | {e['timeout']} | {e['unviable']} | "
                 f"{'-' if med is None else f'{med:g}'} | {'-' if score is None else f'{score:.0%}'} | "
                 f"{'-' if e['median_wall_s'] is None else round(e['median_wall_s'])} |")
lines.append('')
for f in sorted(files):
    for kind in ('survivors', 'timeouts'):
        if files[f][kind]:
            lines.append(f"{kind.capitalize()} in {f}:")
            lines += [f"- {n}" for n in files[f][kind]]
            lines.append('')
os.makedirs(out, exist_ok=True)
open(os.path.join(out, 'report.md'), 'w').write('\n'.join(lines) + '\n')
json.dump(files, open(os.path.join(out, 'report.json'), 'w'), indent=1)
print('\n'.join(lines))
PY
}

seeds=200 chunk=10 jobs=2 profile=mutants shard="" out="out/mutants" timeout="" baseline=run list=0
files=() extra=()
while (($#)); do
    case "$1" in
        --file) files+=("$2"); shift 2 ;;
        --seeds) seeds="$2"; shift 2 ;;
        --chunk) chunk="$2"; shift 2 ;;
        --profile) profile="$2"; shift 2 ;;
        --jobs) jobs="$2"; shift 2 ;;
        --shard) shard="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        --timeout) timeout="$2"; shift 2 ;;
        --no-baseline) baseline=skip; shift ;;
        --list) list=1; shift ;;
        --report) shift; report "$out" "$@"; exit 0 ;;
        --) shift; extra=("$@"); break ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
        *) echo "mutants.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
    esac
done

# The table must cover every recipe file that is mutated.
missing=0
while read -r f; do
    rel=${f#recipes/src/}
    scenarios_of "$rel" >/dev/null || { echo "mutants.sh: $f is not in the table" >&2; missing=1; }
done < <(find recipes/src -name '*.rs' -not -path '*/planted/*' -not -path '*/real/*' | sort)
((missing == 0)) || exit 2

if ((${#files[@]} == 0)); then
    mapfile -t files < <(awk '{ print "recipes/src/" $1 }' <<<"$TABLE")
fi
if [[ "$baseline" == skip && -z "$timeout" ]]; then
    echo "mutants.sh: --no-baseline needs --timeout" >&2; exit 2
fi
if [[ -n "$shard" ]]; then extra=(--shard "$shard" "${extra[@]}"); fi

# The copy mutated (see EXCLUDE_RE): a fixed place beside the target dir,
# timestamps kept, so that unchanged crates are not rebuilt run after run.
out=$(realpath -m "$out")
tree="$CARGO_TARGET_DIR/mutants-tree"
rm -rf "$tree" && mkdir -p "$tree"
git ls-files -z -co --exclude-standard | xargs -0 cp --parents --preserve=timestamps -t "$tree"
python3 scripts/spell-result.py --self-test && python3 scripts/spell-result.py "$tree"
cd "$tree"

status=0
for f in "${files[@]}"; do
    rel=${f#recipes/src/}
    names=$(scenarios_of "$rel") || { echo "mutants.sh: $f is not in the table" >&2; exit 2; }
    paths=$(for n in $names; do printf 'scenarios/%s.toml ' "$n"; done)
    for p in $paths; do [[ -f $p ]] || { echo "mutants.sh: $p (for $f) does not exist" >&2; exit 2; }; done
    common=(--package zkdst-recipes --file "$f" --exclude-re "$EXCLUDE_RE")
    n=$(cargo mutants --list "${common[@]}" ${shard:+--shard "$shard"} 2>/dev/null | wc -l)
    echo "== $f: $n mutants${shard:+ in shard $shard}; scenarios: $names"
    if ((list)) || ((n == 0)); then continue; fi
    dir="$out/${rel//\//_}"
    dir=${dir%.rs}
    mkdir -p "$dir"
    export ZKDST_MUTANTS_SCENARIOS="$paths" ZKDST_MUTANTS_SEEDS="$seeds" ZKDST_MUTANTS_CHUNK="$chunk" \
        ZKDST_MUTANTS_JOBS="$jobs"
    # The baseline: the same test on the unmutated tree. (cargo-mutants' own
    # baseline tests the mutated package, not --test-package, so it is
    # skipped and this one sets the timeout: 5x its time, at least 60 s.)
    t=$timeout
    if [[ "$baseline" == run ]]; then
        # cargo-mutants' scratch copies share the target dir and, having the
        # same crate hashes, overwrite this tree's fingerprints and uplifted
        # zkdst binary (an unviable mutant leaves it gone): the baseline
        # builds in a target dir of its own.
        baseline_test=(env CARGO_TARGET_DIR="$CARGO_TARGET_DIR/baseline"
            cargo test --profile "$profile" -p zkdst-scenarios --test mutants)
        "${baseline_test[@]}" --no-run
        b0=$(date +%s)
        "${baseline_test[@]}" \
            || { echo "mutants.sh: $f: the unmutated tree fails its scenarios; no mutant tested" >&2; status=4; continue; }
        bt=$(( $(date +%s) - b0 ))
        echo "== $f: baseline passed in $bt s"
        [[ -n "$t" ]] || t=$(( bt * 5 > 60 ? bt * 5 : 60 ))
    fi
    start=$(date +%s)
    rc=0
    cargo mutants "${common[@]}" \
        --test-package zkdst-scenarios --cargo-arg=--test=mutants \
        --profile "$profile" --cap-lints false --baseline skip --timeout "$t" \
        --jobs 1 --output "$dir" --colors never \
        "${extra[@]}" || rc=$?
    echo "== $f: cargo-mutants exit $rc after $(( $(date +%s) - start )) s"
    # 0 all killed, 2 survivors, 3 timeouts; 1 usage, 4 the unmutated tree failed.
    case $rc in 0|2|3) ;; *) status=$rc ;; esac
done
((list)) && exit 0
report "$out" "$out"
exit "$status"
