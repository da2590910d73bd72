#!/usr/bin/env bash
# Makes clients/kazoo/.venv with the pinned Kazoo (clients/kazoo/requirements.txt):
# the Python side of the Kazoo scenarios (scenarios/kazoo/). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../clients/kazoo"
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
if ! .venv/bin/python -c "import kazoo" 2>/dev/null; then
    .venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
fi
.venv/bin/python -c "import kazoo, sys; print('kazoo', kazoo.version.__version__ if hasattr(kazoo, 'version') else '?', 'in', sys.prefix)"
