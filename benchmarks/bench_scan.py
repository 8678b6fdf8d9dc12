"""Scan speed, as ratios against baselines measured in the same run.

Trees:
  (a) a synthetic monorepo (benchmarks/synthetic.py): 5,000 files, 2 % agent code;
  (b) the installed source of langgraph, crewai, llama-index-workflows (``workflows``)
      and pydantic-graph.

Per tree, in one run:
  bare      -- ``libcst.parse_module`` over the candidate files (those the pre-filter keeps), in process
  cold      -- ``resume_audit.engine.scan.scan`` with no cache, in process
  warm      -- the same with a populated cache, in process
  cli-cold / cli-warm / semgrep -- whole commands (interpreter start-up included), wall clock,
  with peak RSS of the child process; semgrep runs ``benchmarks/semgrep_rules.yml`` (RA101,
  RA201, RA601 written as semgrep patterns).

Goals (issue 8): cold <= 2x bare; warm <= 0.2x cold; faster than semgrep.

  (c) ``--filler stdlib``: the synthetic tree's small filler replaced by real library modules (the
      standard library's own files copied in, cycled), 100 agent files among them: the text
      searches and the pre-filter then pay for real file sizes (issue 16);
  ``--scaling 1000,5000,20000``: CLI cold / warm / one-file-change time and peak RSS per size of
      the realistic tree, and seconds per thousand files, so growth is visible. One agent file is
      changed twice: a comment appended, then a module-level statement (a code change that moves
      no project-wide fact).

    python benchmarks/bench_scan.py [--files 5000] [--semgrep /path/to/semgrep] [--json out.json]
    python benchmarks/bench_scan.py --filler stdlib --scaling 1000,5000,20000 --synthetic-only
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
from pathlib import Path

import libcst

from resume_audit.cache.filetable import RACY_SECONDS
from resume_audit.config.settings import Config
from resume_audit.discovery.walk import discover
from resume_audit.engine.scan import active_rules, prefilter_of, scan
from resume_audit.reading.prefilter import frameworks_in_scan

HERE = Path(__file__).resolve().parent
TIME = shutil.which("time", path="/usr/bin:/bin") or "/usr/bin/time"  # GNU time, for peak RSS
sys.path.insert(0, str(HERE))
from synthetic import generate  # noqa: E402


def candidates(root: Path) -> list[Path]:
    """The files the scan's pre-filter keeps (the ``bare`` baseline parses these)."""
    prefilter = prefilter_of(active_rules(Config()))
    matches = {sp.path: prefilter.match(sp.path.read_bytes()) for sp in discover([root], root)}
    in_scan = frameworks_in_scan(matches.values())
    return [p for p, m in matches.items() if prefilter.is_candidate(m, in_scan)]


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def run_child(cmd: list[str], cwd: Path, stdout=subprocess.DEVNULL) -> tuple[float, int, int]:
    """(wall seconds, exit code, peak RSS in MB) of a command.

    The peak comes from GNU ``time -f %M`` (its ``wait4`` rusage: the command and the
    descendants it waited for, e.g. pool workers). Measuring from this script instead
    would be wrong: a forked child's high-water mark starts at this (large) process's RSS.
    """
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.run([TIME, "-f", "%M", "-o", rss.name, *cmd], cwd=cwd, stdout=stdout, stderr=err)
        wall = time.perf_counter() - start
        peak_kb = int((rss.read().strip().splitlines() or ["0"])[-1])
        err.seek(0)
        stderr = err.read().decode(errors="replace")
    if proc.returncode not in (0, 1):
        print(f"  ! {' '.join(cmd[:3])} exited {proc.returncode}: {stderr[-400:]}", file=sys.stderr)
    return wall, proc.returncode, peak_kb // 1024


def measure(name: str, root: Path, semgrep: str | None, jobs: int | None) -> dict:
    cands = candidates(root)
    sources = [p.read_text(encoding="utf-8", errors="replace") for p in cands]
    bare = timed(lambda: [libcst.parse_module(s) for s in sources])
    cache = Path(tempfile.mkdtemp(prefix="ra-bench-cache-"))
    cold_result = {}
    cold = timed(lambda: cold_result.setdefault("r", scan([root], Config(), root, jobs=jobs)))
    timed(lambda: scan([root], Config(), root, jobs=jobs, cache_dir=cache))  # populate
    warm = timed(lambda: scan([root], Config(), root, jobs=jobs, cache_dir=cache))
    result = cold_result["r"]
    exe = [
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
    ]
    if jobs:
        exe += ["--jobs", str(jobs)]
    cli_cache = Path(tempfile.mkdtemp(prefix="ra-bench-cli-"))
    cli_cold = run_child([*exe, "--no-cache"], root)
    run_child([*exe, "--cache-dir", str(cli_cache)], root)
    cli_warm = run_child([*exe, "--cache-dir", str(cli_cache)], root)
    row = {
        "tree": name,
        "files": result.files_scanned,
        "candidates": len(cands),
        "findings": len(result.findings),
        "bare_parse_s": round(bare, 2),
        "cold_s": round(cold, 2),
        "warm_s": round(warm, 2),
        "cold_over_bare": round(cold / bare, 2) if bare else None,
        "warm_over_cold": round(warm / cold, 3) if cold else None,
        "cli_cold_s": round(cli_cold[0], 2),
        "cli_cold_peak_mb": cli_cold[2],
        "cli_warm_s": round(cli_warm[0], 2),
    }
    if semgrep:
        out_file = Path(tempfile.mkdtemp(prefix="ra-bench-sg-")) / "semgrep.json"
        with out_file.open("w") as fh:
            sg = run_child(
                [
                    semgrep,
                    "scan",
                    "--config",
                    str(HERE / "semgrep_rules.yml"),
                    "--metrics",
                    "off",
                    "--disable-version-check",
                    "--json",
                    "--quiet",
                    "--no-git-ignore",
                    "--timeout",
                    "0",
                    str(root),
                ],
                root,
                stdout=fh,
            )
        report = json.loads(out_file.read_text())
        errors = [e for e in report.get("errors", []) if e.get("level") == "error"]
        if errors:
            raise SystemExit(f"semgrep reported errors, its timing would be meaningless: {errors[:2]}")
        row.update(
            {
                "semgrep_s": round(sg[0], 2),
                "semgrep_peak_mb": sg[2],
                "semgrep_findings": len(report.get("results", [])),
                "cli_cold_over_semgrep": round(cli_cold[0] / sg[0], 2),
            }
        )
    shutil.rmtree(cache, ignore_errors=True)
    shutil.rmtree(cli_cache, ignore_errors=True)
    return row


def realistic(dest: Path, files: int, agents: int = 100) -> Path:
    """``agents`` agent files with their helpers (the synthetic generator, 1 in 5 files agent code)
    and, for the rest of ``files``, the standard library's own modules copied in: ordinary
    library-sized code, not small filler."""
    import sysconfig

    app_files = min(files, agents * 5)
    generate(dest / "app", files=app_files, agent_share=agents / app_files)
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    library = sorted(p for p in stdlib.rglob("*.py") if "site-packages" not in p.parts and p.is_file())
    for n in range(files - app_files):
        source = library[n % len(library)]
        target = dest / f"lib{n // len(library):02d}" / source.relative_to(stdlib)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    return dest


def scaling(sizes: list[int], jobs: int | None) -> list[dict]:
    """CLI cold, warm and one-file-change runs (wall time, peak RSS) on realistic trees of each size."""
    rows = []
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="ra-bench-scale-") as tmp:
            root = realistic(Path(tmp) / "tree", size)
            # files changed within the racy window are not trusted by their signature (a later
            # change in the same tick could go unseen): a tree written a moment ago would be read
            # again by the warm run, which no user's settled tree is
            settled_at = time.time() + RACY_SECONDS + 0.1
            cache = Path(tmp) / "cache"
            exe = [
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
            ]
            if jobs:
                exe += ["--jobs", str(jobs)]
            no_cache = run_child([*exe, "--no-cache"], root)
            time.sleep(max(0.0, settled_at - time.time()))
            cold = run_child([*exe, "--cache-dir", str(cache)], root)
            warm = run_child([*exe, "--cache-dir", str(cache)], root)
            edited = sorted((root / "app").rglob("agent_*.py"))[0]
            original = edited.read_text()
            edited.write_text(original + "\n# edited\n")
            one_change = run_child([*exe, "--cache-dir", str(cache)], root)
            # a change to the code (a module-level statement), not only to a comment: no project-wide
            # fact moves, so only the edited file should be re-analysed (issue 16's early cut-off)
            edited.write_text(original + "\n_edited = True\n")
            one_code_change = run_child([*exe, "--cache-dir", str(cache)], root)
            mb = sum(p.stat().st_size for p in root.rglob("*.py")) / 1e6
            rows.append(
                {
                    "files": size,
                    "megabytes": round(mb, 1),
                    "no_cache_s": round(no_cache[0], 2),
                    "cold_s": round(cold[0], 2),
                    "warm_s": round(warm[0], 2),
                    "one_change_s": round(one_change[0], 2),
                    "one_code_change_s": round(one_code_change[0], 2),
                    "s_per_1k_files_cold": round(cold[0] / size * 1000, 2),
                    "warm_over_cold": round(warm[0] / cold[0], 3),
                    "one_change_over_cold": round(one_change[0] / cold[0], 3),
                    "one_code_change_over_cold": round(one_code_change[0] / cold[0], 3),
                    "peak_mb_cold": cold[2],
                    "peak_mb_warm": warm[2],
                }
            )
            print(json.dumps(rows[-1]), file=sys.stderr)
    return rows


def installed_frameworks(dest: Path) -> Path:
    import importlib.util

    for pkg in ("langgraph", "crewai", "workflows", "pydantic_graph"):
        spec = importlib.util.find_spec(pkg)
        if spec is None or not spec.submodule_search_locations:
            print(f"  (skipping {pkg}: not installed)", file=sys.stderr)
            continue
        shutil.copytree(
            list(spec.submodule_search_locations)[0], dest / pkg, ignore=shutil.ignore_patterns("__pycache__")
        )
    return dest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=5000)
    ap.add_argument("--share", type=float, default=0.02)
    ap.add_argument("--semgrep", default=shutil.which("semgrep"), help="semgrep executable (pip install semgrep)")
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument(
        "--synthetic-only", action="store_true", help="skip the installed-frameworks tree (a quick smoke run)"
    )
    ap.add_argument(
        "--filler",
        choices=["small", "stdlib"],
        default="small",
        help="the synthetic tree's non-agent files: small generated modules, or copies of the standard library",
    )
    ap.add_argument(
        "--scaling", default="", help="comma-separated tree sizes for the scaling series, e.g. 1000,5000,20000"
    )
    args = ap.parse_args()
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="ra-bench-") as tmp:
        synth = Path(tmp) / "synthetic"
        if args.filler == "stdlib":
            realistic(synth, args.files)
            label = f"realistic {args.files} files (stdlib filler, 100 agent files)"
        else:
            generate(synth, files=args.files, agent_share=args.share)
            label = f"synthetic {args.files} files, {args.share:.0%} agent code"
        rows.append(measure(label, synth, args.semgrep, args.jobs))
        if not args.synthetic_only:
            fw = installed_frameworks(Path(tmp) / "frameworks")
            rows.append(measure("installed langgraph+crewai+workflows+pydantic_graph", fw, args.semgrep, args.jobs))
    if args.scaling:
        rows.extend({"scaling": True, **row} for row in scaling([int(s) for s in args.scaling.split(",")], args.jobs))
    for row in rows:
        print(json.dumps(row, indent=2))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
