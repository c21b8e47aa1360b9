"""Two approvals at once, answered in the terminal."""
