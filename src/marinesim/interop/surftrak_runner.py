"""The SURFTRAK harness run: ardusub_surftrak's ``sitl_runner.py`` reproduced in marinesim.

``run_surftrak`` drives the ``sitl_vertical`` vehicle (:mod:`marinesim.models.heave`) with
ArduSub's vertical autopilot (:class:`~marinesim.control.surftrak.ArduSubVertical`) at 400 Hz,
injects one rangefinder reading per terrain row (SURFTRAK spec §11.1), switches to SURFTRAK
after the 10th reading, and logs CTUN rows at 10 Hz (§13).

The loop runs over time only; everything per vehicle is batched over N.  For N = 1 the state
values are Python floats (the same code path with a cheaper number type, see
:mod:`marinesim.control.posz`), and when numba is installed the loop runs compiled
(:func:`_kernel`: the same pure control-law functions, compiled from their own source;
bit-identical logs; ≈ 0.03 s for a 150 s run instead of ≈ 1.3 s).  numba is optional.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from marinesim.control.depth_hold import althold_target, detector_step, motors_step
from marinesim.control.pilot import PilotScript
from marinesim.control.posz import climb_rate_step, update_step
from marinesim.control.rangefinder_health import alt_ok_of, health_step, message_step
from marinesim.control.surftrak import (
    SURFTRAK,
    ArduSubVertical,
    GcsMessage,
    SurftrakParams,
    offset_target_step,
    surface_bottom_step,
    take_step,
)
from marinesim.core.errors import ConfigError, ConfigWarning
from marinesim.core.params import validate
from marinesim.core.rng import BlockRNG, check_seed
from marinesim.environment.terrain import (
    BUILTIN_PROFILES,
    TerrainProfile,
    builtin_profile,
)
from marinesim.models.heave import HeaveParams, step_zv_raw
from marinesim.sensors.pipeline import DelayLine, delay_position
from marinesim.sensors.rangefinder import RangefinderParams, inject, inject_values

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
    from marinesim.environment.terrain import read_profile

    return read_profile(p)


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
    jit: bool | None = None,
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
    jit : bool, optional
        Compiled loop (numba) for single-vehicle runs without events, scripts, trace, thrust
        override or baro noise: ``None`` (default) uses it when numba is installed and
        ``MARINESIM_JIT`` is not ``0``, ``True`` requires it, ``False`` runs the Python path.
        Both run the same control-law functions and give bit-identical logs.

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
    from marinesim.core.limits import check_steps

    check_steps(duration, DT)  # at most MAX_SAMPLES loop steps (400 Hz)
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
    hcoef = heave.coefficients
    ev_i = 0
    switch_tick = k0 + (switch_after - 1) * iv if switch_after > 0 else -1
    li = 0
    mi = 0
    zeros_n = np.zeros(n)
    # one normal per reading and vehicle, drawn up front (the stream's values are the same)
    normals = rng.normal(size=nmsg) if nmsg else np.zeros((n, 0))
    kern = None
    fast_ok = not (ev or script_ticks or trace or thrust_override or baro is not None)
    if scalar and fast_ok and ap.armed and jit is not False:
        kern = _kernel_for(jit)
    elif jit:
        raise ConfigError(
            "jit=True needs a single vehicle without events, scripts, trace, thrust override or "
            "baro noise (those run on the Python path)",
            param="jit",
        )
    if kern is not None:
        tj = (k0 + np.arange(nmsg) * iv) * DT
        st["TimeUS"][:] = [int(round((t - rf.delay) * 1e6)) for t in tj.tolist()]
        st["terrain_cm"][:] = [rows[j % nrow] * 100.0 for j in range(nmsg)]
        run_args = _kernel_inputs(ap, rf, heave, geo_belief, rows, floor_tick, contact, climbs)
        log2d = np.zeros((len(_KLOG), nlog))
        for i, name in enumerate(_KLOG):
            cols[name] = log2d[i : i + 1]  # views: the Python steps write the same rows
        st2d = np.zeros((3, nmsg))
        for i, name in enumerate(_KST):
            st[name] = st2d[i : i + 1]
    jnext = 0  # first loop at which the kernel is tried again
    gap = 0
    resume = False  # the kernel did the front half of loop k
    k = 0
    while k < nsteps:
        if kern is not None and k >= jnext:
            sv = _pack(ap, (z, v, a, zc, vc, ac))
            counters = np.array([li, mi, zline.count], dtype=np.int64)
            try:
                kstop = kern(
                    k, nsteps, k0, iv, switch_tick, ap.mode == SURFTRAK, normals[0],
                    zline.buf[:, 0, 0], *run_args, sv, counters, log2d, st2d,
                )  # fmt: skip
            except Exception as exc:
                if jit or kern.signatures:  # required, or failed after compiling: report it
                    raise
                # numba could not compile it (nothing ran): the Python path from here on
                warnings.warn(
                    ConfigWarning(f"SURFTRAK compiled loop unavailable ({exc}); Python path"),
                    stacklevel=2,
                )
                _KERNEL_CACHE["kernel"] = kern = None
                continue
            z, v, a, zc, vc, ac = _unpack(ap, sv)
            li, mi, zline.count = (int(x) for x in counters)
            ran, k = kstop - k, kstop
            if k >= nsteps:
                break
            gap = 0 if ran >= 400 else min(2 * gap + 1, 400)
            jnext = k + 1 + gap
            resume = True
        t = k * DT
        ap.now_us = float(k * TICK_US)
        if resume:
            resume = False
        else:
            zline.push(zc * 0.01 if geo_belief else z)
            # rangefinder message (harness injection) at its send time
            if k >= k0 and (k - k0) % iv == 0:
                j = (k - k0) // iv
                rowv = rows[j % nrow]
                zd = zline.read(rf.delay)[:, 0]
                rd = inject(rf, zeros_n + rowv, zd, normals[:, mi])
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
        z, v, a = step_zv_raw(hcoef, z, v, thrust, contact[k + 1], DT)
        zc, vc, ac = z * 100.0, v * 100.0, a * 100.0
        if baro is not None:
            zc = zc + baro[k + 1]
        k += 1

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
    bad = [k2 for k2, v2 in cols.items() if np.isinf(np.asarray(v2, dtype=float)).any()]
    if bad:
        from marinesim.core.errors import NumericalError

        first = min(int(np.argmax(np.isinf(np.asarray(cols[k2], dtype=float)).any(axis=0)))
                    for k2 in bad)  # fmt: skip
        exc = NumericalError(
            f"{', '.join(bad[:4])} overflowed to infinity: the run is not valid",
            entity="surftrak",
            t=float(np.asarray(cols["t"])[0, first]) if np.ndim(cols["t"]) == 2 else None,
        )
        exc.result = res  # type: ignore[attr-defined]
        raise exc
    res.metrics = track_metrics(res, 0)
    return res


# --------------------------------------------------------------------------- compiled loop
#
# The harness loop for one vehicle as a plain function over floats and float arrays, calling
# the same pure control-law functions as the Python objects (posz, depth_hold,
# rangefinder_health, surftrak, heave, rangefinder, pipeline).  numba compiles this source and
# those functions (see _kernel_for); marinesim itself never imports numba.  The loop hands back
# to the Python objects (after the front half of loop k: message injection and the 20 Hz cycle)
# whenever something only they do is due: the mode switch and, in SURFTRAK, setting a
# rangefinder target (first target, pilot release), which sends GCS messages.

#: Log rows written by the kernel (same order as its ``log2d`` argument).
_KLOG = (
    "t", "ThI", "ThO", "DAlt", "Alt", "BAlt", "DSAlt", "SAlt", "TAlt", "DCRt", "CRt",
    "terrain", "healthy", "mode_state",
)  # fmt: skip
_KST = ("sub_cm", "rf_cm", "signal_quality")
#: Packed state: (object, attribute, is_bool); object None = the harness's (z, v, a, zc, vc, ac).
_STATE = (
    [(None, i, False) for i in range(6)]
    + [("ap", name, name == "pilot_in_control") for name in (
        "z", "vz", "az", "target_cm", "pilot_in_control", "pilot_start_z")]
    + [("zctl", name, name == "reset_filters") for name in (
        "pos_target", "vel_desired", "accel_desired", "off", "v_off", "a_off", "off_target",
        "limit", "e_p", "e_v", "vel_target", "accel_target", "i_acc", "ev_f", "ea_f",
        "reset_filters", "throttle")]
    + [("motors", name, False) for name in ("throttle", "thrust", "limit")]
    + [("detector", name, name != "count") for name in ("at_surface", "at_bottom", "count")]
    + [("health", name, name in ("alt_healthy", "have_offset")) for name in (
        "msg_dist", "msg_min", "msg_max", "msg_sq", "last_msg_us", "status", "distance_cm",
        "sq", "valid_count", "alt_healthy", "last_healthy_us", "filt_cm", "inertial_alt_cm",
        "terrain_offset_cm", "have_offset")]
)  # fmt: skip


def _owner(ap: ArduSubVertical, name: str | None) -> Any:
    return ap if name == "ap" else getattr(ap, str(name))


def _pack(ap: ArduSubVertical, harness: tuple[float, ...]) -> np.ndarray:
    """The state of a single-vehicle run as a float vector (layout :data:`_STATE`)."""
    out = np.empty(len(_STATE))
    for i, (obj, attr, _) in enumerate(_STATE):
        out[i] = harness[attr] if obj is None else float(getattr(_owner(ap, obj), attr))
    return out


def _unpack(ap: ArduSubVertical, sv: np.ndarray) -> tuple[float, ...]:
    """Write a packed state back into the objects; returns the harness's (z, v, a, zc, vc, ac)."""
    vals = sv.tolist()
    for (obj, attr, is_bool), x in zip(_STATE, vals, strict=True):
        if obj is not None:
            setattr(_owner(ap, obj), attr, bool(x) if is_bool else x)
    return tuple(vals[:6])


def _kernel_inputs(
    ap: ArduSubVertical,
    rf: RangefinderParams,
    heave: HeaveParams,
    geo_belief: bool,
    rows: Sequence[float],
    floor_tick: Sequence[float],
    contact: Sequence[float],
    climbs: Sequence[float] | None,
) -> tuple[Any, ...]:
    """Run constants of the kernel (after ``normals`` and ``zbuf`` in its arguments)."""
    p, h = ap.p, ap.health
    consts = np.array([
        float(p.SURFTRAK_DEPTH), float(p.SURFACE_DEPTH), rf.msg_min_cm, rf.msg_max_cm,
        rf.delay / DT, float(geo_belief), h.param_min, h.param_max, h.sq_min, float(h.enabled),
        ap.motors.a, ap.detector.surface_m,
    ])  # fmt: skip
    return (
        np.asarray(rows, float),
        np.asarray(floor_tick, float),
        np.asarray(contact, float),
        np.zeros(0) if climbs is None else np.asarray(climbs, float),
        consts,
        heave.coefficients,
        rf.coefficients,
        ap.gains.shaping,
        ap.gains.loops,
    )


def _kernel(
    k,
    nsteps,
    k0,
    iv,
    switch_tick,
    surftrak,
    normals,
    zbuf,
    rows,
    floor,
    contact,
    climbs,
    consts,
    hcoef,
    rfcoef,
    shaping,
    loops,
    sv,
    counters,
    log2d,
    st2d,
):  # noqa: ANN001, ANN202 (numba-compiled; types are floats, ints and float arrays)
    """Run loops k… of a single-vehicle harness until the end or a hand-back; returns the loop
    reached (its front half done when < nsteps).  ``sv``/``counters`` are updated in place."""
    surftrak_depth, surface_depth, msg_min_cm, msg_max_cm, back = (
        consts[0], consts[1], consts[2], consts[3], consts[4]
    )  # fmt: skip
    geo_belief, param_min, param_max, sq_min = consts[5] != 0.0, consts[6], consts[7], consts[8]
    enabled, motors_a, surface_m = consts[9] != 0.0, consts[10], consts[11]
    z, v, a, zc, vc, ac = sv[0], sv[1], sv[2], sv[3], sv[4], sv[5]
    ap_z, ap_vz, ap_az, target_cm = sv[6], sv[7], sv[8], sv[9]
    pic, pilot_start_z = sv[10] != 0.0, sv[11]
    pos_target, vel_desired, accel_desired, off, v_off, a_off, off_target = (
        sv[12], sv[13], sv[14], sv[15], sv[16], sv[17], sv[18]
    )  # fmt: skip
    z_limit, e_p, e_v, vel_target, accel_target, i_acc, ev_f, ea_f = (
        sv[19], sv[20], sv[21], sv[22], sv[23], sv[24], sv[25], sv[26]
    )  # fmt: skip
    reset_filters, z_throttle = sv[27] != 0.0, sv[28]
    m_throttle, m_thrust, m_limit = sv[29], sv[30], sv[31]
    at_surface, at_bottom, d_count = sv[32] != 0.0, sv[33] != 0.0, sv[34]
    msg_dist, msg_min, msg_max, msg_sq, last_msg_us = sv[35], sv[36], sv[37], sv[38], sv[39]
    status, distance_cm, sq, valid_count = sv[40], sv[41], sv[42], sv[43]
    alt_healthy, last_healthy_us, filt_cm = sv[44] != 0.0, sv[45], sv[46]
    inertial_alt_cm, terrain_offset_cm, have_offset = sv[47], sv[48], sv[49] != 0.0
    li, mi, zcount = counters[0], counters[1], counters[2]
    zsize = zbuf.shape[0]
    nrow = rows.shape[0]
    has_climbs = climbs.shape[0] > 0
    while k < nsteps:
        t = k * DT
        now_us = float(k * TICK_US)
        # ---- front half: delay line, injection, 20 Hz rangefinder cycle
        zbuf[zcount % zsize] = zc * 0.01 if geo_belief else z
        zcount += 1
        if k >= k0 and (k - k0) % iv == 0:
            rowv = rows[((k - k0) // iv) % nrow]
            i0, frac, interp = delay_position(zcount, zsize, back)
            zd = zbuf[i0 % zsize]
            if interp:
                zd = zd + (zbuf[(i0 + 1) % zsize] - zd) * frac
            sent, cm, q = inject_values(rowv, zd, normals[mi], rfcoef)
            st2d[0, mi] = zd * 100.0
            st2d[1, mi] = cm
            st2d[2, mi] = q
            mi += 1
            if sent:
                msg_dist, msg_min, msg_max, msg_sq, last_msg_us = message_step(
                    True, now_us, cm, msg_min_cm, msg_max_cm, q, param_min, param_max,
                    msg_dist, msg_min, msg_max, msg_sq, last_msg_us,
                )  # fmt: skip
        if k % 20 == 0:
            ap_z = zc
            (
                status, distance_cm, sq, valid_count, alt_healthy, filt_cm, last_healthy_us,
                terrain_offset_cm, have_offset,
            ) = health_step(
                now_us, ap_z, msg_dist, msg_min, msg_max, msg_sq, last_msg_us, valid_count,
                filt_cm, last_healthy_us, terrain_offset_cm, have_offset, sq_min,
            )  # fmt: skip
            inertial_alt_cm = ap_z
        # ---- hand back: mode switch, or a target to set (GCS messages)
        if k == switch_tick:
            break
        climb = climbs[k] if has_climbs else 0.0
        centred = abs(climb) < 0.05
        if surftrak:
            if centred and pic:
                break
            ok = alt_ok_of(alt_healthy, last_healthy_us, now_us, enabled)
            if (
                centred and not at_surface and not at_bottom and ok and target_cm <= 0
                and inertial_alt_cm < surftrak_depth
            ):  # fmt: skip
                break
        # ---- back half: ArduSubVertical.run_climb, detect, log, vehicle
        ap_z, ap_vz, ap_az = zc, vc, ac
        sat = m_limit != 0
        z_limit = m_limit
        if surftrak:
            other, pos_target, target_cm, off, off_target = surface_bottom_step(
                centred, at_surface, at_bottom, zc, pos_target, target_cm, off, off_target,
                surface_depth,
            )  # fmt: skip
            if other and alt_ok_of(alt_healthy, last_healthy_us, now_us, enabled):
                off_target = offset_target_step(
                    True, target_cm, terrain_offset_cm, off_target, surftrak_depth
                )
            pic, pilot_start_z = take_step(centred, target_cm, pic, zc, pilot_start_z)
        else:
            pos_target = althold_target(climb, pos_target, zc, at_surface, at_bottom, surface_depth)
        pos_target, vel_desired, accel_desired, off, v_off, a_off = climb_rate_step(
            climb, pos_target, vel_desired, accel_desired, off, v_off, a_off, off_target,
            z_limit, e_p, e_v, shaping,
        )  # fmt: skip
        (
            pos_target, e_p, vel_target, ev_f, accel_target, ea_f, i_acc, z_throttle,
        ) = update_step(
            zc, vc, ac, sat, pos_target, vel_desired, accel_desired, ev_f, ea_f, i_acc,
            reset_filters, loops,
        )  # fmt: skip
        e_v = ev_f
        reset_filters = False
        m_throttle, m_thrust, m_limit = motors_step(z_throttle, m_throttle, motors_a)
        at_surface, at_bottom, d_count = detector_step(
            z, v, m_limit, at_surface, at_bottom, d_count, surface_m
        )
        if k % 40 == 0:
            healthy = alt_ok_of(alt_healthy, last_healthy_us, now_us, enabled)
            log2d[0, li] = t
            log2d[1, li] = z_throttle
            log2d[2, li] = m_throttle
            log2d[3, li] = pos_target * 0.01
            log2d[4, li] = zc * 0.01
            log2d[5, li] = z
            log2d[6, li] = target_cm * 0.01
            log2d[7, li] = distance_cm * 0.01
            log2d[8, li] = terrain_offset_cm * 0.01
            log2d[9, li] = vel_target
            log2d[10, li] = vc
            log2d[11, li] = floor[k]
            log2d[12, li] = 1.0 if healthy else 0.0
            if surftrak:
                log2d[13, li] = 1.0 + (target_cm > 0) + 1.0 * pic
            else:
                log2d[13, li] = 0.0
            li += 1
        z, v, a = step_zv_raw(hcoef, z, v, m_thrust, contact[k + 1], DT)
        zc, vc, ac = z * 100.0, v * 100.0, a * 100.0
        k += 1
    sv[0], sv[1], sv[2], sv[3], sv[4], sv[5] = z, v, a, zc, vc, ac
    sv[6], sv[7], sv[8], sv[9] = ap_z, ap_vz, ap_az, target_cm
    sv[10], sv[11] = 1.0 if pic else 0.0, pilot_start_z
    sv[12], sv[13], sv[14], sv[15] = pos_target, vel_desired, accel_desired, off
    sv[16], sv[17], sv[18], sv[19] = v_off, a_off, off_target, z_limit
    sv[20], sv[21], sv[22], sv[23] = e_p, e_v, vel_target, accel_target
    sv[24], sv[25], sv[26] = i_acc, ev_f, ea_f
    sv[27], sv[28] = 1.0 if reset_filters else 0.0, z_throttle
    sv[29], sv[30], sv[31] = m_throttle, m_thrust, m_limit
    sv[32], sv[33], sv[34] = 1.0 if at_surface else 0.0, 1.0 if at_bottom else 0.0, d_count
    sv[35], sv[36], sv[37], sv[38], sv[39] = msg_dist, msg_min, msg_max, msg_sq, last_msg_us
    sv[40], sv[41], sv[42], sv[43] = status, distance_cm, sq, valid_count
    sv[44], sv[45], sv[46] = 1.0 if alt_healthy else 0.0, last_healthy_us, filt_cm
    sv[47], sv[48], sv[49] = inertial_alt_cm, terrain_offset_cm, 1.0 if have_offset else 0.0
    counters[0], counters[1], counters[2] = li, mi, zcount
    return k


#: Pure functions compiled for the kernel, in dependency order (module, names).
_JIT_FUNCTIONS = (
    ("marinesim.control.posz", (
        "where", "clamp", "half_power", "sqrt_controller", "shape_accel", "shape_vel_accel",
        "shape_pos_vel_accel", "update_pos_vel_accel", "climb_rate_step", "update_step")),
    ("marinesim.control.depth_hold", ("motors_step", "detector_step", "althold_target")),
    ("marinesim.control.rangefinder_health", (
        "map_signal_quality", "message_step", "health_step", "alt_ok_of")),
    ("marinesim.control.surftrak", (
        "reset_target", "surface_bottom_step", "offset_target_step", "take_step")),
    ("marinesim.models.heave", ("accel_raw", "step_zv_raw")),
    ("marinesim.sensors.rangefinder", ("inject_values",)),
    ("marinesim.sensors.pipeline", ("delay_position",)),
)  # fmt: skip
_KERNEL_CACHE: dict[str, Any] = {}


def _any_true_scalar(mask):  # noqa: ANN001, ANN202
    return mask


def _pick_scalar(cond, a, b):  # noqa: ANN001, ANN202
    return a if cond else b


def _libm_pow() -> Any:
    """The C library's ``pow`` (the one CPython's float ``**`` calls) for compiled code, or None.

    Registered with LLVM under its own symbol name, so that the compiler cannot recognise it
    as ``pow`` and rewrite ``pow(x, 0.5)`` as ``sqrt(x)`` (different in the last bit).
    """
    import ctypes
    import ctypes.util

    from llvmlite import binding
    from numba import types

    name = ctypes.util.find_library("m")
    if name is None:
        return None
    fn = ctypes.CDLL(name).pow
    binding.add_symbol("marinesim_libm_pow", ctypes.cast(fn, ctypes.c_void_p).value)
    return types.ExternalFunction("marinesim_libm_pow", types.float64(types.float64, types.float64))


def _half_power_libm(x):  # noqa: ANN001, ANN202
    return _cpow(x, 0.5)  # noqa: F821 (bound at compile time)


def _kernel_for(jit: bool | None) -> Any:
    """The compiled kernel, or None for the Python path (numba missing, or disabled).

    The pure functions listed in :data:`_JIT_FUNCTIONS` and :func:`_kernel` are compiled from
    their own source (their code objects) with numba; inside the compiled code ``any_true``
    and ``pick`` (numpy-array helpers) are bound to scalar versions.
    """
    import os

    if jit is None and os.environ.get("MARINESIM_JIT", "1") == "0":
        return None
    if "kernel" in _KERNEL_CACHE:
        return _KERNEL_CACHE["kernel"]
    try:
        import numba
    except ImportError:
        if jit:
            from marinesim.core.errors import DependencyNotInstalled

            raise DependencyNotInstalled("numba", "fast") from None
        return None
    kern = _compile_kernel(numba)  # lazily: numba compiles (or loads) at the first call
    _KERNEL_CACHE["kernel"] = kern
    return kern


def _compile_kernel(numba: Any) -> Any:
    """Compile the pure functions of :data:`_JIT_FUNCTIONS` and :func:`_kernel` with numba."""
    import importlib
    import types

    def compile_same_source(fn: Any, env: dict[str, Any], bound: dict[str, Any]) -> Any:
        glb = dict(env)
        glb.update(bound)
        copy = types.FunctionType(fn.__code__, glb, fn.__name__, fn.__defaults__)
        return numba.njit(cache=True)(copy)

    bound: dict[str, Any] = {
        "any_true": compile_same_source(_any_true_scalar, globals(), {}),
        "pick": compile_same_source(_pick_scalar, globals(), {}),
    }
    cpow = _libm_pow()
    for mod_name, names in _JIT_FUNCTIONS:
        mod = importlib.import_module(mod_name)
        for name in names:
            if name == "half_power" and cpow is not None:
                bound[name] = compile_same_source(_half_power_libm, globals(), {"_cpow": cpow})
                continue
            bound[name] = compile_same_source(getattr(mod, name), vars(mod), bound)
    kern = compile_same_source(_kernel, globals(), bound)
    _KERNEL_CACHE["functions"] = bound
    return kern


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
