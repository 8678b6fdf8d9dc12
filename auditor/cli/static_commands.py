"""The static stage's commands: ``scan`` and ``fix``."""

from __future__ import annotations

import gc
import sys
import traceback
from pathlib import Path
from typing import List, Optional

import typer

from resume_audit.api import ScanRequest, default_root, resolve_config, run_scan
from resume_audit.cache.results import default_cache_dir
from resume_audit.cli.app import SCAN_DONE, app
from resume_audit.cli.output import FailOn, ScanFormat, emit, fail, split_ids
from resume_audit.config.settings import ConfigError
from resume_audit.discovery.walk import PathNotFound
from resume_audit.postprocess.baseline import BaselineError
from resume_audit.postprocess.gitdiff import DiffError
from resume_audit.reporters.progress import scan_progress


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
    format: ScanFormat = typer.Option(
        ScanFormat.text,
        "--format",
        "-f",
        help="Output format: text (human), concise (path:line:col: RAxxx message, one line each), json, sarif (code scanning), github (workflow annotations).",
    ),
    output: Optional[Path] = typer.Option(
        None, "--output", "-o", help="Write the report to this file instead of stdout, e.g. -o results.sarif."
    ),
    quiet: bool = typer.Option(
        False,
        "--quiet",
        "-q",
        help="Only the report: no progress bar, no 'written to' or baseline message on stderr (errors still go there).",
    ),
    select: Optional[List[str]] = typer.Option(
        None, "--select", help="Only these rule ids or prefixes, comma-separated or repeated, e.g. --select RA101,RA2."
    ),
    ignore: Optional[List[str]] = typer.Option(
        None, "--ignore", help="Skip these rule ids or prefixes, e.g. --ignore RA301."
    ),
    exclude: Optional[List[str]] = typer.Option(
        None,
        "--exclude",
        help="Pattern of paths to skip, gitignore syntax, relative to the root (repeatable), e.g. --exclude 'migrations/'.",
    ),
    force_exclude: Optional[bool] = typer.Option(
        None,
        "--force-exclude/--no-force-exclude",
        help="Apply exclude patterns and .gitignore to paths named on the command line too (for pre-commit and editors, which pass file names) [default: no, or force-exclude from config].",
    ),
    respect_gitignore: Optional[bool] = typer.Option(
        None,
        "--respect-gitignore/--no-respect-gitignore",
        help="Skip files that .gitignore or .git/info/exclude ignore [default: yes, or respect-gitignore from config].",
    ),
    fail_on: Optional[FailOn] = typer.Option(
        None,
        "--fail-on",
        help="Exit 1 when a finding is at or above this severity [default: warning, or fail-on from config]; 'never' always exits 0.",
    ),
    config: Optional[Path] = typer.Option(
        None,
        "--config",
        help="pyproject.toml to read [tool.resume-audit] from, for every file [default: each file's nearest one that has the table].",
    ),
    root: Optional[Path] = typer.Option(
        None,
        "--root",
        help="Directory that reported paths are relative to [default: the current directory, if it contains every path].",
    ),
    baseline: Optional[Path] = typer.Option(
        None, "--baseline", help="Report only findings not recorded in this baseline file."
    ),
    write_baseline: Optional[Path] = typer.Option(
        None, "--write-baseline", help="Record the current findings' fingerprints in this file (then exit 0)."
    ),
    diff: Optional[str] = typer.Option(
        None,
        "--diff",
        metavar="BASE_REF",
        help="Report only findings on lines added or changed since this git ref (merge base to working tree), e.g. --diff origin/main.",
    ),
    jobs: Optional[int] = typer.Option(
        None, "--jobs", "-j", min=1, help="Worker processes [default: one per CPU]; 1 analyses in this process."
    ),
    no_cache: bool = typer.Option(False, "--no-cache", help="Ignore and do not write the per-file result cache."),
    cache_dir: Optional[Path] = typer.Option(
        None,
        "--cache-dir",
        help="Where per-file results are cached [default: $XDG_CACHE_HOME/resume-audit/<root hash>].",
    ),
    file_timeout: float = typer.Option(
        60.0,
        "--file-timeout",
        min=0.1,
        max=86_400.0,
        help="Seconds one file's analysis may take before it is skipped with a notification.",
    ),
    max_file_size: float = typer.Option(
        5.0,
        "--max-file-size",
        min=0.01,
        max=1_000_000.0,
        help="Megabytes over which a file is skipped with a notification.",
    ),
    fail_on_unused_suppressions: Optional[bool] = typer.Option(
        None,
        "--fail-on-unused-suppressions/--no-fail-on-unused-suppressions",
        help="Exit 1 when a '# resume-audit: ignore' comment suppresses nothing or names an unknown rule id "
        "(they are always reported; this makes them fail, whatever --fail-on says) "
        "[default: fail-on-unused-suppressions from config, else no].",
    ),
    strict: bool = typer.Option(
        False, "--strict", help="Exit 2 when any file could not be read, decoded, parsed or analysed in time."
    ),
    follow_symlinks: bool = typer.Option(
        False,
        "--follow-symlinks",
        help="Scan *.py symlinks that point outside the scanned folder (skipped with a notification otherwise).",
    ),
) -> None:
    """Statically scan Python code for resume-plane hazards. Never imports or runs the scanned code.

    Example: resume-audit scan ./myagent --format sarif --output resume-audit.sarif
    """
    request = ScanRequest(
        paths=list(paths),
        select=split_ids(select),
        ignore=split_ids(ignore),
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
            typer.echo(
                f"resume-audit: baseline of {len(outcome.result.findings)} finding(s) written to {write_baseline}",
                err=True,
            )
    SCAN_DONE.set()
    raise typer.Exit(0 if write_baseline is not None else outcome.exit_code)


@app.command(
    epilog=(
        "Examples: resume-audit fix ./myagent --diff | resume-audit fix src --select RA106 | "
        "resume-audit fix . --unsafe-fixes"
    )
)
def fix(
    paths: List[Path] = typer.Argument(..., help="Files or directories whose findings to fix, e.g. ./myagent."),
    diff: bool = typer.Option(
        False, "--diff", help="Print the fixes as a unified diff and change nothing (exit 1 when there is one)."
    ),
    unsafe_fixes: bool = typer.Option(
        False,
        "--unsafe-fixes",
        help="Also apply fixes that change behaviour a user can see (a new parameter, a new file on disk).",
    ),
    select: Optional[List[str]] = typer.Option(
        None, "--select", help="Only these rule ids or prefixes, e.g. --select RA106."
    ),
    ignore: Optional[List[str]] = typer.Option(None, "--ignore", help="Skip these rule ids or prefixes."),
    exclude: Optional[List[str]] = typer.Option(None, "--exclude", help="Glob of paths to skip (repeatable)."),
    config: Optional[Path] = typer.Option(
        None,
        "--config",
        help="pyproject.toml to read [tool.resume-audit] from [default: the nearest one above the first path].",
    ),
    root: Optional[Path] = typer.Option(
        None,
        "--root",
        help="Directory that reported paths are relative to [default: the current directory, if it contains every path].",
    ),
) -> None:
    """Apply the automatic fixes of the findings in PATHS, scan again, and say what was fixed and what is left.

    Fixes rewrite only the code the finding names (comments and formatting stay); a second run changes nothing.
    Exit 0 when no finding at or above fail-on is left, 1 otherwise (with --diff: 1 when there is a diff).

    Example: resume-audit fix ./myagent --diff
    """
    from resume_audit.fixes.apply import fix as apply_fixes

    request = ScanRequest(
        paths=list(paths),
        select=split_ids(select),
        ignore=split_ids(ignore),
        exclude=list(exclude or []),
        config_path=config,
        root=root,
    )
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
    raise typer.Exit(
        1 if threshold is not None and report.remaining and report.remaining.count_at_or_above(threshold) else 0
    )
