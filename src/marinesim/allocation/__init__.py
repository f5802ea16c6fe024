"""marinesim.allocation."""
