"""marinesim.sensors."""
