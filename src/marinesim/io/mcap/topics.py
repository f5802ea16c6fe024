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
from typing import Any

import numpy as np

from marinesim.io.mcap.base import (
    _PALETTE,
    _TRACK_POINTS,
    ATMOSPHERE_PA,
    WORLD,
    WORLD_NED,
    Batch,
    Topic,
    _header,
    _odometry,
    _quat_xyzw,
    _unique,
    _yaw_quat,
    ros_name,
)
from marinesim.io.mcap.cdr import Layout, stamps
from marinesim.io.mcap.devices import DeviceTopics
from marinesim.io.mcap.frames import (
    Q_ENU_NED,
    euler_ned_to_enu_quat,
    frd_to_flu,
    heading_to_enu_yaw,
    ned_to_enu,
)

__all__ = ["ATMOSPHERE_PA", "Batch", "RunTopics", "Topic", "ros_name"]


class RunTopics(DeviceTopics):
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
