"""Stage 3 of a scan: one parse per module, the facts every rule reads, and the per-module summaries."""
