"""What a program that would not import (or run) needed, and the configuration that supplies it.

Clients a program builds at import get fake credentials in the sweep's
children (:mod:`resume_audit.dynamic.child.fake_credentials`), so most imports
succeed. What is left -- a setting of the program's own (``DATABASE_URL``), a
service it connects to while loading (a PostgreSQL server), a host it calls
that the sandbox refuses -- is named here from the error, with the exact
``[tool.resume-audit.audit."module:attr"]`` snippet that supplies it, so an
entry point that is not swept says what to do about it.
"""

from __future__ import annotations

import re

#: port -> the service a refused local connection was for
_SERVICES = {
    5432: "a PostgreSQL server",
    6379: "a Redis server",
    27017: "a MongoDB server",
    3306: "a MySQL server",
    5672: "a RabbitMQ broker",
    9092: "a Kafka broker",
    11434: "an Ollama server",
    8000: "a local HTTP service",
}

#: a setting read from the environment: ``KeyError: 'DATABASE_URL'``, "environment variable `X`", "set X"
_ENV_PATTERNS = (
    re.compile(r"KeyError: '([A-Z][A-Z0-9_]{2,})'"),
    re.compile(r"environment variable[s]? [`'\"]?([A-Z][A-Z0-9_]{2,})"),
    re.compile(r"[`'\"]?([A-Z][A-Z0-9_]{2,})[`'\"]? (?:environment variable|env var)"),
    re.compile(r"(?:missing|not set|required)[^A-Z]{0,20}[`'\"]?([A-Z][A-Z0-9_]*_[A-Z0-9_]+)"),
)
_REFUSED = re.compile(r"connection refused|could not connect|failed to connect|connect call failed", re.IGNORECASE)
_PORT = re.compile(r"(?:port |:)(\d{2,5})\b")
_SANDBOX_NETWORK = re.compile(
    r"resume-audit sandbox refused (?:connect|sendto|sendmsg) to \(?'?([^',)]+)'?,? ?(\d+)?|"
    r"resume-audit sandbox refused name lookup of '([^']+)'"
)


def explain(why: str, target: str) -> str:
    """``why`` with what the program needed and the snippet that supplies it (unchanged when nothing is recognised)."""
    table = f'[tool.resume-audit.audit."{target}"]'
    why = why.replace("; pass --allow-network", "").replace(" pass --allow-network", "")
    for pattern in _ENV_PATTERNS:
        found = pattern.search(why)
        if found:
            name = found.group(1)
            return (
                f"{why} -- it needs the setting {name} at import; give it a value for the sweep "
                f'(a test value: nothing real is called): {table} env = {{ {name} = "..." }}'
            )
    network = _SANDBOX_NETWORK.search(why)
    if network:
        host = network.group(1) or network.group(3) or "a remote host"
        return (
            f"{why} -- it calls {host.strip()} while it runs, which the sweep never lets out; stub that call "
            f'(a read: {table} stub-reads = ["module:function"]; a write: effects = ["module:function"], '
            f'with its answer in stubs = {{ "module:function" = ... }})'
        )
    refused = _PORT.search(why) if _REFUSED.search(why) else None
    if refused and int(refused.group(1)) in _SERVICES:
        service = _SERVICES[int(refused.group(1))]
        return (
            f"{why} -- it needs {service} (port {refused.group(1)}) while it loads; run one where audit runs "
            f'and point the program at it ({table} env = {{ ... }}), or {table} skip = "needs {service}"'
        )
    return why
