"""Shared pieces of the topic plan: names, frames, the planned-topic record, common layouts."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from marinesim.io.mcap.cdr import Layout

__all__ = ["ATMOSPHERE_PA", "WORLD", "WORLD_NED", "Batch", "Topic", "ros_name"]

#: Surface pressure added to ρ g depth in ``sensor_msgs/FluidPressure`` [Pa].
ATMOSPHERE_PA = 101_325.0
WORLD = "map"
WORLD_NED = "map_ned"
_PALETTE = [
    (0.12, 0.47, 0.71),
    (1.0, 0.5, 0.05),
    (0.17, 0.63, 0.17),
    (0.84, 0.15, 0.16),
    (0.58, 0.4, 0.74),
    (0.55, 0.34, 0.29),
    (0.89, 0.47, 0.76),
    (0.5, 0.5, 0.5),
]
_TRACK_POINTS = 2000  # at most this many track points per vehicle and chunk


def ros_name(name: str) -> str:
    """A vehicle name as a ROS name token: ``rov[0]`` → ``rov_0``."""
    s = re.sub(r"[^A-Za-z0-9_]", "_", str(name)).strip("_")
    s = re.sub(r"_+", "_", s) or "vehicle"
    return s if not s[0].isdigit() else f"v_{s}"


@dataclass
class Batch:
    """Encoded messages of one topic: times [s] and CDR payloads."""

    topic: str
    pkg_type: str
    t: np.ndarray
    data: list[bytes]


@dataclass
class Topic:
    """One planned topic.

    Attributes
    ----------
    name, pkg_type, frame : str
        Topic, ``package/Type`` and header frame.
    source : str
        The signals it is made of (documentation).
    needs : list of str
        Signals read; frames where the first one is not finite are skipped.
    build : callable
        ``build(t, sig) -> dict`` of layout field values for the kept frames, where
        ``sig[name]`` is a (T, k) array.
    layout : Layout
    rate_hz : float or None
        Sensor rate: only frames that start a new sensor period are written.
    static : bool
        Latched (``/tf_static``).
    """

    name: str
    pkg_type: str
    frame: str
    source: str
    needs: list[str]
    build: Callable[[np.ndarray, dict[str, np.ndarray]], dict[str, Any]]
    layout: Layout
    row: int | None = None
    rate_hz: float | None = None
    static: bool = False
    per_chunk: bool = False
    _last_t: float | None = field(default=None, repr=False)


# layouts of the message types ---------------------------------------------------------------
def _header(lay: Layout, frame: str, pre: str = "") -> None:
    lay.field(pre + "sec", "int32")
    lay.field(pre + "nanosec", "uint32")
    lay.string(frame)


def _odometry(frame: str, child: str) -> Layout:
    lay = Layout()
    _header(lay, frame)
    lay.string(child)
    lay.field("pos", "float64", 3)
    lay.field("quat", "float64", 4)
    lay.field("pose_cov", "float64", 36)
    lay.field("lin", "float64", 3)
    lay.field("ang", "float64", 3)
    lay.const("float64", *([0.0] * 36))
    return lay


def _quat_xyzw(q_wxyz: np.ndarray) -> np.ndarray:
    return q_wxyz[..., [1, 2, 3, 0]]


def _yaw_quat(yaw: np.ndarray) -> np.ndarray:
    z = np.zeros_like(yaw)
    return np.stack([z, z, np.sin(yaw / 2), np.cos(yaw / 2)], axis=-1)  # x, y, z, w


def _unique(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for n in names:
        k = seen.get(n, 0)
        seen[n] = k + 1
        out.append(n if k == 0 else f"{n}_{k}")
    return out
