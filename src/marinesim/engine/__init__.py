"""marinesim.engine."""
