"""``--stub-llm``: every LangChain chat model in the swept program answers from a script, offline.

A graph whose nodes call a hosted model cannot be swept as it is: the sandbox
refuses the network, and a real model would answer a re-run differently from
the first run, so a recovered run could not be compared with the reference.
The stub replaces the generation step of *every* ``BaseChatModel`` subclass
(``ChatOpenAI``, ``ChatAnthropic``, a project's own wrapper -- construction,
``bind_tools`` and ``with_structured_output`` stay the provider's own) with a
scripted reply, so the graph runs offline and deterministically.

A reply is chosen by the model call's *turn*: the number of AI messages already
in its input. A re-run of a node sends the same messages and gets the same
reply, as a deterministic model would; a ReAct loop's second call (after the
tool result) gets the next reply. Past the end of the script the last reply
repeats, so the last one should be a final answer without tool calls.

Script file (JSON or YAML)::

    replies:                       # by turn, for every model call
      - tool_calls: [{name: issue_refund, args: {order_id: 7}}]
      - "Refund issued."
    nodes:                         # optional, per LangGraph node: overrides `replies` there
      summarize: ["Summary: one refund."]

A bare list is the ``replies`` list. ``--stub-llm plain`` needs no file: every
call answers the text ``"OK"``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Callable

#: environment variables provider constructors read; placeholders let `ChatOpenAI()` & co. be built
#: without a real key (the stub never sends it anywhere, and the sandbox refuses the network anyway)
PROVIDER_KEYS = (
    "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY", "GROQ_API_KEY", "MISTRAL_API_KEY",
    "COHERE_API_KEY", "TOGETHER_API_KEY", "FIREWORKS_API_KEY", "DEEPSEEK_API_KEY", "XAI_API_KEY", "AZURE_OPENAI_API_KEY",
    "OPENROUTER_API_KEY", "PERPLEXITY_API_KEY",
)
PLACEHOLDER_KEY = "resume-audit-stub-llm"
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
            if not isinstance(call, dict) or not isinstance(call.get("name"), str) or not isinstance(call.get("args", {}), dict):
                raise LlmScriptError(f"{where}: tool call {n} needs a name and an args object, got {call!r}")
            calls.append({"name": call["name"], "args": dict(call.get("args") or {}), **({"id": str(call["id"])} if "id" in call else {})})
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
        replies = tuple(ScriptedReply.parse(r, f"{where} replies[{i}]") for i, r in enumerate(data.get("replies") or ()))
        nodes = []
        for node, items in sorted((data.get("nodes") or {}).items()):
            if not isinstance(items, list) or not items:
                raise LlmScriptError(f"{where}: nodes.{node} must be a non-empty list of replies")
            nodes.append((str(node), tuple(ScriptedReply.parse(r, f"{where} nodes.{node}[{i}]") for i, r in enumerate(items))))
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
                raise LlmScriptError(f"--stub-llm {source}: not JSON, and PyYAML is not installed to read YAML") from None
            try:
                data = yaml.safe_load(text)
            except yaml.YAMLError as exc:
                raise LlmScriptError(f"--stub-llm {source}: neither JSON nor YAML ({exc})") from None
        return cls.parse(data, f"--stub-llm {source}")

    def to_data(self) -> dict[str, Any]:
        """A JSON-able form (what crosses into the child processes and the report's protocol)."""

        def reply(r: ScriptedReply) -> Any:
            return r.content if not r.tool_calls else {"content": r.content, "tool_calls": [dict(c) for c in r.tool_calls]}

        out: dict[str, Any] = {"replies": [reply(r) for r in self.replies]}
        if self.nodes:
            out["nodes"] = {node: [reply(r) for r in items] for node, items in self.nodes}
        return out

    def reply_for(self, node: str | None, turn: int) -> tuple[ScriptedReply, int]:
        """The reply to a call at ``turn`` in ``node``, and the index it was taken from."""
        replies = dict(self.nodes).get(node or "", self.replies)
        index = min(turn, len(replies) - 1)
        return replies[index], index


def _current_node() -> str | None:
    from langchain_core.runnables.config import var_child_runnable_config

    cfg = var_child_runnable_config.get() or {}
    return (cfg.get("metadata") or {}).get("langgraph_node")


def install(script: LlmScript, note: Callable[[str, str], None]) -> None:
    """Make every LangChain chat model answer from ``script`` (in this process only).

    ``note(kind, detail)`` is told once per model class that was stubbed, for the
    report. Streaming falls back to the (stubbed) invoke path.
    """
    for key in PROVIDER_KEYS:
        os.environ.setdefault(key, PLACEHOLDER_KEY)
    try:
        from langchain_core.language_models.chat_models import BaseChatModel
        from langchain_core.messages import AIMessage
        from langchain_core.outputs import ChatGeneration, ChatResult
    except ImportError:  # no LangChain in this program: nothing to stub
        return
    seen: set[str] = set()

    def answer(model: Any, messages: list[Any]) -> Any:
        name = type(model).__name__
        if name not in seen:
            seen.add(name)
            note("stub-llm", f"{name} calls were answered by the --stub-llm script")
        turn = sum(1 for m in messages if isinstance(m, AIMessage))
        reply, index = script.reply_for(_current_node(), turn)
        calls = [{"name": c["name"], "args": dict(c["args"]), "id": c.get("id") or f"call_{index}_{n}", "type": "tool_call"}
                 for n, c in enumerate(reply.tool_calls)]
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=reply.content, tool_calls=calls))])

    def _generate_with_cache(self: Any, messages: list[Any], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        return answer(self, messages)

    async def _agenerate_with_cache(self: Any, messages: list[Any], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        return answer(self, messages)

    def _should_stream(self: Any, **kwargs: Any) -> bool:
        return False

    BaseChatModel._generate_with_cache = _generate_with_cache  # type: ignore[method-assign]
    BaseChatModel._agenerate_with_cache = _agenerate_with_cache  # type: ignore[method-assign]
    BaseChatModel._should_stream = _should_stream  # type: ignore[method-assign]
