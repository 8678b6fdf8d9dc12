"""The built-in probe programs ``resume-audit conformance`` sweeps (LLM-free, deterministic, installed with the tool).

One small program per framework and resume plane, each with effects the
ledger counts -- the same abstract workflow on every plane (an effect, a
durable step, a gate on a human answer, a gated effect), so rows of the
conformance matrix differ only where the frameworks do:

- ``langgraph_order``         LangGraph: prepare -> review (``interrupt()``) -> charge
- ``crewai_counter``          CrewAI Flows: s1 (+1) -> s2 (+10) under each checkpoint / @persist plane
- ``llamaindex_approval``     LlamaIndex Workflows: two-step and ``wait_for_event`` human-in-the-loop
- ``pydantic_graph_approval`` pydantic-graph 1.x: Prepare -> (park) Approve -> Charge with FileStatePersistence
"""
