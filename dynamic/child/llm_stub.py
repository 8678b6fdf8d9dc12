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

from typing import Any, Callable

from resume_audit.dynamic.child import fake_credentials
from resume_audit.dynamic.llm_script import LlmScript

__all__ = ["LlmScript", "install"]


def _current_node() -> str | None:
    from langchain_core.runnables.config import var_child_runnable_config

    cfg = var_child_runnable_config.get() or {}
    return (cfg.get("metadata") or {}).get("langgraph_node")


def install(script: LlmScript, note: Callable[[str, str], None]) -> None:
    """Make every LangChain chat model answer from ``script`` (in this process only).

    ``note(kind, detail)`` is told once per model class that was stubbed, for the
    report. Streaming falls back to the (stubbed) invoke path.
    """
    fake_credentials.apply()  # `ChatOpenAI()` & co. are built without a real key (the stub never sends one)
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
        calls = [
            {"name": c["name"], "args": dict(c["args"]), "id": c.get("id") or f"call_{index}_{n}", "type": "tool_call"}
            for n, c in enumerate(reply.tool_calls)
        ]
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=reply.content, tool_calls=calls))])

    def _generate_with_cache(
        self: Any, messages: list[Any], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> Any:
        return answer(self, messages)

    async def _agenerate_with_cache(
        self: Any, messages: list[Any], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> Any:
        return answer(self, messages)

    def _should_stream(self: Any, **kwargs: Any) -> bool:
        return False

    BaseChatModel._generate_with_cache = _generate_with_cache  # type: ignore[method-assign]
    BaseChatModel._agenerate_with_cache = _agenerate_with_cache  # type: ignore[method-assign]
    BaseChatModel._should_stream = _should_stream  # type: ignore[method-assign]
