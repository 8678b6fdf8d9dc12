"""Every bundled fixture gives the same scan through every path the engine can take (issue 16):
no cache, a cache being filled (cold), a cache read back with every file re-read (the file table's
signatures not yet trusted), a warm cache where unchanged files are only ``stat``-ed, and the
process pool (files read by reader processes, summaries computed by one worker and served to the
other), with and without a cache."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from resume_audit.cache import filetable
from resume_audit.config.settings import Config
from resume_audit.engine import analysing
from resume_audit.engine.scan import scan
from resume_audit.findings import ScanResult
from resume_audit.reading import readers as reading

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
TREES = sorted(
    [p for p in (FIXTURES / "static").iterdir() if p.is_dir()]
    + [p for p in (FIXTURES / "projects").iterdir() if p.is_dir()]
    + [FIXTURES / "myagent", FIXTURES / "audit" / "helpdesk"]
)


def _observable(result: ScanResult) -> tuple:
    return (
        [
            (f.rule_id, f.span, f.fingerprint, f.message, tuple((r.span, r.message) for r in f.related))
            for f in result.findings
        ],
        [(n.kind, n.path, n.line, n.message) for n in result.notifications],
        result.files_scanned,
        result.files_analysed,
        result.unresolved_imports,
        result.suppressed,
    )


@pytest.mark.parametrize("tree", TREES, ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_all_engine_paths_agree(tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "tree"
    shutil.copytree(tree, root)
    cache = tmp_path / "cache"
    uncached = _observable(scan([root], Config(), root, jobs=1, cache_dir=None))
    assert _observable(scan([root], Config(), root, jobs=1, cache_dir=cache)) == uncached  # filling
    assert _observable(scan([root], Config(), root, jobs=1, cache_dir=cache)) == uncached  # re-read (racy)
    monkeypatch.setattr(filetable, "RACY_SECONDS", 0.0)
    scan([root], Config(), root, jobs=1, cache_dir=cache)  # records trusted signatures
    assert _observable(scan([root], Config(), root, jobs=1, cache_dir=cache)) == uncached  # stat only
    monkeypatch.setattr(analysing, "PARALLEL_THRESHOLD", 1)
    monkeypatch.setattr(reading, "PARALLEL_READ_THRESHOLD", 1)  # read by reader processes too
    pooled = tmp_path / "pooled"
    assert _observable(scan([root], Config(), root, jobs=2, cache_dir=None)) == uncached
    assert _observable(scan([root], Config(), root, jobs=2, cache_dir=pooled)) == uncached  # filling
    assert _observable(scan([root], Config(), root, jobs=1, cache_dir=pooled)) == uncached  # what the workers kept
