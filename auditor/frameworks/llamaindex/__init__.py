"""LlamaIndex Workflows: everything resume-audit knows about them, static and dynamic, in one folder."""
