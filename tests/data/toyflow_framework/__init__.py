"""ToyFlow: a made-up framework, registered at test time to prove a framework is one folder and one
registry line (tests/test_framework_registry.py; docs/developing-frameworks.md walks through it)."""

from resume_audit.frameworks.registry import Framework

FRAMEWORK = Framework(
    id="toyflow",
    display_name="ToyFlow",
    import_names=("toyflow",),
    distribution="toyflow",
    extra="toyflow",
    adapter="toyflow_framework.adapter:ToyFlowAdapter",
    entrypoints="toyflow_framework.entrypoints:DISCOVERY",
    conformance="toyflow_framework.conformance:probes",
)
