"""LlamaIndex Workflows: everything resume-audit knows about them, static and dynamic, in one folder.

- ``names``        the static stage's knowledge (what rules ask)
- ``entrypoints``  the programs ``audit`` sweeps: ``Workflow`` subclasses
- ``adapter``      the dynamic stage's adapter (imports llama-index-workflows: loaded on use)
- ``conformance``  its rows of the conformance matrix

:data:`FRAMEWORK` is its registry record (:mod:`resume_audit.frameworks.registry`); importing this package
imports neither the framework nor LibCST. ``llamaindex-workflows`` is an older spelling some rules still use.
"""

from resume_audit.frameworks.registry import Framework

FRAMEWORK = Framework(
    id="llamaindex",
    display_name="LlamaIndex Workflows",
    import_names=("workflows", "llama_index"),
    distribution="llama-index-workflows",
    extra="llamaindex",
    adapter="resume_audit.frameworks.llamaindex.adapter:LlamaIndexAdapter",
    entrypoints="resume_audit.frameworks.llamaindex.entrypoints:DISCOVERY",
    conformance="resume_audit.frameworks.llamaindex.conformance:probes",
    aliases=("llamaindex-workflows",),
)
