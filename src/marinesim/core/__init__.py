"""Layer 0: state, frames, geodesy, parameters, registry, random streams and errors."""
