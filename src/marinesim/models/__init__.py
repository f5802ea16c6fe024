"""marinesim.models."""
