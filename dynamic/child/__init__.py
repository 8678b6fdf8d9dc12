"""The sweep's child side: confinement, the user's program under instrumentation, one role, one result."""
