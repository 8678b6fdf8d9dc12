"""Running the server over stdio: the protocol on a thread of its own, the analysis on the main
thread (where the per-file time limit works, see :mod:`resume_audit.server.worker`).

The LSP lifecycle is honoured: ``exit`` ends the process with 0 after a ``shutdown`` request, 1
without one -- at once even while a scan is running (the scan is abandoned, its cache entries
were written as they came); a client that vanishes (stdin closed) ends it too.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from typing import BinaryIO

from resume_audit.server.handlers import register
from resume_audit.server.session import AuditServer
from resume_audit.server.worker import AnalysisThread

#: seconds the analysis thread gets to finish its job after ``exit`` before the process ends anyway
EXIT_GRACE = 2.0


def build_server(analysis: AnalysisThread) -> AuditServer:
    server = AuditServer(analysis)
    register(server)
    return server


def serve(stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> int:
    """Serve LSP over stdio until ``exit``; the process's exit code."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="resume-audit server: %(levelname)s %(name)s: %(message)s")
    analysis = AnalysisThread()
    server = build_server(analysis)
    finished = threading.Event()

    def speak() -> None:
        try:
            server.start_io(stdin or sys.stdin.buffer, stdout or sys.stdout.buffer)
        finally:
            analysis.stop()
            if not finished.wait(EXIT_GRACE):  # a scan still running: do not keep the client waiting
                sys.stdout.flush()
                os._exit(_exit_code(server))

    protocol = threading.Thread(target=speak, name="resume-audit-lsp", daemon=True)
    protocol.start()
    try:
        analysis.run()
    finally:
        finished.set()
    protocol.join(EXIT_GRACE)
    return _exit_code(server)


def _exit_code(server: AuditServer) -> int:
    """0 when the client asked for a shutdown before ``exit`` (or closed the connection after
    one), 1 otherwise -- the LSP rule."""
    return 0 if server.protocol._shutdown else 1
