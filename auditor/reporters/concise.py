"""``--format concise``: one line per finding, ``path:line:col: RAxxx message`` (as ruff's concise
output and compilers print), for editors' problem matchers, grep and quick terminal reads.
Notifications follow as ``path: kind: message``. Text from the scanned code is escaped like the
text report's (no terminal control sequence reaches the terminal)."""

from __future__ import annotations

from resume_audit.findings import ScanResult
from resume_audit.reporters.visible import visible


def render_concise(result: ScanResult) -> str:
    lines = [
        f"{visible(f.span.path)}:{f.span.start_line}:{f.span.start_col}: {f.rule_id} {visible(f.message)}"
        for f in result.findings
    ]
    lines += [
        f"{visible(n.path) if n.path else '(scan)'}{f':{n.line}' if n.line else ''}: {n.kind.value}: {visible(n.message)}"
        for n in result.notifications
    ]
    return "".join(line.replace("\n", " ") + "\n" for line in lines)
