"""Scan the real-world corpus and score the static stage against hand labels.

The corpus (``corpus.json`` beside this file) lists public repositories that use the four frameworks in real apps, each pinned
to a commit, with the paths to scan and labels written by reading the code::

    {"repo": "owner/name", "commit": "<40 hex>", "scan_paths": ["."],
     "labels": [{"file": "app/graph.py", "line": 42, "rule": "RA101",
                 "verdict": "hazard" | "safe" | "uncertain", "why": "..."}]}

A finding *matches* a label when the rule and file are the same and the label's
line lies inside the finding's primary span. Per rule:

- true positive: a ``hazard`` label some finding matches;
- false negative: a ``hazard`` label no finding matches;
- false positive: a finding matching a ``safe`` label;
- unlabelled: a finding matching no label (printed, so it gets labelled; it
  counts in neither figure -- a corpus with many is not yet labelled);
- ``uncertain`` labels are reported and never scored.

Usage (mirrors as the search library's ``fetch`` lays them out,
``<mirrors>/<owner>+<name>/repo``)::

    python benchmarks/realworld/score.py --mirrors /work/.mirror
    python benchmarks/realworld/score.py --mirrors /work/.mirror --repo owner/name --show
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Label:
    file: str
    line: int
    rule: str
    verdict: str
    why: str


@dataclass
class Entry:
    repo: str
    commit: str
    scan_paths: list[str]
    labels: list[Label]


@dataclass(frozen=True)
class Reported:
    rule: str
    path: str
    start_line: int
    end_line: int
    message: str


@dataclass
class RepoResult:
    entry: Entry
    findings: list[Reported] = field(default_factory=list)
    unresolved_imports: int | None = None
    notifications: list[str] = field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None


def load_corpus(path: Path | None) -> list[Entry]:
    """Read the corpus: a JSON list of entries (``corpus.json``, or a file with one entry being labelled)."""
    raw: list[dict] = json.loads(path.read_text()) if path is not None else []
    if isinstance(raw, dict):
        raw = [raw]
    return [
        Entry(
            repo=d["repo"],
            commit=d["commit"],
            scan_paths=list(d.get("scan_paths") or ["."]),
            labels=[Label(l["file"], int(l["line"]), l["rule"], l["verdict"], l.get("why", "")) for l in d.get("labels", [])],
        )
        for d in raw
    ]


def checkout(mirrors: Path, entry: Entry, work: Path) -> Path:
    """Extract the pinned commit of a mirrored repository into ``work`` (once)."""
    owner, name = entry.repo.split("/", 1)
    git_dir = mirrors / f"{owner}+{name}" / "repo"
    if not git_dir.exists():
        raise FileNotFoundError(f"no mirror at {git_dir} (fetch github:{entry.repo} first)")
    dest = work / f"{owner}+{name}@{entry.commit[:12]}"
    if dest.exists():
        return dest
    tmp = work / (dest.name + ".part")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    # Only what a scan reads (Python sources and project manifests), blob by blob: a
    # snapshot may lack big files (node_modules binaries), which breaks `git archive`.
    listing = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-z", entry.commit],
                             capture_output=True, check=True).stdout.split(b"\0")
    wanted = []
    for row in listing:
        if not row:
            continue
        meta, _, path = row.partition(b"\t")
        mode, kind, sha = meta.split()
        name = path.decode("utf-8", "surrogateescape")
        if kind == b"blob" and mode != b"120000" and name.endswith((".py", ".toml", ".json", ".cfg")) and "node_modules/" not in name:
            wanted.append((sha.decode(), name))
    batch = subprocess.run(["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
                           input="".join(f"{sha}\n" for sha, _ in wanted).encode(), capture_output=True, check=True).stdout
    at = 0
    for sha, name in wanted:
        header_end = batch.index(b"\n", at)
        header = batch[at:header_end].split()
        if len(header) < 3 or header[1] == b"missing":
            at = header_end + 1
            continue
        size = int(header[2])
        body = batch[header_end + 1: header_end + 1 + size]
        at = header_end + 1 + size + 1
        target = tmp / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(body)
    tmp.rename(dest)
    return dest


PYTHON = sys.executable


def scan(tree: Path, entry: Entry, result: RepoResult) -> None:
    """Run the CLI as a user would (no cache), from the repository root."""
    paths = [p for p in entry.scan_paths if (tree / p).exists()]
    if not paths:
        result.error = f"none of {entry.scan_paths} exists"
        return
    cmd = [PYTHON, "-m", "resume_audit.cli", "scan", *paths, "--format", "json", "--no-cache", "--fail-on", "never"]
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=tree, capture_output=True, text=True)
    result.seconds = time.perf_counter() - started
    if proc.returncode not in (0, 1):
        result.error = f"exit {proc.returncode}: {proc.stderr.strip()[-400:]}"
        return
    data = json.loads(proc.stdout)
    for f in data.get("findings", []):
        result.findings.append(Reported(f["rule_id"], f["path"], f["start_line"], f["end_line"], f["message"]))
    for n in data.get("notifications", []):
        result.notifications.append(f'{n.get("kind")}: {n.get("path") or ""} {n.get("message")}')
    if "unresolved_imports" in data.get("summary", {}):
        result.unresolved_imports = int(data["summary"]["unresolved_imports"])


@dataclass
class Tally:
    tp: int = 0
    fn: int = 0
    fp: int = 0
    unlabelled: int = 0
    uncertain: int = 0

    def add(self, other: "Tally") -> None:
        self.tp += other.tp
        self.fn += other.fn
        self.fp += other.fp
        self.unlabelled += other.unlabelled
        self.uncertain += other.uncertain

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None


def _matches(f: Reported, label: Label) -> bool:
    return f.rule == label.rule and f.path == label.file and f.start_line <= label.line <= f.end_line


def score(result: RepoResult, per_rule: dict[str, Tally], show: bool) -> None:
    entry = result.entry
    matched: set[int] = set()
    for label in entry.labels:
        hits = [i for i, f in enumerate(result.findings) if _matches(f, label)]
        matched.update(hits)
        tally = per_rule[label.rule]
        if label.verdict == "hazard":
            if hits:
                tally.tp += 1
            else:
                tally.fn += 1
                if show:
                    print(f"  MISSED  {label.rule} {label.file}:{label.line}  {label.why}")
        elif label.verdict == "safe":
            if hits:
                tally.fp += 1
                if show:
                    print(f"  FALSE+  {label.rule} {label.file}:{label.line}  {label.why}")
        else:
            tally.uncertain += 1
    for i, f in enumerate(result.findings):
        if i not in matched:
            per_rule[f.rule].unlabelled += 1
            if show:
                print(f"  UNLABELLED {f.rule} {f.path}:{f.start_line}-{f.end_line}  {f.message[:160]}")


def fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirrors", type=Path, required=True, help="directory of fetched mirrors (<owner>+<name>/repo)")
    ap.add_argument("--corpus", type=Path, default=HERE / "corpus.json")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "resume-audit-realworld")
    ap.add_argument("--repo", action="append", help="only this repository (repeatable)")
    ap.add_argument("--show", action="store_true", help="print every miss, false positive and unlabelled finding")
    ap.add_argument("--json", type=Path, help="write the per-rule figures here")
    ap.add_argument("--python", default=sys.executable, help="interpreter whose resume-audit to run (e.g. a baseline install)")
    args = ap.parse_args(argv)
    global PYTHON
    PYTHON = args.python

    entries = load_corpus(args.corpus)
    if args.repo:
        entries = [e for e in entries if e.repo in set(args.repo)]
    args.work.mkdir(parents=True, exist_ok=True)
    per_rule: dict[str, Tally] = defaultdict(Tally)
    total_seconds = 0.0
    rows = []
    for entry in entries:
        result = RepoResult(entry)
        try:
            tree = checkout(args.mirrors, entry, args.work)
            scan(tree, entry, result)
        except (OSError, subprocess.CalledProcessError, json.JSONDecodeError) as exc:
            result.error = str(exc)
        total_seconds += result.seconds
        if args.show or result.error:
            print(f"{entry.repo} @ {entry.commit[:10]}: {len(result.findings)} findings, {result.seconds:.1f} s"
                  + (f"  ERROR {result.error}" if result.error else ""))
        repo_tally: dict[str, Tally] = defaultdict(Tally)
        if not result.error:
            score(result, repo_tally, args.show)
        rows.append((entry.repo, result, repo_tally))
        for rule, t in repo_tally.items():
            per_rule[rule].add(t)

    print()
    print(f"{'repo':45} {'findings':>8} {'unresolved':>10} {'tp':>4} {'fn':>4} {'fp':>4} {'unlab':>5} {'sec':>6}")
    for repo, result, tally in rows:
        t = Tally()
        for x in tally.values():
            t.add(x)
        unresolved = "-" if result.unresolved_imports is None else str(result.unresolved_imports)
        print(f"{repo:45} {len(result.findings):>8} {unresolved:>10} {t.tp:>4} {t.fn:>4} {t.fp:>4} {t.unlabelled:>5} {result.seconds:>6.1f}")
    print()
    print(f"{'rule':8} {'tp':>4} {'fn':>4} {'fp':>4} {'unlab':>5} {'uncert':>6} {'precision':>9} {'recall':>6}")
    overall = Tally()
    for rule in sorted(per_rule):
        t = per_rule[rule]
        overall.add(t)
        print(f"{rule:8} {t.tp:>4} {t.fn:>4} {t.fp:>4} {t.unlabelled:>5} {t.uncertain:>6} {fmt(t.precision):>9} {fmt(t.recall):>6}")
    print(f"{'overall':8} {overall.tp:>4} {overall.fn:>4} {overall.fp:>4} {overall.unlabelled:>5} {overall.uncertain:>6} {fmt(overall.precision):>9} {fmt(overall.recall):>6}")
    print(f"\n{len(entries)} repositories, scan time {total_seconds:.1f} s")
    if args.json:
        args.json.write_text(json.dumps({
            "rules": {r: {"tp": t.tp, "fn": t.fn, "fp": t.fp, "unlabelled": t.unlabelled, "precision": t.precision, "recall": t.recall} for r, t in per_rule.items()},
            "overall": {"tp": overall.tp, "fn": overall.fn, "fp": overall.fp, "precision": overall.precision, "recall": overall.recall},
            "seconds": total_seconds,
        }, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
