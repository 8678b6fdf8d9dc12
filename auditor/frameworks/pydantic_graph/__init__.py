"""pydantic-graph: everything resume-audit knows about it, static and dynamic, in one folder."""
