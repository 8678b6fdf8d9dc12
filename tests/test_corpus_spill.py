"""A big tree's text is not all held in memory (issue 16: peak RSS under 300 MB at 20,000
files): past a budget it is spilled to an unlinked temporary file and searched a window at a
time. These tests force the spill -- a budget of nothing, windows of a few hundred bytes -- and
check that every answer equals the all-in-memory one: word searches at window edges, the bytes
read back, and whole scans of every bundled fixture."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
from test_engine_paths_agree import TREES, _observable

from resume_audit.config.settings import Config
from resume_audit.engine.scan import scan
from resume_audit.reading import sourcebytes
from resume_audit.reading.sourcebytes import Corpus

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

# import phrases sharing a first word are searched by it once (sourcebytes._search): enough of
# them here to take that path, with names that prefix each other and near misses in the text
GROUPED = [
    b"import langgraph",
    b"import flask",
    b"import flask_cors",
    b"import fl",
    b"import google.cloud",
    b"from flask",
    b"from fastapi",
    b"from fastapi.routing",
    b"from a",
    b"from x.y",
]
# the callers of a function: one name with a little text around it, searched by the name once
AROUND = [b"change_answer(", b"change_answer,", b"change_answer)", b"=change_answer", b"(change_answer("]
WORDS = [b"charge(", b"thread_id", b"zz", b"a", b"never-present", b"\xff", *GROUPED, *AROUND]


def _files(seed: int) -> list[tuple[Path, bytes]]:
    rng = random.Random(seed)
    pieces = [
        b"charge(",
        b"import langgraph\n",
        b"thread_id",
        b"x = 1\n",
        b"zz",
        b"\xff\xfe",
        b"   ",
        b"import flask",
        b"reimport flasky",
        b"import  flask",
        b"import\tflask",
        b"from fastapi.routing import x",
        b"from ",
        b"import ",
        b"google.cloud",
        b"from a.b",
        b"import google.cloud.pubsub",
        b"fromx.y",
        b"from x.yz",
        b"change_answer",
        b"(",
        b"=",
        b",",
        b")",
        b"change_answer(",
        b"=change_answer)",
        b"rechange_answer,",
        b"change_answe",
    ]
    out = []
    for i in range(60):
        body = b"".join(rng.choice(pieces) for _ in range(rng.randrange(0, 40)))
        out.append((Path(f"/p/f{i:03}.py"), body))
    return out


@pytest.mark.parametrize("budget", [0, 300, 2_000, 10**9])
@pytest.mark.parametrize("window", [1, 64, 777, 1 << 20])
def test_spilled_search_equals_the_held_one(budget: int, window: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sourcebytes, "_WINDOW_BYTES", window)
    files = _files(budget + window)
    held, split = Corpus(10**12), Corpus(budget)
    for path, raw in files:
        held.add(path, raw)
        split.add(path, raw)
    try:
        if budget == 0:
            assert not split.spans or all(e - s == 0 for s, e in split.spans.values())  # only empty files stay
        expected = {w: sorted(str(p) for p, raw in files if w in raw) for w in WORDS}
        assert {w: held.find_many([w])[w] for w in WORDS} == expected
        assert split.find_many(WORDS) == expected
        assert {w: split.find_many([w])[w] for w in WORDS} == expected
        for path, raw in files:
            assert split.get(path) == raw
            assert path in split
        assert len(split) == len(files)
        assert split.get(Path("/p/missing.py")) is None
    finally:
        split.close()


@pytest.mark.parametrize("tree", TREES, ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_a_scan_with_all_text_spilled_is_the_same_scan(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "tree"
    shutil.copytree(tree, root)
    held = _observable(scan([root], Config(), root, jobs=1, cache_dir=None))
    monkeypatch.setattr(sourcebytes, "HELD_BYTES", 0)
    monkeypatch.setattr(sourcebytes, "_WINDOW_BYTES", 512)
    assert _observable(scan([root], Config(), root, jobs=1, cache_dir=None)) == held
    cache = tmp_path / "cache"
    assert _observable(scan([root], Config(), root, jobs=1, cache_dir=cache)) == held  # filling
    assert _observable(scan([root], Config(), root, jobs=1, cache_dir=cache)) == held  # read back
