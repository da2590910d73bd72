#!/usr/bin/env bash
# The test command README.md gives a new user; .ci/run runs exactly this.
# Release mode: the simulation tests run many seeds.
#
# The conformance tests (crate zkdst-conformance) run a real ZooKeeper 3.8:
# Debian's `zookeeper` package, installed here when missing (apt-get, needs
# root; the tests would also try). ZKDST_CONFORMANCE_CASES sets the number
# of generated sequences the differential test runs (default 150).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/zk/install.sh
cargo test --workspace --release "$@"
