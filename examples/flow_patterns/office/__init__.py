"""The office workflow: an agent that returns deposits and books expenses."""
