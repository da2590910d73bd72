#!/usr/bin/env bash
# The test command README.md gives a new user; .ci/run runs exactly this.
# It installs what the tests need (a real ZooKeeper 3.8 for the conformance
# tests, from Debian's `zookeeper` package; started on 127.0.0.1 only by the
# tests themselves), then runs every test in release mode: the simulation
# tests run many seeds.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/zk/install.sh
# Kazoo for the served-ensemble smoke (scenarios/tests/kazoo.rs).
bash scripts/kazoo-venv.sh
# No import circles between any crate's modules (exits 1 naming a circle).
python3 scripts/cycles.py model history recipes real sim checker scenarios wire conformance clients/rust wiresim/client
cargo test --workspace --release "$@"
# zookeeper-client inside the simulation: a workspace of its own (its
# runtime crates are patched with stand-ins on madsim; see wiresim/).
cargo test --release --manifest-path wiresim/Cargo.toml "$@"
