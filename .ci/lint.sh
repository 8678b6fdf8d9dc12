#!/usr/bin/env bash
# The repository's own lint: ruff's formatter and linter (import order included), configured in
# pyproject.toml [tool.ruff]. Fails on any finding or any file the formatter would change;
# `ruff format . && ruff check --fix .` repairs what is mechanical.
set -euo pipefail
cd "$(dirname "$0")/.."
ruff --version
ruff format --check --diff .
ruff check --output-format concise .
