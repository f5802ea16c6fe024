"""marinesim.interop.moos."""
