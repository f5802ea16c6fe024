"""marinesim.actuators."""
