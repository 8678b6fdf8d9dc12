"""What an ``ast`` path for trace-only modules could save, measured before building one.

Issue 16 asks for cheaper analysis of modules a scan reaches only by tracing (a node's helpers, a
web handler's module): they hold no finding, so a summary from Python's ``ast`` (what a function
calls, whether it reaches a sink) could stand in for LibCST's tree. This script runs one cold scan
in process (``jobs=1``, no cache), times every module the engine loads -- LibCST parse, the ``ast``
pre-check and indexing (``loading.index_source``) -- splits them into candidates (files the
pre-filter hands to the rules) and trace-only modules, and times ``ast.parse`` of the trace-only
ones, the floor of any ``ast`` summary. The saving of an ``ast`` path is at most
``trace-only load - ast.parse`` of the scan's time.

    python benchmarks/bench_trace_only.py --files 5000          # realistic stdlib filler
    python benchmarks/bench_trace_only.py --tree path/to/project
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
import tempfile
import time
from pathlib import Path

from resume_audit.config.settings import Config
from resume_audit.engine import loading
from resume_audit.engine import scan as engine
from resume_audit.reading.decoding import SourceText


def measure(root: Path) -> dict:
    loads: dict[Path, float] = {}
    original = loading.index_source

    def timed(source: SourceText):  # the one function every parse of the scan goes through
        started = time.perf_counter()
        try:
            return original(source)
        finally:
            loads[source.path] = loads.get(source.path, 0.0) + time.perf_counter() - started

    candidates: set[Path] = set()
    analyse = engine.Analyzer.analyse

    def recorded(self, path: Path):  # the files the rules run on: the pre-filter's candidates
        candidates.add(path)
        return analyse(self, path)

    loading.index_source = timed  # type: ignore[assignment]
    engine.Analyzer.analyse = recorded  # type: ignore[method-assign]
    try:
        started = time.perf_counter()
        result = engine.scan([root], Config(), root, jobs=1, cache_dir=None)
        total = time.perf_counter() - started
    finally:
        loading.index_source = original  # type: ignore[assignment]
        engine.Analyzer.analyse = analyse  # type: ignore[method-assign]
    with_findings = {Path(root, f.span.path).resolve() for f in result.findings}
    # a module loaded but never analysed is reached only by tracing: it can hold no finding
    trace_only = [p for p in loads if p not in candidates]
    ast_time = 0.0
    for p in trace_only:
        text = p.read_text(encoding="utf-8", errors="replace")
        started = time.perf_counter()
        ast.parse(text)
        ast_time += time.perf_counter() - started
    return {
        "scan_s": round(total, 3),
        "findings": len(result.findings),
        "modules_loaded": len(loads),
        "load_s": round(sum(loads.values()), 6),
        "candidates_loaded": len([p for p in loads if p in candidates]),
        "candidates_with_findings": len(with_findings & candidates),
        "candidate_load_s": round(sum(t for p, t in loads.items() if p in candidates), 3),
        "trace_only_modules": len(trace_only),
        "trace_only_load_s": round(sum(loads[p] for p in trace_only), 6),
        "trace_only_ast_parse_s": round(ast_time, 6),  # a few small modules parse in well under a millisecond
        "ast_path_saving_at_most": round((sum(loads[p] for p in trace_only) - ast_time) / total, 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=5000, help="size of the generated realistic tree")
    ap.add_argument("--tree", type=Path, default=None, help="measure this tree instead")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    if args.tree is not None:
        out = measure(args.tree.resolve())
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from bench_scan import realistic

        with tempfile.TemporaryDirectory(prefix="ra-bench-trace-") as tmp:
            out = measure(realistic(Path(tmp) / "tree", args.files).resolve())
    print(json.dumps(out, indent=1))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
