"""``resume-audit server``: the language server for editors (LSP over stdio, :mod:`resume_audit.server`)."""

from __future__ import annotations

import typer

from resume_audit.cli.app import app
from resume_audit.cli.output import fail


@app.command(epilog="Editor set-up (VS Code, Neovim, Helix, Zed): docs/editors.md")
def server() -> None:
    """Run the language server: the scan's findings as diagnostics while you edit, fixes as quick fixes.

    Speaks the Language Server Protocol over stdin/stdout; an editor starts it. Needs the server
    extra: pip install 'resume-audit[server]'.

    Example (Neovim): vim.lsp.start({ name = "resume-audit", cmd = { "resume-audit", "server" } })
    """
    try:
        from resume_audit.server.main import serve
    except ImportError as exc:  # pygls is an optional extra
        raise fail(f"the language server needs pygls ({exc}); install it with: pip install 'resume-audit[server]'")
    raise typer.Exit(serve())
