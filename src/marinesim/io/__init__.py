"""marinesim.io."""
