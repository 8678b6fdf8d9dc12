"""The dynamic stage's commands: ``crash-sweep``, ``merge`` (of a sharded sweep or audit) and
``conformance``. The dynamic stage itself is imported when one of them runs, never at start-up."""

from __future__ import annotations

import os
import re
import sys
import traceback
from enum import Enum
from pathlib import Path
from typing import Any, List, Optional

import typer

from resume_audit.cli.app import app
from resume_audit.cli.output import FailOn, OutputFormat, emit, fail, split_ids, write_report
from resume_audit.findings import Severity
from resume_audit.reporters import render


def _json_option(text: Optional[str], option: str) -> Any:
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
    target: str = typer.Argument(
        ...,
        help="path/to/file.py:attr or package.module:attr: a LangGraph StateGraph builder, compiled graph or factory taking a checkpointer; a CrewAI Flow subclass or factory; a LlamaIndex Workflow subclass, instance or factory; or a factory returning a pydantic-graph Graph with its start node ({'graph', 'start', 'state', 'park_at'}). The framework is detected.",
    ),
    effect: Optional[List[str]] = typer.Option(
        None,
        "--effect",
        "-e",
        help="An effect function MODULE:FUNCTION whose calls the ledger records (repeatable), e.g. --effect myagent.tools:charge_card.",
    ),
    input: str = typer.Option("{}", "--input", help="The graph input, as JSON."),
    resume: Optional[List[str]] = typer.Option(
        None, "--resume", help="The answer to the next interrupt, as JSON (repeatable: one per interrupt, in order)."
    ),
    fork_resume: Optional[str] = typer.Option(
        None,
        "--fork-resume",
        help="The alternative answer the fork probe sends, as JSON [default: derived: a negated bool, a different string].",
    ),
    config: Optional[str] = typer.Option(
        None, "--config", help="Extra configurable keys for every invocation, as a JSON object."
    ),
    backend: Backend = typer.Option(
        Backend.sqlite,
        "--backend",
        help="Durable store for the sweep: sqlite (embedded), postgres (a real server, needs --dsn), memory.",
    ),
    dsn: Optional[str] = typer.Option(
        None, "--dsn", help="PostgreSQL DSN for --backend postgres [default: $RESUME_AUDIT_PG_DSN]."
    ),
    racers: int = typer.Option(
        2, "--racers", help="Processes racing to resume one parked interrupt (4 is always tried as well)."
    ),
    timeout: float = typer.Option(
        60.0, "--timeout", help="Seconds each child process may run before it and its process group are killed."
    ),
    stub: Optional[List[str]] = typer.Option(
        None,
        "--stub",
        help='Replace every --effect with a recorder returning this JSON value, so nothing real is charged; or one effect\'s: --stub \'tools:charge_card={"id": "ch_1"}\' (repeatable).',
    ),
    allow_network: bool = typer.Option(
        False, "--allow-network", help="Let the graph open connections beyond loopback."
    ),
    pass_env: Optional[List[str]] = typer.Option(
        None,
        "--pass-env",
        metavar="NAME",
        help="Pass this environment variable to the program (repeatable; also `pass-env` in [tool.resume-audit]). The program gets an allow-list otherwise: PATH, locale, TZ, TERM, the Python/virtualenv variables, fake LLM keys. See docs/sandbox.md.",
    ),
    require_confinement: bool = typer.Option(
        False,
        "--require-confinement",
        help="Refuse to run the program (exit 2, with the reason) when the kernel cannot confine its network and file writes here; `resume-audit doctor` says which layers hold.",
    ),
    keep_artifacts: bool = typer.Option(
        False, "--keep-artifacts", help="Keep each cell's temp directory (databases, ledgers) for debugging."
    ),
    format: OutputFormat = typer.Option(
        OutputFormat.text,
        "--format",
        "-f",
        help="Output format: text, json (with a stable sweep section), sarif, github.",
    ),
    output: Optional[Path] = typer.Option(
        None, "--output", "-o", help="Write the report to this file instead of stdout."
    ),
    fail_on: FailOn = typer.Option(
        FailOn.warning, "--fail-on", help="Exit 1 when a finding is at or above this severity; 'never' always exits 0."
    ),
    framework: Optional[str] = typer.Option(
        None, "--framework", help="langgraph, crewai, llamaindex or pydantic-graph [default: detected]."
    ),
    crash_mode: Optional[List[str]] = typer.Option(
        None,
        "--crash-mode",
        help="How crash cells crash: sigkill (default) and/or exception (an error raised at the kill point); repeatable.",
    ),
    saver: Optional[str] = typer.Option(
        None,
        "--saver",
        help="LangGraph: package.module:factory returning your own BaseCheckpointSaver to sweep instead of the built-in backends.",
    ),
    select: Optional[List[str]] = typer.Option(
        None, "--select", help="Comma-separated rule ids or prefixes to report (overrides [tool.resume-audit] select)."
    ),
    ignore: Optional[List[str]] = typer.Option(
        None,
        "--ignore",
        help="Comma-separated rule ids or prefixes not to report (overrides [tool.resume-audit] ignore). Per-path ignores and '# resume-audit: ignore[RA7xx]' comments on the flagged line apply too.",
    ),
    stub_llm: Optional[str] = typer.Option(
        None,
        "--stub-llm",
        help="Answer every LangChain chat model call from a script (JSON/YAML file of replies, tool calls included; or 'plain': every call answers \"OK\"), so a graph that calls a model runs offline and deterministically. See docs/dynamic.md.",
    ),
    cells: Optional[List[str]] = typer.Option(
        None,
        "--cells",
        help="Comma-separated probes to run (crash, parked, write-order, fork, stray, concurrent, validity, interrupt) [default: all]; the uninterrupted run always runs.",
    ),
    memory_limit: int = typer.Option(
        4096,
        "--memory-limit",
        help="Address-space limit of every child process in MB (RLIMIT_AS); a graph going over it gets MemoryError, reported as such. 0: no limit.",
    ),
    shard: Optional[str] = typer.Option(
        None,
        "--shard",
        help="K/N: sweep the K-th of N deterministic slices of the cells; write each with --format json and join them with `resume-audit merge`.",
    ),
    factory_kwargs: Optional[str] = typer.Option(
        None,
        "--factory-kwargs",
        help='Keyword arguments a factory target is called with beside the checkpointer, as a JSON object, e.g. --factory-kwargs \'{"interrupt_before": ["approve"]}\'.',
    ),
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
        raise fail('--config must be a JSON object of configurable keys, e.g. --config \'{"user_id": "u1"}\'')
    bound = _json_option(factory_kwargs, "--factory-kwargs") or {}
    if not isinstance(bound, dict):
        raise fail(
            '--factory-kwargs must be a JSON object, e.g. --factory-kwargs \'{"interrupt_before": ["approve"]}\''
        )
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
            split_ids(select),
            split_ids(ignore),
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
                pass_env=tuple(dict.fromkeys([*settings.pass_env, *(pass_env or [])])),
                require_confinement=require_confinement,
                keep_artifacts=keep_artifacts,
                progress=progress,
                framework=framework,
                crash_modes=tuple(crash_mode or ("sigkill",)),
                saver=saver,
                stub_llm=stub_llm,
                shard=shard,
                memory_limit=memory_limit,
                cells=split_ids(cells),
                factory_kwargs=bound or None,
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
        raise fail(
            f"not exercised: every cell of {', '.join(unexercised)} ended in an error (see the cell table); "
            "that part of the resume contract was not checked"
        )
    threshold = None if fail_on == FailOn.never else Severity(fail_on.value)
    raise typer.Exit(1 if threshold is not None and result.count_at_or_above(threshold) else 0)


@app.command(
    "merge",
    epilog="Example: resume-audit merge shard-1.json shard-2.json shard-3.json --format sarif -o sweep.sarif",
)
def merge_command(
    shards: List[Path] = typer.Argument(
        ..., help="The --format json outputs of crash-sweep --shard 1/N .. N/N, in any order."
    ),
    format: OutputFormat = typer.Option(
        OutputFormat.text, "--format", "-f", help="Output format: text, json, sarif, github."
    ),
    output: Optional[Path] = typer.Option(
        None, "--output", "-o", help="Write the report to this file instead of stdout."
    ),
    fail_on: FailOn = typer.Option(
        FailOn.warning, "--fail-on", help="Exit 1 when a finding is at or above this severity; 'never' always exits 0."
    ),
    select: Optional[List[str]] = typer.Option(None, "--select", help="As for crash-sweep (give the shards' own)."),
    ignore: Optional[List[str]] = typer.Option(None, "--ignore", help="As for crash-sweep (give the shards' own)."),
) -> None:
    """Join the shards of one crash sweep into the report an unsharded sweep gives.

    Run `crash-sweep ... --shard K/N --format json -o shard-K.json` on N machines (a CI matrix), then merge the files: the cells, findings and notifications come out as one sweep's, so the JSON and SARIF are byte for byte what a single run writes. Findings are located against the source tree, so merge from a checkout at the same path.
    """
    import json

    from rich.console import Console  # imported by the commands that draw, not at start-up

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
            Path(report.cwd) / target_file if target_file.endswith(".py") else None,
            split_ids(select),
            split_ids(ignore),
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
    format: ConformanceFormat = typer.Option(
        ConformanceFormat.text,
        "--format",
        "-f",
        help="text (a table and the witnesses), json, markdown (README or job summary), sarif (every finding).",
    ),
    saver: Optional[str] = typer.Option(
        None,
        "--saver",
        help="package.module:factory returning your own LangGraph BaseCheckpointSaver (called with a private directory if it takes one argument); runs the LangGraph probes against it.",
    ),
    dsn: Optional[str] = typer.Option(
        None, "--dsn", help="Also probe PostgresSaver on this DSN [default: $RESUME_AUDIT_PG_DSN when set]."
    ),
    output: Optional[Path] = typer.Option(
        None, "--output", "-o", help="Write the matrix to this file instead of stdout."
    ),
    timeout: float = typer.Option(60.0, "--timeout", help="Seconds each probe process may run."),
) -> None:
    """Run the built-in LLM-free probe suite against every framework installed here and print the conformance matrix.

    Rows are framework / resume plane / backend with versions; columns are EO (interrupt path, crash path), PC, FD, CV, CO (sequential, concurrent), RD and liveness; each cell is ✓, ✗ (with its witness) or n/a.
    """
    import json

    from rich.console import Console  # imported by the commands that draw, not at start-up

    from resume_audit.dynamic.conformance.suite import markdown, run_conformance, scan_result, table, witnesses
    from resume_audit.dynamic.parent.sweep import SweepUsageError
    from resume_audit.dynamic.target import TargetError

    err = Console(stderr=True)
    try:
        matrix = run_conformance(
            saver=saver,
            dsn=dsn or os.environ.get("RESUME_AUDIT_PG_DSN"),
            timeout=timeout,
            progress=lambda d, t, label: err.print(f"[dim]conformance {d}/{t}: {label}[/]"),
        )
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


@app.command("doctor", epilog="Example: resume-audit doctor --require-confinement")
def doctor_command(
    require_confinement: bool = typer.Option(
        False, "--require-confinement", help="Exit 2 when a sweep run with --require-confinement would be refused here."
    ),
) -> None:
    """Say which kernel layers confine a sweep child on this machine, and why a layer does not.

    Tries them in a throwaway process, as a child does: the network namespace (or, where it is refused, Landlock's TCP rules and the seccomp filter for UDP), Landlock for file writes, and the environment allow-list. See docs/sandbox.md.
    """
    from resume_audit.dynamic.confinement import ConfinementPolicy
    from resume_audit.dynamic.parent.doctor import probe, render

    state = probe(ConfinementPolicy.from_environ(os.environ))
    sys.stdout.write(render(state))
    raise typer.Exit(2 if require_confinement and not state.sufficient else 0)
