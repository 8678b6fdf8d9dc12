"""The scan's progress bar: on a terminal's stderr after about a second, never in a pipe or a log."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from pathlib import Path

from conftest import REPO
from rich.console import Console

from resume_audit.config.settings import Config
from resume_audit.engine.scan import scan
from resume_audit.reporters.progress import scan_progress

FIXTURES = REPO / "fixtures" / "static"


def test_the_engine_reports_each_phase_to_the_bar() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100)
    seen: list[tuple[str, int, int | None]] = []
    with scan_progress(console, delay=0) as bar:

        def progress(phase: str, done: int, total: int | None) -> None:
            seen.append((phase, done, total))
            bar(phase, done, total)

        result = scan([FIXTURES], Config(), REPO, jobs=1, progress=progress)
    analysing = [(done, total) for phase, done, total in seen if phase == "analysing"]
    assert analysing[-1] == (result.files_analysed, result.files_analysed)
    assert "resume-audit scan" in out.getvalue()


def test_no_bar_when_stderr_is_not_a_terminal() -> None:
    out = io.StringIO()
    with scan_progress(Console(file=out, force_terminal=False), delay=0) as bar:
        bar("analysing", 1, 2)
    assert out.getvalue() == ""


def test_the_cli_draws_on_a_terminal_and_stays_silent_in_a_pipe(tmp_path: Path) -> None:
    env = {**os.environ, "RESUME_AUDIT_PROGRESS_DELAY": "0", "PYTHONPATH": str(REPO), "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    env.pop("CI", None)  # rich treats some CI variables as "no terminal"
    args = [sys.executable, "-m", "resume_audit", "scan", str(FIXTURES), "--no-cache", "-j", "1", "-f", "json"]
    piped = subprocess.run(args, capture_output=True, env=env, timeout=300)
    assert piped.stderr == b""
    drawn = _drawn_on_a_terminal(args, env)
    assert b"resume-audit scan" in drawn and b"analysing" in drawn
    # --quiet: the report only, not even on a terminal
    assert _drawn_on_a_terminal([*args, "--quiet"], env) == b""


def _drawn_on_a_terminal(args: list[str], env: dict[str, str]) -> bytes:
    main, follower = pty.openpty()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=follower, env=env)
    os.close(follower)
    drawn = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        drawn += chunk
    proc.wait(timeout=300)
    os.close(main)
    return drawn
