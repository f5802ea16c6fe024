"""marinesim.environment."""
