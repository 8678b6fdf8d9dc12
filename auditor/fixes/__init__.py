"""``resume-audit fix``: the rules' automatic fixes, the edits they share, and applying them."""
