"""What a stubbed call returns when nobody configured a value: a value of the type the code expects.

``audit`` replaces every effect (and every ``stub-reads`` call) with a recorder,
so nothing real fires. The program then goes on with what the recorder
returned, and a bare ``None`` breaks it where the real call never would
(``argument of type 'NoneType' is not iterable`` on the next line, a ``str``
state field persisted as null and reported as an invalid checkpoint). So the
value is typed, in this order:

1. the function's return annotation (``-> str``, ``-> Receipt``, ``-> None``):
   a plain value of that type, built like the synthesised input
   (:mod:`.synthesis`);
2. the SDK's known return shape: an HTTP client's response (``status_code``
   200, ``json()``, ``text``, ``raise_for_status()``), a JSON-like object for
   other SDKs (``stripe``'s and ``boto3``'s results are dicts with attribute
   access);
3. otherwise a string that also allows attribute access, calls and item
   access (:class:`StubText`), so ``result.output_text`` and ``result["id"]``
   both work.

Every value but an annotated ``None`` is *made up*: the child notes it
(``stub-value``), and the parent drops a finding whose witness is such a value
(:mod:`resume_audit.dynamic.parent.stub_artefacts`) -- it says nothing about
the program.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, Callable

from resume_audit.dynamic.child.synthesis import example_from_type
from resume_audit.dynamic.effect_spec import MadeUp

__all__ = ["StubJson", "StubResponse", "StubText", "typed_value"]

#: modules whose calls answer an HTTP response object
_HTTP_CLIENTS = ("requests", "httpx", "aiohttp", "urllib3")


class StubText(str):
    """A made-up string that also answers attribute access, calls and string-keyed item access with itself:
    what a stub returns when nothing says what the code expects (``r.output_text``, ``r()["id"]``)."""

    def __getattr__(self, name: str) -> "StubText":
        if name.startswith("__") and name.endswith("__"):  # copy, pickle and friends must see a plain str
            raise AttributeError(name)
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> "StubText":
        return self

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, (int, slice)):
            return str.__getitem__(self, key)
        return self


class StubJson(dict):  # type: ignore[type-arg]
    """A made-up JSON object: empty, but a missing key or attribute answers a :class:`StubText`
    (``resp.json()["id"]``, ``charge.id``); ``get(key, default)`` keeps its default."""

    def __init__(self, label: str) -> None:
        super().__init__()
        self._label = StubText(label)

    def __missing__(self, key: Any) -> StubText:
        return self._label

    def __getattr__(self, name: str) -> StubText:
        if name.startswith("_"):
            raise AttributeError(name)
        return self._label

    def get(self, key: Any, default: Any = None) -> Any:
        return super().get(key, default if default is not None else self._label)


class StubResponse:
    """A made-up HTTP response (``requests``/``httpx``/``aiohttp`` shape): 200 OK, an empty JSON body."""

    status_code = 200
    status = 200
    ok = True
    is_success = True
    reason = "OK"
    reason_phrase = "OK"
    encoding = "utf-8"
    text = "{}"
    content = b"{}"

    def __init__(self, label: str) -> None:
        self.headers: dict[str, str] = {"content-type": "application/json"}
        self._body = StubJson(label)
        self.url = ""

    def json(self, **kwargs: Any) -> StubJson:
        return self._body

    def raise_for_status(self) -> "StubResponse":
        return self

    def __getattr__(self, name: str) -> StubText:
        if name.startswith("_"):
            raise AttributeError(name)
        return self._body._label

    def __repr__(self) -> str:
        return "<stub response 200>"


def typed_value(func: Callable[..., Any], module: str, attr: str, display: str) -> tuple[Any, MadeUp | None]:
    """The value a stub of ``func`` (``module:attr``) returns, and what was made up (None: the annotation says
    the real function returns ``None``, so ``None`` is the program's own value)."""
    leaf = attr.rsplit(".", 1)[-1]
    try:
        hints = typing.get_type_hints(func)
    except Exception:  # an annotation naming what the module never imported at run time
        hints = {}
    if "return" in hints:
        annotation = hints["return"]
        if annotation is None or annotation is type(None):
            return None, None
        value = _instance(annotation, leaf)
        if value is not None:
            return value, MadeUp(display, value, f"from its return annotation ({_type_name(annotation)})")
    top = module.split(".")[0]
    if top in _HTTP_CLIENTS:
        response = StubResponse(f"stub {leaf}")
        return response, MadeUp(display, f"stub {leaf}", f"a {top} response (200, empty JSON body)")
    if not _users_own(func):
        obj = StubJson(f"stub {leaf}")
        return obj, MadeUp(display, f"stub {leaf}", "a JSON object allowing attribute access")
    text = StubText(f"stub {leaf}")
    return text, MadeUp(display, str(text), "a string allowing attribute and item access (no return annotation)")


def _instance(annotation: Any, name: str) -> Any:
    """A plain value of ``annotation``: a model or dataclass built from its example fields."""
    example = example_from_type(annotation, name)
    target = annotation
    if typing.get_origin(target) is typing.Annotated:
        target = typing.get_args(target)[0]
    if target is dict or typing.get_origin(target) is dict:
        return StubJson(f"stub {name}")  # the code reads keys off it
    if isinstance(example, dict) and isinstance(target, type) and not typing.is_typeddict(target):
        try:
            if hasattr(target, "model_validate"):
                return target.model_validate(example)
            if dataclasses.is_dataclass(target):
                return target(**example)
        except Exception:
            return StubJson(f"stub {name}")
    if example is None and isinstance(target, type):
        return StubJson(f"stub {name}")  # a class the synthesis cannot build: attribute access at least
    return example


def _type_name(annotation: Any) -> str:
    return getattr(annotation, "__name__", None) or str(annotation).replace("typing.", "")


def _users_own(func: Callable[..., Any]) -> bool:
    """Whether ``func`` is defined outside installed packages (the user's helper, not an SDK's method)."""
    import sysconfig

    code = getattr(func, "__code__", None)
    filename = getattr(code, "co_filename", "") or ""
    if not filename:
        return False
    roots = {sysconfig.get_paths().get(k, "") for k in ("purelib", "platlib", "stdlib")}
    return not any(r and filename.startswith(r) for r in roots)
