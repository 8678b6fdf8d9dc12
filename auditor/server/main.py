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
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="resume-audit server: %(levelname)s %(name)s: %(message)s"
    )
    if stdin is None or stdout is None:
        stdin, stdout = _take_stdio()
    analysis = AnalysisThread()
    server = build_server(analysis)
    finished = threading.Event()

    def speak() -> None:
        try:
            server.start_io(stdin, stdout)
        finally:
            analysis.stop()
            if not finished.wait(EXIT_GRACE):  # a scan still running: do not keep the client waiting
                stdout.flush()
                os._exit(_exit_code(server))

    protocol = threading.Thread(target=speak, name="resume-audit-lsp", daemon=True)
    protocol.start()
    try:
        analysis.run()
    finally:
        finished.set()
    protocol.join(EXIT_GRACE)
    return _exit_code(server)


def _take_stdio() -> tuple[BinaryIO, BinaryIO]:
    """The LSP stream on file objects of the server's own; ``sys.stdin`` and ``sys.stdout`` left
    harmless. Two reasons. A scan's process pool forks while the protocol thread is blocked
    reading stdin, holding the stream's lock: every forked worker then hangs closing
    ``sys.stdin`` (multiprocessing does, on start) or flushing ``sys.stdout`` (on exit). And a
    stray ``print`` -- of ours, of a library -- must never write into the protocol stream: what
    is written to standard output now goes to standard error."""
    stdin = os.fdopen(os.dup(sys.stdin.fileno()), "rb")
    stdout = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdin = open(os.devnull, encoding="utf-8")
    return stdin, stdout


def _exit_code(server: AuditServer) -> int:
    """0 when the client asked for a shutdown before ``exit`` (or closed the connection after
    one), 1 otherwise -- the LSP rule."""
    return 0 if server.protocol._shutdown else 1
