"""Runs as ROS 2 topics: a rosbag2-compatible MCAP log and a live Foxglove WebSocket view.

* :mod:`~marinesim.io.mcap.frames` — NED/FRD ↔ ENU/FLU at the ROS boundary;
* :mod:`~marinesim.io.mcap.msgdefs` — the ``ros2msg`` definitions of the types written;
* :mod:`~marinesim.io.mcap.cdr` — vectorised CDR encoding of a chunk of frames;
* :mod:`~marinesim.io.mcap.topics` — which topics a run has, and their content
  (:mod:`~marinesim.io.mcap.base`: names, frames, common layouts;
  :mod:`~marinesim.io.mcap.devices`: the sensor, actuator and battery topics);
* :mod:`~marinesim.io.mcap.writer` — ``log.mcap``, streamed one MCAP chunk per flush;
* :mod:`~marinesim.io.mcap.reader` — reading it back (also without its summary section);
* :mod:`~marinesim.io.mcap.live` — the same channels served over the Foxglove WebSocket protocol.

Needs the ``mcap`` extra (``pip install marinesim[mcap]``: ``mcap``, ``mcap-ros2-support``,
``foxglove-sdk``).
"""

from __future__ import annotations

import importlib.util

from marinesim.core.errors import ConfigError

__all__ = ["require"]

_EXTRAS = {
    "mcap": (("mcap", "mcap"), ("mcap_ros2", "mcap-ros2-support")),
    "foxglove": (("foxglove", "foxglove-sdk"),),
}


def require(extra: str, param: str = "--format") -> None:
    """Raise a ConfigError naming ``pip install 'marinesim[extra]'`` when a package is missing."""
    missing = [dist for mod, dist in _EXTRAS[extra] if importlib.util.find_spec(mod) is None]
    if missing:
        raise ConfigError(
            f"{', '.join(missing)} not installed: pip install 'marinesim[{extra}]'", param=param
        )
