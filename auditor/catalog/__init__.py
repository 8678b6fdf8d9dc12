"""Every rule id the tool can report, its metadata and documentation, known without importing the rules."""
