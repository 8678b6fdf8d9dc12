"""CrewAI Flows: everything resume-audit knows about them, static and dynamic, in one folder.

- ``names``        the static stage's knowledge (what rules ask)
- ``entrypoints``  the programs ``audit`` sweeps: ``Flow`` subclasses
- ``adapter``      the dynamic stage's adapter (imports CrewAI: loaded on use)
- ``conformance``  its rows of the conformance matrix

:data:`FRAMEWORK` is its registry record (:mod:`resume_audit.frameworks.registry`); importing this package
imports neither CrewAI nor LibCST.
"""

from resume_audit.frameworks.registry import Framework

FRAMEWORK = Framework(
    id="crewai",
    display_name="CrewAI Flows",
    import_names=("crewai",),
    distribution="crewai",
    extra="crewai",
    adapter="resume_audit.frameworks.crewai.adapter:CrewAIAdapter",
    entrypoints="resume_audit.frameworks.crewai.entrypoints:DISCOVERY",
    conformance="resume_audit.frameworks.crewai.conformance:probes",
)
