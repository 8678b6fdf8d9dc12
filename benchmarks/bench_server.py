"""``resume-audit server`` against ``resume-audit scan``, on the same synthetic tree, in one run.

Measured through a real LSP client (pygls', tests/lsp_session.py) over stdio, the debounce set to
0 so that what is timed is the server's own work:

* **cold scan**: ``resume-audit scan TREE --no-cache`` (the whole CLI, a fresh process);
* **indexing**: from ``initialized`` to the end of the server's ``$/progress`` (an empty cache,
  as cold as the scan);
* **edit -> diagnostics**: one agent file's buffer changed (the effect before ``interrupt()``
  removed, then put back: each edit changes the file's findings, so each is published), timed from
  the ``didChange`` to the ``publishDiagnostics`` of that file; p50 and p95 over ``--edits``;
* **peak RSS** of the server process (``VmHWM``) after the edits.

    python benchmarks/bench_server.py --files 5000 --edits 40 --json server.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from lsp_session import ServerSession  # noqa: E402
from synthetic import generate  # noqa: E402

EFFECT_LINE = '    notify("https://hooks.example.com/'


def cold_scan(root: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "resume_audit",
            "scan",
            str(root),
            "--no-cache",
            "--quiet",
            "--format",
            "json",
            "--output",
            os.devnull,
            "--fail-on",
            "never",
        ],
        check=True,
        env=env,
        cwd=root,
    )
    return time.perf_counter() - start


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def server_run(root: Path, agent: Path, edits: int, env: dict[str, str]) -> dict[str, float]:
    relative = agent.relative_to(root).as_posix()
    original = agent.read_text()
    without = "\n".join(line for line in original.splitlines() if not line.startswith(EFFECT_LINE)) + "\n"
    async with ServerSession(root, env=env, debounce=0.0) as s:
        started = time.perf_counter()

        def ended() -> bool:
            return any(
                (p.get("kind") if isinstance(p, dict) else getattr(p, "kind", None)) == "end" for p in s.progress
            )

        await s.wait_for(ended, timeout=1800)
        indexing = time.perf_counter() - started
        uri = s.open(relative)
        await s.wait_for(lambda: "RA101" in s.codes(relative), timeout=120)
        latencies: list[float] = []
        for n in range(edits):
            text = without if n % 2 == 0 else original
            seen = len(s.arrivals)
            sent = time.perf_counter()
            s.change(relative, text)
            await s.wait_for(lambda: any(u == uri for _, u in s.arrivals[seen:]), timeout=120)
            arrived = next(t for t, u in s.arrivals[seen:] if u == uri)
            latencies.append(arrived - sent)
        server = s.client._server
        assert server is not None
        rss = peak_rss_mb(server.pid)
        await s.shutdown()
    latencies.sort()
    return {
        "indexing_s": round(indexing, 3),
        "edit_p50_ms": round(1000 * statistics.median(latencies), 1),
        "edit_p95_ms": round(1000 * latencies[max(0, int(0.95 * len(latencies)) - 1)], 1),
        "edit_max_ms": round(1000 * latencies[-1], 1),
        "server_peak_rss_mb": round(rss, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--edits", type=int, default=40)
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-server-") as tmp:
        root = Path(tmp) / "tree"
        agents = generate(root, files=args.files)
        env = {**os.environ, "XDG_CACHE_HOME": str(Path(tmp) / "cache")}
        env.pop("RESUME_AUDIT_CACHE_DIR", None)
        cold = cold_scan(root, env)
        numbers = asyncio.run(server_run(root, sorted(agents)[0], args.edits, env))
    out = {
        "files": args.files,
        "edits": args.edits,
        "cold_scan_s": round(cold, 3),
        **numbers,
        "edit_p50_over_cold_scan": round(numbers["edit_p50_ms"] / 1000 / cold, 4),
    }
    print(json.dumps(out, indent=2))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
