"""The ``resume-audit`` Typer application: its help, its global options, and the state the
commands share with the entry point (:mod:`resume_audit.cli.main`).

The commands register themselves on :data:`app` when their modules are imported
(:mod:`resume_audit.cli` imports them all, in the order ``--help`` lists them).
"""

from __future__ import annotations

import threading

import typer

from resume_audit.version import __version__

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


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"resume-audit {__version__}")
        raise typer.Exit(0)


@app.callback()
def main_options(
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """resume-audit: audit the resume plane of LangGraph, CrewAI, LlamaIndex Workflows and pydantic-graph code."""


#: set by ``scan`` once its report is written and nothing of it is left running (its process pools
#: are shut down, its files closed): what remains of the process is only its heap
SCAN_DONE = threading.Event()
