"""The warm path only stats unchanged files (issue 16), and is never wrong for it.

Before the file table, a warm scan of a 5,000-file tree read and hashed every file and searched all
their text once per word its cached results depended on (4.2 s of a 4.2 s warm run in process;
measured in benchmarks/README.md). These tests pin what makes skipping that safe.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from resume_audit.cache import filetable
from resume_audit.config.settings import Config
from resume_audit.engine import loading
from resume_audit.engine.scan import scan
from resume_audit.findings import ScanResult
from resume_audit.reading import readers as reading
from resume_audit.reading import sourcebytes
from resume_audit.reading.sourcebytes import SourceBytes, content_hash

AGENT = """
from langgraph.types import interrupt
from helpers import notify


def review(state):
    notify(state)
    return {"ok": interrupt("approve?")}
"""
EFFECT = "import requests\n\n\ndef notify(state):\n    requests.post('https://example.com/x', json=state)\n"
#: the same length as EFFECT, no effect: an edit that keeps the size
PURE = "import requests\n\n\ndef notify(state):\n    return None   # 'https://example.com/x', json=stat\n"
GRAPH = """
from langgraph.graph import StateGraph, START
from langgraph.checkpoint.memory import InMemorySaver
from agent import review

builder = StateGraph(dict)
builder.add_node("review", review)
builder.add_edge(START, "review")
graph = builder.compile(checkpointer=InMemorySaver())
"""


def _tree(root: Path, filler: int = 30) -> None:
    (root / "agent.py").write_text(AGENT)
    (root / "helpers.py").write_text(EFFECT)
    (root / "graph.py").write_text(GRAPH)
    for i in range(filler):
        (root / f"util_{i}.py").write_text(f"def util_{i}(x):\n    return x + {i}  # notify review\n")


def _seen(result: ScanResult) -> tuple:
    return (
        [(f.rule_id, f.span, f.message) for f in result.findings],
        [(n.kind, n.path, n.message) for n in result.notifications],
        result.files_scanned,
    )


class _Reads:
    """Counts every file the scan reads, through every place that reads."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.paths: list[Path] = []
        real = sourcebytes.read_regular

        def counting(path: Path, display: str):
            self.paths.append(Path(path))
            return real(path, display)

        monkeypatch.setattr(loading, "read_regular", counting)
        monkeypatch.setattr(reading, "read_regular", counting)
        monkeypatch.setattr(sourcebytes, "read_regular", counting)


def _scan(root: Path, cache: Path | None) -> ScanResult:
    return scan([root], Config(), root, jobs=1, cache_dir=cache)


def test_a_warm_scan_reads_no_unchanged_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(filetable, "RACY_SECONDS", 0.0)
    root, cache = tmp_path / "tree", tmp_path / "cache"
    root.mkdir()
    _tree(root)
    cold = _scan(root, cache)
    assert {f.rule_id for f in cold.findings} >= {"RA101"}
    reads = _Reads(monkeypatch)
    warm = _scan(root, cache)
    assert reads.paths == []
    assert _seen(warm) == _seen(cold)
    # one file changed: that file, and only the files whose cached results it invalidates, are read
    (root / "helpers.py").write_text(PURE)
    changed = _scan(root, cache)
    assert {p.name for p in reads.paths} <= {"helpers.py", "agent.py", "graph.py"}
    assert "helpers.py" in {p.name for p in reads.paths}
    assert _seen(changed) == _seen(_scan(root, None))
    assert not any(f.rule_id == "RA101" for f in changed.findings)


def test_an_edit_that_keeps_size_and_mtime_is_still_seen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``cp -p``, ``rsync -t`` and editors that restore times: the change time cannot be set back."""
    monkeypatch.setattr(filetable, "RACY_SECONDS", 0.0)
    root, cache = tmp_path / "tree", tmp_path / "cache"
    root.mkdir()
    _tree(root)
    helper = root / "helpers.py"
    before = os.stat(helper)
    assert any(f.rule_id == "RA101" for f in _scan(root, cache).findings)
    assert len(PURE) == len(EFFECT)
    helper.write_text(PURE)
    os.utime(helper, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(helper)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)
    warm = _scan(root, cache)
    assert not any(f.rule_id == "RA101" for f in warm.findings)
    assert _seen(warm) == _seen(_scan(root, None))


def test_a_file_changed_moments_ago_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Git's racily-clean problem: a file written in the same clock tick as the scan looked at it
    can change again without its signature moving; such files are not trusted on their signature."""
    root, cache = tmp_path / "tree", tmp_path / "cache"
    root.mkdir()
    _tree(root, filler=3)
    _scan(root, cache)  # everything was written just now
    reads = _Reads(monkeypatch)
    _scan(root, cache)
    assert {p.name for p in reads.paths} >= {"agent.py", "helpers.py", "graph.py"}


@pytest.mark.parametrize(
    "damage",
    [
        "not json at all",
        json.dumps({"format": filetable.TABLE_FORMAT, "words": [1], "files": {"x": [1]}}),
        json.dumps(
            {"format": filetable.TABLE_FORMAT, "words": ["notify"], "files": {"x": [[1, 2], "h", 3, [], [], None, [7]]}}
        ),
        json.dumps([1, 2, 3]),
    ],
)
def test_a_damaged_table_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str) -> None:
    monkeypatch.setattr(filetable, "RACY_SECONDS", 0.0)
    root, cache = tmp_path / "tree", tmp_path / "cache"
    root.mkdir()
    _tree(root, filler=3)
    cold = _scan(root, cache)
    (table,) = cache.glob("filetable-*.json")
    table.write_text(damage)
    for replay in cache.glob("replay-*.json"):  # (else the unchanged tree's result is replayed, table unread)
        replay.unlink()
    assert _seen(_scan(root, cache)) == _seen(cold)
    json.loads(table.read_text())  # rewritten whole


def test_bytes_read_late_are_checked_against_the_recorded_hash(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("x = 1\n")
    recorded = content_hash(b"x = 1\n")
    texts = SourceBytes({}, {str(path): recorded})
    assert texts.get(path) == b"x = 1\n" and not texts.changed
    path.write_text("x = 2\n")
    texts = SourceBytes({}, {str(path): recorded})
    assert texts.get(path) == b"x = 2\n"
    assert texts.changed == {path}  # a result resting on these bytes is not cached under the old hash
    assert SourceBytes({}, {}).get(path) is None  # not a file of the scan


def test_saving_writes_back_unchanged_rows_and_rebuilds_changed_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A save after one file changed writes the other files' rows back as they were read; the
    changed file's row, and every row once a new word is learned, are built afresh."""
    from resume_audit.reading.prefilter import FileMatch

    monkeypatch.setattr(filetable, "RACY_SECONDS", 0.0)
    files = {}
    for name, text in {"a.py": b"import langgraph\ncharge()\n", "b.py": b"x = 1\n", "c.py": b"charge(2)\n"}.items():
        (tmp_path / name).write_bytes(text)
        files[str(tmp_path / name)] = text
    cache = tmp_path / "cache"
    cache.mkdir()

    def fill(table: filetable.FileTable, only: set[str] | None = None) -> None:
        for p, raw in files.items():
            if only is None or p in only:
                table.record(
                    p,
                    os.stat(p),
                    content_hash(raw),
                    raw,
                    FileMatch(frozenset({"langgraph"}) if b"langgraph" in raw else frozenset(), frozenset()),
                    None,
                )

    def reloaded() -> dict[str, tuple]:
        again = filetable.FileTable(cache, ["k"])
        return {p: (s.signature, s.hash, s.size, s.match, s.words) for p, s in again.states.items()}

    first = filetable.FileTable(cache, ["k"])
    fill(first)
    first.learn("charge(", [p for p, raw in files.items() if b"charge(" in raw], list(files))
    first.save(files)
    before = reloaded()
    assert before[str(tmp_path / "c.py")][4] == {"charge("}

    # one file changes: its row is new, the others come back as they were
    changed = str(tmp_path / "b.py")
    files[changed] = b"charge(3)\nx = 2\n"
    (tmp_path / "b.py").write_bytes(files[changed])
    second = filetable.FileTable(cache, ["k"])
    assert second.mentions("charge(", set(files)) is not None  # asked again this scan
    fill(second, only={changed})
    second.save(files)
    after = reloaded()
    assert {p: v for p, v in after.items() if p != changed} == {p: v for p, v in before.items() if p != changed}
    assert after[changed][1] == content_hash(files[changed]) and after[changed][4] == {"charge("}

    # a new word: every row records it
    third = filetable.FileTable(cache, ["k"])
    third.mentions("charge(", set(files))
    third.learn("x = ", [p for p, raw in files.items() if b"x = " in raw], list(files))
    third.save(files)
    assert {p: v[4] for p, v in reloaded().items()} == {
        str(tmp_path / "a.py"): {"charge("},
        changed: {"charge(", "x = "},
        str(tmp_path / "c.py"): {"charge("},
    }

    # a scan that asks only one of the two words: the word ids shift, every row is rebuilt
    fourth = filetable.FileTable(cache, ["k"])
    fourth.mentions("x = ", set(files))
    fourth.save(files)
    assert {p: v[4] for p, v in reloaded().items()} == {
        str(tmp_path / "a.py"): set(),
        changed: {"x = "},
        str(tmp_path / "c.py"): set(),
    }
