"""Stage 1 of a scan: which files are the project's, and what module each one is."""
