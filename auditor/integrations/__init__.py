"""Where resume-audit meets other tools: the GitHub Action, review suggestions, SARIF baselines, pytest."""
