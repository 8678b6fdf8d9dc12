"""``resume-audit fix``: apply the rules' automatic fixes, then scan again.

A fix is a set of :class:`~resume_audit.findings.Edit` s that replace the exact text of the nodes
the rule names (LibCST positions), so every comment, blank line and line ending around them stays
byte for byte. Fixes are applied per file from the bottom up; a fix whose edits overlap one
already taken waits for the next pass (after a re-scan, on the rewritten code), and passes repeat
until nothing fixable is left -- so a second run changes nothing.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from resume_audit.api import ScanRequest, run_scan
from resume_audit.findings import Autofix, Finding, FixSafety, ScanResult

#: passes of fix-and-rescan before giving up (each pass fixes every non-overlapping fix it sees)
MAX_PASSES = 10

_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class AppliedFix:
    """One finding repaired: where it was and what was done."""

    rule_id: str
    path: str
    line: int
    description: str
    safety: FixSafety


@dataclass
class FixReport:
    """What ``fix`` did: the fixes applied (or, with ``--diff``, that would be), the unified diff
    per file, and the scan of the result."""

    applied: list[AppliedFix] = field(default_factory=list)
    diffs: dict[str, str] = field(default_factory=dict)
    #: files whose fixes could not be applied, and why (not UTF-8, changed during the run, ...)
    skipped: dict[str, str] = field(default_factory=dict)
    remaining: ScanResult | None = None

    @property
    def unsafe_available(self) -> list[Finding]:
        """Findings left whose fix needs ``--unsafe-fixes``."""
        left = self.remaining.findings if self.remaining else []
        return [f for f in left if f.autofix is not None and f.autofix.safety is FixSafety.UNSAFE]


class FixConflict(Exception):
    """An edit's span does not lie inside the text it is meant to edit (the file changed)."""


def line_starts(text: str) -> list[int]:
    """Offset of the first character of each line (1-based line n at index n-1), splitting where
    LibCST does: ``\\n``, ``\\r\\n`` and ``\\r`` -- not ``str.splitlines``' form feeds and separators."""
    return [0, *(m.end() for m in _LINE_END.finditer(text))]


def offset_of(starts: list[int], text: str, line: int, col: int) -> int:
    if not 1 <= line <= len(starts):
        raise FixConflict(f"line {line} is not in the file")
    offset = starts[line - 1] + col - 1
    end_of_line = starts[line] if line < len(starts) else len(text)
    if not starts[line - 1] <= offset <= end_of_line:
        raise FixConflict(f"column {col} is not on line {line}")
    return offset


def apply_fixes(text: str, fixes: list[Autofix]) -> tuple[str, list[Autofix]]:
    """``text`` with every fix whose edits overlap no other fix taken before it; and the fixes
    taken. A fix is all its edits or none. An edit identical to one already taken (two fixes
    adding the same import line) is made once and shared, not a conflict. Insertions at one place
    keep the order the fixes list them in."""
    starts = line_starts(text)
    taken: list[Autofix] = []
    ranges: list[tuple[int, int, str]] = []
    for fix in fixes:
        try:
            mine = [
                (
                    offset_of(starts, text, e.span.start_line, e.span.start_col),
                    offset_of(starts, text, e.span.end_line, e.span.end_col),
                    e.replacement,
                )
                for e in fix.edits
            ]
        except FixConflict:
            continue
        new = [edit for edit in mine if edit not in ranges]
        if any(a < d and c < b or (a == b == c == d) for a, b, _ in new for c, d, _ in ranges):
            continue  # overlaps a fix already taken: the next pass sees the rewritten code
        ranges.extend(new)
        taken.append(fix)
    return splice(text, ranges), taken


def splice(text: str, edits: list[tuple[int, int, str]], base: int = 0) -> str:
    """``text`` with every ``(start, end, replacement)`` made, offsets counted in the whole file
    and ``text`` starting at offset ``base`` of it (a block of lines, for a review suggestion).
    Made from the bottom up, so earlier offsets stay valid; of insertions at one offset the last
    listed goes in first, so the first listed ends up first."""
    for _, (start, end, replacement) in sorted(
        enumerate(edits), key=lambda item: (item[1][0], item[1][1], item[0]), reverse=True
    ):
        text = text[: start - base] + replacement + text[end - base :]
    return text


def _read_text(path: Path) -> tuple[str, bytes]:
    """The file as text exactly as stored (no newline translation), and a BOM to put back."""
    raw = path.read_bytes()
    bom = b"\xef\xbb\xbf" if raw.startswith(b"\xef\xbb\xbf") else b""
    return raw[len(bom) :].decode("utf-8"), bom


def _write_text(path: Path, text: str, bom: bytes) -> None:
    """Replace the file atomically, keeping its permission bits: an interrupted fix leaves either
    the old file or the new one, never half of each."""
    mode = path.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".resume-audit-fix")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(bom + text.encode("utf-8"))
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _on_disk(display: str, root: Path) -> Path:
    """A reported path (root-relative, or absolute outside the root) as a file to open."""
    return Path(display) if Path(display).is_absolute() else root / display


def _wanted(f: Finding, unsafe: bool) -> bool:
    return f.autofix is not None and (unsafe or f.autofix.safety is FixSafety.SAFE) and f.origin == "static"


def fix(request: ScanRequest, *, unsafe: bool = False, diff_only: bool = False) -> FixReport:
    """Scan, apply the fixes (in memory with ``diff_only``), scan again, until nothing fixable is left."""
    report = FixReport()
    request = dataclasses.replace(request, cache_dir=None, baseline=None, write_baseline=None)
    originals: dict[str, str] = {}
    current: dict[str, str] = {}  # the latest rewritten text per file (with diff_only, never written)
    outcome = run_scan(request)
    root = Path(outcome.result.root)
    for _ in range(MAX_PASSES):
        by_file: dict[str, list[Finding]] = {}
        for f in outcome.result.findings:
            if _wanted(f, unsafe) and f.span.path not in report.skipped:
                by_file.setdefault(f.span.path, []).append(f)
        progressed = False
        for display, findings in sorted(by_file.items()):
            path = _on_disk(display, root)
            try:
                text, bom = _read_text(path)
            except (OSError, UnicodeDecodeError) as exc:
                report.skipped[display] = f"cannot be rewritten ({exc.__class__.__name__}: {exc})"
                continue
            if diff_only and display in current:
                text = current[display]
            originals.setdefault(display, text)
            ordered = sorted(findings, key=lambda f: f.sort_key)
            fixes = [f.autofix for f in ordered if f.autofix is not None]
            new_text, taken = apply_fixes(text, fixes)
            if not taken:
                continue
            progressed = True
            for f in ordered:
                if f.autofix in taken:
                    report.applied.append(
                        AppliedFix(f.rule_id, display, f.span.start_line, f.autofix.description, f.autofix.safety)
                    )
            current[display] = new_text
            if not diff_only:
                _write_text(path, new_text, bom)
        if not progressed or diff_only:
            break
        outcome = run_scan(request)
    for display, before in originals.items():
        after = current.get(display)  # what was written (or, with diff_only, would have been)
        if after is not None and after != before:
            report.diffs[display] = "".join(
                difflib.unified_diff(
                    before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{display}", f"b/{display}"
                )
            )
    report.remaining = outcome.result
    return report
