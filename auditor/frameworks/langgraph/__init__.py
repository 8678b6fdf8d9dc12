"""LangGraph: everything resume-audit knows about it, static and dynamic, in one folder.

- ``names``, ``units``, ``resume_plane``  the static stage's knowledge (what rules ask)
- ``entrypoints``                         the programs ``audit`` sweeps: factories, compiled graphs, ``langgraph.json``
- ``adapter``                             the dynamic stage's adapter (imports LangGraph: loaded on use)
- ``conformance``                         its rows of the conformance matrix

:data:`FRAMEWORK` is its registry record (:mod:`resume_audit.frameworks.registry`); importing this package
imports neither LangGraph nor LibCST.
"""

from resume_audit.frameworks.registry import Framework

FRAMEWORK = Framework(
    id="langgraph",
    display_name="LangGraph",
    import_names=("langgraph",),
    distribution="langgraph",
    extra="langgraph",
    adapter="resume_audit.frameworks.langgraph.adapter:LangGraphAdapter",
    entrypoints="resume_audit.frameworks.langgraph.entrypoints:DISCOVERY",
    conformance="resume_audit.frameworks.langgraph.conformance:probes",
    takes_saver=True,
)
