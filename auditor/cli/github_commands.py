"""The GitHub Action's commands: ``github-report``, ``github-suggest`` and the hidden ``mark-baseline``."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from resume_audit.cli.app import app
from resume_audit.cli.output import ReportFailOn, fail
from resume_audit.config.settings import ConfigError
from resume_audit.postprocess.baseline import BaselineError


@app.command("github-report")
def github_report(
    sarif: Path = typer.Argument(..., help="The SARIF file a previous `resume-audit scan --format sarif` wrote."),
    fail_on: Optional[ReportFailOn] = typer.Option(
        None,
        "--fail-on",
        help="Exit 1 when a judged finding is at or above this severity, or (an audit's SARIF) 'confirmed': when the sweep confirmed one [default: fail-on from [tool.resume-audit] in the pyproject.toml nearest --config-from, else warning].",
    ),
    annotate: bool = typer.Option(True, "--annotate/--no-annotate", help="Print workflow-command annotations."),
    base: Optional[str] = typer.Option(
        None, "--base", help="Git ref/sha of the PR base: findings on changed lines are annotated first."
    ),
    workspace: Path = typer.Option(Path("."), "--workspace", help="The checked-out repository."),
    config_from: Optional[Path] = typer.Option(
        None,
        "--config-from",
        help="The first scanned path: the configuration the scan used is found from it [default: --workspace].",
    ),
) -> None:
    """In GitHub Actions: annotate findings within GitHub's limits, write the job summary and outputs.

    Results the SARIF marks ``baselineState: unchanged`` (see mark-baseline) are listed as pre-existing and
    neither annotated nor judged.

    Example (what action.yml runs): resume-audit github-report resume-audit.sarif --base "$BASE_SHA"
    """
    from resume_audit.integrations.github_action import SarifReadError, run_report

    try:
        code, _summary, annotations = run_report(
            sarif,
            fail_on=fail_on.value if fail_on else None,
            annotate=annotate,
            base=base,
            workspace=workspace,
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
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Print the review that would be posted (JSON) instead of posting it."
    ),
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
    baseline: Optional[Path] = typer.Option(
        None,
        "--baseline",
        help="Fingerprints of the reference (a `--write-baseline` file of the base scan, or a team's baseline).",
    ),
    reference: str = typer.Option(
        "the baseline", "--reference", help="What the baseline is, for the summary, e.g. 'the merge base abc1234'."
    ),
    unavailable: Optional[str] = typer.Option(
        None, "--unavailable", help="No reference could be had, because of this: mark nothing, record why."
    ),
) -> None:
    """Set SARIF baselineState (new / unchanged) on every result; what the GitHub Action runs before uploading."""
    from resume_audit.integrations.sarif_baseline import SarifMarkError, mark_sarif, mark_unavailable
    from resume_audit.postprocess.baseline import read_baseline

    if (baseline is None) == (unavailable is None):
        raise fail("give exactly one of --baseline and --unavailable")
    try:
        if baseline is not None:
            counts = mark_sarif(sarif, set(read_baseline(baseline).fingerprints), reference)
            typer.echo(
                f"resume-audit: {counts.new} new, {counts.unchanged} pre-existing finding(s) relative to {reference}",
                err=True,
            )
        else:
            mark_unavailable(sarif, unavailable or "")
    except (SarifMarkError, BaselineError) as exc:
        raise fail(str(exc))
