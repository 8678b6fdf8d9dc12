"""Run ``resume-audit audit`` on every corpus repository and tabulate what it could do with no configuration.

    python benchmarks/realworld/audit_corpus.py --mirrors /work/.mirror [--work DIR] [--json out.json]

Per repository: entry points found, swept, not swept (with the first reason),
and the confirmation counts of its findings. A repository whose programs
import packages this environment lacks shows up as "not swept: No module
named ..." -- audit runs the program, so that is the environment's limit, not
the tool's; the reasons column separates the two.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import score  # noqa: E402  (the corpus list and the checkout helper)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirrors", type=Path, required=True)
    ap.add_argument("--work", type=Path, default=Path("/tmp/resume-audit-corpus"))
    ap.add_argument("--json", type=Path)
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per repository")
    args = ap.parse_args()
    rows = []
    totals: Counter[str] = Counter()
    for entry in score.load_corpus(HERE / "corpus"):
        try:
            repo = score.checkout(args.mirrors, entry, args.work)
        except FileNotFoundError as exc:
            print(f"skip {entry.repo}: {exc}", file=sys.stderr)
            continue
        started = time.monotonic()
        try:
            proc = subprocess.run([sys.executable, "-m", "resume_audit", "audit", ".", "--format", "json", "--fail-on", "never"],
                                  cwd=repo, capture_output=True, text=True, timeout=args.timeout)
            data = json.loads(proc.stdout) if proc.stdout.strip() else {}
        except subprocess.TimeoutExpired:
            data = {}
        audit = data.get("audit", {})
        entries = audit.get("entry_points", [])
        swept = [e for e in entries if e["swept"]]
        reasons = Counter(_reason(e["why"]) for e in entries if not e["swept"])
        row = {"repo": entry.repo, "entries": len(entries), "swept": len(swept),
               "confirmations": audit.get("confirmations", {}), "not_swept": dict(reasons),
               "why": {e["target"]: e["why"] for e in entries if not e["swept"]},
               "seconds": round(time.monotonic() - started, 1)}
        rows.append(row)
        totals["entries"] += len(entries)
        totals["swept"] += len(swept)
        for k, v in row["confirmations"].items():
            totals[k] += v
        print(f"{entry.repo:70} {len(entries):3} found {len(swept):3} swept  {row['confirmations']}  "
              f"{dict(reasons)}  {row['seconds']} s", flush=True)
    print(json.dumps(dict(totals)))
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "totals": dict(totals)}, indent=2))
    return 0


def _reason(why: str) -> str:
    if "No module named" in why:
        return "missing dependency"
    if "cannot import" in why:
        return "import failed"
    if "factory needs" in why:
        return "factory needs arguments"
    if "did not complete" in why or "raised" in why:
        return "run failed"
    return why[:60] or "incomplete"


if __name__ == "__main__":
    raise SystemExit(main())
