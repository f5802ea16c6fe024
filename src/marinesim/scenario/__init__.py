"""marinesim.scenario."""
