"""The dynamic stage: run a user's graph under instrumented savers, crash it, resume it, check the contract."""
