"""marinesim.interop."""
