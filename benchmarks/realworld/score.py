"""Scan the real-world corpus and score the static stage against hand labels.

The corpus (``corpus/`` beside this file, one JSON file per repository) lists public repositories that use the
four frameworks in real apps, each pinned to a commit, with the paths to scan and labels written by reading the
code::

    {"repo": "owner/name", "commit": "<40 hex>", "scan_paths": ["."], "set": "tuned" | "blind",
     "labels": [{"file": "app/graph.py", "line": 42, "rule": "RA101",
                 "verdict": "hazard" | "safe" | "uncertain", "why": "..."}],
     "first_seen": {...}}

A finding *matches* a label when the rule and file are the same and the label's
line lies inside the finding's primary span. Per rule:

- true positive: a ``hazard`` label some finding matches;
- false negative: a ``hazard`` label no finding matches;
- false positive: a finding matching a ``safe`` label;
- unlabelled: a finding matching no label (printed, so it gets labelled; it
  counts in neither figure -- a corpus with many is not yet labelled);
- ``uncertain`` labels are reported and never scored.

**The blind step** (``LABELLING.md``): a repository's labels are committed before the tool ever runs on it;
``--record-first-seen`` then runs the tool once, refuses if the entry's file is not committed or already has a
first score, and writes the result into the entry as ``first_seen`` (the tool's commit, the labels' commit, each
label's match). That record is never changed: later adjudication edits ``labels`` (with the reason), and the
first-seen score is always computed from ``first_seen``. ``--since REV`` prints the first-seen score of the
repositories whose file was added after ``REV`` beside the current score.

Usage (mirrors as the search library's ``fetch`` lays them out,
``<mirrors>/<owner>+<name>/repo``)::

    python benchmarks/realworld/score.py --mirrors /work/.mirror
    python benchmarks/realworld/score.py --mirrors /work/.mirror --repo owner/name --show
    python benchmarks/realworld/score.py --mirrors /work/.mirror --repo owner/name --record-first-seen
    python benchmarks/realworld/score.py --mirrors /work/.mirror --since <commit>
"""

from __future__ import annotations

import argparse
import json
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
    set: str = "tuned"
    first_seen: dict | None = None
    source: Path | None = None


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


def _entry(d: dict, source: Path | None) -> Entry:
    return Entry(
        repo=d["repo"],
        commit=d["commit"],
        scan_paths=list(d.get("scan_paths") or ["."]),
        labels=[
            Label(x["file"], int(x["line"]), x["rule"], x["verdict"], x.get("why", "")) for x in d.get("labels", [])
        ],
        set=d.get("set", "tuned"),
        first_seen=d.get("first_seen"),
        source=source,
    )


def load_corpus(path: Path | None) -> list[Entry]:
    """Read the corpus: a folder of one JSON entry per repository (``corpus/``), or a file holding one entry or a
    list of them (an entry being labelled)."""
    if path is None:
        return []
    if path.is_dir():
        return [_entry(json.loads(p.read_text()), p) for p in sorted(path.glob("*.json"))]
    raw = json.loads(path.read_text())
    if isinstance(raw, dict):
        return [_entry(raw, path)]
    return [_entry(d, None) for d in raw]


#: what a scan reads: Python sources and project manifests
SCAN_SUFFIXES = (".py", ".toml", ".json", ".cfg")
#: what installing and running a repository needs: every file (requirement and lock files, the templates,
#: prompts and data its programs read by relative path)
RUN_SUFFIXES: tuple[str, ...] = ()


def checkout(mirrors: Path, entry: Entry, work: Path, suffixes: tuple[str, ...] = SCAN_SUFFIXES) -> Path:
    """Extract the pinned commit of a mirrored repository into ``work`` (once); ``suffixes``: the files taken."""
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
    listing = subprocess.run(
        ["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-z", entry.commit], capture_output=True, check=True
    ).stdout.split(b"\0")
    wanted = []
    for row in listing:
        if not row:
            continue
        meta, _, path = row.partition(b"\t")
        mode, kind, sha = meta.split()
        name = path.decode("utf-8", "surrogateescape")
        if (
            kind == b"blob"
            and mode != b"120000"
            and (not suffixes or name.endswith(suffixes))
            and "node_modules/" not in name
        ):
            wanted.append((sha.decode(), name))
    batch = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
        input="".join(f"{sha}\n" for sha, _ in wanted).encode(),
        capture_output=True,
        check=True,
    ).stdout
    at = 0
    for sha, name in wanted:
        header_end = batch.index(b"\n", at)
        header = batch[at:header_end].split()
        if len(header) < 3 or header[1] == b"missing":
            at = header_end + 1
            continue
        size = int(header[2])
        body = batch[header_end + 1 : header_end + 1 + size]
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
        result.notifications.append(f"{n.get('kind')}: {n.get('path') or ''} {n.get('message')}")
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


def _git(*args: str, cwd: Path = HERE) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def tool_commit(python: str) -> str:
    """The commit of the resume-audit source tree ``python`` imports (``+dirty`` when it has uncommitted changes)."""
    where = subprocess.run(
        [python, "-c", "import resume_audit, os; print(os.path.dirname(resume_audit.__file__))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    try:
        head = _git("rev-parse", "HEAD", cwd=Path(where))
        dirty = _git("status", "--porcelain", "--", ".", cwd=Path(where))
    except subprocess.CalledProcessError:
        return "unknown (not a git checkout)"
    return head + ("+dirty" if dirty else "")


def record_first_seen(result: RepoResult, python: str) -> dict:
    """Write the entry's first score into its file. Refused when the labels are not committed (the blind step
    needs them on record before the tool runs) or when a first score is already there (it is never changed)."""
    entry = result.entry
    if entry.source is None:
        raise SystemExit(f"{entry.repo}: --record-first-seen needs the entry in a file of its own (corpus/)")
    data = json.loads(entry.source.read_text())
    if data.get("first_seen") is not None:
        raise SystemExit(f"{entry.repo}: a first score is already recorded; it is never changed")
    folder, name = entry.source.resolve().parent, entry.source.name
    if _git("ls-files", "--", name, cwd=folder) == "" or _git("status", "--porcelain", "--", name, cwd=folder) != "":
        raise SystemExit(f"{entry.repo}: commit the labels ({entry.source}) before the tool's first run on them")
    labels_commit = _git("log", "-1", "--format=%H", "--", name, cwd=folder)
    matched = []
    hit: set[int] = set()
    for label in entry.labels:
        hits = [i for i, f in enumerate(result.findings) if _matches(f, label)]
        hit.update(hits)
        matched.append(
            {
                "file": label.file,
                "line": label.line,
                "rule": label.rule,
                "verdict": label.verdict,
                "matched": bool(hits),
            }
        )
    record = {
        "tool_commit": tool_commit(python),
        "labels_commit": labels_commit,
        "date": time.strftime("%Y-%m-%d"),
        "labels": matched,
        "unlabelled": [
            {"rule": f.rule, "file": f.path, "line": f.start_line}
            for i, f in enumerate(result.findings)
            if i not in hit
        ],
    }
    data["first_seen"] = record
    entry.source.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return record


def first_seen_tally(entries: list[Entry], per_rule: dict[str, Tally]) -> int:
    """The first-seen score of ``entries`` (from each one's ``first_seen`` record); returns how many had one."""
    counted = 0
    for entry in entries:
        if not entry.first_seen:
            continue
        counted += 1
        for label in entry.first_seen["labels"]:
            tally = per_rule[label["rule"]]
            if label["verdict"] == "hazard":
                if label["matched"]:
                    tally.tp += 1
                else:
                    tally.fn += 1
            elif label["verdict"] == "safe":
                if label["matched"]:
                    tally.fp += 1
            else:
                tally.uncertain += 1
        for finding in entry.first_seen.get("unlabelled", []):
            per_rule[finding["rule"]].unlabelled += 1
    return counted


def added_since(entries: list[Entry], rev: str, corpus: Path) -> list[Entry]:
    """The entries whose file was added to the corpus folder after ``rev`` (oldest first)."""
    added = _git(
        "log", "--diff-filter=A", "--reverse", "--name-only", "--format=", f"{rev}..HEAD", "--", ".", cwd=corpus
    )
    order = [Path(line).name for line in added.splitlines() if line.strip()]
    by_name = {e.source.name: e for e in entries if e.source is not None}
    return [by_name[n] for n in order if n in by_name]


def print_rule_table(title: str, per_rule: dict[str, Tally]) -> Tally:
    print(f"\n{title}")
    print(f"{'rule':8} {'tp':>4} {'fn':>4} {'fp':>4} {'unlab':>5} {'uncert':>6} {'precision':>9} {'recall':>6}")
    overall = Tally()
    for rule in sorted(per_rule):
        t = per_rule[rule]
        overall.add(t)
        print(
            f"{rule:8} {t.tp:>4} {t.fn:>4} {t.fp:>4} {t.unlabelled:>5} {t.uncertain:>6} {fmt(t.precision):>9} {fmt(t.recall):>6}"
        )
    print(
        f"{'overall':8} {overall.tp:>4} {overall.fn:>4} {overall.fp:>4} {overall.unlabelled:>5} {overall.uncertain:>6} {fmt(overall.precision):>9} {fmt(overall.recall):>6}"
    )
    return overall


def _figures(per_rule: dict[str, Tally], overall: Tally) -> dict:
    return {
        "rules": {
            r: {
                "tp": t.tp,
                "fn": t.fn,
                "fp": t.fp,
                "unlabelled": t.unlabelled,
                "precision": t.precision,
                "recall": t.recall,
            }
            for r, t in per_rule.items()
        },
        "overall": {
            "tp": overall.tp,
            "fn": overall.fn,
            "fp": overall.fp,
            "precision": overall.precision,
            "recall": overall.recall,
        },
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirrors", type=Path, required=True, help="directory of fetched mirrors (<owner>+<name>/repo)")
    ap.add_argument(
        "--corpus", type=Path, default=HERE / "corpus", help="folder of entries (default corpus/) or one file"
    )
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "resume-audit-realworld")
    ap.add_argument("--repo", action="append", help="only this repository (repeatable)")
    ap.add_argument("--set", choices=["tuned", "blind"], help="only the entries of this set")
    ap.add_argument("--show", action="store_true", help="print every miss, false positive and unlabelled finding")
    ap.add_argument("--json", type=Path, help="write the per-rule figures here")
    ap.add_argument(
        "--python", default=sys.executable, help="interpreter whose resume-audit to run (e.g. a baseline install)"
    )
    ap.add_argument(
        "--record-first-seen",
        action="store_true",
        help="the blind step: record this run as the entries' first score (needs --repo; labels committed)",
    )
    ap.add_argument("--since", help="also print the first-seen score of the entries added to corpus/ after this commit")
    ap.add_argument(
        "--no-scan", action="store_true", help="do not run the tool: print only first-seen scores (with --since)"
    )
    args = ap.parse_args(argv)
    global PYTHON
    PYTHON = args.python
    if args.record_first_seen and not args.repo:
        ap.error("--record-first-seen needs --repo (one first score per repository, recorded on purpose)")

    entries = load_corpus(args.corpus)
    all_entries = entries
    if args.repo:
        entries = [e for e in entries if e.repo in set(args.repo)]
    if args.set:
        entries = [e for e in entries if e.set == args.set]
    args.work.mkdir(parents=True, exist_ok=True)
    per_rule: dict[str, Tally] = defaultdict(Tally)
    total_seconds = 0.0
    rows = []
    for entry in [] if args.no_scan else entries:
        result = RepoResult(entry)
        try:
            tree = checkout(args.mirrors, entry, args.work)
            scan(tree, entry, result)
        except (OSError, subprocess.CalledProcessError, json.JSONDecodeError) as exc:
            result.error = str(exc)
        total_seconds += result.seconds
        if args.show or result.error:
            print(
                f"{entry.repo} @ {entry.commit[:10]}: {len(result.findings)} findings, {result.seconds:.1f} s"
                + (f"  ERROR {result.error}" if result.error else "")
            )
        if args.record_first_seen and not result.error:
            record_first_seen(result, args.python)
            print(f"{entry.repo}: first score recorded in {entry.source}")
        repo_tally: dict[str, Tally] = defaultdict(Tally)
        if not result.error:
            score(result, repo_tally, args.show)
        rows.append((entry.repo, result, repo_tally))
        for rule, t in repo_tally.items():
            per_rule[rule].add(t)

    figures: dict = {}
    if not args.no_scan:
        print()
        print(f"{'repo':45} {'findings':>8} {'unresolved':>10} {'tp':>4} {'fn':>4} {'fp':>4} {'unlab':>5} {'sec':>6}")
        for repo, result, tally in rows:
            t = Tally()
            for x in tally.values():
                t.add(x)
            unresolved = "-" if result.unresolved_imports is None else str(result.unresolved_imports)
            print(
                f"{repo:45} {len(result.findings):>8} {unresolved:>10} {t.tp:>4} {t.fn:>4} {t.fp:>4} {t.unlabelled:>5} {result.seconds:>6.1f}"
            )
        overall = print_rule_table("current score", per_rule)
        print(f"\n{len(entries)} repositories, scan time {total_seconds:.1f} s")
        figures = {**_figures(per_rule, overall), "seconds": total_seconds}
    if args.since:
        newest = added_since(all_entries, args.since, args.corpus)
        first: dict[str, Tally] = defaultdict(Tally)
        counted = first_seen_tally(newest, first)
        overall_first = print_rule_table(
            f"first-seen score of the {counted} repositories added since {args.since}"
            f" ({len(newest) - counted} without a first score)",
            first,
        )
        figures["first_seen"] = {**_figures(first, overall_first), "repositories": counted}
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
