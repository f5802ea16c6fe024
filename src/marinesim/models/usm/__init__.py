"""The uSimMarine kinematic model, split by idea; :mod:`marinesim.models.kinematic` is its
public face (every public name is importable from there)."""
