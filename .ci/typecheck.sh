#!/usr/bin/env bash
# Type-checks the package as it installs. rules/ and dynamic/ install as
# resume_audit.rules and resume_audit.dynamic (pyproject.toml [tool.setuptools.package-dir]),
# so mypy cannot check the source tree directly: this script assembles the
# installed layout in a temporary directory and runs mypy there with the
# [tool.mypy] configuration from pyproject.toml.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cp -R auditor "$tmp/resume_audit"
cp -R rules "$tmp/resume_audit/rules"
cp -R dynamic "$tmp/resume_audit/dynamic"
find "$tmp" -name __pycache__ -type d -prune -exec rm -rf {} +

cd "$tmp"
python -m mypy --config-file "$root/pyproject.toml" --cache-dir "$tmp/.mypy_cache" -p resume_audit "$@"
