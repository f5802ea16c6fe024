"""marinesim.engine.plugins."""
