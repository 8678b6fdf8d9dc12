"""``python -m resume_audit`` runs the resume-audit command line."""

from resume_audit.cli import main

main()
