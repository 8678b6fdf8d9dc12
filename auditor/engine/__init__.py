"""The static scan as a sequence of stages: discovery, reading, analysis (pooled, cached), post-processing."""
