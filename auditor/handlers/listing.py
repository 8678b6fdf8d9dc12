"""``resume-audit handlers PATH``: the functions of a project that run once per delivery, and why.

The same index the rules ask (:mod:`resume_audit.handlers.web`), over every Python file under the
path, so a user can see which of their functions the tool treats as served -- and add the
registrations it does not know to ``handlers = [...]`` in ``[tool.resume-audit]``. Nothing is run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from resume_audit.config.settings import Config
from resume_audit.discovery.modulenames import SourceFile, module_name_for
from resume_audit.discovery.walk import discover
from resume_audit.handlers import web
from resume_audit.handlers.catalog import HandlerShape


@dataclass(frozen=True)
class ServedFunction:
    """One handler found in the project, as the listing prints it."""

    #: ``bot/handlers.py:22`` -- where the function is defined
    path: str
    line: int
    function: str
    #: what it is: "aiogram handler", "Celery task"
    kind: str
    #: "concurrent" | "per-session" | "retried"
    concurrency: str
    #: the catalog entry that matched (None: found by shape, e.g. a consumer loop)
    shape: HandlerShape | None
    #: the decorator / registration call that makes it one: ``bot/loader.py:12``
    registered_at: str
    #: the catalog entry or shape, in words
    why: str


def served_functions(paths: list[Path], root: Path, config: Config) -> list[ServedFunction]:
    """Every handler of the project under ``paths`` (files and folders), in path and line order."""
    from resume_audit.engine.analyzer import Analyzer  # the scan's project model, built without rules

    sources = list(discover(paths, root, config.exclude, respect_gitignore=config.respect_gitignore))
    files = []
    for sp in sources:
        name, is_package = module_name_for(sp.resolved, resolved=True)
        files.append(SourceFile(sp.resolved, sp.display, name, is_package))
    # the bytes of every file: the index finds the modules that can serve by searching them
    texts = {f.path: f.path.read_bytes() for f in files}
    project = Analyzer(files, config, [], None, {}, texts).project
    out: list[ServedFunction] = []
    for handler in web.handlers(project):
        fn = handler.function
        where = handler.module
        out.append(
            ServedFunction(
                path=fn.module.display_path,
                line=fn.module.line(fn.node) if fn is not fn.module.script_body else 1,
                function=fn.qualname,
                kind=handler.kind,
                concurrency=handler.concurrency.value,
                shape=handler.shape,
                registered_at=f"{where.display_path}:{where.line(handler.node)}",
                why=handler.why,
            )
        )
    return sorted(out, key=lambda s: (s.path, s.line, s.function))
