"""The sweep's parent side: planning cells, starting children, sharding, turning verdicts into findings."""
