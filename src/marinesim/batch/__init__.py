"""marinesim.batch."""
