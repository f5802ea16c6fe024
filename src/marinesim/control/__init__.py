"""marinesim.control."""
