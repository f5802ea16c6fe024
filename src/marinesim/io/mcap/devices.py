"""Per-vehicle device topics: IMU, pressure, GPS, DVL, rangefinder, wrenches, thrusters,
battery and the Foxglove location fix (a part of :class:`~marinesim.io.mcap.topics.RunTopics`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from marinesim.core.units import G0, RHO_SEAWATER
from marinesim.io.mcap.base import _PALETTE, ATMOSPHERE_PA, Topic, _header
from marinesim.io.mcap.cdr import Layout, stamps
from marinesim.io.mcap.frames import frd_to_flu

__all__ = ["DeviceTopics"]


def _navsat_layout(v: str) -> Layout:
    """``sensor_msgs/NavSatFix`` of vehicle ``v``: status fix/GPS, lat and lon, no altitude."""
    lay = Layout()
    _header(lay, f"{v}/gps")
    lay.const("int8", 0)
    lay.const("uint16", 1)
    lay.field("lat", "float64")
    lay.field("lon", "float64")
    lay.const("float64", 0.0)
    lay.const("float64", *([0.0] * 9))
    lay.const("uint8", 0)
    return lay


class DeviceTopics:
    """Builders of the device topics; mixed into ``RunTopics`` (uses its ``plugins``,
    ``geo`` and ``_width``)."""

    plugins: dict[str, list[dict[str, Any]]]
    geo: Any
    _width: dict[str, int]

    def _by_kind(self, block: str, kind: str, plugin: str | None = None) -> list[dict[str, Any]]:
        return [
            p
            for p in self.plugins.get(block, [])
            if p.get("kind") == kind and (plugin is None or p.get("plugin") == plugin)
        ]

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
            elif kind == "latlon":  # a program's own published lat/long (uSimMarine NAV_LAT)

                def ll_build(t: np.ndarray, sig: dict[str, np.ndarray], s_: Any = s_) -> dict:
                    s, ns = stamps(t)
                    ll = sig[s_("latlon")]
                    return {"sec": s, "nanosec": ns, "lat": ll[:, 0], "lon": ll[:, 1]}

                out.append(
                    Topic(
                        f"/{v}/gps/fix",
                        "sensor_msgs/NavSatFix",
                        f"{v}/gps",
                        f"{nm}.latlon (the published latitude, longitude)",
                        [s_("latlon")],
                        ll_build,
                        _navsat_layout(v),
                        row,
                        rate,
                    )
                )
            elif kind == "gps" and self.geo is not None:
                lay = _navsat_layout(v)

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
