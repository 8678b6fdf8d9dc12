"""Chat UIs, agent servers and serverless entry points.

Streamlit re-runs a page's top-level code for every interaction of every browser session (one run
at a time per session); Gradio (4.x/5.x) calls an event listener's ``fn`` per event from its queue;
Chainlit 2.x calls ``@cl.on_message`` per message of every session; an MCP server (``mcp`` 1.x FastMCP,
``fastmcp`` 2.x, the low-level ``mcp.server.Server.call_tool``) runs a tool per client call; an A2A
server (``a2a-sdk`` 0.2/0.3) calls ``AgentExecutor.execute`` per request; an AWS Lambda handler
``handler(event, context)`` and an EdgeOne Pages function ``handler(context)`` run once per invocation,
many instances at once.
"""

from __future__ import annotations

from resume_audit.handlers.catalog import Concurrency, HandlerShape, Registration

DECORATOR, CALL, SUBCLASS = Registration.DECORATOR, Registration.CALL, Registration.SUBCLASS_METHOD

#: the kind of a Streamlit page's top-level code (RA302 asks whether the page's thread is per session)
STREAMLIT_RUN = "Streamlit script run"

MCP_SERVERS = ("mcp.server.fastmcp.FastMCP", "mcp.server.FastMCP", "fastmcp.FastMCP", "fastmcp.server.FastMCP")
GRADIO_EVENTS = (
    "click",
    "submit",
    "change",
    "input",
    "upload",
    "select",
    "load",
    "then",
    "success",
    "like",
    "stream",
    "release",
    "clear",
)

SHAPES: tuple[HandlerShape, ...] = (
    HandlerShape("Streamlit", STREAMLIT_RUN, Registration.MODULE_SCRIPT, (), ("streamlit",), Concurrency.PER_SESSION),
    HandlerShape(
        "Gradio",
        "Gradio event handler",
        CALL,
        tuple(f"gradio.*.{e}" for e in GRADIO_EVENTS),
        ("gradio",),
        position=0,
        keyword="fn",
    ),
    HandlerShape("Gradio", "Gradio event handler", CALL, ("gradio.on",), ("gradio",), position=1, keyword="fn"),
    HandlerShape(
        "Gradio",
        "Gradio app function",
        CALL,
        (
            "gradio.ChatInterface",
            "gradio.Interface",
            "gradio.chat_interface.ChatInterface",
            "gradio.interface.Interface",
        ),
        ("gradio",),
        position=0,
        keyword="fn",
    ),
    HandlerShape("Chainlit", "Chainlit message handler", DECORATOR, ("chainlit.on_message",), ("chainlit",)),
    HandlerShape("Chainlit", "Chainlit action callback", DECORATOR, ("chainlit.action_callback",), ("chainlit",)),
    HandlerShape(
        "Chainlit",
        "Chainlit session hook",
        DECORATOR,
        ("chainlit.on_chat_start", "chainlit.on_chat_resume", "chainlit.on_audio_end"),
        ("chainlit",),
    ),
    *(
        HandlerShape("MCP", f"MCP {m} handler", DECORATOR, tuple(f"{s}.{m}" for s in MCP_SERVERS), ("mcp", "fastmcp"))
        for m in ("tool", "resource", "prompt")
    ),
    HandlerShape(
        "MCP",
        "MCP call_tool handler",
        DECORATOR,
        (
            "mcp.server.Server.call_tool",
            "mcp.server.lowlevel.Server.call_tool",
            "mcp.server.lowlevel.server.Server.call_tool",
        ),
        ("mcp",),
    ),
    HandlerShape(
        "A2A",
        "A2A agent executor",
        SUBCLASS,
        ("a2a.server.agent_execution.AgentExecutor", "a2a.server.agent_execution.agent_executor.AgentExecutor"),
        ("a2a",),
        methods=("execute", "cancel"),
    ),
    HandlerShape(
        "python-a2a",
        "A2A server handler",
        SUBCLASS,
        ("python_a2a.A2AServer", "python_a2a.server.A2AServer"),
        ("python_a2a",),
        methods=("handle_task", "handle_message"),
    ),
    HandlerShape("AWS Lambda", "AWS Lambda handler", Registration.SIGNATURE, parameters=("event", "context")),
    HandlerShape(
        "EdgeOne Pages", "EdgeOne function handler", Registration.SIGNATURE, name="handler", parameters=("context",)
    ),
)
