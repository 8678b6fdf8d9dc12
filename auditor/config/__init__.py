"""Configuration: ``[tool.resume-audit]`` settings and which settings apply to which file."""
