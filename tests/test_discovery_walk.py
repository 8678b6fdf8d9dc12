"""The discovery walk (one ``scandir`` per folder, paths joined per folder) finds exactly what the
straightforward walk it replaced finds -- the same files, in the same order, under the same
display and resolved paths, with the same notifications -- on a tree holding everything that
changes a walk's answer: symlinks in and out of the tree, skipped and ignored folders, a
virtualenv, nested ``.gitignore`` files with negations, a configured ``exclude``, non-UTF-8 names."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from resume_audit.config.tree import ConfigTree
from resume_audit.discovery.pathfilter import PathFilter
from resume_audit.discovery.walk import SKIP_DIRS, SourcePath, _inside, _is_venv, discover, display_path, real_path
from resume_audit.findings import Notification, NotificationKind


def reference_walk(
    given: Path, root: Path, skip: PathFilter, follow_symlinks: bool, seen: set[Path], notes: list[Notification]
) -> Iterator[SourcePath]:
    """The walk as it was (``os.walk``, a Path and a display path worked out per file)."""
    tree = real_path(given)

    def unlistable(error: OSError) -> None:
        where = display_path(Path(error.filename), root) if error.filename else display_path(given, root)
        notes.append(
            Notification(
                NotificationKind.UNREADABLE,
                f"cannot list this folder ({error.strerror or error}); the files in it were not scanned",
                where,
            )
        )

    for dirpath, dirnames, filenames in os.walk(given, followlinks=False, onerror=unlistable):
        current = Path(dirpath)
        current_resolved: Path | None = None
        kept = []
        for d in sorted(dirnames):
            full = current / d
            if d in SKIP_DIRS or d.endswith(".egg-info") or _is_venv(str(full)):
                continue
            if skip.excluded(full, is_dir=True):
                continue
            kept.append(d)
        dirnames[:] = kept
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            full = current / name
            if skip.excluded(full, is_dir=False):
                continue
            rel = display_path(full, root)
            if os.path.islink(full):
                resolved = real_path(full)
                if not follow_symlinks and not _inside(resolved, tree):
                    notes.append(
                        Notification(
                            NotificationKind.SKIPPED,
                            "a symlink to a file outside the scanned folder; skipped (scan it with --follow-symlinks)",
                            rel,
                        )
                    )
                    continue
            else:
                current_resolved = current_resolved or current.resolve()
                resolved = current_resolved / name
            if resolved in seen:
                continue
            seen.add(resolved)
            yield SourcePath(full, rel, resolved)


def write(path: Path, text: str = "x = 1\n") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    top = tmp_path / "repo"
    (top / ".git").mkdir(parents=True)
    write(top / ".gitignore", "generated/\n*.gen.py\n!keep.gen.py\n/only_top.py\n")
    write(top / ".git" / "info" / "exclude", "secret_*.py\n")
    write(top / "pyproject.toml", "[tool.resume-audit]\nexclude = ['migrations/', 'scripts/one_off.py']\n")
    for rel in [
        "a.py",
        "b.gen.py",
        "keep.gen.py",
        "only_top.py",
        "secret_x.py",
        "notes.txt",
        "pkg/__init__.py",
        "pkg/mod.py",
        "pkg/only_top.py",
        "pkg/sub/deep.py",
        "pkg/sub/x.gen.py",
        "generated/client.py",
        "migrations/0001.py",
        "scripts/one_off.py",
        "scripts/keep.py",
        "venv/lib/site.py",
        "build/out.py",
        "node_modules/m.py",
        "thing.egg-info/e.py",
        "Zed/upper.py",
        "zed/lower.py",
    ]:
        write(top / rel)
    write(top / "venv" / "pyvenv.cfg", "home = /usr\n")
    write(top / "inner" / ".gitignore", "!b.gen.py\nlocal.py\n")
    write(top / "inner" / "b.gen.py")
    write(top / "inner" / "local.py")
    write(top / "inner" / "other.py")
    write(top / "nested" / ".git" / "HEAD", "ref: x\n")  # a nested repository: its own rules only
    write(top / "nested" / "b.gen.py")
    write(top / "nested" / ".gitignore", "ignored_here.py\n")
    write(top / "nested" / "ignored_here.py")
    outside = tmp_path / "outside"
    write(outside / "far.py")
    os.symlink(outside / "far.py", top / "link_out.py")
    os.symlink(top / "a.py", top / "pkg" / "link_in.py")
    os.symlink(outside, top / "linked_dir")  # a symlinked folder is never walked into
    os.symlink(top / "missing.py", top / "dangling.py")
    os.symlink(top / "loop.py", top / "loop.py")
    os.mkdir(top / "dir.py")  # a folder named like a source file
    write(top / "dir.py" / "inside.py")
    write(top / os.fsdecode(b"caf\xe9.py"))  # not UTF-8
    write(top / os.fsdecode(b"d\xff") / "m.py")
    return top


@pytest.mark.parametrize("follow", [False, True])
@pytest.mark.parametrize("gitignore", [True, False])
@pytest.mark.parametrize("exclude", [(), ("pkg/sub/", "*.gen.py")])
@pytest.mark.parametrize("start", [".", "pkg", "repo-relative-dotdot"])
def test_walk_matches_the_reference(
    tree: Path, follow: bool, gitignore: bool, exclude: tuple[str, ...], start: str, monkeypatch
) -> None:
    monkeypatch.chdir(tree)
    given = {".": Path("."), "pkg": Path("pkg"), "repo-relative-dotdot": Path("pkg/../inner/..")}[start]
    root = Path(".") if start != "pkg" else tree.parent
    configs = ConfigTree([])
    notes: list[Notification] = []
    found = [
        (str(s.path), s.display, str(s.resolved))
        for s in discover(
            [given],
            root,
            list(exclude),
            follow_symlinks=follow,
            problems=notes,
            configs=configs,
            respect_gitignore=gitignore,
        )
    ]
    ref_notes: list[Notification] = []
    skip = PathFilter(root, list(exclude), ConfigTree([]), gitignore)
    expected = [
        (str(s.path), s.display, str(s.resolved)) for s in reference_walk(given, root, skip, follow, set(), ref_notes)
    ]
    assert found == expected
    assert notes == ref_notes
    assert found  # the tree is not all excluded


def test_the_tree_exercises_what_it_should(tree: Path, monkeypatch) -> None:
    """The differential test above means something only if the tree hits each case."""
    monkeypatch.chdir(tree)
    notes: list[Notification] = []
    shown = {s.display for s in discover([Path(".")], Path("."), problems=notes, configs=ConfigTree([]))}
    assert {
        "a.py",
        "keep.gen.py",
        "pkg/only_top.py",
        "inner/b.gen.py",
        "nested/b.gen.py",
        "scripts/keep.py",
        "Zed/upper.py",
        "caf\\xe9.py",
        "d\\xff/m.py",
        "dir.py/inside.py",
    } <= shown
    assert not shown & {
        "b.gen.py",
        "only_top.py",
        "secret_x.py",
        "generated/client.py",
        "migrations/0001.py",
        "scripts/one_off.py",
        "venv/lib/site.py",
        "build/out.py",
        "inner/local.py",
        "nested/ignored_here.py",
        "linked_dir/far.py",
        "link_out.py",
    }
    assert any(n.path == "link_out.py" for n in notes)


def test_unlistable_folder_is_reported_like_the_reference(tree: Path, monkeypatch) -> None:
    if os.geteuid() == 0:
        pytest.skip("root can list every folder")
    monkeypatch.chdir(tree)
    os.chmod(tree / "pkg" / "sub", 0)
    try:
        notes: list[Notification] = []
        found = [s.display for s in discover([Path(".")], Path("."), problems=notes, configs=ConfigTree([]))]
        ref: list[Notification] = []
        skip = PathFilter(Path("."), [], ConfigTree([]), True)
        assert found == [s.display for s in reference_walk(Path("."), Path("."), skip, False, set(), ref)]
        assert notes == ref and notes
    finally:
        os.chmod(tree / "pkg" / "sub", 0o755)


def test_git_agrees_on_what_is_ignored(tree: Path, monkeypatch) -> None:
    """Ground truth for the ignore rules the walk applies, where git is installed."""
    if subprocess.run(["git", "--version"], capture_output=True).returncode != 0:
        pytest.skip("no git")
    monkeypatch.chdir(tree)
    shutil.rmtree(tree / ".git")
    shutil.rmtree(tree / "nested" / ".git")
    subprocess.run(["git", "init", "-q", "."], check=True)
    subprocess.run(["git", "init", "-q", "nested"], check=True)
    write(tree / ".git" / "info" / "exclude", "secret_*.py\n")
    (tree / "pyproject.toml").unlink()
    (tree / "venv" / "pyvenv.cfg").unlink()
    # the machine's own git configuration (a global excludes file) must not take part
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    listed = subprocess.run(
        [
            "git",
            "-c",
            f"core.excludesFile={os.devnull}",
            "ls-files",
            "--others",
            "--exclude-standard",
            "-z",
            "--",
            "*.py",
        ],
        capture_output=True,
        check=True,
        env=env,
    ).stdout.split(b"\0")
    # compared: what ignore rules decide (git lists symlinks and what resume-audit always skips)
    always_skipped = ("nested/", "build/", "node_modules/", "thing.egg-info/", "venv/")
    by_git = {os.fsdecode(p) for p in listed if p} - {p for p in map(os.fsdecode, listed) if p and os.path.islink(p)}
    # (a nested repository's files git lists only from inside it)
    ours = {
        str(s.path)
        for s in discover([Path(".")], Path("."), configs=ConfigTree([]))
        if not os.path.islink(s.path) and not str(s.path).startswith("nested/")
    }
    assert ours == {p for p in by_git if not p.startswith(always_skipped)}
    assert "d\udcff/m.py" in ours  # a name that is not UTF-8 is matched against the patterns too
