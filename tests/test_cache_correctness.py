"""The per-file cache is never wrong and never loses work (issue 19); the random-edit differential
test is in ``test_cache_differential.py``. Each case here gave a wrong warm result, a crash of every
later scan, or an empty cache before."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import REPO

from resume_audit.config.settings import Config
from resume_audit.engine.scan import scan

NODE = (
    "from langgraph.types import interrupt\nfrom helpers import notify\n\n"
    "def node(state):\n    notify(state)\n    return {'ok': interrupt('go?')}\n"
)
HELPER = "import requests\n\ndef notify(state):\n    requests.post('https://example.com/x', json=state)\n"


def _result_entries(cache: Path) -> list[Path]:
    """The per-file result entries (not the file table, not the per-module summaries)."""
    return [p for p in cache.glob("*.json") if not p.name.startswith(("filetable-", "s-"))]


def found(result) -> list[tuple[str, str, int]]:
    return [(f.rule_id, f.span.path, f.span.start_line) for f in result.findings]


def test_a_damaged_entry_is_a_miss_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(NODE)
    (tmp_path / "helpers.py").write_text(HELPER)
    cache = tmp_path / "cache"
    cold = scan([tmp_path], Config(), tmp_path, jobs=1, cache_dir=cache)
    (entry,) = _result_entries(cache)
    data = json.loads(entry.read_text())
    for field, wrong in (
        ("deps", ["not", "a", "dict"]),
        ("mentions", 3),
        ("findings", [{"rule_id": 1}]),
        ("suppressed", "x"),
    ):
        damaged = {**data, field: wrong}  # the right key, the wrong shape
        entry.write_text(json.dumps(damaged))
        assert found(scan([tmp_path], Config(), tmp_path, jobs=1, cache_dir=cache)) == found(cold), field


def test_the_size_limit_and_the_root_are_part_of_the_key(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "agent.py").write_text(NODE)
    (tree / "helpers.py").write_text(HELPER + "\n# padding\n" * 200)
    cache = tmp_path / "cache"
    assert found(scan([tree], Config(), tree, jobs=1, cache_dir=cache)) == [("RA101", "agent.py", 5)]
    # helpers.py is over a 1 KB limit: not parsed, so the effect behind notify() is not seen
    small = scan([tree], Config(), tree, jobs=1, cache_dir=cache, max_file_bytes=1024)
    assert found(small) == found(scan([tree], Config(), tree, jobs=1, cache_dir=None, max_file_bytes=1024)) == []
    # the same cache directory for a scan reported relative to another root
    outer = scan([tree], Config(), tmp_path, jobs=1, cache_dir=cache)
    assert found(outer) == [("RA101", "tree/agent.py", 5)]


def test_entries_are_written_as_files_finish_and_orphaned_temporaries_go(tmp_path: Path) -> None:
    """A scan killed part-way (a CI cancel) keeps the entries of the files it finished; before, all
    entries were written at the end, so the kill lost the run's work, and left ``.tmp`` files."""
    tree, cache = tmp_path / "tree", tmp_path / "cache"
    tree.mkdir()
    for i in range(20):
        (tree / f"a{i:02}.py").write_text(NODE.replace("helpers", "helpers"))
    (tree / "helpers.py").write_text(HELPER)
    (tree / "zz_slow.py").write_text(  # a candidate whose analysis takes about a minute, analysed last
        "import requests\nfrom langgraph.types import interrupt\n"
        + "".join(
            f"\ndef node_{i}(state):\n    requests.post('https://example.com/{i}', json=state)\n    return interrupt('q')\n"
            for i in range(12_000)
        )
    )
    cache.mkdir()
    orphan = cache / "999999-orphan.tmp"  # no such process
    orphan.write_text("{")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "resume_audit",
            "scan",
            str(tree),
            "-j",
            "1",
            "--cache-dir",
            str(cache),
            "--file-timeout",
            "600",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    # the twenty quick files take a few seconds (they parse zz_slow.py once); the wait ends as soon
    # as their entries are there, so the long deadline only matters on a loaded machine (CI with
    # other jobs saw 40 s run out before the quick files had finished)
    deadline = time.monotonic() + 300
    while len(_result_entries(cache)) < 20 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    still_running = proc.poll() is None
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert still_running, "the scan finished before it could be killed; make zz_slow.py slower"
    assert len(_result_entries(cache)) >= 20, "the finished files' entries were not written before the kill"
    assert not orphan.exists()
    # the kept entries serve the next scan (the slow file, never finished, is cut short this time)
    warm = scan([tree], Config(), tree, jobs=1, cache_dir=cache, time_limit=2)
    assert len({path for _, path, _ in found(warm)}) == 20
    assert [(n.kind.value, n.path) for n in warm.notifications] == [("timeout", "zz_slow.py")]
