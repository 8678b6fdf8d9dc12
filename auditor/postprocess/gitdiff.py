"""Which lines a change added or modified, from git (for ``scan --diff`` and PR annotations).

A pull request should be judged on what it changes. The diff is taken from
the merge base of ``BASE_REF`` and ``HEAD`` to the working tree, so committed
and uncommitted edits both count and changes that landed on the base branch
meanwhile do not. In a shallow checkout where the merge base is not in the
fetched history, the diff against ``BASE_REF`` itself is used (it can only
over-report lines the base changed, never hide the head's). New files git
does not track yet count as entirely changed.

File names are read exactly as git writes them (``core.quotePath=false``,
C-quoted names decoded, the tab after a name with a space dropped): read
naively, ``src/my agent/graph ü.py`` became a path that matched no file, and
its findings were silently "not on changed lines".
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


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    try:
        # core.quotePath=false: git writes non-ASCII names as UTF-8, not as "\303\274" escapes
        return subprocess.run(
            ["git", "-c", "core.quotePath=false", *args],
            cwd=repo,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="surrogateescape",
            timeout=120,
        )
    except FileNotFoundError as exc:
        raise DiffError("git is not installed, so --diff cannot tell which lines changed") from exc


_C_ESCAPE = re.compile(rb'\\([0-7]{3}|[abtnvfr"\\])')
_C_CHARS = {
    b"a": b"\a",
    b"b": b"\b",
    b"t": b"\t",
    b"n": b"\n",
    b"v": b"\v",
    b"f": b"\f",
    b"r": b"\r",
    b'"': b'"',
    b"\\": b"\\",
}


def decode_git_path(raw: str) -> str:
    """A name from a ``+++`` header, as the file system spells it.

    git C-quotes a name that holds a ``"``, a backslash or a control character
    (``"b/a\\tb"``, raw bytes as octal escapes), and follows a name that
    contains a space with a tab.
    """
    # a tab in a name is always quoted, so a trailing one is git's terminator
    raw = raw[:-1] if raw.endswith("\t") else raw
    if not (raw.startswith('"') and raw.endswith('"') and len(raw) > 1):
        return raw
    body = raw[1:-1].encode("utf-8", "surrogateescape")
    decoded = _C_ESCAPE.sub(
        lambda m: bytes([int(m.group(1), 8)]) if len(m.group(1)) == 3 else _C_CHARS[m.group(1)], body
    )
    return decoded.decode("utf-8", "surrogateescape")


def parse_unified_zero(diff_text: str, repo_root: Path) -> dict[Path, set[int]]:
    """Added/modified line numbers per file from ``git diff --unified=0 --dst-prefix=b/`` output."""
    out: dict[Path, set[int]] = {}
    current: Path | None = None
    for line in diff_text.split("\n"):  # not splitlines(): a form feed in the code is not a new line
        if line.startswith("+++ "):
            target = decode_git_path(line[4:])
            current = (
                None
                if target == "/dev/null"
                else (repo_root / target[2:]).resolve()
                if target.startswith("b/")
                else (repo_root / target).resolve()
            )
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
    # explicit prefixes: a user's diff.noprefix or diff.mnemonicPrefix must not change the names
    diff = _git(
        repo,
        "diff",
        "--unified=0",
        "--no-color",
        "--no-ext-diff",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        "-M",
        diff_from,
        "--",
    )
    if diff.returncode != 0:
        raise DiffError(f"git diff against {base_ref!r} failed: {diff.stderr.strip()}")
    result = ChangedLines(
        base=base_ref, repo_root=repo, lines=parse_unified_zero(diff.stdout, repo), approximate=approximate
    )
    untracked = _git(repo, "ls-files", "--others", "--exclude-standard", "-z")
    for rel in filter(None, untracked.stdout.split("\0")):
        path = (repo / rel).resolve()
        try:
            count = sum(1 for _ in path.open("rb"))
        except OSError:
            continue
        result.lines[path] = set(range(1, count + 2))
    return result
