"""Which ROS 2 topics a run has, and their encoding, chunk by chunk (engine signals → CDR).

:class:`RunTopics` looks at the run's manifest (entities, plugins by block and kind) and at the
signals the recorder has seen, and plans one topic per (vehicle, message) the run can fill;
:meth:`RunTopics.encode` turns one recorder chunk into :class:`Batch` es of encoded messages.
Header stamps are the frame times (simulation time, 0 s at the start, as ``/clock`` gives it);
a vehicle's name becomes a ROS name (``rov[0]`` → ``rov_0``).  Frames (REP-103/105): ``map`` is
the ENU world at the scenario origin, ``map_ned`` the same origin in NED; ``<v>/base_link`` the
FLU body, ``<v>/base_link_frd`` the FRD body; ``/tf_static`` links each pair.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from marinesim.core.units import G0, RHO_SEAWATER
from marinesim.io.mcap.cdr import Layout, stamps
from marinesim.io.mcap.frames import (
    Q_ENU_NED,
    euler_ned_to_enu_quat,
    frd_to_flu,
    heading_to_enu_yaw,
    ned_to_enu,
)

__all__ = ["ATMOSPHERE_PA", "Batch", "RunTopics", "Topic", "ros_name"]

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


class RunTopics:
    """The topics of one run and their chunk-wise encoding.

    Parameters
    ----------
    entities : list of dict
        The run's entity rows (name, block, ...).
    manifest : dict
        The run manifest (``plugins``; ``origin`` [lat, lon] for the geographic topics).
    """

    def __init__(self, entities: list[dict[str, Any]], manifest: dict[str, Any]) -> None:
        self.entities = list(entities)
        self.names = _unique([ros_name(e["name"]) for e in self.entities])
        self.plugins: dict[str, list[dict[str, Any]]] = {}
        for p in manifest.get("plugins", []) or []:
            self.plugins.setdefault(str(p.get("block", "")), []).append(p)
        origin = manifest.get("origin")
        self.geo: Any = None
        if origin is not None and len(origin) == 2:
            from marinesim.core.geodesy import MoosGeodesy

            self.geo = MoosGeodesy(float(origin[0]), float(origin[1]))
        self.topics: dict[str, Topic] = {}
        self._seen: set[str] = set()
        self._track_last: dict[int, np.ndarray] = {}
        self._width: dict[str, int] = {}

    # planning ---------------------------------------------------------------------------
    def update(self, meta: dict[str, Any]) -> list[Topic]:
        """Plan the topics of the signals in ``meta`` (name → (unit, labels)); return new ones."""
        self._width.update({n: len(lab) for n, (_u, lab) in meta.items()})
        return self.plan(meta)

    def plan(self, signals: Any) -> list[Topic]:
        """Add the topics that ``signals`` (names seen so far) make possible; return new ones."""
        names = set(signals)
        if names <= self._seen:
            return []
        self._seen |= names
        new: list[Topic] = []

        def add(topic: Topic) -> None:
            if topic.name not in self.topics and all(n.split("#")[0] in names for n in topic.needs):
                self.topics[topic.name] = topic
                new.append(topic)

        for t in self._world_topics():
            add(t)
        for row, ent in enumerate(self.entities):
            for t in self._vehicle_topics(row, ent, names):
                add(t)
        return new

    def _by_kind(self, block: str, kind: str, plugin: str | None = None) -> list[dict[str, Any]]:
        return [
            p
            for p in self.plugins.get(block, [])
            if p.get("kind") == kind and (plugin is None or p.get("plugin") == plugin)
        ]

    def _world_topics(self) -> list[Topic]:
        n = len(self.entities)
        clock = Layout()
        clock.field("sec", "int32")
        clock.field("nanosec", "uint32")

        def clock_build(t: np.ndarray, sig: dict[str, np.ndarray]) -> dict[str, Any]:
            s, ns = stamps(t)
            return {"sec": s, "nanosec": ns}

        tf = Layout()
        tf.count(n)
        for i, v in enumerate(self.names):
            _header(tf, WORLD, f"{i}.")
            tf.string(f"{v}/base_link")
            tf.field(f"{i}.pos", "float64", 3)
            tf.field(f"{i}.quat", "float64", 4)

        def tf_build(t: np.ndarray, sig: dict[str, np.ndarray]) -> dict[str, Any]:
            s, ns = stamps(t)
            out: dict[str, Any] = {}
            for i in range(n):
                pos, quat = self._truth_pose(i, sig)
                out.update({f"{i}.sec": s, f"{i}.nanosec": ns, f"{i}.pos": pos, f"{i}.quat": quat})
            return out

        static = Layout()
        static.count(1 + n)
        _header(static, WORLD, "w.")
        static.string(WORLD_NED)
        static.const("float64", 0.0, 0.0, 0.0)
        static.const("float64", *_quat_xyzw(Q_ENU_NED))
        for i, v in enumerate(self.names):
            _header(static, f"{v}/base_link", f"{i}.")
            static.string(f"{v}/base_link_frd")
            static.const("float64", 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)  # half turn about x

        def static_build(t: np.ndarray, sig: dict[str, np.ndarray]) -> dict[str, Any]:
            s, ns = stamps(t)
            out = {"w.sec": s, "w.nanosec": ns}
            for i in range(n):
                out.update({f"{i}.sec": s, f"{i}.nanosec": ns})
            return out

        scene = self._scene_layout()
        return [
            Topic(
                "/clock",
                "rosgraph_msgs/Clock",
                "",
                "frame times",
                ["truth.pos"],
                clock_build,
                clock,
            ),
            Topic(
                "/tf",
                "tf2_msgs/TFMessage",
                WORLD,
                "truth.pos, attitude of every vehicle",
                ["truth.pos"],
                tf_build,
                tf,
            ),
            Topic(
                "/tf_static",
                "tf2_msgs/TFMessage",
                WORLD,
                "map → map_ned, <v>/base_link → <v>/base_link_frd",
                ["truth.pos"],
                static_build,
                static,
                static=True,
            ),
            Topic(
                "/scene",
                "foxglove_msgs/SceneUpdate",
                WORLD,
                "an arrow and a label per vehicle at its truth pose",
                ["truth.pos"],
                self._scene_build,
                scene,
            ),
            Topic(
                "/scene/tracks",
                "foxglove_msgs/SceneUpdate",
                WORLD,
                "each vehicle's truth track, one line strip per log chunk",
                ["truth.pos"],
                lambda t, s: {},
                Layout(),
                per_chunk=True,
            ),
        ]

    def _truth_pose(self, row: int, sig: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """ENU position (T, 3) and ROS quaternion (T, 4, xyzw) of vehicle ``row``."""
        pos = ned_to_enu(sig[f"truth.pos#{row}"])
        eul = sig.get(f"euler#{row}")
        head = sig[f"truth.heading#{row}"][:, 0]
        if eul is not None and np.isfinite(eul).all():
            r = np.deg2rad(eul)
            quat = _quat_xyzw(euler_ned_to_enu_quat(r[:, 0], r[:, 1], r[:, 2]))
        else:
            quat = _yaw_quat(heading_to_enu_yaw(head))
        return pos, quat

    def _scene_layout(self) -> Layout:
        lay = Layout()
        lay.count(0)  # deletions
        lay.count(len(self.entities))
        for i, v in enumerate(self.names):
            c = _PALETTE[i % len(_PALETTE)]
            lay.field(f"{i}.sec", "int32")
            lay.field(f"{i}.nanosec", "uint32")
            lay.string(WORLD)
            lay.string(v)
            lay.const("int32", 0)
            lay.const("uint32", 0)  # lifetime 0: until replaced
            lay.const("bool", 0)
            lay.count(0)  # metadata
            lay.count(1)  # one arrow
            lay.field(f"{i}.pos", "float64", 3)
            lay.field(f"{i}.quat", "float64", 4)
            lay.const("float64", 3.0, 0.5, 1.0, 1.2)  # shaft length, diameter; head length, d.
            lay.const("float64", *c, 1.0)
            for _ in range(4):  # cubes, spheres, cylinders, lines
                lay.count(0)
            lay.count(0)  # triangles
            lay.count(1)  # one text label
            lay.field(f"{i}.label_pos", "float64", 3)
            lay.const("float64", 0.0, 0.0, 0.0, 1.0)
            lay.const("bool", 1)  # billboard
            lay.const("float64", 14.0)
            lay.const("bool", 1)  # font size in pixels
            lay.const("float64", *c, 1.0)
            lay.string(v)
            lay.count(0)  # models
        return lay

    def _scene_build(self, t: np.ndarray, sig: dict[str, np.ndarray]) -> dict[str, Any]:
        s, ns = stamps(t)
        out: dict[str, Any] = {}
        for i in range(len(self.entities)):
            pos, quat = self._truth_pose(i, sig)
            label = pos + np.array([0.0, 0.0, 2.0])
            out.update(
                {
                    f"{i}.sec": s,
                    f"{i}.nanosec": ns,
                    f"{i}.pos": pos,
                    f"{i}.quat": quat,
                    f"{i}.label_pos": label,
                }
            )
        return out

    def _vehicle_topics(self, row: int, ent: dict[str, Any], names: set[str]) -> list[Topic]:
        block = str(ent.get("block", ""))
        v = self.names[row]
        base = f"{v}/base_link"
        out: list[Topic] = []
        motion = self._by_kind(block, "motion")
        m = motion[0]["name"] if motion else None

        def sig_of(name: str) -> str:
            return f"{name}#{row}"

        # truth and belief odometry
        def truth_build(t: np.ndarray, sig: dict[str, np.ndarray]) -> dict[str, Any]:
            pos, quat = self._truth_pose(row, sig)
            nu = sig.get(f"nu#{row}")
            lin = np.zeros_like(pos)
            ang = np.zeros_like(pos)
            if nu is not None and np.isfinite(nu).all():
                lin, ang = frd_to_flu(nu[:, 0:3]), frd_to_flu(nu[:, 3:6])
            else:
                lin[:, 0] = sig[sig_of("truth.speed")][:, 0]
            s, ns = stamps(t)
            return {
                "sec": s,
                "nanosec": ns,
                "pos": pos,
                "quat": quat,
                "pose_cov": np.zeros((len(t), 36)),
                "lin": lin,
                "ang": ang,
            }

        src = "truth.pos, truth.heading, truth.speed"
        if m and f"{m}.euler" in names:
            src = f"truth.pos, {m}.euler, {m}.nu"
        out.append(
            Topic(
                f"/{v}/odom/truth",
                "nav_msgs/Odometry",
                WORLD,
                src,
                [sig_of("truth.pos"), sig_of("truth.heading"), sig_of("truth.speed")],
                truth_build,
                _odometry(WORLD, base),
                row=row,
            )
        )
        est = [p["name"] for p in self.plugins.get(block, []) if f"{p['name']}.pos_std" in names]

        def belief_build(t: np.ndarray, sig: dict[str, np.ndarray]) -> dict[str, Any]:
            pos = ned_to_enu(sig[sig_of("belief.pos")])
            quat = _yaw_quat(heading_to_enu_yaw(sig[sig_of("belief.heading")][:, 0]))
            cov = np.zeros((len(t), 36))
            std = sig.get(f"pos_std#{row}")
            if std is not None:
                var = ned_to_enu(std) ** 2
                cov[:, 0], cov[:, 7], cov[:, 14] = var[:, 0], var[:, 1], var[:, 2]
            s, ns = stamps(t)
            z = np.zeros_like(pos)
            return {
                "sec": s,
                "nanosec": ns,
                "pos": pos,
                "quat": quat,
                "pose_cov": cov,
                "lin": z,
                "ang": z,
            }

        out.append(
            Topic(
                f"/{v}/odom/belief",
                "nav_msgs/Odometry",
                WORLD,
                "belief.pos, belief.heading" + (f", {est[0]}.pos_std" if est else ""),
                [sig_of("belief.pos"), sig_of("belief.heading")],
                belief_build,
                _odometry(WORLD, base),
                row=row,
            )
        )
        out.extend(self._sensor_topics(row, block, v, names))
        out.extend(self._actuation_topics(row, block, v, m, names))
        if self.geo is not None:
            out.append(self._location_topic(row, v))
        return out

    def _sensor_topics(self, row: int, block: str, v: str, names: set[str]) -> list[Topic]:
        out: list[Topic] = []
        base = f"{v}/base_link"
        for p in self._by_kind(block, "sensor"):
            nm, kind, rate = p["name"], p.get("plugin"), p.get("rate_hz")

            def s_(sig: str, nm: str = nm) -> str:
                return f"{nm}.{sig}#{row}"

            if kind == "imu":
                lay = Layout()
                _header(lay, base)
                lay.const("float64", 0.0, 0.0, 0.0, 1.0)
                lay.const("float64", -1.0, *([0.0] * 8))  # orientation not given
                lay.field("gyro", "float64", 3)
                lay.const("float64", *([0.0] * 9))
                lay.field("accel", "float64", 3)
                lay.const("float64", *([0.0] * 9))

                def imu_build(t: np.ndarray, sig: dict[str, np.ndarray], s_: Any = s_) -> dict:
                    s, ns = stamps(t)
                    return {
                        "sec": s,
                        "nanosec": ns,
                        "accel": frd_to_flu(sig[s_("accel")]),
                        "gyro": frd_to_flu(sig[s_("gyro")]),
                    }

                out.append(
                    Topic(
                        f"/{v}/imu",
                        "sensor_msgs/Imu",
                        base,
                        f"{nm}.accel, {nm}.gyro (FRD → FLU)",
                        [s_("accel"), s_("gyro")],
                        imu_build,
                        lay,
                        row,
                        rate,
                    )
                )
            elif kind == "depth_sensor":
                lay = Layout()
                _header(lay, base)
                lay.field("pressure", "float64")
                lay.const("float64", 0.0)

                def p_build(t: np.ndarray, sig: dict[str, np.ndarray], s_: Any = s_) -> dict:
                    s, ns = stamps(t)
                    d = sig[s_("depth")][:, 0]
                    return {
                        "sec": s,
                        "nanosec": ns,
                        "pressure": ATMOSPHERE_PA + RHO_SEAWATER * G0 * d,
                    }

                out.append(
                    Topic(
                        f"/{v}/pressure",
                        "sensor_msgs/FluidPressure",
                        base,
                        f"{nm}.depth: p = 101325 Pa + ρ g depth",
                        [s_("depth")],
                        p_build,
                        lay,
                        row,
                        rate,
                    )
                )
            elif kind == "gps" and self.geo is not None:
                lay = Layout()
                _header(lay, f"{v}/gps")
                lay.const("int8", 0)
                lay.const("uint16", 1)
                lay.field("lat", "float64")
                lay.field("lon", "float64")
                lay.const("float64", 0.0)
                lay.const("float64", *([0.0] * 9))
                lay.const("uint8", 0)

                def g_build(t: np.ndarray, sig: dict[str, np.ndarray], s_: Any = s_) -> dict:
                    s, ns = stamps(t)
                    ne = sig[s_("ne")]
                    lat, lon = self.geo.local_to_latlon(ne[:, 1], ne[:, 0])
                    return {"sec": s, "nanosec": ns, "lat": lat, "lon": lon}

                out.append(
                    Topic(
                        f"/{v}/gps/fix",
                        "sensor_msgs/NavSatFix",
                        f"{v}/gps",
                        f"{nm}.ne (fixes only) at the scenario origin",
                        [s_("ne")],
                        g_build,
                        lay,
                        row,
                        rate,
                    )
                )
            elif kind == "dvl":
                lay = Layout()
                _header(lay, base)
                lay.field("vel", "float64", 3)
                lay.const("float64", 0.0, 0.0, 0.0)
                lay.const("float64", *([0.0] * 36))

                def d_build(t: np.ndarray, sig: dict[str, np.ndarray], s_: Any = s_) -> dict:
                    s, ns = stamps(t)
                    return {"sec": s, "nanosec": ns, "vel": frd_to_flu(sig[s_("vel")])}

                out.append(
                    Topic(
                        f"/{v}/dvl/twist",
                        "geometry_msgs/TwistWithCovarianceStamped",
                        base,
                        f"{nm}.vel (tracking only; FRD → FLU)",
                        [s_("vel")],
                        d_build,
                        lay,
                        row,
                        rate,
                    )
                )
                out.append(
                    self._range_topic(
                        f"/{v}/dvl/altitude",
                        f"{v}/dvl",
                        s_("altitude"),
                        1.0,
                        f"{nm}.altitude",
                        row,
                        rate,
                    )
                )
            elif kind == "rangefinder":
                out.append(
                    self._range_topic(
                        f"/{v}/rangefinder",
                        f"{v}/rangefinder",
                        s_("rf_cm"),
                        0.01,
                        f"{nm}.rf_cm / 100",
                        row,
                        None,
                    )
                )
        return out

    def _range_topic(
        self,
        name: str,
        frame: str,
        sig_name: str,
        scale: float,
        src: str,
        row: int,
        rate: float | None,
    ) -> Topic:
        lay = Layout()
        _header(lay, frame)
        lay.const("uint8", 0)  # ULTRASOUND (an acoustic ranger)
        lay.const("float32", 0.0, 0.0, math.inf)  # field of view, min and max range: not modelled
        lay.field("range", "float32")

        def build(t: np.ndarray, sig: dict[str, np.ndarray]) -> dict[str, Any]:
            s, ns = stamps(t)
            return {"sec": s, "nanosec": ns, "range": sig[sig_name][:, 0] * scale}

        return Topic(name, "sensor_msgs/Range", frame, src, [sig_name], build, lay, row, rate)

    def _actuation_topics(
        self, row: int, block: str, v: str, m: str | None, names: set[str]
    ) -> list[Topic]:
        out: list[Topic] = []
        base = f"{v}/base_link"

        def wrench(topic: str, sig_name: str, src: str) -> Topic:
            lay = Layout()
            _header(lay, base)
            lay.field("force", "float64", 3)
            lay.field("torque", "float64", 3)

            def build(t: np.ndarray, sig: dict[str, np.ndarray]) -> dict[str, Any]:
                s, ns = stamps(t)
                w = sig[sig_name]
                return {
                    "sec": s,
                    "nanosec": ns,
                    "force": frd_to_flu(w[:, 0:3]),
                    "torque": frd_to_flu(w[:, 3:6]),
                }

            return Topic(
                topic, "geometry_msgs/WrenchStamped", base, src, [sig_name], build, lay, row
            )

        for p in self._by_kind(block, "controller"):
            nm = p["name"]
            if f"{nm}.wrench" in names:
                out.append(
                    wrench(
                        f"/{v}/wrench/commanded", f"{nm}.wrench#{row}", f"{nm}.wrench (FRD → FLU)"
                    )
                )
            for sig, what in (("pwm", "pwm"), ("force", "force")):
                if p.get("plugin") == "thruster_allocator" and f"{nm}.{sig}" in names:
                    out.append(
                        self._array_topic(
                            f"/{v}/thrusters/{what}", f"{nm}.{sig}#{row}", names, f"{nm}.{sig}", row
                        )
                    )
        if m is not None:
            if f"{m}.wrench" in names:
                out.append(
                    wrench(f"/{v}/wrench/applied", f"{m}.wrench#{row}", f"{m}.wrench (FRD → FLU)")
                )
            if f"{m}.voltage" in names and f"{m}.current_total" in names:
                out.append(self._battery_topic(row, v, m, names))
        return out

    def _array_topic(self, topic: str, sig_name: str, names: set[str], src: str, row: int) -> Topic:
        k = self._width.get(sig_name.split("#")[0], 1)
        lay = Layout()
        lay.count(1)
        lay.string("thruster")
        lay.const("uint32", k)
        lay.const("uint32", k)
        lay.const("uint32", 0)
        lay.count(k)
        lay.field("data", "float64", k)

        def build(t: np.ndarray, sig: dict[str, np.ndarray]) -> dict[str, Any]:
            return {"data": sig[sig_name]}

        return Topic(topic, "std_msgs/Float64MultiArray", "", src, [sig_name], build, lay, row)

    def _battery_topic(self, row: int, v: str, m: str, names: set[str]) -> Topic:
        lay = Layout()
        _header(lay, f"{v}/battery")
        lay.field("voltage", "float32")
        lay.const("float32", math.nan)  # temperature
        lay.field("current", "float32")
        lay.const("float32", math.nan, math.nan, math.nan)  # charge, capacity, design capacity
        lay.field("percentage", "float32")
        lay.const("uint8", 2, 0, 0)  # discharging, health and technology unknown
        lay.const("bool", 1)
        lay.count(0)
        lay.count(0)
        lay.string("")
        lay.string("")
        has_soc = f"{m}.soc" in names

        def build(t: np.ndarray, sig: dict[str, np.ndarray]) -> dict[str, Any]:
            s, ns = stamps(t)
            soc = sig[f"{m}.soc#{row}"][:, 0] if has_soc else np.full(len(t), np.nan)
            return {
                "sec": s,
                "nanosec": ns,
                "voltage": sig[f"{m}.voltage#{row}"][:, 0],
                "current": -sig[f"{m}.current_total#{row}"][:, 0],
                "percentage": soc,
            }

        return Topic(
            f"/{v}/battery",
            "sensor_msgs/BatteryState",
            f"{v}/battery",
            f"{m}.voltage, −{m}.current_total (discharge < 0), {m}.soc",
            [f"{m}.voltage#{row}", f"{m}.current_total#{row}"]
            + ([f"{m}.soc#{row}"] if has_soc else []),
            build,
            lay,
            row,
        )

    def _location_topic(self, row: int, v: str) -> Topic:
        lay = Layout()
        lay.field("sec", "int32")
        lay.field("nanosec", "uint32")
        lay.string(f"{v}/base_link")
        lay.field("lat", "float64")
        lay.field("lon", "float64")
        lay.field("alt", "float64")
        lay.const("float64", *([0.0] * 9))
        lay.const("uint8", 0)
        lay.const("float64", *_PALETTE[row % len(_PALETTE)], 1.0)
        geo = self.geo

        def build(t: np.ndarray, sig: dict[str, np.ndarray]) -> dict[str, Any]:
            s, ns = stamps(t)
            pos = sig[f"truth.pos#{row}"]
            lat, lon = geo.local_to_latlon(pos[:, 1], pos[:, 0])
            return {"sec": s, "nanosec": ns, "lat": lat, "lon": lon, "alt": -pos[:, 2]}

        return Topic(
            f"/{v}/location",
            "foxglove_msgs/LocationFix",
            f"{v}/base_link",
            "truth.pos at the scenario origin (altitude = −depth)",
            [f"truth.pos#{row}"],
            build,
            lay,
            row,
        )

    # encoding --------------------------------------------------------------------------
    def encode(
        self, t: np.ndarray, values: dict[str, np.ndarray], meta: dict[str, Any], first: bool
    ) -> list[Batch]:
        """Encode the frames ``t`` (values (k, T, N) by signal) of every planned topic.

        ``first``: also the latched topics (``/tf_static``).
        """
        self.update(meta)
        t = np.asarray(t, dtype=float)
        out: list[Batch] = []
        for topic in self.topics.values():
            if topic.per_chunk or (topic.static and not first):
                continue
            sig = self._signals(topic, values)
            if sig is None:
                continue
            keep = np.ones(len(t), dtype=bool)
            if topic.needs and topic.row is not None:
                keep &= np.isfinite(sig[topic.needs[0]]).all(axis=1)
            if topic.rate_hz:
                keep &= self._new_period(topic, t)
            if topic.static:
                keep[:] = False
                keep[0] = True
            if not keep.any():
                continue
            sub = {k: a[keep] for k, a in sig.items()}
            vals = topic.build(t[keep], sub)
            out.append(
                Batch(topic.name, topic.pkg_type, t[keep], topic.layout.pack(int(keep.sum()), vals))
            )
        tracks = self._tracks(t, values)
        if tracks is not None:
            out.append(tracks)
        return out

    def _signals(self, topic: Topic, values: dict[str, np.ndarray]) -> dict[str, np.ndarray] | None:
        """(T, k) arrays by ``signal#row`` for the topic (all vehicles for the world topics)."""
        rows = [topic.row] if topic.row is not None else range(len(self.entities))
        sig: dict[str, np.ndarray] = {}
        for r in rows:
            block = str(self.entities[r].get("block", ""))
            wanted = {"truth.pos", "truth.heading", "truth.speed", "belief.pos", "belief.heading"}
            wanted |= {n.split("#")[0] for n in topic.needs}
            for n in wanted:
                if n in values:
                    sig[f"{n}#{r}"] = values[n][:, :, r].T
            motion = self._by_kind(block, "motion")
            if motion:
                for short in ("euler", "nu"):
                    full = f"{motion[0]['name']}.{short}"
                    if full in values:
                        sig[f"{short}#{r}"] = values[full][:, :, r].T
            for p in self.plugins.get(block, []):
                if f"{p['name']}.pos_std" in values:
                    sig[f"pos_std#{r}"] = values[f"{p['name']}.pos_std"][:, :, r].T
        need = (
            topic.needs
            if topic.row is not None
            else [f"truth.pos#{r}" for r in range(len(self.entities))]
        )
        if any(n not in sig for n in need):
            return None
        return sig

    @staticmethod
    def _new_period(topic: Topic, t: np.ndarray) -> np.ndarray:
        rate = float(topic.rate_hz or 0.0)
        k = np.floor(t * rate + 1e-6)
        prev = np.concatenate(
            [[np.nan if topic._last_t is None else math.floor(topic._last_t * rate + 1e-6)], k[:-1]]
        )
        topic._last_t = float(t[-1]) if len(t) else topic._last_t
        return k != prev

    def _tracks(self, t: np.ndarray, values: dict[str, np.ndarray]) -> Batch | None:
        """One ``SceneUpdate`` per chunk: each vehicle's track over the chunk (a line strip)."""
        if "truth.pos" not in values or len(t) == 0:
            return None
        lay = Layout()
        lay.count(0)
        lay.count(len(self.entities))
        vals: dict[str, Any] = {}
        s, ns = stamps(t[-1:])
        step = max(1, math.ceil(len(t) / _TRACK_POINTS))
        for i, v in enumerate(self.names):
            pos = ned_to_enu(values["truth.pos"][:, ::step, i].T)
            pos = pos[np.isfinite(pos).all(axis=1)]
            prev = self._track_last.get(i)
            if prev is not None:
                pos = np.concatenate([prev[None, :], pos])
            if len(pos):
                self._track_last[i] = pos[-1]
            lay.field(f"{i}.sec", "int32")
            lay.field(f"{i}.nanosec", "uint32")
            lay.string(WORLD)
            lay.string(f"{v}/track/{t[0]:.3f}")
            lay.const("int32", 0)
            lay.const("uint32", 0)
            lay.const("bool", 0)
            for _ in range(5):  # metadata, arrows, cubes, spheres, cylinders
                lay.count(0)
            lay.count(1)
            lay.const("uint8", 0)  # LINE_STRIP
            lay.const("float64", 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
            lay.const("float64", 2.0)
            lay.const("bool", 1)  # thickness in pixels
            lay.count(len(pos))
            if len(pos):
                lay.field(f"{i}.points", "float64", 3 * len(pos))
                vals[f"{i}.points"] = pos.reshape(1, -1)
            lay.const("float64", *_PALETTE[i % len(_PALETTE)], 1.0)
            lay.count(0)
            lay.count(0)
            for _ in range(3):  # triangles, texts, models
                lay.count(0)
            vals[f"{i}.sec"], vals[f"{i}.nanosec"] = s, ns
        return Batch("/scene/tracks", "foxglove_msgs/SceneUpdate", t[-1:], lay.pack(1, vals))

    def table(self) -> list[dict[str, str]]:
        """Planned topics: topic, type, frame, source (for listings and the docs)."""
        return [
            {"topic": tp.name, "type": tp.pkg_type, "frame": tp.frame, "source": tp.source}
            for tp in self.topics.values()
        ]


def _unique(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for n in names:
        k = seen.get(n, 0)
        seen[n] = k + 1
        out.append(n if k == 0 else f"{n}_{k}")
    return out
