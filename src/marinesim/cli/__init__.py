"""marinesim.cli."""
