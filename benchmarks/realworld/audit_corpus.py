"""Run ``resume-audit audit`` on corpus repositories and tabulate what it could do with no configuration.

    python benchmarks/realworld/audit_corpus.py --mirrors /work/.mirror [--install] [--repos a/b,c/d]
           [--work DIR] [--envs DIR] [--json out.json] [--markdown table.md]

Per repository: entry points found, swept, not swept by reason class, and the confirmation counts of its
findings. Without ``--install`` the audit runs in this interpreter's environment, which lacks most of the
packages the repositories import ("project import error" then says so). With ``--install`` each repository
gets its own virtual environment built from its own requirements (:mod:`corpus_envs`, cached under
``--envs``), with resume-audit installed from this checkout, and the audit runs there: what a user does.

The reason classes (the first matching wins, in this order):

- **missing service**: a network service, database, credential or environment variable the program
  needs at import or run time (``Connection refused``, ``api_key``, only loopback is allowed);
- **project import error**: the program's own module does not import (a missing or clashing package,
  a broken import in the project);
- **needs input**: the factory needs arguments, or the synthesised input / answers do not carry the run;
- **tool error**: resume-audit itself failed (no report, a sweep usage error, a time-out);
- **program raised**: the program raised under the sweep for another reason.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import score  # noqa: E402  (the corpus list and the checkout helper)
from corpus_envs import EnvBuilder  # noqa: E402

REASONS = ("missing service", "project import error", "needs input", "tool error", "program raised")
_SERVICE = re.compile(
    r"connection refused|could not connect|connecterror|connectionerror|operationalerror|"
    r"api[_ ]?key|only loopback is allowed|name lookup|credentials|environment variable|"
    r"is not set|must be set|is required|field required|getenv|os\.environ|no such host|\bauth|"
    r"not NoneType",
    re.IGNORECASE,
)
_IMPORT = re.compile(r"no module named|cannot import|importerror|syntaxerror", re.IGNORECASE)
_INPUT = re.compile(
    r"factory needs|needs arguments|builder function needs|class needs|validationerror|input|"
    r"set input|resume|keyerror",
    re.IGNORECASE,
)
_TOOL = re.compile(r"resume-audit|sweep usage|protocol error|timed out|traceback|no report", re.IGNORECASE)


def reason_class(why: str) -> str:
    """The class of a not-swept entry point's reason (see the module doc)."""
    for name, pattern in (
        ("missing service", _SERVICE),
        ("project import error", _IMPORT),
        ("needs input", _INPUT),
        ("tool error", _TOOL),
    ):
        if pattern.search(why):
            return name
    return "program raised"


@dataclass
class Row:
    repo: str
    entries: int = 0
    swept: int = 0
    not_swept: dict[str, int] = field(default_factory=dict)
    confirmations: dict[str, int] = field(default_factory=dict)
    why: dict[str, str] = field(default_factory=dict)
    install: str = ""
    seconds: float = 0.0
    error: str = ""


def audit_repo(python: str, repo: Path, timeout: float) -> tuple[dict, str]:
    """The audit's JSON report on ``repo`` run by ``python`` (empty with the error when it gave none)."""
    try:
        proc = subprocess.run(
            [python, "-m", "resume_audit", "audit", ".", "--format", "json", "--fail-on", "never"],
            cwd=repo,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {}, f"tool error: the audit timed out after {timeout:.0f} s"
    try:
        return json.loads(proc.stdout), ""
    except ValueError:
        return {}, f"tool error: no report (exit {proc.returncode}): {proc.stderr.strip()[-300:]}"


def row_of(repo: str, data: dict, error: str) -> Row:
    audit = data.get("audit", {})
    entries = audit.get("entry_points", [])
    row = Row(repo, len(entries), sum(1 for e in entries if e["swept"]), error=error)
    row.not_swept = dict(Counter(reason_class(e["why"]) for e in entries if not e["swept"] and not e.get("elsewhere")))
    row.confirmations = {k: v for k, v in audit.get("confirmations", {}).items() if v}
    row.why = {e["target"]: e["why"] for e in entries if not e["swept"]}
    return row


def markdown(rows: list[Row]) -> str:
    """The table the README records."""
    lines = [
        "| repository | install | found | swept | not swept (reason class) | confirmations |",
        "|---|---|---:|---:|---|---|",
    ]
    for r in rows:
        reasons = ", ".join(f"{n} {k}" for k, n in sorted(r.not_swept.items())) or (
            "-" if not r.error else r.error[:60]
        )
        conf = ", ".join(f"{n} {k}" for k, n in sorted(r.confirmations.items())) or "-"
        lines.append(f"| {r.repo} | {r.install or '-'} | {r.entries} | {r.swept} | {reasons} | {conf} |")
    found, swept = sum(r.entries for r in rows), sum(r.swept for r in rows)
    total: Counter[str] = Counter()
    for r in rows:
        total.update(r.not_swept)
    lines.append(
        f"| **total** ({len(rows)}) | | {found} | {swept} | "
        + ", ".join(f"{n} {k}" for k, n in sorted(total.items()))
        + " | |"
    )
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--mirrors", type=Path, required=True)
    ap.add_argument("--work", type=Path, default=Path("/tmp/resume-audit-corpus"))
    ap.add_argument("--install", action="store_true", help="build each repository's own environment and audit there")
    ap.add_argument("--envs", type=Path, default=Path.home() / ".cache" / "resume-audit" / "corpus-envs")
    ap.add_argument("--install-timeout", type=float, default=900.0, help="seconds per install step")
    ap.add_argument("--install-only", action="store_true", help="build the environments, audit nothing")
    ap.add_argument(
        "--python",
        default=sys.executable,
        help="without --install: the interpreter that runs the audit (another checkout's, for a before/after)",
    )
    ap.add_argument("--repos", help="comma-separated owner/name list (default: the whole corpus)")
    ap.add_argument("--json", type=Path)
    ap.add_argument(
        "--from-json", type=Path, help="tabulate a stored run's --json again (the reason classes as now defined)"
    )
    ap.add_argument("--markdown", type=Path)
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per repository's audit")
    args = ap.parse_args()
    if args.from_json:
        rows = [Row(**r) for r in json.loads(args.from_json.read_text())]
        for r in rows:
            r.not_swept = dict(Counter(reason_class(why) for why in r.why.values()))
        print(markdown(rows))
        return 0
    wanted = set(args.repos.split(",")) if args.repos else None
    builder = EnvBuilder(args.envs, step_timeout=args.install_timeout) if args.install else None
    rows: list[Row] = []
    for entry in score.load_corpus(HERE / "corpus"):
        if wanted is not None and entry.repo not in wanted:
            continue
        try:
            work = args.work / "run" if builder else args.work
            repo = score.checkout(args.mirrors, entry, work, score.RUN_SUFFIXES if builder else score.SCAN_SUFFIXES)
        except FileNotFoundError as exc:
            print(f"skip {entry.repo}: {exc}", file=sys.stderr)
            continue
        started = time.monotonic()
        python, install = args.python, ""
        if builder is not None:
            env, log = builder.ensure(repo.name, repo, list(entry.scan_paths))
            python = str(builder.python_of(env))
            install = "ok" if log.requirements_ok else "partial"
            if args.install_only:
                print(f"{entry.repo:60} {install:8} {log.seconds} s", flush=True)
                continue
        data, error = audit_repo(python, repo, args.timeout)
        row = row_of(entry.repo, data, error)
        row.install, row.seconds = install, round(time.monotonic() - started, 1)
        rows.append(row)
        print(
            f"{entry.repo:60} {install:8} {row.entries:3} found {row.swept:3} swept  {row.not_swept}  "
            f"{row.confirmations}  {row.seconds} s {error[:80]}",
            flush=True,
        )
    print(markdown(rows))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=2))
    if args.markdown:
        args.markdown.write_text(markdown(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
