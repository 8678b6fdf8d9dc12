"""The handler catalog's vocabulary: how a framework registers a function it calls once per delivery.

A resume inside a web route, a bot callback or a queue task runs once for every request, update
or message -- many at a time, in several workers, and (for task queues) again when a delivery
fails. The rules need to know which functions are such *handlers*; what they need to know of a
framework is only how a handler is registered and what a delivery means. That is data, one
:class:`HandlerShape` per registration form, read by one matcher
(:mod:`resume_audit.handlers.matcher`) -- the same way :mod:`resume_audit.analysis.effect_catalog`
lists effects. The built-in entries live in :mod:`resume_audit.handlers.known`; a project adds its
own with ``handlers = [...]`` in ``[tool.resume-audit]`` (:func:`shapes_from_config`).

Names are qualified names as the project model resolves them: ``aiogram.Router.message`` is the
``message`` attribute of an object made by ``aiogram.Router(...)``, wherever that object was made
(a module global, another module, an attribute set at start-up) -- the value-flow engine follows
it. Nothing here imports libcst or the frameworks.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from dataclasses import dataclass
from enum import Enum
from typing import Any, Iterable

from resume_audit.reading.prefilter import import_words


class Concurrency(Enum):
    """What one delivery means for the code it runs."""

    #: deliveries run at the same time (threads, tasks, worker processes) and a client can send one twice
    CONCURRENT = "concurrent"
    #: one delivery at a time per user session, sessions side by side (a Streamlit script run)
    PER_SESSION = "per-session"
    #: a task queue: concurrent, and a delivery that fails or whose worker dies runs again
    RETRIED = "retried"


class Registration(Enum):
    """How a framework learns which function to call."""

    #: ``@target`` or ``@target(...)`` on the function (``@router.message(...)``, ``@shared_task``)
    DECORATOR = "decorator"
    #: ``target(..., fn, ...)``: the function passed at :attr:`HandlerShape.position` or :attr:`HandlerShape.keyword`
    #: (``CommandHandler("start", fn)``, ``queue.enqueue(fn)``, ``btn.click(fn)``), or listed there (``functions=[f, g]``)
    CALL = "call"
    #: ``class X(target): def method(...)``: the methods named in :attr:`HandlerShape.methods`
    SUBCLASS_METHOD = "subclass-method"
    #: the module's own top-level code runs once per delivery (a Streamlit page)
    MODULE_SCRIPT = "module-script"
    #: a module-level function whose name matches :attr:`HandlerShape.name` and whose parameters are
    #: :attr:`HandlerShape.parameters` (an AWS Lambda ``handler(event, context)``)
    SIGNATURE = "signature"


@dataclass(frozen=True)
class HandlerShape:
    """One way a framework registers a handler, and what a delivery to it means."""

    #: the framework, for listings: "aiogram", "Celery"
    framework: str
    #: what a function registered so is called in messages: "aiogram message handler"
    kind: str
    registration: Registration
    #: qualified names (``fnmatch`` globs allowed) of the decorator, the registering callable, or the base class
    targets: tuple[str, ...] = ()
    #: import roots one of which a module must use for the shape to be tried there; empty: :attr:`words`
    packages: tuple[str, ...] = ()
    concurrency: Concurrency = Concurrency.CONCURRENT
    #: CALL: where the function goes
    position: int | None = None
    keyword: str | None = None
    #: SUBCLASS_METHOD: the methods that run per delivery
    methods: tuple[str, ...] = ()
    #: SIGNATURE: the function's name (a glob) and its exact parameter names
    name: str = "*"
    parameters: tuple[str, ...] = ()
    #: where the entry comes from: "built-in" or the pyproject.toml that declares it
    source: str = "built-in"

    @property
    def words(self) -> tuple[str, ...]:
        """Text a module holding such a registration contains (the index reads only those modules):
        the import of one of :attr:`packages`, else the last name of a target, else ``def <name>(``."""
        if self.packages:
            return import_words(self.packages)
        if self.registration is Registration.SIGNATURE:
            return (f"def {self.name}(",) if not _is_glob(self.name) else (", ".join(self.parameters),)
        return tuple(
            dict.fromkeys(t.rsplit(".", 1)[-1] for t in self.targets if not _is_glob(t.rsplit(".", 1)[-1]))
        ) or ("",)

    def describe(self, matched: str | None = None) -> str:
        """The registration form, as a user would write it: ``@aiogram.Router.message`` (``matched``: the
        qualified name that matched, shown instead of the entry's first target)."""
        where = matched or (self.targets[0] if self.targets else "")
        more = f" (or {len(self.targets) - 1} more)" if len(self.targets) > 1 and matched is None else ""
        if self.registration is Registration.DECORATOR:
            return f"@{where}{more}"
        if self.registration is Registration.CALL:
            at = " / ".join(
                x
                for x in (
                    f"argument {self.position}" if self.position is not None else "",
                    f"{self.keyword}=" if self.keyword else "",
                )
                if x
            )
            return f"{where}(...){more}, the function as {at}"
        if self.registration is Registration.SUBCLASS_METHOD:
            return f"class X({where}){more}: def {' / '.join(self.methods)}"
        if self.registration is Registration.MODULE_SCRIPT:
            return f"the top-level code of a module importing {' / '.join(self.packages)}"
        return f"def {self.name}({', '.join(self.parameters)}) at module level"


@functools.lru_cache(maxsize=None)
def compiled_glob(pattern: str) -> re.Pattern[str]:
    """``fnmatch`` of a shape's target, compiled once per process (a language server builds the
    catalog's matchers again for every edit's fresh project)."""
    return re.compile(fnmatch.translate(pattern))


class TargetSet:
    """The qualified names of many shapes, matched at once: exact names by a dict, globs by one regex each."""

    def __init__(self, shapes: Iterable[HandlerShape]) -> None:
        self._exact: dict[str, list[HandlerShape]] = {}
        self._globs: list[tuple[re.Pattern[str], HandlerShape]] = []
        for shape in shapes:
            for target in shape.targets:
                if _is_glob(target):
                    self._globs.append((compiled_glob(target), shape))
                else:
                    self._exact.setdefault(target, []).append(shape)

    def match(self, names: Iterable[str]) -> list[tuple[HandlerShape, str]]:
        """The shapes one of ``names`` matches, in catalog order, with the name that matched."""
        out: list[tuple[HandlerShape, str]] = []
        for name in names:
            for shape in self._exact.get(name, ()):
                out.append((shape, name))
            for pattern, shape in self._globs:
                if pattern.match(name):
                    out.append((shape, name))
        return out


def _is_glob(text: str) -> bool:
    return any(c in text for c in "*?[")


# -- the user's own shapes: ``handlers = [...]`` in [tool.resume-audit] ------------------------------

#: the key naming the registration form, and the form
_FORMS = {
    "decorator": Registration.DECORATOR,
    "call": Registration.CALL,
    "subclass": Registration.SUBCLASS_METHOD,
    "script": Registration.MODULE_SCRIPT,
    "function": Registration.SIGNATURE,
}
_KEYS = {*_FORMS, "kind", "concurrency", "argument", "keyword", "methods", "parameters", "packages"}


class HandlerConfigError(ValueError):
    """A ``handlers`` entry that cannot be read (the config layer reports it with the file and exits 2)."""


def shapes_from_config(entries: Any, source: str) -> tuple[HandlerShape, ...]:
    """Read ``handlers = [...]``: each entry a table with exactly one of ``decorator``, ``call``,
    ``subclass``, ``script`` or ``function`` (see docs/handlers.md). Raises :class:`HandlerConfigError`."""
    if not isinstance(entries, list):
        raise HandlerConfigError(f"tool.resume-audit.handlers must be a list of tables, got {entries!r}")
    return tuple(_shape(entry, i, source) for i, entry in enumerate(entries))


def _shape(entry: Any, index: int, source: str) -> HandlerShape:
    where = f"tool.resume-audit.handlers[{index}]"
    if not isinstance(entry, dict):
        raise HandlerConfigError(f"{where} must be a table, got {entry!r}")
    unknown = sorted(set(entry) - _KEYS)
    if unknown:
        raise HandlerConfigError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_KEYS))})")
    forms = [k for k in _FORMS if k in entry]
    if len(forms) != 1:
        raise HandlerConfigError(f"{where} needs exactly one of {', '.join(_FORMS)}, got {forms or 'none'}")
    form = forms[0]
    registration = _FORMS[form]
    target = entry[form]
    if not isinstance(target, str) or not target.strip():
        raise HandlerConfigError(f"{where}.{form} must be a non-empty string, got {target!r}")
    concurrency_text = entry.get("concurrency", "concurrent")
    try:
        concurrency = Concurrency(concurrency_text)
    except ValueError:
        raise HandlerConfigError(
            f"{where}.concurrency must be one of {', '.join(c.value for c in Concurrency)}, got {concurrency_text!r}"
        ) from None
    kind = entry.get("kind", f"{form} handler ({target})")
    position = entry.get("argument")
    keyword = entry.get("keyword")
    methods = entry.get("methods", [])
    parameters = entry.get("parameters", [])
    packages = entry.get("packages", [])
    if not isinstance(kind, str):
        raise HandlerConfigError(f"{where}.kind must be a string, got {kind!r}")
    if position is not None and not (isinstance(position, int) and not isinstance(position, bool) and position >= 0):
        raise HandlerConfigError(f"{where}.argument must be a position (0 for the first argument), got {position!r}")
    if keyword is not None and not isinstance(keyword, str):
        raise HandlerConfigError(f"{where}.keyword must be a string, got {keyword!r}")
    for key, value in (("methods", methods), ("parameters", parameters), ("packages", packages)):
        if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise HandlerConfigError(f"{where}.{key} must be a list of strings, got {value!r}")
    if registration is Registration.CALL and position is None and keyword is None:
        position = 0
    if registration is Registration.SUBCLASS_METHOD and not methods:
        raise HandlerConfigError(f"{where}: a subclass entry needs methods = [...] (the methods run per delivery)")
    if registration is Registration.MODULE_SCRIPT:
        # script = "streamlit": the package whose import makes a module's top level run per delivery
        packages = [target]
    if registration is Registration.SIGNATURE:
        if not parameters:
            raise HandlerConfigError(f"{where}: a function entry needs parameters = [...] (its exact parameter names)")
        return HandlerShape(
            "config",
            kind,
            registration,
            packages=tuple(packages),
            concurrency=concurrency,
            name=target,
            parameters=tuple(parameters),
            source=source,
        )
    return HandlerShape(
        "config",
        kind,
        registration,
        targets=(target,),
        packages=tuple(packages),
        concurrency=concurrency,
        position=position,
        keyword=keyword,
        methods=tuple(methods),
        source=source,
    )


def config_entries(shapes: Iterable[HandlerShape]) -> list[dict[str, object]]:
    """The shapes as plain data, for the configuration's cache fingerprint and ``handlers --format json``."""
    return [
        {
            "framework": s.framework,
            "kind": s.kind,
            "registration": s.registration.value,
            "targets": list(s.targets),
            "packages": list(s.packages),
            "concurrency": s.concurrency.value,
            "position": s.position,
            "keyword": s.keyword,
            "methods": list(s.methods),
            "name": s.name,
            "parameters": list(s.parameters),
            "source": s.source,
        }
        for s in shapes
    ]
