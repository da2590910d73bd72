#!/usr/bin/env bash
# The test command README.md gives a new user; .ci/run runs exactly this.
# Release mode: the simulation tests run many seeds.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --release "$@"
