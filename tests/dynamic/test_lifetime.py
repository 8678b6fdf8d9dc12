"""Nothing a sweep starts outlives it: escaping descendants, a terminated or killed sweep.

Each test counts real processes in /proc before and after; no mock of the
process table or of the signals.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dyn_helpers import FIXTURES, REPO, sweep  # noqa: F401 (fixtures)

from resume_audit.dynamic import lifetime

ESCAPE_MARK = "resume-audit-escapee"  # misbehaving.ESCAPE_MARK


def _cmdlines() -> list[tuple[int, str]]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    out.append((int(entry), fh.read().replace(b"\0", b" ").decode("utf-8", "replace")))
            except OSError:
                continue
    return out


def _escapees() -> list[int]:
    return [pid for pid, cmd in _cmdlines() if ESCAPE_MARK in cmd and "grep" not in cmd]


def _working_under(root_prefix: str) -> list[int]:
    """Live processes whose working directory lies under a sweep root starting with ``root_prefix``
    (every sweep child works in its cell's directory)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cwd = os.readlink(f"/proc/{entry}/cwd")
            with open(f"/proc/{entry}/stat", "rb") as fh:
                if fh.read().rsplit(b")", 1)[-1].split()[0] == b"Z":
                    continue
        except (OSError, IndexError):
            continue
        if cwd.startswith(root_prefix):
            found.append(int(entry))
    return found


def test_processes_that_leave_the_group_are_found_and_killed(sweep):
    """A node starts a worker in a new session and a double-fork + setsid daemon in every child.
    Measured before the environment tag: 30 such processes survived one sweep, which exited 0 saying
    everything was "confined to the cell's process group"."""
    assert _escapees() == []
    report = sweep("misbehaving.py:escapes", effects=[], input={}, resume=[])
    assert report.complete
    time.sleep(0.5)
    assert _escapees() == []
    assert any("outside its process group" in n.message and "killed them" in n.message for n in report.notifications)
    assert not any("confined to the cell's process group" in n.message for n in report.notifications)


def _start_hanging_sweep(tmp_path: Path) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "resume_audit",
            "crash-sweep",
            f"{FIXTURES}/misbehaving.py:hangs",
            "--timeout",
            "120",
            "--format",
            "json",
            "--output",
            str(tmp_path / "out.json"),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    prefix = os.path.join(tempfile.gettempdir(), f"{lifetime.ROOT_PREFIX}{proc.pid}-")
    deadline = time.monotonic() + 60
    while not _working_under(prefix):  # the uninterrupted run's child is up and hanging
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.1)
    return proc, prefix


def _roots(prefix: str) -> list[str]:
    base, start = os.path.split(prefix)
    return [n for n in os.listdir(base) if n.startswith(start)]


def test_sigterm_kills_the_children_and_removes_the_temp_dirs(tmp_path):
    proc, prefix = _start_hanging_sweep(tmp_path)
    assert _roots(prefix)
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "terminated" in err
    time.sleep(0.5)
    assert _working_under(prefix) == []
    assert _roots(prefix) == []


def test_sigkill_of_the_sweep_takes_its_children_and_the_next_sweep_cleans_up(tmp_path):
    proc, prefix = _start_hanging_sweep(tmp_path)
    proc.kill()
    proc.communicate(timeout=60)
    deadline = time.monotonic() + 30  # the fork server sees the sweep gone, its children get SIGKILL
    while _working_under(prefix) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _working_under(prefix) == []
    assert _roots(prefix)  # a SIGKILL leaves no chance to clean up ...
    removed = lifetime.remove_stale_roots()  # ... so the next sweep removes what a dead sweep left
    assert _roots(prefix) == [] and removed


def test_a_sweep_whose_probes_all_fail_to_run_exits_2(tmp_path):
    """Every child past the uninterrupted run times out (the graph hangs when resumed): nothing of the
    fork, stray or concurrent probes was exercised, and the command says so instead of exiting 0."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "resume_audit",
            "crash-sweep",
            f"{FIXTURES}/misbehaving.py:hangs_on_resume",
            "--timeout",
            "3",
            "--resume",
            '"go"',
            "--format",
            "json",
            "--output",
            str(tmp_path / "out.json"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "not exercised: every cell of" in proc.stderr and "concurrent" in proc.stderr
