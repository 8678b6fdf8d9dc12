"""The child process: confine, load the user's graph, play one role, write ``result.json``.

Every sweep child starts here (forked from the fork server with its :class:`~resume_audit.dynamic.spec.ChildSpec`):
it confines itself (:mod:`.sandbox`), opens the ledger, prepares the framework's hooks, imports the user's
program, wraps the ``--effect`` functions, opens a session and plays its role -- a built-in one
(:mod:`.roles`) or the probe's own (``ChildSpec.role_entry``).

Every outcome -- including the user's code raising, calling ``sys.exit`` or
being refused by the sandbox -- ends in a ``result.json`` the parent reads;
only a kill (ours or a timeout) leaves none. The process leaves through
``os._exit`` so a stray non-daemon thread of the user's cannot keep it alive.
"""

from __future__ import annotations

import os
import sys
import traceback
from typing import Any, Callable

from resume_audit.dynamic import lifetime
from resume_audit.dynamic.adapters import adapter_for, detect
from resume_audit.dynamic.adapters.base import Instruments, ShapeError, with_arguments
from resume_audit.dynamic.child import env as childenv
from resume_audit.dynamic.child import fake_credentials, llm_stub, netns
from resume_audit.dynamic.child.context import Context, ProtocolError
from resume_audit.dynamic.child.effects import BUILD, EffectSpecError, install_effects
from resume_audit.dynamic.child.roles import ROLES
from resume_audit.dynamic.child.sandbox import Sandbox
from resume_audit.dynamic.child_result import ChildError, ChildResult
from resume_audit.dynamic.killpoints import EventLog
from resume_audit.dynamic.ledger import Ledger
from resume_audit.dynamic.llm_script import LlmScript
from resume_audit.dynamic.spec import ChildSpec
from resume_audit.dynamic.target import TargetError, import_target


def main(spec: ChildSpec, barrier: Any = None) -> None:
    """Entry point of every sweep child (runs in a fork of the fork server)."""
    childenv.enter(spec.run.environment)  # the allow-list only, before anything of the user's runs
    os.environ.update(dict(spec.run.env))  # what the user configured (`env`): a fake value never replaces it
    fake_credentials.apply()  # clients built at import (OpenAI(), boto3.client(...)) need a key to exist
    lifetime.bind_to_parent(spec.workdir)  # descendants carry the tag; die with the fork server
    if spec.run.memory_limit_mb:
        import resource

        limit = spec.run.memory_limit_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    _capture_output(spec.workdir)
    result = ChildResult(spec.role, spec.phase)
    instruments: Instruments | None = None
    try:
        sandbox = Sandbox(
            root=spec.cell_dir,
            workdir=spec.workdir,
            allow_network=spec.run.allow_network,
            cwd=spec.program_dir,
            policy=spec.run.confinement,
        )
        sandbox.install()
        result.confinement = sandbox.confinement
        ledger = Ledger(spec.ledger_path)
        ledger.phase = spec.phase
        sandbox.report = ledger.note
        events = EventLog(kill_at=spec.kill_at, mode=spec.crash_mode)
        events.on_kill = lambda: _reap(ledger.note)  # nothing the graph started survives the kill
        instruments = Instruments(ledger, events)
        hint = spec.run.framework
        adapter = adapter_for(hint) if hint else None
        if adapter is not None:  # before the user's module runs: import-time framework calls are seen
            adapter.prepare_process(instruments, spec.store)
        if spec.run.llm_script is not None:  # before the user's module builds its models
            llm_stub.install(LlmScript.parse(spec.run.llm_script), ledger.note)
        try:
            _module, obj = import_target(spec.run.target)
            detected, program = detect(with_arguments(obj, dict(spec.run.factory_kwargs)), hint)
            if detected is not adapter:
                adapter = detected
                adapter.prepare_process(instruments, spec.store)
            result.framework = adapter.name
            install_effects(
                list(spec.run.effects),
                ledger,
                events,
                adapter.effect_context,
                spec.run.stub,
                dict(spec.run.stubs),
                list(spec.run.reads),
            )
            with BUILD.building():  # an effect of the factory itself is no node's (see BUILD)
                session = adapter.open(program, spec.store, instruments, spec.thread_id, dict(spec.run.config))
        except (TargetError, ShapeError, EffectSpecError) as exc:
            result.target_error = str(exc)
            return
        ctx = Context(spec, session, ledger, events, instruments, result)
        ctx.module, ctx.target, ctx.barrier = _module, obj, barrier
        try:
            play = spec.role_entry or ROLES[spec.role]
            play(ctx)
            result.ok = True
        finally:
            result.store_used = session.uses_sweep_store()
            result.graph_how = getattr(session, "how", "")
            result.saver_ops = instruments.saver_ops
            result.describe = session.describe()
            result.schedule_escaped = adapter.schedule_escaped()
            try:
                session.close()
            except Exception:
                pass
    except ProtocolError as exc:
        result.protocol_error = str(exc)
    except SystemExit as exc:
        result.error = ChildError("exit", f"sys.exit({exc.code!r})", _user_frame(exc, _roots(spec)))
    except BaseException as exc:  # the user's graph raised: that is a result, not a sweep failure
        result.error = ChildError("raised", str(exc)[:800], _user_frame(exc, _roots(spec)), type(exc).__name__)
    finally:
        if instruments is not None:
            last = list(instruments.task_nodes.values())
            result.last_node = last[-1][0] if last else None
        try:
            result.reaped = _reap(instruments.ledger.note if instruments is not None else None)
        except Exception:
            pass
        result.write(spec.result_path)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(0)


def _reap(note: Callable[[str, str], None] | None) -> int:
    """Kill what the graph started; the loopback bridge (ours, not the graph's) first, uncounted."""
    netns.stop_bridge()
    return lifetime.reap_descendants(note)


def _user_frame(exc: BaseException, roots: tuple[str, ...]) -> str | None:
    """``file:line`` of the innermost traceback frame inside the user's code."""
    where = None
    for frame in traceback.extract_tb(exc.__traceback__):
        path = os.path.realpath(frame.filename)
        if any(path.startswith(r + os.sep) for r in roots) and "site-packages" not in path:
            where = f"{frame.filename}:{frame.lineno}"
    return where


def _capture_output(workdir: str) -> None:
    """Send the program's stdout/stderr to ``output.log`` in its workdir, not the parent's terminal.

    A sweep's own report goes to stdout (``--format json``/``sarif``); banners
    a framework prints in every child (CrewAI's flow panels) must not mix in.
    """
    os.makedirs(workdir, exist_ok=True)
    fd = os.open(os.path.join(workdir, "output.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    for stream, target in ((sys.stdout, 1), (sys.stderr, 2)):
        try:
            stream.flush()
        except Exception:
            pass
        os.dup2(fd, target)
    os.close(fd)


def _roots(spec: ChildSpec) -> tuple[str, ...]:
    return (os.path.realpath(spec.run.target.path_entry),)
