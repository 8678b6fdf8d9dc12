"""The terminal report (rich): findings grouped by file, with the code, the consequence and the fix.

It must read well without colour -- piped into a CI log or with ``NO_COLOR``
set -- so every piece of meaning is in the words and markers (``>`` on the
flagged lines), never only in a colour.
"""

from __future__ import annotations

import io
import textwrap
from collections import Counter, defaultdict
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from resume_audit.catalog.descriptors import rule_name
from resume_audit.findings import PROPERTIES, Finding, FixSafety, ScanResult, Severity, Span
from resume_audit.reporters.terminal import PLAIN, Styling
from resume_audit.reporters.visible import visible

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "bold yellow", Severity.NOTE: "bold cyan"}


def _source_lines(root: str, path: str, cache: dict[str, list[str] | None]) -> list[str] | None:
    if path not in cache:
        full = Path(path) if Path(path).is_absolute() else Path(root) / path
        try:
            cache[path] = full.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            cache[path] = None
    return cache[path]


def _excerpt(console: Console, span: Span, lines: list[str] | None, indent: str = "    ") -> None:
    if not lines:
        return
    first = max(1, span.start_line - 1)
    last = min(len(lines), span.end_line if span.end_line - span.start_line < 6 else span.start_line + 5)
    width = len(str(last))
    for n in range(first, last + 1):
        marker = ">" if span.start_line <= n <= span.end_line else " "
        text = Text(f"{indent}{marker} {n:>{width}} | ", style="dim" if marker == " " else "bold")
        text.append(visible(lines[n - 1].rstrip()))
        console.print(text, soft_wrap=True)


def render_text(result: ScanResult, *, styling: Styling = PLAIN) -> str:
    """The report as a string, styled as ``styling`` allows (plain by default: a file, a pipe)."""
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        force_terminal=styling.escapes,
        no_color=styling.no_color or not styling.escapes,
        color_system=styling.color_system,  # type: ignore[arg-type]  # one of rich's names, or None
        width=styling.width or 100,
        highlight=False,
        emoji=False,
    )
    cache: dict[str, list[str] | None] = {}

    for note in result.notifications:
        where = note.path or ""
        if note.line:
            where += f":{note.line}"
            if note.column:
                where += f":{note.column}"
        line = f"warning: {where}: {note.message}" if where else f"warning: {note.message}"
        console.print(Text(visible(line), style="yellow"))
    if result.notifications:
        console.print()

    by_file: dict[str, list[Finding]] = defaultdict(list)
    for f in result.findings:
        by_file[f.span.path].append(f)

    for path in sorted(by_file):
        console.print(Text(visible(path), style="bold underline"))
        lines = _source_lines(result.root, path, cache)
        for f in sorted(by_file[path], key=lambda x: x.sort_key):
            name = rule_name(f.rule_id) or ""
            props = ", ".join(f"{p} ({PROPERTIES.get(p, p)})" for p in f.properties)
            head = Text("  ")
            head.append(f"{f.severity.value.upper()} {f.rule_id}", style=_STYLE[f.severity])
            head.append(f" {name}  line {f.span.start_line}:{f.span.start_col}")
            console.print(head)
            _para(console, "Property: ", props)
            _excerpt(console, f.span, lines)
            _para(console, "What will happen: ", f.message)
            for rel in f.related:
                rel_lines = _source_lines(result.root, rel.span.path, cache)
                where = rel.span.path if rel.span.path != path else "line"
                loc = f"{where}:{rel.span.start_line}" if where != "line" else f"line {rel.span.start_line}"
                _para(console, f"Related ({loc}): ", rel.message)
                _excerpt(
                    console,
                    Span(rel.span.path, rel.span.start_line, rel.span.start_col, rel.span.start_line, rel.span.end_col),
                    rel_lines,
                    indent="      ",
                )
            if f.witness:
                _para(console, "Witness: ", _witness_text(f.witness))
            _para(console, "Fix: ", f.fix, label_style="bold green")
            if f.autofix is not None:
                flag = " --unsafe-fixes" if f.autofix.safety is FixSafety.UNSAFE else ""
                _para(
                    console,
                    "Fixable: ",
                    f"`resume-audit fix{flag}` applies it ({f.autofix.description})",
                    label_style="bold green",
                )
            console.print()

    counts = Counter(f.severity for f in result.findings)
    parts = [f"{counts[s]} {s.value}" for s in (Severity.ERROR, Severity.WARNING, Severity.NOTE) if counts[s]]
    summary = f"{len(result.findings)} finding{'s' if len(result.findings) != 1 else ''}"
    if parts:
        summary += f" ({', '.join(parts)})"
    summary += f" in {len(by_file)} file{'s' if len(by_file) != 1 else ''}; {result.files_scanned} file{'s' if result.files_scanned != 1 else ''} scanned"
    if result.unanalysed:
        summary += f"; {len(result.unanalysed)} could not be analysed (see warnings above)"
    unused = len(result.unused_suppressions)
    if unused:
        summary += f"; {unused} unused suppression comment{'s' if unused != 1 else ''} (see warnings above)"
    fixable = sum(1 for f in result.findings if f.autofix is not None)
    if fixable:
        summary += f"; {fixable} fixable with `resume-audit fix` (--diff to preview)"
    if result.suppressed:
        summary += f"; {result.suppressed} suppressed"
    if result.baselined:
        summary += f"; {result.baselined} in the baseline"
    if result.outside_diff:
        summary += f"; {result.outside_diff} not on changed lines"
    console.print(Text(summary, style="bold"))
    by_rule = Counter(f.rule_id for f in result.findings)
    if by_rule:
        console.print(Text("by rule: " + ", ".join(f"{r} x{n}" for r, n in sorted(by_rule.items()))))
    return buffer.getvalue()


def _para(console: Console, label: str, body: str, *, label_style: str = "bold") -> None:
    """A labelled paragraph indented four spaces, wrapped lines included (no trailing padding)."""
    wrapped = textwrap.fill(
        visible(label + body),
        width=max(40, console.width),
        initial_indent="    ",
        subsequent_indent="    ",
        break_long_words=False,
        break_on_hyphens=False,
    )
    text = Text(wrapped)
    text.stylize(label_style, 4, 4 + len(label))
    console.print(text, soft_wrap=True)


def _witness_text(witness: dict[str, object]) -> str:
    return "; ".join(f"{k}={escape(str(v))}" for k, v in witness.items())
