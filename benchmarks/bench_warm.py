"""Whole-CLI cold and warm scans of two (or more) installs of resume-audit, interleaved in one run.

Issue 16's warm goal is a ratio (warm <= 0.1x cold on a realistic 5,000-file tree), and what
is left of a warm run is start-up, imports and discovery: all sensitive to a busy machine. So
every install is timed on the same tree, in the same run, round-robin, several times, and the
medians are compared -- never numbers from different sessions.

Each ``--variant NAME=DIR`` is an install put on ``PYTHONPATH`` (``pip install --no-deps
--no-build-isolation --target DIR <checkout>``: byte-compiled, as a user's install is); ``NAME=``
(empty) runs the current environment. Per tree size and variant: ``--version``, a cold scan
(an empty cache: filling it), a warm scan (nothing changed) and, with ``--no-cache-runs``, a
``--no-cache`` scan, each with wall time and peak RSS (GNU ``time``). With ``--one-change``, a
scan after one agent file is edited, and its floor: a warm run plus the import of the CLI and
LibCST (timed alone, ``python -c "import resume_audit.cli, libcst"``), which any run that must
parse the edited file pays, whatever it then does (``one_change_floor``, and over cold).

    python benchmarks/bench_warm.py --variant main=/tmp/old-main --variant new=/tmp/new \\
        --sizes 5000 --repeats 7 --cold-repeats 2 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
TIME = shutil.which("time", path="/usr/bin:/bin") or "/usr/bin/time"
#: the imports of a run that parses one file, timed on their own (``one_change_floor``)
PARSER_IMPORT = "import resume_audit.cli, libcst"


def run(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int]:
    """(wall seconds, peak RSS in MB) of one command; a failure stops the benchmark."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        start = time.perf_counter()
        proc = subprocess.run(
            [TIME, "-f", "%M", "-o", rss.name, *cmd],
            cwd=cwd,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        wall = time.perf_counter() - start
        peak_kb = int((rss.read().strip().splitlines() or ["0"])[-1])
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.decode(errors='replace')[-400:]}")
    return wall, peak_kb // 1024


def environment(pythonpath: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # byte-compiled installs are what users run
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    else:
        env.pop("PYTHONPATH", None)
    return env


def median(xs: list[float]) -> float:
    return round(statistics.median(xs), 3)


def bench(
    root: Path,
    variants: dict[str, str],
    repeats: int,
    cold_repeats: int,
    no_cache_runs: bool,
    work: Path,
    one_change: bool = False,
) -> dict:
    scan = [
        sys.executable,
        "-m",
        "resume_audit",
        "scan",
        str(root),
        "-f",
        "json",
        "-o",
        os.devnull,
        "--fail-on",
        "never",
        "-q",
    ]
    envs = {name: environment(path) for name, path in variants.items()}
    times: dict[str, dict[str, list[float]]] = {
        n: {"version": [], "cold": [], "warm": [], "no_cache": [], "one_change": [], "parser_import": []}
        for n in variants
    }
    peaks: dict[str, dict[str, int]] = {n: {} for n in variants}
    caches = {n: work / f"cache-{n}" for n in variants}
    for rnd in range(cold_repeats):  # cold: an empty cache, filled by the run (the last fill stays for the warm runs)
        for name, env in envs.items():
            shutil.rmtree(caches[name], ignore_errors=True)
            wall, peak = run([*scan, "--cache-dir", str(caches[name])], env, root)
            times[name]["cold"].append(wall)
            peaks[name]["cold"] = max(peaks[name].get("cold", 0), peak)
            print(f"  cold {name}: {wall:.2f} s, {peak} MB", file=sys.stderr)
    for name, env in envs.items():  # one unmeasured warm run each: the file table learns the searched words
        run([*scan, "--cache-dir", str(caches[name])], env, root)
    for rnd in range(repeats):
        for name, env in envs.items():
            wall, _ = run([sys.executable, "-m", "resume_audit", "--version"], env, root)
            times[name]["version"].append(wall)
            wall, peak = run([*scan, "--cache-dir", str(caches[name])], env, root)
            times[name]["warm"].append(wall)
            peaks[name]["warm"] = max(peaks[name].get("warm", 0), peak)
    if one_change:
        # one agent file edited between rounds (a module-level statement, a code change that moves
        # no project-wide fact): every variant's cache is one change behind when its turn comes
        edited = (sorted((root / "app").rglob("agent_*.py")) or sorted(root.rglob("*.py")))[0]
        original = edited.read_text()
        try:
            for rnd in range(repeats):
                edited.write_text(original + f"\n_edited = {rnd}\n")
                for name, env in envs.items():
                    wall, _ = run([*scan, "--cache-dir", str(caches[name])], env, root)
                    times[name]["one_change"].append(wall)
                    # what any run that parses a file pays before it parses: the interpreter, the CLI
                    # and LibCST (the rules are LibCST rules) -- the floor of a one-file change
                    wall, _ = run([sys.executable, "-c", PARSER_IMPORT], env, root)
                    times[name]["parser_import"].append(wall)
        finally:
            edited.write_text(original)
    if no_cache_runs:
        for rnd in range(cold_repeats):
            for name, env in envs.items():
                wall, peak = run([*scan, "--no-cache"], env, root)
                times[name]["no_cache"].append(wall)
                peaks[name]["no_cache"] = max(peaks[name].get("no_cache", 0), peak)
                print(f"  --no-cache {name}: {wall:.2f} s, {peak} MB", file=sys.stderr)
    out = {}
    for name in variants:
        t = times[name]
        row = {k: median(v) for k, v in t.items() if v}
        row["warm_min"] = round(min(t["warm"]), 3)
        row["warm_over_cold"] = round(row["warm"] / row["cold"], 3)
        if t["one_change"]:
            row["one_change_over_cold"] = round(row["one_change"] / row["cold"], 3)
            # a one-file change can be no faster than a warm run plus LibCST's import
            row["one_change_floor"] = round(row["parser_import"] + row["warm"] - row["version"], 3)
            row["one_change_floor_over_cold"] = round(row["one_change_floor"] / row["cold"], 3)
        row["peak_mb"] = peaks[name]
        row["runs"] = {k: [round(x, 3) for x in v] for k, v in t.items() if v}
        out[name] = row
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME=PYTHONPATH",
        help="an install to time (repeatable); NAME= runs the current environment",
    )
    ap.add_argument("--sizes", default="5000", help="comma-separated tree sizes (files)")
    ap.add_argument("--repeats", type=int, default=7, help="warm and --version runs per variant")
    ap.add_argument("--cold-repeats", type=int, default=2, help="cold (and --no-cache) runs per variant")
    ap.add_argument(
        "--no-cache-runs", action="store_true", help="also time --no-cache scans (peak RSS of a whole read)"
    )
    ap.add_argument(
        "--one-change",
        action="store_true",
        help="also time scans after one agent file is edited (interleaved, one edit per round)",
    )
    ap.add_argument("--tree", type=Path, default=None, help="scan this tree instead of generating one per size")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    variants = dict(v.split("=", 1) for v in args.variant) or {"current": ""}
    results = []
    with tempfile.TemporaryDirectory(prefix="ra-bench-warm-") as tmp:
        work = Path(tmp)
        sizes = [0] if args.tree else [int(s) for s in args.sizes.split(",") if s]
        for size in sizes:
            if args.tree:
                root = args.tree.resolve()
            else:
                from bench_scan import realistic

                root = realistic(work / f"tree-{size}", size)
            files = sum(1 for _ in root.rglob("*.py"))
            print(f"{files} files under {root}", file=sys.stderr)
            row = {
                "files": files,
                "variants": bench(
                    root, variants, args.repeats, args.cold_repeats, args.no_cache_runs, work, args.one_change
                ),
            }
            results.append(row)
            print(json.dumps(row, indent=1))
            if not args.tree:
                shutil.rmtree(root, ignore_errors=True)
            for name in variants:
                shutil.rmtree(work / f"cache-{name}", ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
