"""The ``resume-audit`` command line (typer). A thin layer over :mod:`resume_audit.api`.

Exit codes, for every command: 0 -- nothing at or above ``--fail-on``;
1 -- findings at or above ``--fail-on`` (``scan --fail-on-unused-suppressions``:
or an unused suppression comment); 2 -- usage, configuration or internal error.
"""

from __future__ import annotations

import gc
import os
import re
import sys
import threading
import traceback
from enum import Enum
from pathlib import Path
from typing import Any, List, Optional

import typer

from resume_audit.version import __version__
from resume_audit.api import ScanRequest, default_root, resolve_config, run_scan
from resume_audit.cache.results import default_cache_dir
from resume_audit.postprocess.baseline import BaselineError
from resume_audit.catalog.descriptors import descriptors, documentation
from resume_audit.config.settings import ConfigError
from resume_audit.discovery.walk import PathNotFound
from resume_audit.findings import PROPERTIES, ScanResult, Severity
from resume_audit.postprocess.gitdiff import DiffError
from resume_audit.reporters.progress import scan_progress
from resume_audit.reporters import render
from resume_audit.reporters.terminal import PLAIN, stdout_styling

app = typer.Typer(
    name="resume-audit",
    help=(
        "Find where an agent codebase's checkpoint / interrupt / resume plane breaks its promises: "
        "effects that fire twice, human answers that are lost or served the wrong outcome, corrupt threads.\n\n"
        "Examples:\n\n"
        "  resume-audit scan ./myagent\n\n"
        "  resume-audit scan src --format sarif --output resume-audit.sarif\n\n"
        "  resume-audit explain RA201\n\n"
        "Exit codes: 0 clean, 1 findings at or above --fail-on, 2 usage or internal error."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # help text is plain: "[tool.resume-audit]" and "[default: ...]" must not be read as rich markup
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class OutputFormat(str, Enum):
    text = "text"
    json = "json"
    sarif = "sarif"
    github = "github"


class ScanFormat(str, Enum):
    text = "text"
    concise = "concise"
    json = "json"
    sarif = "sarif"
    github = "github"


class FailOn(str, Enum):
    error = "error"
    warning = "warning"
    note = "note"
    never = "never"


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"resume-audit {__version__}")
        raise typer.Exit(0)


@app.callback()
def main_options(
    version: bool = typer.Option(False, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."),
) -> None:
    """resume-audit: audit the resume plane of LangGraph, CrewAI, LlamaIndex Workflows and pydantic-graph code."""


def _split_ids(values: Optional[List[str]]) -> Optional[List[str]]:
    if not values:
        return None
    out: list[str] = []
    for v in values:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return out


def emit(result: ScanResult, fmt: str, output: Optional[Path], *, quiet: bool = False) -> None:
    """Render ``result`` to ``output`` (or stdout) and say where it went (unless ``quiet``).

    Colour on stdout is rich's decision (``NO_COLOR``, ``FORCE_COLOR``, ``TERM=dumb``: see
    :mod:`resume_audit.reporters.terminal`); a report file is always plain."""
    styling = stdout_styling() if output is None and fmt == "text" else PLAIN
    text = render(result, fmt, styling=styling)
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        write_report(output, text)
        if quiet:
            return
        typer.echo(
            f"resume-audit: {len(result.findings)} finding(s), {len(result.notifications)} notification(s) "
            f"written to {output}",
            err=True,
        )


def write_report(output: Path, text: str) -> None:
    """Write a report file; a path that cannot be written is a usage error (exit 2), not findings (exit 1)."""
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise fail(f"cannot write the report to {output}: {exc.strerror or exc}")


def fail(message: str) -> "typer.Exit":
    typer.echo(f"resume-audit: error: {message}", err=True)
    return typer.Exit(2)


@app.command(
    epilog=(
        "Examples: resume-audit scan ./myagent | "
        "resume-audit scan src tests --select RA101,RA201 --fail-on error | "
        "resume-audit scan . --format sarif --output results.sarif | "
        "resume-audit scan . --write-baseline .resume-audit-baseline.json | "
        "resume-audit scan . --diff origin/main"
    )
)
def scan(
    paths: List[Path] = typer.Argument(..., help="Files or directories to scan (recursively), e.g. ./myagent."),
    format: ScanFormat = typer.Option(ScanFormat.text, "--format", "-f", help="Output format: text (human), concise (path:line:col: RAxxx message, one line each), json, sarif (code scanning), github (workflow annotations)."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the report to this file instead of stdout, e.g. -o results.sarif."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Only the report: no progress bar, no 'written to' or baseline message on stderr (errors still go there)."),
    select: Optional[List[str]] = typer.Option(None, "--select", help="Only these rule ids or prefixes, comma-separated or repeated, e.g. --select RA101,RA2."),
    ignore: Optional[List[str]] = typer.Option(None, "--ignore", help="Skip these rule ids or prefixes, e.g. --ignore RA301."),
    exclude: Optional[List[str]] = typer.Option(None, "--exclude", help="Pattern of paths to skip, gitignore syntax, relative to the root (repeatable), e.g. --exclude 'migrations/'."),
    force_exclude: Optional[bool] = typer.Option(None, "--force-exclude/--no-force-exclude", help="Apply exclude patterns and .gitignore to paths named on the command line too (for pre-commit and editors, which pass file names) [default: no, or force-exclude from config]."),
    respect_gitignore: Optional[bool] = typer.Option(None, "--respect-gitignore/--no-respect-gitignore", help="Skip files that .gitignore or .git/info/exclude ignore [default: yes, or respect-gitignore from config]."),
    fail_on: Optional[FailOn] = typer.Option(None, "--fail-on", help="Exit 1 when a finding is at or above this severity [default: warning, or fail-on from config]; 'never' always exits 0."),
    config: Optional[Path] = typer.Option(None, "--config", help="pyproject.toml to read [tool.resume-audit] from, for every file [default: each file's nearest one that has the table]."),
    root: Optional[Path] = typer.Option(None, "--root", help="Directory that reported paths are relative to [default: the current directory, if it contains every path]."),
    baseline: Optional[Path] = typer.Option(None, "--baseline", help="Report only findings not recorded in this baseline file."),
    write_baseline: Optional[Path] = typer.Option(None, "--write-baseline", help="Record the current findings' fingerprints in this file (then exit 0)."),
    diff: Optional[str] = typer.Option(None, "--diff", metavar="BASE_REF", help="Report only findings on lines added or changed since this git ref (merge base to working tree), e.g. --diff origin/main."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1, help="Worker processes [default: one per CPU]; 1 analyses in this process."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Ignore and do not write the per-file result cache."),
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", help="Where per-file results are cached [default: $XDG_CACHE_HOME/resume-audit/<root hash>]."),
    file_timeout: float = typer.Option(60.0, "--file-timeout", min=0.1, max=86_400.0, help="Seconds one file's analysis may take before it is skipped with a notification."),
    max_file_size: float = typer.Option(5.0, "--max-file-size", min=0.01, max=1_000_000.0, help="Megabytes over which a file is skipped with a notification."),
    fail_on_unused_suppressions: Optional[bool] = typer.Option(
        None, "--fail-on-unused-suppressions/--no-fail-on-unused-suppressions",
        help="Exit 1 when a '# resume-audit: ignore' comment suppresses nothing or names an unknown rule id "
             "(they are always reported; this makes them fail, whatever --fail-on says) "
             "[default: fail-on-unused-suppressions from config, else no]."),
    strict: bool = typer.Option(False, "--strict", help="Exit 2 when any file could not be read, decoded, parsed or analysed in time."),
    follow_symlinks: bool = typer.Option(False, "--follow-symlinks", help="Scan *.py symlinks that point outside the scanned folder (skipped with a notification otherwise)."),
) -> None:
    """Statically scan Python code for resume-plane hazards. Never imports or runs the scanned code.

    Example: resume-audit scan ./myagent --format sarif --output resume-audit.sarif
    """
    request = ScanRequest(
        paths=list(paths),
        select=_split_ids(select),
        ignore=_split_ids(ignore),
        exclude=list(exclude or []),
        force_exclude=force_exclude,
        respect_gitignore=respect_gitignore,
        fail_on=fail_on.value if fail_on else None,
        fail_on_unused_suppressions=fail_on_unused_suppressions,
        config_path=config,
        root=root,
        baseline=baseline,
        write_baseline=write_baseline,
        diff_base=diff,
        jobs=jobs,
        file_timeout=file_timeout,
        max_file_bytes=int(max_file_size * 1024 * 1024),
        strict=strict,
        follow_symlinks=follow_symlinks,
    )
    if not no_cache:
        request.cache_dir = cache_dir or default_cache_dir((root or default_root(list(paths))).resolve())
    # one scan, then the process ends: the scan's syntax trees (held in reference cycles) are
    # left to the process's end rather than walked and freed by a collection when the scan
    # returns (a quarter of a second on 5,000 files); with the collector off, the interpreter's
    # exit does not collect either
    gc.disable()
    try:
        with scan_progress(enabled=not quiet) as progress:  # on a terminal's stderr, once the scan has run a second
            outcome = run_scan(request, progress)
    except (ConfigError, PathNotFound, BaselineError, DiffError) as exc:
        raise fail(str(exc))
    except Exception as exc:  # pragma: no cover - defensive: report, never a bare traceback
        traceback.print_exc(file=sys.stderr)
        raise fail(f"internal error: {exc.__class__.__name__}: {exc}")
    emit(outcome.result, format.value, output, quiet=quiet)
    if write_baseline is not None:
        if not quiet:
            typer.echo(f"resume-audit: baseline of {len(outcome.result.findings)} finding(s) written to {write_baseline}", err=True)
    _SCAN_DONE.set()
    raise typer.Exit(0 if write_baseline is not None else outcome.exit_code)


@app.command(
    epilog=(
        "Examples: resume-audit fix ./myagent --diff | resume-audit fix src --select RA106 | "
        "resume-audit fix . --unsafe-fixes"
    )
)
def fix(
    paths: List[Path] = typer.Argument(..., help="Files or directories whose findings to fix, e.g. ./myagent."),
    diff: bool = typer.Option(False, "--diff", help="Print the fixes as a unified diff and change nothing (exit 1 when there is one)."),
    unsafe_fixes: bool = typer.Option(False, "--unsafe-fixes", help="Also apply fixes that change behaviour a user can see (a new parameter, a new file on disk)."),
    select: Optional[List[str]] = typer.Option(None, "--select", help="Only these rule ids or prefixes, e.g. --select RA106."),
    ignore: Optional[List[str]] = typer.Option(None, "--ignore", help="Skip these rule ids or prefixes."),
    exclude: Optional[List[str]] = typer.Option(None, "--exclude", help="Glob of paths to skip (repeatable)."),
    config: Optional[Path] = typer.Option(None, "--config", help="pyproject.toml to read [tool.resume-audit] from [default: the nearest one above the first path]."),
    root: Optional[Path] = typer.Option(None, "--root", help="Directory that reported paths are relative to [default: the current directory, if it contains every path]."),
) -> None:
    """Apply the automatic fixes of the findings in PATHS, scan again, and say what was fixed and what is left.

    Fixes rewrite only the code the finding names (comments and formatting stay); a second run changes nothing.
    Exit 0 when no finding at or above fail-on is left, 1 otherwise (with --diff: 1 when there is a diff).

    Example: resume-audit fix ./myagent --diff
    """
    from resume_audit.fixes.apply import fix as apply_fixes

    request = ScanRequest(paths=list(paths), select=_split_ids(select), ignore=_split_ids(ignore),
                          exclude=list(exclude or []), config_path=config, root=root)
    try:
        report = apply_fixes(request, unsafe=unsafe_fixes, diff_only=diff)
    except (ConfigError, PathNotFound) as exc:
        raise fail(str(exc))
    if diff:
        for name in sorted(report.diffs):
            sys.stdout.write(report.diffs[name])
    verb = "would be fixed" if diff else "fixed"
    for a in report.applied:
        typer.echo(f"{a.path}:{a.line}: {a.rule_id} {verb}: {a.description}", err=diff)
    for name, why in sorted(report.skipped.items()):
        typer.echo(f"resume-audit: {name}: {why}", err=True)
    remaining = report.remaining.findings if report.remaining else []
    unsafe_left = len(report.unsafe_available)
    summary = f"{len(report.applied)} finding(s) {verb}"
    if not diff:
        summary += f", {len(remaining)} left"
        if unsafe_left:
            summary += f" ({unsafe_left} fixable with --unsafe-fixes)"
    typer.echo(summary, err=diff)
    if diff:
        raise typer.Exit(1 if report.diffs else 0)
    threshold = resolve_config(request).fail_threshold()
    raise typer.Exit(1 if threshold is not None and report.remaining and report.remaining.count_at_or_above(threshold) else 0)


class ReportFailOn(str, Enum):
    """``--fail-on`` of ``audit`` and ``github-report``: a severity, or ``confirmed`` (what the sweep reproduced)."""

    confirmed = "confirmed"
    error = "error"
    warning = "warning"
    note = "note"
    never = "never"


@app.command(
    epilog=(
        "Examples: resume-audit audit ./myagent | resume-audit audit . --list | "
        "resume-audit audit . --format sarif --output audit.sarif --fail-on confirmed"
    )
)
def audit(
    paths: List[Path] = typer.Argument(..., help="Files or directories to audit, e.g. ./myagent."),
    format: OutputFormat = typer.Option(OutputFormat.text, "--format", "-f", help="Output format: text, json, sarif, github."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the report to this file instead of stdout."),
    select: Optional[List[str]] = typer.Option(None, "--select", help="Only these static rule ids or prefixes."),
    ignore: Optional[List[str]] = typer.Option(None, "--ignore", help="Skip these static rule ids or prefixes."),
    exclude: Optional[List[str]] = typer.Option(None, "--exclude", help="Glob of paths to skip (repeatable)."),
    fail_on: ReportFailOn = typer.Option(ReportFailOn.confirmed, "--fail-on", help="Exit 1 on a confirmed (or dynamic-only) finding (the default), on any finding at or above a severity, or never."),
    timeout: float = typer.Option(60.0, "--timeout", min=0.1, help="Seconds each child process of a sweep may run."),
    live_effects: bool = typer.Option(False, "--live-effects", help="Let the effects run for real instead of recording stubs (they fire: use test credentials)."),
    cells: Optional[List[str]] = typer.Option(None, "--cells", help="Restrict each sweep's probes, e.g. --cells crash,concurrent."),
    list_only: bool = typer.Option(False, "--list", help="List the entry points the audit would sweep (and why any cannot be), then exit."),
    shard: Optional[str] = typer.Option(None, "--shard", metavar="K/N", help="Sweep only the entry points dealt to slice K of N (a CI matrix); join the --format json outputs with `resume-audit merge`."),
) -> None:
    """Scan, then sweep every graph, flow and workflow found, and say of each static finding whether the sweep
    confirmed it, did not reproduce it, or could not exercise it. No configuration needed; user code runs only in
    sandboxed child processes, with its effects stubbed.

    Example: resume-audit audit ./myagent --format sarif --output audit.sarif
    """
    from resume_audit.audit.entrypoints import discover as discover_entries
    from resume_audit.audit.plan import AuditConfigError
    from resume_audit.audit.render import render_audit
    from resume_audit.audit.run import AuditRequest, run_audit
    from resume_audit.discovery.walk import discover as discover_files
    from resume_audit.findings import Confirmation

    for p in paths:
        if not p.exists():
            raise fail(f"path does not exist: {p}")
    if list_only:
        root = default_root(list(paths)).resolve()
        entries = discover_entries([(sp.path, sp.display) for sp in discover_files(list(paths), root, list(exclude or []))], root)
        for e in entries:
            typer.echo(f"{e.path}:{e.line}  {e.target}  [{e.framework} {e.kind}]" + (f"  cannot sweep: {e.why_not}" if e.why_not else ""))
        if not entries:
            typer.echo("no graph, flow or workflow found", err=True)
        raise typer.Exit(0)
    from resume_audit.dynamic.request import Shard

    try:
        slice_ = Shard.parse(shard) if shard is not None else None
    except ValueError as exc:
        raise fail(str(exc))
    request = AuditRequest(paths=list(paths), select=_split_ids(select), ignore=_split_ids(ignore),
                           exclude=list(exclude or []), timeout=timeout, live_effects=live_effects,
                           cells=_split_ids(cells), shard=slice_)
    try:
        report = run_audit(request)
    except (ConfigError, PathNotFound, AuditConfigError) as exc:
        raise fail(str(exc))
    text = render_audit(report, format.value, color=output is None and stdout_styling().escapes)
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        write_report(output, text)
        typer.echo(f"resume-audit: {len(report.findings)} finding(s) written to {output}", err=True)
    if fail_on is ReportFailOn.never:
        raise typer.Exit(0)
    if fail_on is ReportFailOn.confirmed:
        failing = report.count(Confirmation.CONFIRMED) + report.count(Confirmation.DYNAMIC_ONLY)
    else:
        from resume_audit.findings import Severity

        threshold = Severity(fail_on.value)
        failing = report.to_scan_result().count_at_or_above(threshold)
    raise typer.Exit(1 if failing else 0)


def _json_option(text: Optional[str], option: str):
    import json

    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise fail(f"{option} must be JSON ({exc}); e.g. {option} '\"approve\"' or {option} '{{\"order_id\": 7}}'")


class Backend(str, Enum):
    sqlite = "sqlite"
    postgres = "postgres"
    memory = "memory"


@app.command(
    "crash-sweep",
    epilog=(
        "Example: resume-audit crash-sweep myagent/graph.py:build_graph --effect myagent.tools:charge_card "
        "--input '{\"order_id\": 7}' --resume '\"approve\"' --format sarif --output sweep.sarif"
    ),
)
def crash_sweep_command(
    target: str = typer.Argument(..., help="path/to/file.py:attr or package.module:attr: a LangGraph StateGraph builder, compiled graph or factory taking a checkpointer; a CrewAI Flow subclass or factory; a LlamaIndex Workflow subclass, instance or factory; or a factory returning a pydantic-graph Graph with its start node ({'graph', 'start', 'state', 'park_at'}). The framework is detected."),
    effect: Optional[List[str]] = typer.Option(None, "--effect", "-e", help="An effect function MODULE:FUNCTION whose calls the ledger records (repeatable), e.g. --effect myagent.tools:charge_card."),
    input: str = typer.Option("{}", "--input", help="The graph input, as JSON."),
    resume: Optional[List[str]] = typer.Option(None, "--resume", help="The answer to the next interrupt, as JSON (repeatable: one per interrupt, in order)."),
    fork_resume: Optional[str] = typer.Option(None, "--fork-resume", help="The alternative answer the fork probe sends, as JSON [default: derived: a negated bool, a different string]."),
    config: Optional[str] = typer.Option(None, "--config", help="Extra configurable keys for every invocation, as a JSON object."),
    backend: Backend = typer.Option(Backend.sqlite, "--backend", help="Durable store for the sweep: sqlite (embedded), postgres (a real server, needs --dsn), memory."),
    dsn: Optional[str] = typer.Option(None, "--dsn", help="PostgreSQL DSN for --backend postgres [default: $RESUME_AUDIT_PG_DSN]."),
    racers: int = typer.Option(2, "--racers", help="Processes racing to resume one parked interrupt (4 is always tried as well)."),
    timeout: float = typer.Option(60.0, "--timeout", help="Seconds each child process may run before it and its process group are killed."),
    stub: Optional[List[str]] = typer.Option(None, "--stub", help="Replace every --effect with a recorder returning this JSON value, so nothing real is charged; or one effect's: --stub 'tools:charge_card={\"id\": \"ch_1\"}' (repeatable)."),
    allow_network: bool = typer.Option(False, "--allow-network", help="Let the graph open connections beyond loopback."),
    keep_artifacts: bool = typer.Option(False, "--keep-artifacts", help="Keep each cell's temp directory (databases, ledgers) for debugging."),
    format: OutputFormat = typer.Option(OutputFormat.text, "--format", "-f", help="Output format: text, json (with a stable sweep section), sarif, github."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the report to this file instead of stdout."),
    fail_on: FailOn = typer.Option(FailOn.warning, "--fail-on", help="Exit 1 when a finding is at or above this severity; 'never' always exits 0."),
    framework: Optional[str] = typer.Option(None, "--framework", help="langgraph, crewai, llamaindex or pydantic-graph [default: detected]."),
    crash_mode: Optional[List[str]] = typer.Option(None, "--crash-mode", help="How crash cells crash: sigkill (default) and/or exception (an error raised at the kill point); repeatable."),
    saver: Optional[str] = typer.Option(None, "--saver", help="LangGraph: package.module:factory returning your own BaseCheckpointSaver to sweep instead of the built-in backends."),
    select: Optional[List[str]] = typer.Option(None, "--select", help="Comma-separated rule ids or prefixes to report (overrides [tool.resume-audit] select)."),
    ignore: Optional[List[str]] = typer.Option(None, "--ignore", help="Comma-separated rule ids or prefixes not to report (overrides [tool.resume-audit] ignore). Per-path ignores and '# resume-audit: ignore[RA7xx]' comments on the flagged line apply too."),
    stub_llm: Optional[str] = typer.Option(None, "--stub-llm", help="Answer every LangChain chat model call from a script (JSON/YAML file of replies, tool calls included; or 'plain': every call answers \"OK\"), so a graph that calls a model runs offline and deterministically. See docs/dynamic.md."),
    cells: Optional[List[str]] = typer.Option(None, "--cells", help="Comma-separated probes to run (crash, parked, write-order, fork, stray, concurrent, validity, interrupt) [default: all]; the uninterrupted run always runs."),
    memory_limit: int = typer.Option(4096, "--memory-limit", help="Address-space limit of every child process in MB (RLIMIT_AS); a graph going over it gets MemoryError, reported as such. 0: no limit."),
    shard: Optional[str] = typer.Option(None, "--shard", help="K/N: sweep the K-th of N deterministic slices of the cells; write each with --format json and join them with `resume-audit merge`."),
) -> None:
    """Run an agent program under crashes and probes and check the resume contract (RA701-RA708).

    Runs the graph only in sandboxed child processes: kills it after every checkpoint write and every listed effect, resumes in a fresh interpreter, and probes fork, stray and concurrent resumes, checkpoint validity and write order. Prints a progress bar and the cell table on stderr, the findings in --format on stdout (or --output).

    Example: resume-audit crash-sweep myagent/graph.py:build_graph --effect myagent.tools:charge_card --input '{"order_id": 7}' --resume '"approve"'
    """
    from rich.console import Console  # imported by the commands that draw, not at start-up

    from resume_audit.dynamic.child.effects import NO_STUB
    from resume_audit.dynamic.parent.progress import rich_progress
    from resume_audit.dynamic.parent.sweep import SweepUsageError, crash_sweep
    from resume_audit.dynamic.target import TargetError

    input_value = _json_option(input, "--input")
    resume_values = [_json_option(r, "--resume") for r in (resume or [])]
    fork_value = _json_option(fork_resume, "--fork-resume")
    extra = _json_option(config, "--config") or {}
    if not isinstance(extra, dict):
        raise fail("--config must be a JSON object of configurable keys, e.g. --config '{\"user_id\": \"u1\"}'")
    stub_value: Any = NO_STUB
    per_effect: dict[str, Any] = {}
    for text in stub or []:
        named = re.match(r"^\s*([\w.]+:[\w.]+)=(.*)$", text, re.DOTALL)
        if named:
            per_effect[named.group(1)] = _json_option(named.group(2), f"--stub {named.group(1)}=")
        else:
            stub_value = _json_option(text, "--stub")
    from resume_audit.config.settings import ConfigError
    from resume_audit.dynamic.parent.filtering import sweep_config

    target_file = target.rsplit(":", 1)[0]
    try:
        settings = sweep_config(
            Path(target_file) if target_file.endswith(".py") else None,
            _split_ids(select), _split_ids(ignore),
        )
    except ConfigError as exc:
        raise fail(str(exc))
    err = Console(stderr=True)
    try:
        with rich_progress(err) as progress:
            report = crash_sweep(
                target,
                effects=list(effect or []),
                input=input_value,
                resume=resume_values,
                fork_resume=fork_value,
                config=extra,
                backend=backend.value,
                dsn=dsn,
                racers=racers,
                timeout=timeout,
                stub=stub_value,
                stubs=per_effect,
                allow_network=allow_network,
                keep_artifacts=keep_artifacts,
                progress=progress,
                framework=framework,
                crash_modes=tuple(crash_mode or ("sigkill",)),
                saver=saver,
                stub_llm=stub_llm,
                shard=shard,
                memory_limit=memory_limit,
                cells=_split_ids(cells),
            )
    except (TargetError, SweepUsageError) as exc:
        raise fail(str(exc))
    except Exception as exc:  # pragma: no cover - defensive: report, never a bare traceback
        traceback.print_exc(file=sys.stderr)
        raise fail(f"internal error: {exc.__class__.__name__}: {exc}")
    err.print(report.table())
    if report.artifacts:
        typer.echo(f"resume-audit: artifacts kept in {report.artifacts}", err=True)
    _emit_sweep(report, settings, format, output, fail_on)


def _emit_sweep(report: Any, settings: Any, format: "OutputFormat", output: Optional[Path], fail_on: "FailOn") -> None:
    """Write a sweep's findings (filtered by ``settings``) in ``format`` and exit as ``scan`` does."""
    from resume_audit.dynamic.parent.filtering import apply_settings

    result = report.to_scan_result()
    filtered = apply_settings(result.findings, settings, Path(report.cwd))
    result.findings, result.suppressed = filtered.kept, filtered.suppressed
    if format == OutputFormat.json:
        import json

        from resume_audit.reporters.json_report import build_json

        data = build_json(result)
        data["sweep"] = report.stable()
        if report.shard is not None:
            data["shard"] = report.shard.to_data()
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        if output is None:
            sys.stdout.write(text)
        else:
            write_report(output, text)
            typer.echo(f"resume-audit: {len(result.findings)} finding(s) written to {output}", err=True)
    else:
        emit(result, format.value, output)
    if not report.complete:
        raise fail(next((n.message for n in reversed(report.notifications)), "the uninterrupted run did not complete"))
    unexercised = report.unexercised()
    if unexercised:
        raise fail(f"not exercised: every cell of {', '.join(unexercised)} ended in an error (see the cell table); "
                   "that part of the resume contract was not checked")
    threshold = None if fail_on == FailOn.never else Severity(fail_on.value)
    raise typer.Exit(1 if threshold is not None and result.count_at_or_above(threshold) else 0)


@app.command(
    "merge",
    epilog="Example: resume-audit merge shard-1.json shard-2.json shard-3.json --format sarif -o sweep.sarif",
)
def merge_command(
    shards: List[Path] = typer.Argument(..., help="The --format json outputs of crash-sweep --shard 1/N .. N/N, in any order."),
    format: OutputFormat = typer.Option(OutputFormat.text, "--format", "-f", help="Output format: text, json, sarif, github."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the report to this file instead of stdout."),
    fail_on: FailOn = typer.Option(FailOn.warning, "--fail-on", help="Exit 1 when a finding is at or above this severity; 'never' always exits 0."),
    select: Optional[List[str]] = typer.Option(None, "--select", help="As for crash-sweep (give the shards' own)."),
    ignore: Optional[List[str]] = typer.Option(None, "--ignore", help="As for crash-sweep (give the shards' own)."),
) -> None:
    """Join the shards of one crash sweep into the report an unsharded sweep gives.

    Run `crash-sweep ... --shard K/N --format json -o shard-K.json` on N machines (a CI matrix), then merge the files: the cells, findings and notifications come out as one sweep's, so the JSON and SARIF are byte for byte what a single run writes. Findings are located against the source tree, so merge from a checkout at the same path.
    """
    from rich.console import Console  # imported by the commands that draw, not at start-up

    import json

    from resume_audit.config.settings import ConfigError
    from resume_audit.dynamic.parent.filtering import sweep_config
    from resume_audit.dynamic.parent.sharding import MergeError, merge

    documents = []
    for path in shards:
        try:
            documents.append(json.loads(path.read_text(encoding="utf-8")))
        except OSError as exc:
            raise fail(f"{path}: {exc.strerror or exc}")
        except ValueError as exc:
            raise fail(f"{path}: not JSON ({exc})")
    from resume_audit.audit.merge import AuditMergeError, is_audit, merge_audits

    if documents and all(is_audit(d) for d in documents):  # the slices of `audit --shard K/N`
        try:
            result, section = merge_audits(documents)
        except (AuditMergeError, KeyError, TypeError, ValueError) as exc:
            raise fail(f"cannot merge: {exc}")
        text = render(result, format.value)
        if format is OutputFormat.json:
            text = json.dumps({**json.loads(text), "audit": section}, indent=2, sort_keys=True) + "\n"
        if output is None:
            sys.stdout.write(text)
        else:
            write_report(output, text)
        confirmed = section["confirmations"]["confirmed"] + section["confirmations"]["dynamic-only"]
        raise typer.Exit(0 if fail_on is FailOn.never else (1 if confirmed else 0))
    try:
        report = merge(documents)
    except (MergeError, KeyError, TypeError) as exc:
        raise fail(f"cannot merge: {exc}")
    target_file = report.target.rsplit(":", 1)[0]
    try:
        settings = sweep_config(
            Path(report.cwd) / target_file if target_file.endswith(".py") else None, _split_ids(select), _split_ids(ignore),
        )
    except ConfigError as exc:
        raise fail(str(exc))
    Console(stderr=True).print(report.table())
    _emit_sweep(report, settings, format, output, fail_on)


class ConformanceFormat(str, Enum):
    text = "text"
    json = "json"
    markdown = "markdown"
    sarif = "sarif"


@app.command(
    "conformance",
    epilog="Examples: resume-audit conformance | resume-audit conformance --format markdown | "
    "resume-audit conformance --saver mypkg.savers:make_saver",
)
def conformance_command(
    format: ConformanceFormat = typer.Option(ConformanceFormat.text, "--format", "-f", help="text (a table and the witnesses), json, markdown (README or job summary), sarif (every finding)."),
    saver: Optional[str] = typer.Option(None, "--saver", help="package.module:factory returning your own LangGraph BaseCheckpointSaver (called with a private directory if it takes one argument); runs the LangGraph probes against it."),
    dsn: Optional[str] = typer.Option(None, "--dsn", help="Also probe PostgresSaver on this DSN [default: $RESUME_AUDIT_PG_DSN when set]."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the matrix to this file instead of stdout."),
    timeout: float = typer.Option(60.0, "--timeout", help="Seconds each probe process may run."),
) -> None:
    """Run the built-in LLM-free probe suite against every framework installed here and print the conformance matrix.

    Rows are framework / resume plane / backend with versions; columns are EO (interrupt path, crash path), PC, FD, CV, CO (sequential, concurrent), RD and liveness; each cell is ✓, ✗ (with its witness) or n/a.
    """
    from rich.console import Console  # imported by the commands that draw, not at start-up

    import json

    from resume_audit.dynamic.conformance.suite import markdown, run_conformance, scan_result, table, witnesses
    from resume_audit.dynamic.parent.sweep import SweepUsageError
    from resume_audit.dynamic.target import TargetError

    err = Console(stderr=True)
    try:
        matrix = run_conformance(saver=saver, dsn=dsn or os.environ.get("RESUME_AUDIT_PG_DSN"), timeout=timeout,
                                 progress=lambda d, t, label: err.print(f"[dim]conformance {d}/{t}: {label}[/]"))
    except (TargetError, SweepUsageError) as exc:
        raise fail(str(exc))
    if not matrix.rows:
        raise fail(
            f"no framework the probes cover (langgraph, crewai, llama-index-workflows, pydantic-graph) is installed "
            f"in this environment ({sys.executable}): install them, e.g. pip install 'resume-audit[dynamic]'"
        )
    if format == ConformanceFormat.text:
        console = Console(record=output is not None, width=200 if output is not None else None)
        console.print(table(matrix))
        for w in witnesses(matrix):
            console.print(f"  {w}", highlight=False, markup=False)
        console.print(f"{len(matrix.rows)} rows in {matrix.seconds:.0f} s")
        text = console.export_text() if output is not None else None
    elif format == ConformanceFormat.markdown:
        text = markdown(matrix)
    elif format == ConformanceFormat.json:
        text = json.dumps(matrix.stable(), indent=2, ensure_ascii=False) + "\n"
    else:
        text = render(scan_result(matrix), "sarif", color=False, width=None)
    if text is not None:
        if output is None:
            sys.stdout.write(text)
        else:
            write_report(output, text)
    raise typer.Exit(0)


@app.command("rules")
def rules_command(
    format: OutputFormat = typer.Option(OutputFormat.text, "--format", "-f", help="text (a table) or json."),
) -> None:
    """List the rule catalog: id, property, severity and what each rule finds.

    Example: resume-audit rules --format json
    """
    from rich.console import Console  # imported by the commands that draw, not at start-up

    catalog = descriptors()
    if format == OutputFormat.json:
        import json

        rows = [
            {
                "id": r.id,
                "name": r.name,
                "properties": list(r.properties),
                "severity": r.severity.value,
                "frameworks": list(r.frameworks),
                "summary": r.summary,
            }
            for r in catalog.values()
        ]
        typer.echo(json.dumps(rows, indent=2))
        return
    if format != OutputFormat.text:
        raise fail("rules supports --format text or json")
    from rich.table import Table  # here, not at start-up: a scan never draws a table

    table = Table(title="resume-audit rules", show_lines=False)
    for col in ("id", "property", "severity", "frameworks", "finds"):
        table.add_column(col, overflow="fold")
    for r in catalog.values():
        table.add_row(r.id, "/".join(r.properties), r.severity.value, ", ".join(r.frameworks), " ".join(r.summary.split()))
    Console(width=max(Console().width, 120)).print(table)


@app.command("effects")
def effects_command(
    format: OutputFormat = typer.Option(OutputFormat.text, "--format", "-f", help="text (a table) or json."),
) -> None:
    """List the effect catalog: which SDK calls the EO rules treat as effects, what a repeat does,
    and the idempotency key the SDK accepts. Add your own with effect-sinks in [tool.resume-audit].

    Example: resume-audit effects --format json
    """
    from rich.console import Console  # imported by the commands that draw, not at start-up

    from resume_audit.analysis.effect_catalog import CATALOG, GENERIC_SINKS

    rows: list[dict[str, Any]] = [
        {
            "sdk": sdk.name,
            "modules": list(sdk.modules),
            "client": sdk.client,
            "calls": [p for w in sdk.writes for p in w.patterns],
            "any_receiver_methods": [m for w in sdk.writes for m in w.methods],
            "why": "; ".join(dict.fromkeys(w.consequence for w in sdk.writes)),
            "idempotency_key": sdk.idempotency_key,
        }
        for sdk in (*GENERIC_SINKS, *CATALOG)
    ]
    if format == OutputFormat.json:
        import json

        typer.echo(json.dumps(rows, indent=2))
        return
    if format != OutputFormat.text:
        raise fail("effects supports --format text or json")
    from rich.table import Table

    table = Table(title="resume-audit effect catalog", show_lines=True)
    for col in ("SDK", "calls that write", "a repeat", "idempotency key"):
        table.add_column(col, overflow="fold")
    for r in rows:
        calls = list(r["calls"]) + [f".{m}() on any receiver" for m in r["any_receiver_methods"]]
        table.add_row(str(r["sdk"]), "\n".join(calls), str(r["why"]), str(r["idempotency_key"] or "-"))
    Console(width=max(Console().width, 140)).print(table)


@app.command()
def explain(rule_id: str = typer.Argument(..., help="A rule id, e.g. RA201.")) -> None:
    """Print a rule's full documentation: what it finds, why it breaks at runtime, an example, the fix.

    Example: resume-audit explain RA201
    """
    from rich.console import Console  # imported by the commands that draw, not at start-up

    rule = descriptors().get(rule_id.strip().upper())
    if rule is None:
        raise fail(f"unknown rule id {rule_id!r}; run `resume-audit rules` to list them")
    console = Console()  # rich reads NO_COLOR, FORCE_COLOR and TERM itself
    if console.is_terminal:
        from rich.markdown import Markdown  # markdown-it and pygments: only for this command

        console.print(Markdown(documentation(rule)))
    else:
        sys.stdout.write(documentation(rule))


@app.command("github-report")
def github_report(
    sarif: Path = typer.Argument(..., help="The SARIF file a previous `resume-audit scan --format sarif` wrote."),
    fail_on: Optional[ReportFailOn] = typer.Option(None, "--fail-on", help="Exit 1 when a judged finding is at or above this severity, or (an audit's SARIF) 'confirmed': when the sweep confirmed one [default: fail-on from [tool.resume-audit] in the pyproject.toml nearest --config-from, else warning]."),
    annotate: bool = typer.Option(True, "--annotate/--no-annotate", help="Print workflow-command annotations."),
    base: Optional[str] = typer.Option(None, "--base", help="Git ref/sha of the PR base: findings on changed lines are annotated first."),
    workspace: Path = typer.Option(Path("."), "--workspace", help="The checked-out repository."),
    config_from: Optional[Path] = typer.Option(None, "--config-from", help="The first scanned path: the configuration the scan used is found from it [default: --workspace]."),
) -> None:
    """In GitHub Actions: annotate findings within GitHub's limits, write the job summary and outputs.

    Results the SARIF marks ``baselineState: unchanged`` (see mark-baseline) are listed as pre-existing and
    neither annotated nor judged.

    Example (what action.yml runs): resume-audit github-report resume-audit.sarif --base "$BASE_SHA"
    """
    from resume_audit.integrations.github_action import SarifReadError, run_report

    try:
        code, _summary, annotations = run_report(
            sarif, fail_on=fail_on.value if fail_on else None, annotate=annotate, base=base, workspace=workspace,
            config_from=config_from,
        )
    except (SarifReadError, ConfigError) as exc:
        raise fail(str(exc))
    for line in annotations:
        typer.echo(line)
    raise typer.Exit(code)


@app.command("github-suggest")
def github_suggest(
    sarif: Path = typer.Argument(..., help="The SARIF file a previous `resume-audit scan --format sarif` wrote."),
    workspace: Path = typer.Option(Path("."), "--workspace", help="The checked-out repository."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the review that would be posted (JSON) instead of posting it."),
) -> None:
    """In a pull_request workflow: post the findings' fixes on changed lines as one review of suggestions.

    Reads the event from GITHUB_EVENT_PATH and posts with GITHUB_TOKEN (needs pull-requests: write).
    Example (what action.yml runs with suggest: true): resume-audit github-suggest resume-audit.sarif
    """
    import json

    from resume_audit.integrations.github_suggest import SuggestError, run_suggest

    try:
        count, payload = run_suggest(sarif, workspace=workspace, dry_run=dry_run)
    except SuggestError as exc:
        typer.echo(f"::warning title=resume-audit::suggestions not posted: {exc}")
        raise typer.Exit(1)
    if dry_run and payload is not None:
        typer.echo(json.dumps(payload, indent=2))
    typer.echo(f"resume-audit: {count} fix suggestion(s) {'would be ' if dry_run else ''}posted", err=True)


@app.command("mark-baseline", hidden=True)
def mark_baseline(
    sarif: Path = typer.Argument(..., help="A SARIF file from `resume-audit scan --format sarif`; rewritten in place."),
    baseline: Optional[Path] = typer.Option(None, "--baseline", help="Fingerprints of the reference (a `--write-baseline` file of the base scan, or a team's baseline)."),
    reference: str = typer.Option("the baseline", "--reference", help="What the baseline is, for the summary, e.g. 'the merge base abc1234'."),
    unavailable: Optional[str] = typer.Option(None, "--unavailable", help="No reference could be had, because of this: mark nothing, record why."),
) -> None:
    """Set SARIF baselineState (new / unchanged) on every result; what the GitHub Action runs before uploading."""
    from resume_audit.postprocess.baseline import read_baseline
    from resume_audit.integrations.sarif_baseline import SarifMarkError, mark_sarif, mark_unavailable

    if (baseline is None) == (unavailable is None):
        raise fail("give exactly one of --baseline and --unavailable")
    try:
        if baseline is not None:
            counts = mark_sarif(sarif, set(read_baseline(baseline).fingerprints), reference)
            typer.echo(f"resume-audit: {counts.new} new, {counts.unchanged} pre-existing finding(s) relative to {reference}", err=True)
        else:
            mark_unavailable(sarif, unavailable or "")
    except (SarifMarkError, BaselineError) as exc:
        raise fail(str(exc))


@app.command("properties", hidden=True)
def properties_command() -> None:
    """List the contract properties."""
    for key, value in PROPERTIES.items():
        typer.echo(f"{key}  {value}")


class Terminated(BaseException):
    """SIGTERM (a CI job cancelled), raised in the main thread so every cleanup path that handles
    Ctrl-C -- killing sweep children, removing temporary directories -- runs for it too. Not a
    KeyboardInterrupt: click would turn that into "Aborted!" and exit 1, which reads as findings."""


def _raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated()


#: set by ``scan`` once its report is written and nothing of it is left running (its process pools
#: are shut down, its files closed): what remains of the process is only its heap
_SCAN_DONE = threading.Event()


def main() -> None:
    """Console-script entry point. SIGTERM is handled like Ctrl-C, then exits 143 as a terminated process does."""
    import signal

    signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        app()
    except Terminated:
        sys.stderr.write("resume-audit: terminated; child processes killed and temporary files removed\n")
        raise SystemExit(143)
    except SystemExit as done:
        # (not under a profiler or a tracer such as coverage: they write their data at exit)
        if _SCAN_DONE.is_set() and isinstance(done.code, int) and sys.getprofile() is None and sys.gettrace() is None:
            # a finished scan ends without the interpreter freeing its heap object by object (syntax
            # trees, the analysis' memos, LibCST's classes): 0.04-0.09 s of a 0.2-3 s run. As mypy's
            # hard_exit: the output is flushed, nothing else is waiting on the exit hooks
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (OSError, ValueError):  # a reader gone (``| head``), or a stream closed
                    pass
            os._exit(done.code)
        raise


if __name__ == "__main__":  # pragma: no cover
    main()
