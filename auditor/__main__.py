"""``python -m auditor`` runs the resume-audit command line."""

from auditor.cli import main

main()
