"""The SURFTRAK harness run: ardusub_surftrak's ``sitl_runner.py`` reproduced in marinesim.

``run_surftrak`` drives the ``sitl_vertical`` vehicle (:mod:`marinesim.models.heave`) with
ArduSub's vertical autopilot (:class:`~marinesim.control.surftrak.ArduSubVertical`) at 400 Hz,
injects one rangefinder reading per terrain row (SURFTRAK spec §11.1), switches to SURFTRAK
after the 10th reading, and logs CTUN rows at 10 Hz (§13).

The loop runs over time only; everything per vehicle is batched over N.  For N = 1 the state
values are Python floats (the same code path with a cheaper number type, see
:mod:`marinesim.control.posz`), which is what makes a 150 s run take a fraction of a second.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from marinesim.control.pilot import PilotScript
from marinesim.control.surftrak import SURFTRAK, ArduSubVertical, GcsMessage, SurftrakParams
from marinesim.core.errors import ConfigError, ConfigWarning
from marinesim.core.params import validate
from marinesim.core.rng import BlockRNG, check_seed
from marinesim.environment.terrain import (
    BUILTIN_PROFILES,
    TerrainProfile,
    builtin_profile,
    parse_profile,
)
from marinesim.models.heave import HeaveParams, step_zv
from marinesim.sensors.pipeline import DelayLine
from marinesim.sensors.rangefinder import RangefinderParams, inject

__all__ = [
    "CTUN_COLUMNS",
    "RUN_COLUMNS",
    "STAMPED_COLUMNS",
    "SurftrakResult",
    "load_terrain",
    "run_surftrak",
    "sitl_params",
    "track_metrics",
]

DT = 0.0025
TICK_US = 2500
#: Columns of the run log written by ``marinesim surftrak run -o``.
RUN_COLUMNS = (
    "t", "terrain", "true_altitude", "DAlt", "Alt", "TAlt", "DSAlt", "SAlt", "DCRt", "CRt",
    "healthy", "mode_state",
)  # fmt: skip
#: ArduSub CTUN field order (the SITL-compatible ``ctun.csv`` export).
CTUN_COLUMNS = (
    "timestamp", "TimeUS", "ThI", "ABst", "ThO", "ThH", "DAlt", "Alt", "BAlt", "DSAlt", "SAlt",
    "TAlt", "DCRt", "CRt",
)  # fmt: skip
#: Stamped rangefinder log (one row per injected reading).
STAMPED_COLUMNS = ("TimeUS", "terrain_cm", "sub_cm", "rf_cm", "signal_quality")
#: ``mode_state`` codes.
MODE_STATES = {0: "ALT_HOLD", 1: "SURFTRAK reset (no target)", 2: "SURFTRAK tracking", 3: "pilot"}


def sitl_params() -> SurftrakParams:
    """The harness's ``params/sitl.params`` (shipped as package data): PSC_JERK_Z 8,
    PILOT_ACCEL_Z 500, RNGFND1 0.5…50 m, SURFTRAK_DEPTH −100 cm; ArduSub defaults otherwise."""
    import warnings
    from importlib import resources

    from marinesim.interop.ardupilot import parse_params_text, surftrak_params

    ref = resources.files("marinesim.environment").joinpath("data", "surftrak", "sitl.params")
    pf = parse_params_text(ref.read_text(encoding="utf-8"), file="<builtin>/sitl.params")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return surftrak_params(pf)[0]


def load_terrain(spec: str | Path | TerrainProfile) -> TerrainProfile:
    """A profile from a file path or one of the six shipped names."""
    if isinstance(spec, TerrainProfile):
        return spec
    s = str(spec)
    if s in BUILTIN_PROFILES:
        return builtin_profile(s)
    p = Path(s)
    if not p.exists():
        from marinesim.core.errors import UnknownNameError

        if p.suffix == "" and "/" not in s:
            raise UnknownNameError("terrain profile", s, BUILTIN_PROFILES)
        raise ConfigError(f"terrain file not found: {s}", param="terrain")
    return parse_profile(p.read_text(encoding="utf-8"), name=p.stem, file=p)


@dataclass
class SurftrakResult:
    """Outcome of :func:`run_surftrak`.

    Attributes
    ----------
    columns : dict of str → ndarray (N, T)
        CTUN-style log (10 Hz) with the columns of :data:`RUN_COLUMNS` and :data:`CTUN_COLUMNS`
        plus ``BAlt``, ``true_alt``, ``RFTarget``.
    stamped : dict of str → ndarray (N, R)
        Stamped rangefinder rows (:data:`STAMPED_COLUMNS`).
    messages : list of GcsMessage
        GCS texts with sim time.
    metrics : dict
        Per-vehicle tracking metrics of vehicle 0 (see :func:`track_metrics`).
    trace : dict of str → ndarray (N, K) or None
        400 Hz trace when requested.
    """

    terrain: TerrainProfile
    params: SurftrakParams
    rangefinder: RangefinderParams
    seed: int
    duration: float
    columns: dict[str, np.ndarray]
    stamped: dict[str, np.ndarray]
    messages: list[GcsMessage]
    metrics: dict[str, float] = field(default_factory=dict)
    trace: dict[str, np.ndarray] | None = None
    autopilot: Any = None
    ignored_params: list[str] = field(default_factory=list)

    @property
    def n(self) -> int:
        """Number of vehicles."""
        return int(self.columns["t"].shape[0])

    def frame(self, vehicle: int = 0) -> Any:
        """The CTUN-style log of one vehicle as a pandas DataFrame."""
        import pandas as pd

        return pd.DataFrame({k: v[vehicle] for k, v in self.columns.items()})

    @property
    def log(self) -> Any:
        """DataFrame of vehicle 0 with :data:`RUN_COLUMNS`."""
        return self.frame(0)[list(RUN_COLUMNS)]

    def texts(self, vehicle: int = 0) -> list[str]:
        """Message texts of one vehicle, in order."""
        return [m.text for m in self.messages if m.vehicle == vehicle]


def _pilot_sticks(pilot: PilotScript | None, nsteps: int) -> np.ndarray | None:
    if pilot is None or not pilot.times:
        return None
    return pilot.sample(np.arange(nsteps) * DT)


def run_surftrak(
    terrain: str | Path | TerrainProfile = "sawtooth",
    *,
    delay: float = 0.3,
    noise: float = 0.05,
    duration: float = 150.0,
    seed: int = 0,
    params: SurftrakParams | None = None,
    pilot: PilotScript | None = None,
    start_z: float = -11.15,
    mode: int = SURFTRAK,
    switch_after: int = 10,
    n: int = 1,
    heave: HeaveParams | None = None,
    rangefinder: RangefinderParams | None = None,
    t_inject0: float | None = None,
    events: Sequence[tuple[float, Callable[[ArduSubVertical], None]]] = (),
    thrust_override: Callable[[float, Any], Any] | None = None,
    trace: bool = False,
    contact_floor: float | None = None,
    scripts: Sequence[Callable[[ArduSubVertical], None]] = (),
) -> SurftrakResult:
    """Run the SURFTRAK harness.

    Parameters
    ----------
    terrain : str, Path or TerrainProfile
        Profile file or shipped name (zeros, trapezoid, sawtooth, square, stress,
        test_signal_quality).
    delay : float
        Rangefinder delay (s).
    noise : float
        Rangefinder noise σ (m).
    duration : float
        Simulated time (s).
    seed : int
        Root seed; vehicle i draws from stream ``entity_key(0, "vehicle", i, "rangefinder")``.
    params : SurftrakParams, optional
        ArduSub parameters (default: the harness's ``sitl.params``, :func:`sitl_params`).
    pilot : PilotScript, optional
        Throttle stick timeline (default: centred).
    start_z : float
        Initial z (m, up), at rest and trimmed, in ALT_HOLD.
    mode : int
        Mode switched to after the ``switch_after``-th reading (21 SURFTRAK, 2 ALT_HOLD).
    n : int
        Vehicles (independent noise streams, same terrain).
    heave : HeaveParams, optional
        Vehicle (default ``sitl_vertical``).
    rangefinder : RangefinderParams, optional
        Overrides ``delay``/``noise`` when given.
    t_inject0 : float, optional
        Time of the first reading (default: ``delay``, rounded to the 2.5 ms tick).
    events : sequence of (t, callable)
        Calls ``fn(autopilot)`` at the first loop with time ≥ t (scripting hooks).
    thrust_override : callable, optional
        ``fn(t, thrust) -> thrust`` applied to the vehicle's thrust (tests: hold the thrusters).
    trace : bool
        Record a 400 Hz trace (t, pos_target, off_target, z, vz, target, limit, at_bottom,
        at_surface, healthy, filt, dist; cm units as in ArduSub).
    scripts : sequence of callables
        Periodic scripts ``fn(autopilot)`` with a ``period`` attribute (s), e.g.
        :class:`~marinesim.control.surftrak.KeepTarget` (``surftrak2``) or
        :class:`~marinesim.control.surftrak.ButtonTargets` (``surftrak_buttons``); run at
        t = 0, period, 2·period, … (after the events of that loop).
    contact_floor : float, optional
        A hard floor (m, up) above the terrain that the vehicle rests on while the rangefinder
        still sees the terrain (e.g. a ledge); default: the terrain itself.

    Returns
    -------
    SurftrakResult
    """
    seed = check_seed(seed)
    if n < 1:
        raise ConfigError(f"n must be >= 1, got {n}", param="n")
    if not (math.isfinite(duration) and duration >= DT):
        raise ConfigError(
            f"duration must be a finite number of seconds >= {DT} (one loop), got {duration}",
            param="duration",
        )
    prof = load_terrain(terrain)
    params = params or sitl_params()
    heave = heave or HeaveParams()
    rf = rangefinder or validate(RangefinderParams, {"delay": delay, "noise_std": noise})
    if not -1e4 < start_z <= 0.0:
        raise ConfigError(
            f"start z must be <= 0 m (z up, 0 = surface), got {start_z}", param="start_z"
        )
    if start_z < float(prof.heights[0]):
        raise ConfigError(
            f"start z {start_z} m is below the seafloor ({prof.heights[0]} m)", param="start_z"
        )
    if params.kpv > 1.0:
        warnings.warn(
            ConfigWarning(
                f"KPv = 50*PSC_JERK_Z/PILOT_ACCEL_Z = {params.kpv:.2f} > 1.0: with a delayed "
                "rangefinder the depth may oscillate (ardusub_surftrak recommends about 0.8, "
                "e.g. PSC_JERK_Z 8, PILOT_ACCEL_Z 500)",
                param="PILOT_ACCEL_Z",
            ),
            stacklevel=2,
        )
    if rf.geometry_source not in ("truth", "belief"):
        raise ConfigError(
            f"geometry_source must be 'truth' or 'belief', got {rf.geometry_source!r}",
            param="rangefinder.geometry_source",
        )
    interval_ticks = prof.interval / DT
    if abs(interval_ticks - round(interval_ticks)) > 1e-6:
        raise ConfigError(
            f"terrain interval {prof.interval} s is not a multiple of the 2.5 ms loop",
            param="terrain",
        )
    iv = int(round(interval_ticks))
    t0 = rf.delay if t_inject0 is None else t_inject0
    if t0 < 0:
        raise ConfigError(f"t_inject0 must be >= 0 s, got {t0}", param="t_inject0")
    k0 = int(round(t0 / DT))
    nsteps = int(round(duration / DT))
    attrib0 = k0 * DT - rf.delay  # time row 0 describes

    # --- vehicles: floats for N = 1, arrays otherwise (same code)
    scalar = n == 1
    thr0 = 0.5 + heave.hover_thrust / 2.0
    if scalar:
        z, v, a = float(start_z), 0.0, 0.0
        zc, vc, ac, thr = z * 100.0, 0.0, 0.0, thr0
    else:
        z, v, a = np.full(n, float(start_z)), np.zeros(n), np.zeros(n)
        zc, vc, ac, thr = z * 100.0, v * 100.0, a * 100.0, np.full(n, thr0)
    ap = ArduSubVertical(params, zc, vc, ac, thr, DT)

    rng = BlockRNG.for_entities(seed, 0, "vehicle", range(n), "rangefinder", block=1024)
    # belief z = truth + baro/EKF noise (sitl_vertical option; SITL fused a baro, sigma 0.01 m)
    baro: list[Any] | None = None
    if heave.baro_noise_m > 0:
        brng = BlockRNG.for_entities(seed, 0, "vehicle", range(n), "baro", block=nsteps + 1)
        draws = heave.baro_noise_m * 100.0 * brng.normal(size=nsteps + 1)  # (N, K) cm
        baro = draws[0].tolist() if scalar else list(draws.T)
        zc = zc + baro[0]
    geo_belief = rf.geometry_source == "belief"
    zline = DelayLine(n, 1, DT, rf.delay + 2 * DT)
    stick_arr = _pilot_sticks(pilot, nsteps)
    sticks = None if stick_arr is None else stick_arr.tolist()
    climbs = None if stick_arr is None else ap.climb_from_stick(stick_arr).tolist()
    floor_arr = prof.height_at(np.arange(nsteps + 1) * DT, start=attrib0)
    floor_tick = floor_arr.tolist()
    contact = floor_tick if contact_floor is None else np.maximum(floor_arr, contact_floor).tolist()
    rows = prof.rows
    nrow = len(rows)

    nlog = (nsteps + 39) // 40
    cols = {name: np.zeros((n, nlog)) for name in (
        "t", "ThI", "ThO", "DAlt", "Alt", "BAlt", "DSAlt", "SAlt", "TAlt", "DCRt", "CRt",
        "terrain", "healthy", "mode_state",
    )}  # fmt: skip
    nmsg = 0 if nsteps <= k0 else (nsteps - 1 - k0) // iv + 1
    st = {name: np.zeros((n, nmsg)) for name in STAMPED_COLUMNS}
    tr: dict[str, list[Any]] | None = (
        {
            k2: []
            for k2 in (
                "t",
                "pos_target",
                "off_target",
                "z",
                "vz",
                "target",
                "limit",
                "at_bottom",
                "at_surface",
                "healthy",
                "filt",
                "dist",
                "stick",
            )
        }
        if trace
        else None
    )
    ev = sorted(events, key=lambda e: e[0])
    script_ticks = []
    for fn in scripts:
        per = getattr(fn, "period", None)
        if per is None or per <= 0 or abs(per / DT - round(per / DT)) > 1e-6:
            raise ConfigError(f"script {fn!r} needs a 'period' that is a multiple of 2.5 ms")
        script_ticks.append((int(round(per / DT)), fn))
    ev_i = 0
    switch_tick = k0 + (switch_after - 1) * iv if switch_after > 0 else -1
    li = 0
    mi = 0
    zeros_n = np.zeros(n)
    for k in range(nsteps):
        t = k * DT
        ap.now_us = float(k * TICK_US)
        zline.push(zc * 0.01 if geo_belief else z)
        # rangefinder message (harness injection) at its send time
        if k >= k0 and (k - k0) % iv == 0:
            j = (k - k0) // iv
            rowv = rows[j % nrow]
            zd = zline.read(rf.delay)[:, 0]
            normal = rng.normal(size=1)[:, 0]
            rd = inject(rf, zeros_n + rowv, zd, normal)
            st["TimeUS"][:, mi] = int(round((t - rf.delay) * 1e6))
            st["terrain_cm"][:, mi] = rowv * 100.0
            st["sub_cm"][:, mi] = zd * 100.0
            st["rf_cm"][:, mi] = rd.distance_cm
            st["signal_quality"][:, mi] = rd.quality
            mi += 1
            if scalar:
                if rd.sent[0]:
                    ap.handle_distance_sensor(
                        True, float(rd.distance_cm[0]), rf.msg_min_cm, rf.msg_max_cm,
                        float(rd.quality[0]),
                    )  # fmt: skip
            elif rd.sent.any():
                ap.handle_distance_sensor(
                    rd.sent, rd.distance_cm, rf.msg_min_cm, rf.msg_max_cm, rd.quality
                )
        if k % 20 == 0:
            ap.z = zc
            ap.rangefinder_cycle()
        if k == switch_tick:
            ap.z, ap.vz, ap.az = zc, vc, ac
            ap.set_mode(mode)
        while ev_i < len(ev) and ev[ev_i][0] <= t + 1e-9:
            ap.z, ap.vz, ap.az = zc, vc, ac
            ev[ev_i][1](ap)
            ev_i += 1
        for every, fn in script_ticks:
            if k % every == 0:
                ap.z, ap.vz, ap.az = zc, vc, ac
                fn(ap)
        if climbs is None:
            stick, climb = 500.0, 0.0
        else:
            stick, climb = sticks[k], climbs[k]
        thrust = ap.run_climb(climb, zc, vc, ac)
        ap.detect(z, v)
        if k % 40 == 0:
            h = ap.health
            tgt = ap.target_cm
            cols["t"][:, li] = t
            cols["ThI"][:, li] = ap.zctl.throttle
            cols["ThO"][:, li] = ap.motors.throttle
            cols["DAlt"][:, li] = ap.zctl.pos_target * 0.01
            cols["Alt"][:, li] = zc * 0.01
            cols["BAlt"][:, li] = z
            cols["DSAlt"][:, li] = tgt * 0.01
            cols["SAlt"][:, li] = h.distance_cm * 0.01
            cols["TAlt"][:, li] = h.terrain_offset_cm * 0.01
            cols["DCRt"][:, li] = ap.zctl.vel_target
            cols["CRt"][:, li] = vc
            cols["terrain"][:, li] = floor_tick[k]
            cols["healthy"][:, li] = ap.rangefinder_alt_ok()
            if ap.mode == SURFTRAK:
                ms = 1.0 + (tgt > 0) + 1.0 * ap.pilot_in_control
            else:
                ms = 0.0
            cols["mode_state"][:, li] = ms
            li += 1
        if tr is not None:
            tr["t"].append(t)
            tr["pos_target"].append(ap.zctl.pos_target)
            tr["off_target"].append(ap.zctl.off_target)
            tr["z"].append(zc)
            tr["vz"].append(vc)
            tr["target"].append(ap.target_cm)
            tr["limit"].append(ap.motors.limit)
            tr["at_bottom"].append(ap.detector.at_bottom)
            tr["at_surface"].append(ap.detector.at_surface)
            tr["healthy"].append(ap.rangefinder_alt_ok())
            tr["filt"].append(ap.health.filt_cm)
            tr["dist"].append(ap.health.distance_cm)
            tr["stick"].append(stick)
        if thrust_override is not None:
            thrust = thrust_override(t, thrust)
        z, v, a = step_zv(heave, z, v, thrust, contact[k + 1], DT)
        zc, vc, ac = z * 100.0, v * 100.0, a * 100.0
        if baro is not None:
            zc = zc + baro[k + 1]

    # int16 truncation of the climb rates
    cols["DCRt"] = np.trunc(cols["DCRt"])
    cols["CRt"] = np.trunc(cols["CRt"])
    cols["timestamp"] = cols["t"].copy()
    cols["TimeUS"] = np.round(cols["t"] * 1e6)
    cols["ABst"] = np.zeros_like(cols["t"])
    cols["ThH"] = np.full_like(cols["t"], 0.5)
    cols["true_alt"] = cols["BAlt"] - cols["terrain"]
    cols["true_altitude"] = cols["true_alt"]
    cols["RFTarget"] = cols["DSAlt"]
    trace_arr = None
    if tr is not None:
        trace_arr = {
            k2: np.asarray(v2, dtype=float).reshape(len(v2), -1).T.reshape(-1, len(v2))
            for k2, v2 in tr.items()
        }
    res = SurftrakResult(
        terrain=prof,
        params=params,
        rangefinder=rf,
        seed=seed,
        duration=duration,
        columns=cols,
        stamped=st,
        messages=list(ap.messages),
        trace=trace_arr,
        autopilot=ap,
    )
    res.metrics = track_metrics(res, 0)
    return res


def track_metrics(res: SurftrakResult, vehicle: int = 0) -> dict[str, float]:
    """Tracking metrics of one vehicle (SURFTRAK spec §15).

    e = true altitude − DSAlt at the CTUN rows (10 Hz, the times the readings describe)
    from engagement (first row with DSAlt > 0) on, where a target is held.

    Returns
    -------
    dict
        ``engage_t`` (s, NaN if never), ``target`` (m, first), ``rms_e``, ``max_e``,
        ``min_e``, ``max_abs_e`` (m), ``crt_min``, ``crt_max`` (cm/s), ``n_targets``,
        ``crt_var`` ((cm/s)²) and ``rf_error_sum`` (m) over the CTUN rows.
    """
    c = {k: v[vehicle] for k, v in res.columns.items()}
    ds = c["DSAlt"]
    engaged = np.flatnonzero(ds > 0)
    out: dict[str, float] = {"engage_t": math.nan, "target": math.nan}
    crt = c["CRt"]
    out["crt_min"] = float(crt.min())
    out["crt_max"] = float(crt.max())
    out["crt_var"] = float(np.var(crt, ddof=1)) if len(crt) > 1 else math.nan
    out["rf_error_sum"] = float(np.abs(c["SAlt"] - ds).sum())
    out["n_targets"] = float(
        sum(
            1
            for m in res.messages
            if m.vehicle == vehicle and m.text.startswith("rangefinder target is")
        )
    )
    if len(engaged):
        i0 = engaged[0]
        out["engage_t"] = float(c["t"][i0])
        out["target"] = float(ds[i0])
        sel = np.arange(len(ds)) >= i0
        sel &= ds > 0
        e = c["true_alt"][sel] - ds[sel]
        out["rms_e"] = float(np.sqrt(np.mean(e * e)))
        out["max_e"] = float(e.max())
        out["min_e"] = float(e.min())
        out["max_abs_e"] = float(np.abs(e).max())
    else:
        for k in ("rms_e", "max_e", "min_e", "max_abs_e"):
            out[k] = math.nan
    return out
