"""ArduPilot SITL ``--model JSON`` backend: marinesim physics for the real ArduSub firmware.

* :mod:`~marinesim.interop.sitl.protocol` — servo packets, replies, SITL's parser and clock;
* :mod:`~marinesim.interop.sitl.frame` — ArduSub frames, servo channels, motor directions;
* :mod:`~marinesim.interop.sitl.plugin` — the ``sitl_servo`` engine controller;
* :mod:`~marinesim.interop.sitl.plant` — a scenario stepped one tick per servo frame;
* :mod:`~marinesim.interop.sitl.lockstep` — frame bookkeeping (repeats, gaps, restarts);
* :mod:`~marinesim.interop.sitl.server` — the UDP loop (port 9002 + 10·instance).

Importing this package registers the ``sitl_servo`` controller plugin.
"""

from __future__ import annotations

from marinesim.core import registry

__all__ = ["register_plugins"]


def register_plugins() -> None:
    """Register ``controller/sitl_servo`` (idempotent)."""
    registry.register(
        "controller", "sitl_servo", "marinesim.interop.sitl.plugin:SitlServo", replace=True
    )


register_plugins()
