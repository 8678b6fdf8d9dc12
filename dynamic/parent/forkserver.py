"""Start the fork server under the allow-listed environment only.

Every sweep child is a fork of ``multiprocessing``'s fork server, and a fork
carries its parent's memory -- including the environment block the server was
started with, which ``/proc/self/environ`` shows to the child no matter what
the child later does to ``os.environ``. ``multiprocessing`` starts the server
with the calling process's whole environment (``spawnv_passfds`` passes
none), so a ``GITHUB_TOKEN`` of the CI job would sit in every child.

Here the server is started through a small launcher, ``env -i NAME=VALUE ...
python ...``, that hands it only the allow-list
(:func:`resume_audit.dynamic.environment.base_variables`): the secret never
enters the server, so no child can find it. ``multiprocessing`` offers no
environment parameter; the launcher goes in through its documented
``set_executable``, for the one call that starts the server, and the previous
executable is put back at once.
"""

from __future__ import annotations

import atexit
import os
import shlex
import shutil
import sys
import tempfile
from multiprocessing import forkserver, spawn
from typing import Any

from resume_audit.dynamic.confinement import FORKSERVER_USERNS, ConfinementPolicy
from resume_audit.dynamic.environment import base_variables
from resume_audit.dynamic.lifetime import ROOT_PREFIX, process_table

_LAUNCHED: int | None = None


def _running(pid: int | None) -> bool:
    return pid is not None and any(e.pid == pid and e.state != "Z" for e in process_table())


def ensure_running() -> None:
    """Start the fork server with the allow-listed environment unless the one we started still runs.

    Called with the runner's start lock held, right before a child is started (which would start the
    server itself, with the whole environment, if none were running).
    """
    global _LAUNCHED
    server: Any = forkserver._forkserver  # the process-wide server every forkserver context uses
    if _LAUNCHED is not None and server._forkserver_pid == _LAUNCHED and _running(_LAUNCHED):
        return
    if server._forkserver_pid is not None and server._forkserver_pid != _LAUNCHED and _running(server._forkserver_pid):
        return  # started by someone else before the first sweep: nothing safe to do but use it
    env_program = shutil.which("env") or "/usr/bin/env"
    variables = base_variables(os.environ)
    if ConfinementPolicy.from_environ(os.environ).namespace:  # the server enters a user namespace first
        variables[FORKSERVER_USERNS] = "1"
    # kept until this process exits: the shell reads the script after exec returns. Named like a sweep's
    # root, so a sweep killed outright has it removed by the next one (lifetime.remove_stale_roots)
    folder = tempfile.mkdtemp(prefix=f"{ROOT_PREFIX}{os.getpid()}-launch-")
    atexit.register(shutil.rmtree, folder, True)
    launcher = os.path.join(folder, "python")
    assignments = " ".join(shlex.quote(f"{k}={v}") for k, v in sorted(variables.items()))
    with open(launcher, "w", encoding="utf-8") as fh:
        fh.write(f'#!/bin/sh\nexec {shlex.quote(env_program)} -i {assignments} {shlex.quote(sys.executable)} "$@"\n')
    os.chmod(launcher, 0o700)
    previous = spawn.get_executable()
    spawn.set_executable(launcher)
    try:
        server.ensure_running()
    finally:
        spawn.set_executable(previous)
    _LAUNCHED = server._forkserver_pid
