"""Every tree shape side by side with semgrep, in one run (``bench_scan.py --shapes``; issue 35).

Per shape (:mod:`trees`) the tree is built once and left to settle (a file changed within the
cache's racy window is read again by a warm run, which no user's settled tree is); then, round
after round, every install (``--variant NAME=PYTHONPATH``: ``NAME=`` is the current environment,
another is a side install, ``pip install --no-deps --no-build-isolation --target DIR <checkout>``)
runs whole CLI scans -- ``--no-cache``, cold (an empty cache, filled) and warm (nothing changed)
-- and semgrep runs its rules file (``semgrep_rules.yml``) over the same tree. Medians of the
rounds; the ratios are taken within the run: ``no_cache / semgrep`` and ``warm / cold``, of wall
time and of CPU time (user + system, the command and its workers).
"""

from __future__ import annotations

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
from trees import build  # noqa: E402

TIME = shutil.which("time", path="/usr/bin:/bin") or "/usr/bin/time"  # GNU time, for peak RSS
#: the cache trusts a file's stat signature only once it is older than this (cache.filetable.RACY_SECONDS)
SETTLE_SECONDS = 2.2


def timed_run(
    cmd: list[str], cwd: Path, env: dict[str, str], stdout: object = subprocess.DEVNULL
) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, peak RSS in MB) of the command and the workers it waited for (GNU
    ``time``'s ``wait4`` rusage); a failure stops the run. CPU seconds (user + system) say what a
    run costs when the machine is shared: wall time then measures the neighbours as much as the run."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        start = time.perf_counter()
        proc = subprocess.run(
            [TIME, "-f", "%U %S %M", "-o", rss.name, *cmd],
            cwd=cwd,
            env=env,
            stdout=stdout,  # type: ignore[arg-type]
            stderr=subprocess.PIPE,
        )
        wall = time.perf_counter() - start
        user, system, peak_kb = (rss.read().strip().splitlines() or ["0 0 0"])[-1].split()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd[:4])} exited {proc.returncode}: {proc.stderr.decode(errors='replace')[-600:]}")
    return wall, float(user) + float(system), int(peak_kb) // 1024


def environment(pythonpath: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    else:
        env.pop("PYTHONPATH", None)
    return env


def semgrep_run(semgrep: str, root: Path) -> tuple[float, float, int, int]:
    """(wall seconds, CPU seconds, peak MB, findings) of semgrep over ``root`` with this folder's rules file."""
    with tempfile.TemporaryDirectory(prefix="ra-bench-sg-") as tmp:
        out = Path(tmp) / "semgrep.json"
        with out.open("w") as fh:
            wall, cpu, peak = timed_run(
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
                environment(""),
                stdout=fh,
            )
        report = json.loads(out.read_text())
    errors = [e for e in report.get("errors", []) if e.get("level") == "error"]
    if errors:
        raise SystemExit(f"semgrep reported errors, its timing would be meaningless: {errors[:2]}")
    return wall, cpu, peak, len(report.get("results", []))


def _findings(python: str, root: Path, env: dict[str, str]) -> int:
    proc = subprocess.run(
        [python, "-m", "resume_audit", "scan", str(root), "-f", "json", "--no-cache", "--fail-on", "never"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    return len(json.loads(proc.stdout).get("findings", []))


def measure_shape(
    shape: str, root: Path, variants: list[tuple[str, str]], semgrep: str | None, rounds: int, jobs: int | None
) -> dict:
    """One shape's row: per variant the medians of its runs, semgrep's, and the ratios."""
    python = sys.executable
    files = sum(1 for _ in root.rglob("*.py"))
    samples: dict[str, dict[str, list[float]]] = {name: {} for name, _ in variants}
    sg_samples: list[tuple[float, float, int, int]] = []
    for _ in range(rounds):
        for name, path in variants:
            env = environment(path)
            exe = [
                python,
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
            with tempfile.TemporaryDirectory(prefix="ra-bench-cache-") as cache:
                runs = {
                    "no_cache": timed_run([*exe, "--no-cache"], root, env),
                    "cold": timed_run([*exe, "--cache-dir", cache], root, env),
                    "warm": timed_run([*exe, "--cache-dir", cache], root, env),
                }
            for kind, (wall, cpu, peak) in runs.items():
                samples[name].setdefault(f"{kind}_s", []).append(wall)
                samples[name].setdefault(f"{kind}_cpu_s", []).append(cpu)
                samples[name].setdefault(f"{kind}_peak_mb", []).append(peak)
        if semgrep:
            sg_samples.append(semgrep_run(semgrep, root))
    row: dict = {
        "shape": shape,
        "files": files,
        "megabytes": round(sum(p.stat().st_size for p in root.rglob("*.py")) / 1e6, 1),
        "rounds": rounds,
    }
    sg_s = statistics.median(s[0] for s in sg_samples) if sg_samples else None
    sg_cpu = statistics.median(s[1] for s in sg_samples) if sg_samples else None
    if sg_samples:
        row.update(
            {
                "semgrep_s": round(sg_s, 2),
                "semgrep_cpu_s": round(sg_cpu, 2),
                "semgrep_peak_mb": max(s[2] for s in sg_samples),
                "semgrep_findings": sg_samples[0][3],
            }
        )
    for name, path in variants:
        med = {k: statistics.median(v) for k, v in samples[name].items()}
        out = {k: round(v, 2) if k.endswith("_s") else int(v) for k, v in med.items()}
        out["warm_over_cold"] = round(med["warm_s"] / med["cold_s"], 3)
        out["warm_over_cold_cpu"] = round(med["warm_cpu_s"] / med["cold_cpu_s"], 3)
        if sg_s and sg_cpu:
            out["no_cache_over_semgrep"] = round(med["no_cache_s"] / sg_s, 2)
            out["cold_over_semgrep"] = round(med["cold_s"] / sg_s, 2)
            out["no_cache_over_semgrep_cpu"] = round(med["no_cache_cpu_s"] / sg_cpu, 2)
        out["findings"] = _findings(python, root, environment(path))
        row[name or "current"] = out
    return row


def run_shapes(
    shapes: list[str],
    files: int,
    dense_files: int,
    variants: list[tuple[str, str]],
    semgrep: str | None,
    rounds: int,
    jobs: int | None,
    mirrors: Path,
    work: Path,
) -> list[dict]:
    rows = []
    for shape in shapes:
        with tempfile.TemporaryDirectory(prefix=f"ra-bench-{shape}-") as tmp:
            root = build(shape, Path(tmp) / "tree", dense_files if shape == "agent-dense" else files, mirrors, work)
            time.sleep(SETTLE_SECONDS)
            rows.append(measure_shape(shape, root, variants, semgrep, rounds, jobs))
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return rows
