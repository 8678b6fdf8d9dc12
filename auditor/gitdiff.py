"""Which lines a change added or modified, from git (for ``scan --diff`` and PR annotations).

A pull request should be judged on what it changes. The diff is taken from
the merge base of ``BASE_REF`` and ``HEAD`` to the working tree, so committed
and uncommitted edits both count and changes that landed on the base branch
meanwhile do not. In a shallow checkout where the merge base is not in the
fetched history, the diff against ``BASE_REF`` itself is used (it can only
over-report lines the base changed, never hide the head's). New files git
does not track yet count as entirely changed.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


class DiffError(Exception):
    """git is unavailable, the path is not in a repository, or the base is not fetched (exit 2)."""


@dataclass
class ChangedLines:
    """Lines added or modified since the base, by absolute file path."""

    base: str
    repo_root: Path
    lines: dict[Path, set[int]] = field(default_factory=dict)
    #: True when the merge base was unavailable and the base itself was diffed
    approximate: bool = False

    def touches(self, path: Path, start: int, end: int) -> bool:
        changed = self.lines.get(path.resolve())
        return changed is not None and any(line in changed for line in range(start, end + 1))


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=120)
    except FileNotFoundError as exc:
        raise DiffError("git is not installed, so --diff cannot tell which lines changed") from exc


def parse_unified_zero(diff_text: str, repo_root: Path) -> dict[Path, set[int]]:
    """Added/modified line numbers per file from ``git diff --unified=0`` output."""
    out: dict[Path, set[int]] = {}
    current: Path | None = None
    for line in diff_text.splitlines():
        if line.startswith("+++ "):
            target = line[4:]
            current = None if target == "/dev/null" else (repo_root / target[2:]).resolve() if target.startswith("b/") else (repo_root / target).resolve()
            continue
        match = _HUNK.match(line)
        if match and current is not None:
            start = int(match.group(1))
            count = int(match.group(2)) if match.group(2) is not None else 1
            out.setdefault(current, set()).update(range(start, start + count))
    return out


def changed_lines(base_ref: str, where: Path) -> ChangedLines:
    """Lines changed since ``base_ref`` in the repository containing ``where``."""
    probe = where if where.is_dir() else where.parent
    top = _git(probe, "rev-parse", "--show-toplevel")
    if top.returncode != 0:
        raise DiffError(f"--diff needs a git repository, and {where} is not inside one")
    repo = Path(top.stdout.strip())
    if _git(repo, "rev-parse", "--verify", "--quiet", f"{base_ref}^{{commit}}").returncode != 0:
        raise DiffError(
            f"base ref {base_ref!r} is not available in this checkout. Fetch it first, e.g. "
            f"`git fetch --no-tags origin {base_ref.removeprefix('origin/')}` (or check out with fetch-depth: 0)."
        )
    merge_base = _git(repo, "merge-base", base_ref, "HEAD")
    approximate = merge_base.returncode != 0
    diff_from = base_ref if approximate else merge_base.stdout.strip()
    diff = _git(repo, "diff", "--unified=0", "--no-color", "--no-ext-diff", "-M", diff_from, "--")
    if diff.returncode != 0:
        raise DiffError(f"git diff against {base_ref!r} failed: {diff.stderr.strip()}")
    result = ChangedLines(base=base_ref, repo_root=repo, lines=parse_unified_zero(diff.stdout, repo), approximate=approximate)
    untracked = _git(repo, "ls-files", "--others", "--exclude-standard", "-z")
    for rel in filter(None, untracked.stdout.split("\0")):
        path = (repo / rel).resolve()
        try:
            count = sum(1 for _ in path.open("rb"))
        except OSError:
            continue
        result.lines[path] = set(range(1, count + 2))
    return result
