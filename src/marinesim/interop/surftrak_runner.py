"""The SURFTRAK harness run: ardusub_surftrak's ``sitl_runner.py`` reproduced on the engine.

``run_surftrak`` builds the harness scenario — one ``vehicle`` block with the ``sitl_vertical``
motion (:mod:`marinesim.models.heave`), the ``rangefinder`` sensor (one terrain row injected
per reading, SURFTRAK spec §11.1) and the ``surftrak`` controller (ArduSub's vertical
autopilot, :class:`~marinesim.control.surftrak.ArduSubVertical`, switching to SURFTRAK after
the 10th reading) at 400 Hz — runs it on the engine, and reads the CTUN rows (10 Hz, §13),
the stamped rangefinder rows and the GCS messages back from the run.  There is no loop here:
the engine's tick is the only one, and the block runs in the compiled tick generated from
its plugins' laws (:mod:`marinesim.engine.plugins.surftrak_laws`) when numba is installed.
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
from marinesim.core.rng import check_seed
from marinesim.engine.entity import BlockSpec, PluginSpec, Spawn
from marinesim.engine.plugins.rangefinder import RangefinderSensor, RangefinderSensorParams
from marinesim.engine.plugins.surftrak import (
    CTUN_SIGNALS,
    TRACE_SIGNALS,
    BaroBelief,
    BaroParams,
    SitlVerticalMotion,
    SitlVerticalParams,
    SurftrakController,
    SurftrakControllerParams,
    floor_at,
)
from marinesim.engine.simulation import Simulation
from marinesim.environment.terrain import (
    BUILTIN_PROFILES,
    TerrainProfile,
    builtin_profile,
)
from marinesim.models.heave import HeaveParams
from marinesim.sensors.ekf3_height import Ekf3HeightParams
from marinesim.sensors.rangefinder import RangefinderParams

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
    manifest : dict
        The engine run's manifest (``compiled_ticks``: ticks run as one compiled span).
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
    manifest: dict[str, Any] = field(default_factory=dict)

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


def _simulation(
    *,
    seed: int,
    nsteps: int,
    n: int,
    start_z: float,
    every: int,
    motion: SitlVerticalMotion,
    sensor: RangefinderSensor,
    controller: SurftrakController,
    baro: float,
    ekf3: Ekf3HeightParams | None = None,
) -> Simulation:
    """The harness as an engine simulation: block ``vehicle`` of ``n`` with the plugins."""
    sensors = [PluginSpec(sensor, registry_name="rangefinder")]
    if baro > 0 or ekf3 is not None:
        bp = BaroParams(
            noise_std=baro,
            **({"estimator": "ekf3", "ekf3": ekf3} if ekf3 is not None else {}),
        )
        sensors.append(PluginSpec(BaroBelief("baro", bp), registry_name="baro"))
    block = BlockSpec(
        "vehicle",
        n,
        PluginSpec(motion, registry_name="sitl_vertical"),
        (PluginSpec(controller, registry_name="surftrak"),),
        (),
        tuple(sensors),
        Spawn(depth=-start_z),
    )
    return Simulation(
        [block], dt=DT, end=nsteps * DT, seed=seed, log_rate=1.0 / (every * DT),
        name="surftrak_harness",
    )  # fmt: skip


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
    ekf3: Ekf3HeightParams | None = None,
) -> SurftrakResult:
    """Run the SURFTRAK harness on the engine.

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
    switch_after : int
        Readings (dropouts count) before the switch; 0 or less: never.
    n : int
        Vehicles (independent noise streams, same terrain).
    heave : HeaveParams, optional
        Vehicle (default ``sitl_vertical``); ``baro_noise_m`` > 0 adds the ``baro`` belief.
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
        at_surface, healthy, filt, dist, stick; cm units as in ArduSub).
    contact_floor : float, optional
        A hard floor (m, up) above the terrain that the vehicle rests on while the rangefinder
        still sees the terrain (e.g. a ledge); default: the terrain itself.
    scripts : sequence of callables
        Periodic scripts ``fn(autopilot)`` with a ``period`` attribute (s), e.g.
        :class:`~marinesim.control.surftrak.KeepTarget` (``surftrak2``) or
        :class:`~marinesim.control.surftrak.ButtonTargets` (``surftrak_buttons``); run at
        t = 0, period, 2·period, … (after the events of that loop).
    jit : bool, optional
        The engine's compiled span (numba) for runs without Python hooks:
        ``None`` (default) uses it when numba is installed and ``MARINESIM_JIT`` is not ``0``,
        ``True`` requires it (ConfigError saying why not), ``False`` runs the plugins tick by
        tick.  Both give bit-identical logs.
    ekf3 : Ekf3HeightParams, optional
        The autopilot reads height and climb rate through ArduSub's EKF3 height model
        (:mod:`marinesim.sensors.ekf3_height`; the ``baro`` belief with ``estimator: ekf3``,
        fed the depth with ``heave.baro_noise_m`` noise and the heave acceleration), as the
        firmware's controllers read EKF3's output; default: the truth (or the noisy depth).
        Such a run goes through the plugins tick by tick (the compiled tick takes no belief).

    Returns
    -------
    SurftrakResult
    """
    from marinesim.core.limits import check_steps

    seed = check_seed(seed)
    if n < 1:
        raise ConfigError(f"n must be >= 1, got {n}", param="n")
    if not (math.isfinite(duration) and duration >= DT):
        raise ConfigError(
            f"duration must be a finite number of seconds >= {DT} (one loop), got {duration}",
            param="duration",
        )
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
    script_ticks = []
    for fn in scripts:
        per = getattr(fn, "period", None)
        if per is None or per <= 0 or abs(per / DT - round(per / DT)) > 1e-6:
            raise ConfigError(f"script {fn!r} needs a 'period' that is a multiple of 2.5 ms")
        script_ticks.append((int(round(per / DT)), fn))
    k0 = int(round(t0 / DT))
    nsteps = int(round(duration / DT))
    every = 1 if trace else math.gcd(40, iv)  # frames at every CTUN row and reading

    motion = SitlVerticalMotion(
        "sitl_vertical",
        SitlVerticalParams(
            **heave.model_dump(), terrain="sawtooth", delay=rf.delay, t_inject0=t_inject0,
            contact_floor=contact_floor,
        ),
    )  # fmt: skip
    motion.profile = prof
    motion.thrust_override = thrust_override
    sensor = RangefinderSensor(
        "rangefinder", RangefinderSensorParams(**rf.model_dump(), t_inject0=t_inject0)
    )
    sensor.profile = prof
    ctl = SurftrakController(
        "surftrak",
        SurftrakControllerParams(
            ardusub=params, mode=mode, switch_after=max(switch_after, 0), trace=trace
        ),
    )
    ctl.pilot_script = pilot
    ctl.events = list(events)
    ctl.scripts = script_ticks
    sim = _simulation(
        seed=seed, nsteps=nsteps, n=n, start_z=start_z, every=every, motion=motion,
        sensor=sensor, controller=ctl, baro=heave.baro_noise_m, ekf3=ekf3,
    )  # fmt: skip
    sim.compiled = jit
    run = sim.run()
    if run.status == "failed":  # pragma: no cover - run() raised already
        raise ConfigError("SURFTRAK harness run failed")
    ap = next(sl for sl in sim.slots if sl.plugin is ctl).ctx.state["ap"]
    res = _result(run, ap, prof, params, rf, seed, duration, nsteps, k0, iv, trace)
    res.manifest = run.manifest
    bad = [k2 for k2, v2 in res.columns.items() if np.isinf(np.asarray(v2, dtype=float)).any()]
    if bad:
        from marinesim.core.errors import NumericalError

        first = min(int(np.argmax(np.isinf(np.asarray(res.columns[k2], dtype=float)).any(axis=0)))
                    for k2 in bad)  # fmt: skip
        exc = NumericalError(
            f"{', '.join(bad[:4])} overflowed to infinity: the run is not valid",
            entity="surftrak",
            t=float(res.columns["t"][0, first]),
        )
        exc.result = res  # type: ignore[attr-defined]
        raise exc
    res.metrics = track_metrics(res, 0)
    return res


def _result(
    run: Any,
    ap: ArduSubVertical,
    prof: TerrainProfile,
    params: SurftrakParams,
    rf: RangefinderParams,
    seed: int,
    duration: float,
    nsteps: int,
    k0: int,
    iv: int,
    trace: bool,
) -> SurftrakResult:
    """The harness tables read back from the engine's frames (hold-last values).

    CTUN row i is the controller's log of tick 40·i, held in frame 40·(i+1) (the last frame
    for the last row); its ``terrain`` is the sensor's value of frame 40·i (time t = 40·i·dt).
    Reading j was made at tick k0 + j·iv: the first frame at or after it holds it.
    """
    ticks = np.rint(run.t / DT).astype(np.int64)

    def frames(at: np.ndarray) -> np.ndarray:
        return np.searchsorted(ticks, np.minimum(at, ticks[-1]))

    nlog = (nsteps + 39) // 40
    rows = np.arange(nlog, dtype=np.int64) * 40
    after = frames(rows + 40)
    cols: dict[str, np.ndarray] = {"t": np.broadcast_to(rows * DT, (run.n, nlog)).copy()}
    for name, _unit in CTUN_SIGNALS:
        cols[name] = run[f"surftrak.{name}"][:, after, 0].copy()
    at_row = frames(rows)
    cols["BAlt"] = -run["truth.pos"][:, at_row, 2]
    cols["terrain"] = run["rangefinder.terrain"][:, at_row, 0].copy()
    # frame 0 is recorded before the first reading of the terrain: the same law at t = 0
    cols["terrain"][:, 0] = floor_at(prof.heights.tolist(), prof.interval, k0 * DT - rf.delay, 0.0)
    cols["timestamp"] = cols["t"].copy()
    cols["TimeUS"] = np.round(cols["t"] * 1e6)
    cols["ABst"] = np.zeros_like(cols["t"])
    cols["ThH"] = np.full_like(cols["t"], 0.5)
    cols["true_alt"] = cols["BAlt"] - cols["terrain"]
    cols["true_altitude"] = cols["true_alt"]
    cols["RFTarget"] = cols["DSAlt"]
    nmsg = 0 if nsteps <= k0 else (nsteps - 1 - k0) // iv + 1
    msg_ticks = k0 + np.arange(nmsg, dtype=np.int64) * iv
    at = frames(msg_ticks)
    stamped: dict[str, np.ndarray] = {
        "TimeUS": np.broadcast_to(
            np.array([float(round((k * DT - rf.delay) * 1e6)) for k in msg_ticks.tolist()]),
            (run.n, nmsg),
        ).copy(),
    }
    for name in ("terrain_cm", "sub_cm", "rf_cm", "signal_quality"):
        key = f"rangefinder.{name}"
        stamped[name] = run[key][:, at, 0].copy() if nmsg else np.zeros((run.n, 0))
    stamped = {k: stamped[k] for k in STAMPED_COLUMNS}
    trace_arr = None
    if trace:
        sel = slice(1, nsteps + 1)
        trace_arr = {"t": np.broadcast_to(np.arange(nsteps) * DT, (run.n, nsteps)).copy()}
        for name in TRACE_SIGNALS:
            trace_arr[name] = run[f"surftrak.trace.{name}"][:, sel, 0].copy()
    return SurftrakResult(
        terrain=prof,
        params=params,
        rangefinder=rf,
        seed=seed,
        duration=duration,
        columns=cols,
        stamped=stamped,
        messages=list(ap.messages),
        trace=trace_arr,
        autopilot=ap,
    )


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
