"""``rangefinder`` sensor plugin: the ardusub_surftrak harness's down-facing rangefinder.

Wraps :mod:`marinesim.sensors.rangefinder` on the sensor chain's delay line
(:class:`marinesim.sensors.pipeline.DelayLine`): every tick the truth z is recorded; on the
message ticks (every ``interval`` from ``t_inject0``) one terrain row is injected with the
geometry of t − delay (SURFTRAK spec §11.1).  Publishes on the entity's local bus, one row per
vehicle and message: ``rangefinder/distance_cm`` (−1 for a dropout row: nothing is sent) and
``rangefinder/signal_quality``; logs ``rf_cm``, ``signal_quality``, ``terrain`` (true seafloor
z under the vehicle, m, up).  One normal per row and vehicle is drawn from the plugin's stream.
The terrain is one of the shipped profiles (package data), or ``terrain: environment``: the
scenario's ``environment.terrain`` (flat or gridded bathymetry) under the vehicle's true
north/east, with one reading every ``interval`` s; the reading sent at t describes the
geometry (vehicle z and the seafloor under it) at t − delay.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from marinesim.core.errors import ConfigError
from marinesim.core.params import field
from marinesim.engine.plugin import Plugin
from marinesim.environment.terrain import BUILTIN_PROFILES, TerrainProfile, builtin_profile
from marinesim.sensors.pipeline import DelayLine
from marinesim.sensors.rangefinder import RangefinderParams, inject

__all__ = ["RangefinderSensor", "RangefinderSensorParams", "terrain_schedule"]


class RangefinderSensorParams(RangefinderParams):
    """Harness rangefinder + terrain (defaults: 0.3 s delay, σ 0.05 m, 10 Hz from the file)."""

    terrain: str = field(
        "sawtooth",
        description="shipped terrain profile name, a profile file, or 'environment' "
        "(scenario terrain)",
    )
    t_inject0: float | None = field(None, unit="s", description="first reading (default: delay)")
    interval: float = field(
        0.1, unit="s", description="time between readings with terrain 'environment'", gt=0
    )


#: ``terrain`` value that uses the scenario's ``environment.terrain``.
ENVIRONMENT = "environment"


def terrain_schedule(
    terrain: str,
    delay: float,
    t_inject0: float | None,
    dt: float,
    interval: float = 0.1,
    *,
    profile: TerrainProfile | None = None,
) -> tuple[Any, int, int]:
    """(profile, first message tick, ticks between messages) for a shipped profile.

    With ``terrain == 'environment'`` the profile is None and ``interval`` (s) sets the rate;
    a ``profile`` object (Python API) replaces the shipped name.
    """
    if t_inject0 is not None and t_inject0 < 0:
        raise ConfigError(f"t_inject0 must be >= 0 s, got {t_inject0}", param="t_inject0")
    if profile is None and terrain == ENVIRONMENT:
        iv = interval / dt
        if abs(iv - round(iv)) > 1e-6 or round(iv) < 1:
            raise ConfigError(
                f"rangefinder interval {interval} s is not a multiple of dt", param="interval"
            )
        t0 = delay if t_inject0 is None else t_inject0
        return None, int(round(t0 / dt)), int(round(iv))
    if profile is None and terrain not in BUILTIN_PROFILES:
        if not _looks_like_file(terrain):
            raise ConfigError(
                f"terrain {terrain!r} is not a shipped profile ({', '.join(BUILTIN_PROFILES)}), "
                "'environment' (the scenario's environment.terrain) or a profile file "
                "(.csv/.txt: the interval, then one height per row)",
                param="terrain",
            )
        from pathlib import Path

        from marinesim.environment.terrain import read_profile

        if not Path(terrain).is_file():
            raise ConfigError(f"terrain profile file {terrain!r} not found", param="terrain")
        profile = read_profile(terrain)  # DataError with file:line for a bad row
    prof = builtin_profile(terrain) if profile is None else profile
    iv = prof.interval / dt
    if abs(iv - round(iv)) > 1e-6:
        raise ConfigError(
            f"terrain interval {prof.interval} s is not a multiple of the {dt * 1e3:g} ms tick",
            param="terrain",
        )
    t0 = delay if t_inject0 is None else t_inject0
    return prof, int(round(t0 / dt)), int(round(iv))


def _looks_like_file(terrain: str) -> bool:
    return "/" in terrain or "\\" in terrain or terrain.lower().endswith((".csv", ".txt"))


class RangefinderSensor(Plugin):
    """Down-facing rangefinder as injected by the ardusub_surftrak SITL harness."""

    kind: ClassVar[str] = "sensor"
    Params = RangefinderSensorParams
    publishes: ClassVar[dict[str, str]] = {
        "rangefinder/distance_cm": "double",
        "rangefinder/signal_quality": "double",
    }

    def __init__(self, name: str, params: Any = None) -> None:
        super().__init__(name, params)
        #: A terrain profile object instead of a shipped name (Python API, set before the run).
        self.profile: TerrainProfile | None = None

    def start(self, ctx: Any, rng: Any) -> None:
        """Build the delay line and the message schedule."""
        p: Any = self.params
        if p.geometry_source not in ("truth", "belief"):
            raise ConfigError(
                f"geometry_source must be 'truth' or 'belief', got {p.geometry_source!r}",
                param="geometry_source",
            )
        prof, k0, iv = terrain_schedule(
            p.terrain, p.delay, p.t_inject0, ctx.dt, p.interval, profile=self.profile
        )
        if prof is None and not getattr(ctx.env, "has_terrain", False):
            raise ConfigError(
                "rangefinder terrain 'environment' needs environment.terrain in the scenario",
                param="terrain",
            )
        ctx.state["profile"] = prof
        ctx.state["k0"], ctx.state["iv"] = k0, iv
        ctx.state["line"] = DelayLine(
            ctx.n, 1 if prof is not None else 2, ctx.dt, p.delay + 2 * ctx.dt
        )
        ctx.state["rf"] = RangefinderParams(
            **{k: getattr(p, k) for k in RangefinderParams.model_fields}
        )
        ctx.state["attrib0"] = k0 * ctx.dt - p.delay

    def compiled_laws(self, slot: Any, sim: Any) -> Any:
        """The generated tick's declaration (with ``sitl_vertical``, see
        :mod:`~marinesim.engine.plugins.surftrak_laws`; with ``fossen6dof``, see
        :mod:`~marinesim.engine.plugins.rangefinder_laws`)."""
        motion = next(
            (s for s in sim.slots if s.block is slot.block and s.plugin.kind == "motion"), None
        )
        if motion is not None and type(motion.plugin).__name__ == "SixDofMotion":
            from marinesim.engine.plugins.rangefinder_laws import sixdof_sensor_laws

            return sixdof_sensor_laws(self, slot, sim)
        from marinesim.engine.plugins.surftrak_laws import sensor_laws

        return sensor_laws(self, slot, sim)

    def sense(self, ctx: Any, rng: Any) -> None:
        """Record truth z; inject a terrain row on message ticks."""
        st = ctx.state
        geo = ctx.belief if st["rf"].geometry_source == "belief" else ctx.truth
        z = -geo.pos[:, 2]
        k = int(round((ctx.t - 0.0) / ctx.dt))
        prof = st["profile"]
        if prof is None:
            self._sense_environment(ctx, rng, z, k)
            return
        st["line"].push(z)
        j = max(int(np.floor((ctx.t - st["attrib0"]) / prof.interval + 1e-9)), 0)
        ctx.log("terrain", np.full(ctx.n, prof.heights[j % len(prof.heights)]), "m")
        if k < st["k0"] or (k - st["k0"]) % st["iv"]:
            return
        j = (k - st["k0"]) // st["iv"]
        row = float(prof.rows[j % len(prof.rows)])
        rf: RangefinderParams = st["rf"]
        zd = st["line"].read(rf.delay)[:, 0]
        normal = rng.normal(size=1)[:, 0]
        rd = inject(rf, np.full(ctx.n, row), zd, normal)
        ctx.publish("rangefinder/distance_cm", rd.distance_cm)
        ctx.publish("rangefinder/signal_quality", rd.quality)
        ctx.log("rf_cm", rd.distance_cm, "cm")
        ctx.log("signal_quality", rd.quality, "%")
        ctx.log("sub_cm", zd * 100.0, "cm")
        ctx.log("terrain_cm", np.full(ctx.n, row * 100.0), "cm")

    def _sense_environment(self, ctx: Any, rng: Any, z: np.ndarray, k: int) -> None:
        """``terrain: environment``: seafloor from ``ctx.env`` under the true north/east."""
        st = ctx.state
        pos = ctx.truth.pos
        floor = -np.asarray(ctx.env.seafloor_depth(pos[:, 0], pos[:, 1]), float)  # z up
        st["line"].push(np.stack([z, floor], axis=1))
        ctx.log("terrain", floor, "m")
        if k < st["k0"] or (k - st["k0"]) % st["iv"]:
            return
        rf: RangefinderParams = st["rf"]
        past = st["line"].read(rf.delay)
        zd, row = past[:, 0], np.minimum(past[:, 1], 0.0)  # a real height, never a sentinel
        normal = rng.normal(size=1)[:, 0]
        rd = inject(rf, row, zd, normal)
        ctx.publish("rangefinder/distance_cm", rd.distance_cm)
        ctx.publish("rangefinder/signal_quality", rd.quality)
        ctx.log("rf_cm", rd.distance_cm, "cm")
        ctx.log("signal_quality", rd.quality, "%")
