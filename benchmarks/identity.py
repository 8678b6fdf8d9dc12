"""Record every report the tool writes on its own fixtures and the real-world corpus, and compare two records.

A refactor that promises "behaviour unchanged" proves it here: record with the install before the change
(``--python`` of a side install), record with the one after, compare. Byte equality is asserted on

* the JSON report of ``scan`` on every fixture folder (``fixtures/static/*``, ``fixtures/projects/*``, the bundled
  example, the audit project, the fix fixtures, the dynamic fixtures) and SARIF for a few of them;
* the JSON report of ``scan`` on every real-world corpus repository (``realworld/corpus/``, when its mirrors
  are present);
* the stable JSON of a set of crash sweeps of ``fixtures/dynamic/langgraph`` (racing cells -- the concurrent
  probe's, whose interleaving is the OS's -- left out);
* the JSON report of ``audit fixtures/audit`` and of ``conformance``, with wall-clock fields left out.

Usage::

    python benchmarks/identity.py record OUT [--python PY] [--mirrors /work/.mirror] [--only static,corpus,sweep,audit]
    python benchmarks/identity.py compare BEFORE AFTER [--rename OLD=NEW ...]
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE / "realworld"))

import score  # noqa: E402  (benchmarks/realworld/score.py: the corpus entries and their checkout)

#: keys whose values are wall-clock measurements or the checkout's commit, not behaviour
CLOCK_KEYS = {"seconds", "elapsed", "duration", "duration_s", "wall_seconds", "revisionId"}

#: (name, target under fixtures/dynamic/langgraph, crash_sweep keyword arguments): the sweeps the tests run
SWEEPS: list[tuple[str, str, dict]] = [
    (
        "order_approval",
        "order_approval.py:build_graph",
        dict(effects=["order_approval:charge_card"], input={"order_id": 7}, resume=["approve"]),
    ),
    (
        "fork_aware",
        "fork_aware.py:build_graph",
        dict(
            effects=["order_approval:charge_card"], input={"order_id": 7}, resume=["approve"], cells=["fork", "stray"]
        ),
    ),
    (
        "keyed_effect",
        "keyed_effect.py:builder",
        dict(effects=["keyed_effect:charge_card"], input={"order_id": 3}, resume=["approve"]),
    ),
    (
        "no_interrupt",
        "no_interrupt.py:build",
        dict(effects=["no_interrupt:store_document"], input={"text": "a b c"}, resume=[]),
    ),
    (
        "pydantic_state",
        "pydantic_state.py:build",
        dict(effects=[], input={"customer": "ann"}, resume=[], cells=["crash", "validity"]),
    ),
    ("pydantic_midgraph", "pydantic_state.py:build_midgraph", dict(effects=[], input={"customer": "ann"}, resume=[])),
    (
        "lossy_saver",
        "lossy_saver.py:build",
        dict(
            effects=["lossy_saver:export_rows", "lossy_saver:notify_loaded"],
            input={},
            resume=[],
            cells=["crash", "write-order"],
        ),
    ),
    (
        "volatile_park",
        "volatile_park.py:build",
        dict(effects=["volatile_park:notify"], input={"request": "r1"}, resume=[True], cells=["parked"]),
    ),
    (
        "async_approval",
        "async_approval.py:graph",
        dict(
            effects=["async_approval:send_receipt"], input={"order_id": 5}, resume=["approve"], cells=["crash", "fork"]
        ),
    ),
    (
        "two_gates",
        "two_gates.py:builder",
        dict(
            effects=["two_gates:issue_refund", "two_gates:send_payout"],
            input={"ticket": "T1", "amount": 5},
            resume=["ok", "ok"],
            cells=["crash", "parked"],
        ),
    ),
    ("fan_out", "fan_out.py:build", dict(effects=["fan_out:send_email"], input={}, resume=[], cells=["crash"])),
    (
        "functional_api",
        "functional_api.py:build",
        dict(
            effects=["functional_api:charge_card"],
            input={"order_id": 9},
            resume=["approve"],
            cells=["crash", "fork", "validity"],
        ),
    ),
    (
        "tool_refund",
        "tool_refund.py:build_graph",
        dict(effects=["tool_refund:issue_refund"], input={"order_id": 3}, resume=["approve"]),
    ),
    ("typeddict", "typed_states.py:typeddict_graph", dict(effects=[], input={"n": 1}, resume=[])),
    (
        "static_breakpoint",
        "static_breakpoint.py:build_graph",
        dict(effects=["static_breakpoint:issue_refund"], input={"ticket": "T1", "amount": 5}, resume=[]),
    ),
    (
        "subgraph_gate",
        "subgraph_gate.py:build_graph",
        dict(
            effects=["subgraph_gate:notify_reviewer", "subgraph_gate:send_payout"],
            input={"claim": "C1"},
            resume=["approve"],
        ),
    ),
]

_SWEEP_CHILD = """
import json, sys
from resume_audit.dynamic.parent.sweep import crash_sweep
target, kwargs = sys.argv[1], json.loads(sys.argv[2])
report = crash_sweep("fixtures/dynamic/langgraph/" + target, **kwargs)
data = report.stable()
data["cells"] = [c for c in data["cells"] if c.get("kind") != "concurrent"]
data["findings"] = [f for f in data.get("findings", []) if (f.get("rule_id") or f.get("rule")) != "RA705"]
print(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False))
"""


def _strip_clock(value):
    if isinstance(value, dict):
        return {k: _strip_clock(v) for k, v in value.items() if k not in CLOCK_KEYS}
    if isinstance(value, list):
        return [_strip_clock(v) for v in value]
    return value


def _run(cmd: list[str], cwd: Path) -> str:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        return f"EXIT {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    return proc.stdout


def tool_root(python: str) -> str:
    """The folder holding the install's source (auditor/, dynamic/, rules/): a side install of another commit lives
    elsewhere, and a traceback's path into the tool's own code must not count as a difference."""
    where = subprocess.run(
        [
            python,
            "-c",
            "import resume_audit, os; print(os.path.dirname(os.path.dirname(os.path.realpath(resume_audit.__file__))))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return where


def _json_text(raw: str, root: str) -> str:
    for package in ("auditor", "dynamic", "rules"):
        raw = raw.replace(f"{root}/{package}/", f"<tool>/{package}/")
    try:
        return json.dumps(_strip_clock(json.loads(raw)), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    except json.JSONDecodeError:
        return raw


def static_jobs(python: str) -> list[tuple[str, list[str], Path]]:
    folders = sorted(p for p in (REPO / "fixtures" / "static").iterdir() if p.is_dir())
    folders += sorted(p for p in (REPO / "fixtures" / "projects").iterdir() if p.is_dir())
    folders += sorted(p for p in (REPO / "fixtures" / "fixes").iterdir() if p.is_dir())
    folders += [REPO / "fixtures" / n for n in ("myagent", "audit", "dynamic")]
    jobs = []
    for folder in folders:
        rel = folder.relative_to(REPO).as_posix()
        base = [python, "-m", "resume_audit.cli", "scan", rel, "--no-cache", "--fail-on", "never"]
        jobs.append((f"scan/{rel.replace('/', '__')}.json", base + ["--format", "json"], REPO))
    for rel in ("fixtures/myagent", "fixtures/static", "fixtures/audit"):
        base = [python, "-m", "resume_audit.cli", "scan", rel, "--no-cache", "--fail-on", "never"]
        jobs.append((f"sarif/{rel.replace('/', '__')}.json", base + ["--format", "sarif"], REPO))
    return jobs


def corpus_jobs(python: str, mirrors: Path, work: Path) -> list[tuple[str, list[str], Path]]:
    jobs = []
    for entry in score.load_corpus(HERE / "realworld" / "corpus"):
        try:
            tree = score.checkout(mirrors, entry, work)
        except (OSError, subprocess.CalledProcessError):
            continue
        paths = [p for p in entry.scan_paths if (tree / p).exists()]
        cmd = [python, "-m", "resume_audit.cli", "scan", *paths, "--format", "json", "--no-cache", "--fail-on", "never"]
        jobs.append((f"corpus/{entry.repo.replace('/', '+')}.json", cmd, tree))
    return jobs


def record(out: Path, python: str, mirrors: Path, parts: set[str], workers: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    jobs: list[tuple[str, list[str], Path]] = []
    if "static" in parts:
        jobs += static_jobs(python)
    if "corpus" in parts and mirrors.is_dir():
        jobs += corpus_jobs(python, mirrors, Path(tempfile.gettempdir()) / "resume-audit-realworld")
    if "audit" in parts:
        jobs.append(
            (
                "audit/helpdesk.json",
                [python, "-m", "resume_audit.cli", "audit", "fixtures/audit", "--format", "json"],
                REPO,
            )
        )
        # from outside this checkout: a frame in the tool's own code under the working directory reads as the
        # program's, and a side install's would not
        jobs.append(
            (
                "conformance/matrix.json",
                [python, "-m", "resume_audit.cli", "conformance", "--format", "json"],
                Path(tempfile.gettempdir()),
            )
        )
    if "sweep" in parts:
        for name, target, kwargs in SWEEPS:
            jobs.append((f"sweep/{name}.json", [python, "-c", _SWEEP_CHILD, target, json.dumps(kwargs)], REPO))

    root = tool_root(python)

    def one(job: tuple[str, list[str], Path]) -> str:
        name, cmd, cwd = job
        text = _json_text(_run(cmd, cwd), root)
        target = out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        return name

    with ThreadPoolExecutor(max_workers=workers) as pool:
        for name in pool.map(one, jobs):
            print(name, flush=True)


def compare(before: Path, after: Path, renames: list[tuple[str, str]]) -> int:
    """Byte equality of every report, after applying deliberate renames (``OLD=NEW``: a module that moved and
    names itself in a report) to the earlier record."""
    names = sorted(
        {p.relative_to(before).as_posix() for p in before.rglob("*.json")}
        | {p.relative_to(after).as_posix() for p in after.rglob("*.json")}
    )
    differing = 0
    for name in names:
        a, b = before / name, after / name
        if not a.exists() or not b.exists():
            print(f"ONLY IN {'AFTER' if b.exists() else 'BEFORE'}: {name}")
            differing += 1
            continue
        ta, tb = a.read_text(), b.read_text()
        for old, new in renames:
            ta = ta.replace(old, new)
        if ta != tb:
            differing += 1
            diff = "".join(
                difflib.unified_diff(ta.splitlines(True), tb.splitlines(True), f"before/{name}", f"after/{name}", n=1)
            )
            print(diff[:3000])
    print(f"{len(names)} reports, {differing} differ")
    return 1 if differing else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("out", type=Path)
    rec.add_argument("--python", default=sys.executable)
    rec.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    rec.add_argument("--only", default="static,corpus,sweep,audit")
    rec.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2)))
    cmp_ = sub.add_parser("compare")
    cmp_.add_argument("before", type=Path)
    cmp_.add_argument("after", type=Path)
    cmp_.add_argument(
        "--rename",
        action="append",
        default=[],
        metavar="OLD=NEW",
        help="a deliberate rename applied to BEFORE's text first (repeatable)",
    )
    args = ap.parse_args(argv)
    if args.command == "record":
        record(args.out, args.python, args.mirrors, set(args.only.split(",")), args.workers)
        return 0
    return compare(args.before, args.after, [tuple(r.split("=", 1)) for r in args.rename])


if __name__ == "__main__":
    raise SystemExit(main())
