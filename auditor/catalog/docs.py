"""Rule documentation rendered from the rule classes themselves.

``docs/rules/RAxxx.md`` is generated from these fields (``python -m
resume_audit.catalog.docs``) and a test checks the committed pages are current, so the
page a SARIF ``helpUri`` links to always matches what the code does.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from resume_audit.findings import PROPERTIES

DOCS_BASE_URL = "https://github.com/resume-audit/resume-audit/blob/main/docs/rules"


def help_uri(rule_id: str) -> str:
    return f"{DOCS_BASE_URL}/{rule_id}.md"


def _clean(text: str) -> str:
    return textwrap.dedent(text).strip()


def _example_block(example) -> str:
    parts = []
    for path, code in example.files().items():
        header = f"`{path}`\n\n" if len(example.files()) > 1 else ""
        parts.append(f"{header}```python\n{code.rstrip()}\n```")
    note = f"{example.note}\n\n" if example.note else ""
    return note + "\n\n".join(parts)


def _diff_lines(before: str, after: str) -> list[str]:
    import difflib

    return [
        line.rstrip("\n")
        for line in difflib.unified_diff(before.splitlines(True), after.splitlines(True), "before.py", "after.py")
    ]


def render_rule(rule) -> str:
    props = ", ".join(f"{p} ({PROPERTIES[p]})" for p in rule.properties)
    lines = [
        f"# {rule.id} {rule.name}",
        "",
        f"**{_clean(rule.summary)}**",
        "",
        f"- Property: {props}",
        f"- Severity: {rule.severity.value}",
        f"- Frameworks: {', '.join(rule.frameworks)}",
        "",
        "## What it finds",
        "",
        _clean(rule.description),
        "",
        "## Why it breaks at runtime",
        "",
        _clean(rule.runtime),
        "",
    ]
    invalid, valid = getattr(rule, "INVALID", ()), getattr(rule, "VALID", ())
    if invalid:
        lines += ["## Failing example", "", _example_block(invalid[0]), ""]
    lines += ["## Fix", "", _clean(rule.fix), ""]
    fixes = getattr(rule, "FIXES", ())
    if fixes:
        unsafe = any(f.unsafe for f in fixes)
        lines += [
            "## Automatic fix",
            "",
            "`resume-audit fix` applies it"
            + (" (some cases only with `--unsafe-fixes`, as noted)" if unsafe else "")
            + "; `resume-audit fix --diff` shows it first.",
            "",
        ]
        for f in fixes:
            note = f"{_clean(f.note)}" + (" (unsafe: `--unsafe-fixes`)" if f.unsafe else "")
            lines += [note, "", "```diff", *_diff_lines(f.before_text(), f.after_text()), "```", ""]
        if getattr(rule, "no_autofix", ""):  # where the fix stops
            lines += ["Where it is not offered: " + _clean(rule.no_autofix), ""]
    elif getattr(rule, "no_autofix", ""):
        lines += ["## Automatic fix", "", "None: " + _clean(rule.no_autofix), ""]
    if valid:
        lines += ["## Passing example", "", _example_block(valid[0]), ""]
    if getattr(rule, "not_flagged", ""):
        lines += ["## Deliberately not flagged", "", _clean(rule.not_flagged), ""]
    if getattr(rule, "origin", "static") == "dynamic":
        lines += [
            "## How it is found",
            "",
            "By `resume-audit crash-sweep TARGET`, which runs the graph in sandboxed child processes under an",
            "instrumented checkpointer, kills it after every persistence operation and every listed effect,",
            "resumes it in a fresh interpreter and compares an external effect ledger with the uninterrupted run.",
            "The finding carries its minimal witness (kill point or probe, counts, values sent and served) and a",
            "code flow kill point -> resume -> duplicate. Choose what fails the build with `--fail-on`.",
            "",
        ]
        return "\n".join(lines)
    lines += [
        "## Suppressing",
        "",
        f"Add `# resume-audit: ignore[{rule.id}]` to the flagged line, or list `{rule.id}` under",
        "`ignore` / `per-path-ignores` in `[tool.resume-audit]`.",
        "",
    ]
    return "\n".join(lines)


def write_docs(target: Path) -> list[Path]:
    from resume_audit.catalog.descriptors import descriptors

    target.mkdir(parents=True, exist_ok=True)
    written = []
    for rule in descriptors().values():
        page = target / f"{rule.id}.md"
        page.write_text(render_rule(rule), encoding="utf-8")
        written.append(page)
    return written


if __name__ == "__main__":  # python -m resume_audit.catalog.docs [docs/rules]
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/rules")
    for p in write_docs(out):
        print(p)
