"""Colour follows rich's own rules, as a user sets them: the real CLI, stdout a pipe, env variables.

``NO_COLOR`` counts only when non-empty (no-color.org), ``FORCE_COLOR`` turns colour on in a
pipe, ``TERM=dumb`` turns every escape off, and a report written to a file is always plain.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_tree

HAZARD = """import requests
from langgraph.types import interrupt


def node(state):
    requests.post("https://example.com/x", json=state)
    return {"ok": interrupt("go?")}
"""

_SGR = re.compile(r"\x1b\[([0-9;]*)m")
_VARIABLES = ("NO_COLOR", "FORCE_COLOR", "TERM", "COLORTERM", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS")


def colour_codes(text: str) -> set[str]:
    """The foreground/background colour parameters of every SGR escape in ``text``."""
    params = {p for match in _SGR.finditer(text) for p in match.group(1).split(";") if p}
    return {p for p in params if 30 <= int(p) <= 49 or 90 <= int(p) <= 107}


def scan(tree: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in _VARIABLES}
    return subprocess.run(
        [sys.executable, "-m", "resume_audit", "scan", ".", "--no-cache", "-j", "1", *args],
        cwd=tree,
        env={**clean, "TERM": "xterm-256color", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("colour")
    write_tree(root, {"node.py": HAZARD})
    return root


@pytest.mark.parametrize(
    ("env", "coloured"),
    [
        ({}, False),  # a pipe: plain
        ({"FORCE_COLOR": "1"}, True),
        ({"FORCE_COLOR": "1", "NO_COLOR": ""}, True),  # an empty NO_COLOR is not set
        ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
        ({"FORCE_COLOR": "1", "TERM": "dumb"}, False),
        ({"FORCE_COLOR": ""}, False),  # an empty FORCE_COLOR does not force
    ],
    ids=["pipe", "force", "force-empty-no-color", "force-no-color", "force-dumb", "empty-force"],
)
def test_text_report_colour_follows_the_environment(tree: Path, env: dict[str, str], coloured: bool) -> None:
    out = scan(tree, env)
    assert out.returncode == 1, out.stderr
    assert "RA101 effect-before-interrupt" in _SGR.sub("", out.stdout)
    if coloured:
        assert "31" in colour_codes(out.stdout), "ERROR should be red"
    else:
        assert colour_codes(out.stdout) == set(), out.stdout[:400]
    if env.get("TERM") == "dumb" or not env.get("FORCE_COLOR"):
        assert "\x1b[" not in out.stdout, "no escape at all without a (capable) terminal"


def test_a_report_file_and_machine_formats_are_plain_even_when_colour_is_forced(tree: Path) -> None:
    report = tree / "report.txt"
    out = scan(tree, {"FORCE_COLOR": "1"}, "-o", str(report))
    assert out.returncode == 1 and "\x1b[" not in report.read_text()
    for fmt in ("json", "concise", "github", "sarif"):
        forced = scan(tree, {"FORCE_COLOR": "1"}, "-f", fmt)
        assert forced.returncode == 1 and "\x1b[" not in forced.stdout, fmt


def run_command(command: list[str], env: dict[str, str]) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in _VARIABLES}
    proc = subprocess.run(
        [sys.executable, "-m", "resume_audit", *command],
        env={**clean, "TERM": "xterm-256color", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_explain_and_rules_follow_the_same_rules() -> None:
    """The rule page (markdown, coloured code) and the rule table (bold headers, no colour)."""
    assert "\x1b[" not in run_command(["explain", "RA101"], {})
    assert colour_codes(run_command(["explain", "RA101"], {"FORCE_COLOR": "1", "NO_COLOR": ""}))
    assert not colour_codes(run_command(["explain", "RA101"], {"FORCE_COLOR": "1", "NO_COLOR": "1"}))
    assert "\x1b[" not in run_command(["rules"], {})
    assert "\x1b[" in run_command(["rules"], {"FORCE_COLOR": "1"})
    assert "\x1b[" not in run_command(["rules"], {"FORCE_COLOR": "1", "TERM": "dumb"})
