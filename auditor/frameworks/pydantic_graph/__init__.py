"""pydantic-graph: everything resume-audit knows about it, static and dynamic, in one folder.

- ``names``        the static stage's knowledge (what rules ask)
- ``entrypoints``  the programs ``audit`` sweeps: module-level ``Graph(nodes=...)``
- ``adapter``      the dynamic stage's adapter (imports pydantic-graph: loaded on use)
- ``conformance``  its rows of the conformance matrix

:data:`FRAMEWORK` is its registry record (:mod:`resume_audit.frameworks.registry`); importing this package
imports neither pydantic-graph nor LibCST.
"""

from resume_audit.frameworks.registry import Framework

FRAMEWORK = Framework(
    id="pydantic-graph",
    display_name="pydantic-graph",
    import_names=("pydantic_graph",),
    distribution="pydantic-graph",
    extra="pydantic-graph",
    adapter="resume_audit.frameworks.pydantic_graph.adapter:PydanticGraphAdapter",
    entrypoints="resume_audit.frameworks.pydantic_graph.entrypoints:DISCOVERY",
    conformance="resume_audit.frameworks.pydantic_graph.conformance:probes",
)
