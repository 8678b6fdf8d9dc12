"""``python -m resume_audit.cli`` runs the command line, as ``python -m resume_audit`` does."""

from resume_audit.cli import main

main()
