"""A scan of an unchanged tree replays the last result from ``stat`` calls alone (issue 16), and
any change that could change the result -- a file added, removed or edited, a folder added, an
ignore file or a configuration's ``exclude`` edited in place, a virtualenv that stops being one,
a package marker above the scanned folder, another option -- makes the scan run again.

Each test marks the recorded result (``files_scanned`` set to an impossible value) before the
change: a replayed scan returns the mark, so a stale replay cannot pass for a fresh scan, and the
scan after the change must equal a scan without any cache."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Callable

import pytest

from resume_audit.cache import filetable
from resume_audit.config.settings import Config
from resume_audit.config.tree import ConfigTree
from resume_audit.engine.scan import scan
from resume_audit.findings import ScanResult
from resume_audit.rules import all_rules

MARK = -7

AGENT = """
from langgraph.types import interrupt
import stripe

def node(state):
    stripe.Charge.create(amount=state["amount"])
    answer = interrupt("approve?")
    return {"answer": answer}
"""


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
        result.rules_run,
        result.category,
        result.root,
    )


def _tree(root: Path) -> None:
    (root / "app" / "tools").mkdir(parents=True)
    (root / "app" / "__init__.py").write_text("")
    (root / "app" / "agent.py").write_text(AGENT)
    (root / "app" / "tools" / "util.py").write_text("def helper():\n    return 1\n")
    (root / "scripts").mkdir()
    (root / "scripts" / "other_agent.py").write_text(AGENT)


def _source() -> ConfigTree:
    return ConfigTree([r.id for r in all_rules()])


def _scan(root: Path, cache: Path | None, **options) -> ScanResult:
    return scan([root], _source(), root, jobs=1, cache_dir=cache, **options)


def _mark(cache: Path) -> None:
    """Mark every recorded result: a replay of it is then told from a scan."""
    records = sorted(cache.glob("replay-*.json"))
    assert records, "the scan recorded no result"
    for record in records:
        data = json.loads(record.read_text())
        data["result"]["files_scanned"] = MARK
        record.write_text(json.dumps(data))


@pytest.fixture
def trusted(monkeypatch: pytest.MonkeyPatch) -> None:
    # files and folders are trusted on their signatures however recently they changed (the edits
    # here come faster than the two seconds a real scan waits)
    monkeypatch.setattr(filetable, "RACY_SECONDS", 0.0)


def test_an_unchanged_tree_is_replayed(tmp_path: Path, trusted: None) -> None:
    root, cache = tmp_path / "tree", tmp_path / "cache"
    _tree(root)
    uncached = _observable(_scan(root, None))
    assert _observable(_scan(root, cache)) == uncached
    assert uncached[0], "the tree must have findings for the comparison to mean anything"
    assert _observable(_scan(root, cache)) == uncached  # replayed: the same result
    _mark(cache)
    assert _scan(root, cache).files_scanned == MARK  # it is the record that answered


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _same_size_edit(root: Path) -> None:
    path = root / "app" / "tools" / "util.py"
    path.write_text(path.read_text().replace("1", "2"))


def _turn_a_venv_into_code(root: Path) -> None:
    (root / "env" / "pyvenv.cfg").unlink()


CHANGES: dict[str, Callable[[Path], None]] = {
    "a file added deep down": lambda root: _write(root / "app" / "tools" / "deep" / "charge_agent.py", AGENT),
    "a file added beside others": lambda root: _write(root / "app" / "second.py", AGENT),
    "a file removed": lambda root: (root / "scripts" / "other_agent.py").unlink(),
    "a file edited, same size": _same_size_edit,
    "a file renamed": lambda root: (root / "scripts" / "other_agent.py").rename(root / "scripts" / "renamed.py"),
    "a .gitignore created": lambda root: _write(root / "scripts" / ".gitignore", "other_agent.py\n"),
    "a .gitignore edited in place": lambda root: (root / ".gitignore").write_text("scripts/\n"),
    "a configuration's exclude edited in place": lambda root: (root / "pyproject.toml").write_text(
        '[tool.resume-audit]\nexclude = ["scripts/"]\n'
    ),
    "a virtualenv that stops being one": _turn_a_venv_into_code,
    "a package marker above the scanned folder": lambda root: _write(root.parent / "__init__.py", ""),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_change_is_scanned_not_replayed(tmp_path: Path, trusted: None, change: str) -> None:
    root, cache = tmp_path / "tree", tmp_path / "cache"
    _tree(root)
    (root / ".git").mkdir()  # a repository: what git ignores counts
    (root / ".gitignore").write_text("# nothing ignored yet\n")
    (root / "pyproject.toml").write_text('[tool.resume-audit]\nexclude = ["nothing/"]\n')
    _write(root / "env" / "pyvenv.cfg", "home = /usr/bin\n")
    _write(root / "env" / "agent_in_env.py", AGENT)
    _scan(root, cache)
    _mark(cache)
    assert _scan(root, cache).files_scanned == MARK
    CHANGES[change](root)
    after = _scan(root, cache)
    assert after.files_scanned != MARK
    assert _observable(after) == _observable(_scan(root, None))
    # and the new result is recorded in turn
    _mark(cache)
    assert _scan(root, cache).files_scanned == MARK


def test_another_option_or_configuration_is_another_scan(tmp_path: Path, trusted: None) -> None:
    root, cache = tmp_path / "tree", tmp_path / "cache"
    _tree(root)
    _scan(root, cache)
    _mark(cache)
    assert _scan(root, cache).files_scanned == MARK
    assert _scan(root, cache, exclude=["scripts/"]).files_scanned != MARK
    assert _scan(root, cache, max_file_bytes=10).files_scanned != MARK
    assert scan([root], Config(ignore=["RA101"]), root, jobs=1, cache_dir=cache).files_scanned != MARK
    assert scan([root / "app"], _source(), root, jobs=1, cache_dir=cache).files_scanned != MARK


def test_what_a_replay_cannot_vouch_for_is_never_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, cache = tmp_path / "tree", tmp_path / "cache"
    _tree(root)
    # just written: within the racy window, a change in the same timestamp tick would go unseen
    _scan(root, cache)
    assert not list(cache.glob("replay-*.json"))
    # a file edited within the window, its folder older: recorded, but the result is not replayed
    # until a scan sees the file settled
    time.sleep(1.2)
    (root / "app" / "tools" / "util.py").write_text("def helper():\n    return 3\n")
    monkeypatch.setattr(filetable, "RACY_SECONDS", 1.0)
    _scan(root, cache)
    _mark(cache)
    unsettled = _scan(root, cache)
    assert unsettled.files_scanned != MARK
    assert _observable(unsettled) == _observable(_scan(root, None))
    monkeypatch.setattr(filetable, "RACY_SECONDS", 0.0)
    _scan(root, cache)
    _mark(cache)
    assert _scan(root, cache).files_scanned == MARK
    # a *.py symlink: its target is covered by no signature; the record goes too
    os.symlink(root / "app" / "agent.py", root / "scripts" / "linked.py")
    _scan(root, cache)
    assert not list(cache.glob("replay-*.json"))


def test_a_damaged_record_is_a_miss(tmp_path: Path, trusted: None) -> None:
    root, cache = tmp_path / "tree", tmp_path / "cache"
    _tree(root)
    uncached = _observable(_scan(root, None))
    _scan(root, cache)
    (record,) = cache.glob("replay-*.json")
    good = json.loads(record.read_text())
    for damage in (
        "{not json",
        json.dumps([1, 2]),
        json.dumps({**good, "format": 99}),
        json.dumps({**good, "files": [["/nowhere", 5]]}),
        json.dumps({**good, "result": {"findings": 3}}),
    ):
        record.write_text(damage)
        assert _observable(_scan(root, cache)) == uncached


def test_when_only_contents_changed_the_recorded_file_list_is_taken_not_walked(tmp_path: Path, trusted: None) -> None:
    """The edit-and-rescan loop: no folder changed, so the files are the ones recorded (the scan
    does not walk the tree again) and the edited file is read and analysed afresh."""
    root, cache = tmp_path / "tree", tmp_path / "cache"
    _tree(root)
    _scan(root, cache)
    (record,) = cache.glob("replay-*.json")
    data = json.loads(record.read_text())
    assert [row[2] for row in data["files"]] == [
        "app/__init__.py",
        "app/agent.py",
        "app/tools/util.py",
        "scripts/other_agent.py",
    ]
    # the mark: a file the record leaves out is not scanned, which only a scan taking the record's list does
    data["files"] = [row for row in data["files"] if row[2] != "scripts/other_agent.py"]
    record.write_text(json.dumps(data))
    (root / "app" / "agent.py").write_text(AGENT.replace("approve?", "approve!"))
    taken = _scan(root, cache)
    assert taken.files_scanned == 3
    assert {f.span.path for f in taken.findings} == {"app/agent.py"}
    assert any("approve!" in (root / f.span.path).read_text() for f in taken.findings)
    # a folder changed (a file added): walked again, everything found
    _write(root / "app" / "extra.py", "x = 1\n")
    assert _observable(_scan(root, cache)) == _observable(_scan(root, None))


def test_git_at_work_inside_the_repository_does_not_end_the_replay(tmp_path: Path, trusted: None) -> None:
    """Scanning a folder of a repository: every git command rewrites files inside ``.git`` (its
    mtime moves), which says nothing about the scanned files; ``.git`` appearing or going does."""
    root, cache = tmp_path / "repo", tmp_path / "cache"
    _tree(root)
    (root / ".git").mkdir()

    def scan_app() -> ScanResult:
        return scan([root / "app"], _source(), root, jobs=1, cache_dir=cache)

    scan_app()
    _mark(cache)
    (root / ".git" / "index.lock").write_text("x")  # as git updates its index: a new file, renamed
    (root / ".git" / "index.lock").rename(root / ".git" / "index")
    assert scan_app().files_scanned == MARK
    shutil.rmtree(root / ".git")
    assert scan_app().files_scanned != MARK
