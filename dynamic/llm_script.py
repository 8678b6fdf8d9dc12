"""The ``--stub-llm`` script: which scripted reply each model call gets (see :mod:`resume_audit.dynamic.child.llm_stub`
for the file format and how the child answers from it).

Parsed in the parent, where a bad script is a usage error before any child starts, and handed to every child
as its data (:meth:`LlmScript.to_data`), where :func:`resume_audit.dynamic.child.llm_stub.install` answers from it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

PLAIN = "plain"


class LlmScriptError(ValueError):
    """The script file is missing or malformed (the CLI's exit code 2)."""


@dataclass(frozen=True)
class ScriptedReply:
    content: str
    #: ``{"name": ..., "args": {...}, "id": ...}`` each, as an ``AIMessage`` carries them
    tool_calls: tuple[dict[str, Any], ...] = ()

    @classmethod
    def parse(cls, item: Any, where: str) -> "ScriptedReply":
        if isinstance(item, str):
            return cls(item)
        if not isinstance(item, dict) or not set(item) <= {"content", "tool_calls"}:
            raise LlmScriptError(f"{where}: a reply is a string or {{content, tool_calls}}, not {item!r}")
        calls = []
        for n, call in enumerate(item.get("tool_calls") or ()):
            if (
                not isinstance(call, dict)
                or not isinstance(call.get("name"), str)
                or not isinstance(call.get("args", {}), dict)
            ):
                raise LlmScriptError(f"{where}: tool call {n} needs a name and an args object, got {call!r}")
            calls.append(
                {
                    "name": call["name"],
                    "args": dict(call.get("args") or {}),
                    **({"id": str(call["id"])} if "id" in call else {}),
                }
            )
        content = item.get("content", "")
        if not isinstance(content, str):
            raise LlmScriptError(f"{where}: content must be a string")
        return cls(content, tuple(calls))


@dataclass(frozen=True)
class LlmScript:
    replies: tuple[ScriptedReply, ...]
    nodes: tuple[tuple[str, tuple[ScriptedReply, ...]], ...] = ()

    @classmethod
    def plain(cls) -> "LlmScript":
        return cls((ScriptedReply("OK"),))

    @classmethod
    def parse(cls, data: Any, where: str = "--stub-llm") -> "LlmScript":
        if isinstance(data, list):
            data = {"replies": data}
        if not isinstance(data, dict) or not set(data) <= {"replies", "nodes"}:
            raise LlmScriptError(f"{where}: expected a list of replies or {{replies, nodes}}")
        replies = tuple(
            ScriptedReply.parse(r, f"{where} replies[{i}]") for i, r in enumerate(data.get("replies") or ())
        )
        nodes = []
        for node, items in sorted((data.get("nodes") or {}).items()):
            if not isinstance(items, list) or not items:
                raise LlmScriptError(f"{where}: nodes.{node} must be a non-empty list of replies")
            nodes.append(
                (str(node), tuple(ScriptedReply.parse(r, f"{where} nodes.{node}[{i}]") for i, r in enumerate(items)))
            )
        if not replies and not nodes:
            raise LlmScriptError(f"{where}: the script holds no reply")
        return cls(replies or (ScriptedReply("OK"),), tuple(nodes))

    @classmethod
    def load(cls, source: str) -> "LlmScript":
        """``plain``, or a JSON / YAML file."""
        if source == PLAIN and not os.path.exists(source):
            return cls.plain()
        try:
            with open(source, encoding="utf-8") as fh:
                text = fh.read()
        except OSError as exc:
            raise LlmScriptError(f"--stub-llm {source}: {exc.strerror or exc}") from None
        try:
            data = json.loads(text)
        except ValueError:
            try:
                import yaml  # type: ignore[import-untyped]
            except ImportError:  # pragma: no cover - pyyaml ships with the test extra
                raise LlmScriptError(
                    f"--stub-llm {source}: not JSON, and PyYAML is not installed to read YAML"
                ) from None
            try:
                data = yaml.safe_load(text)
            except yaml.YAMLError as exc:
                raise LlmScriptError(f"--stub-llm {source}: neither JSON nor YAML ({exc})") from None
        return cls.parse(data, f"--stub-llm {source}")

    def to_data(self) -> dict[str, Any]:
        """A JSON-able form (what crosses into the child processes and the report's protocol)."""

        def reply(r: ScriptedReply) -> Any:
            return (
                r.content if not r.tool_calls else {"content": r.content, "tool_calls": [dict(c) for c in r.tool_calls]}
            )

        out: dict[str, Any] = {"replies": [reply(r) for r in self.replies]}
        if self.nodes:
            out["nodes"] = {node: [reply(r) for r in items] for node, items in self.nodes}
        return out

    def reply_for(self, node: str | None, turn: int) -> tuple[ScriptedReply, int]:
        """The reply to a call at ``turn`` in ``node``, and the index it was taken from."""
        replies = dict(self.nodes).get(node or "", self.replies)
        index = min(turn, len(replies) - 1)
        return replies[index], index
