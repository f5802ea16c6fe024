"""One SITL backend session from a scenario: what ``marinesim sitl`` runs, callable from Python.

:func:`serve_scenario` loads a scenario, maps ArduSub's outputs (``FRAME_CONFIG``, servo
functions, motor directions from a parameter dump), binds the instance's port and serves until
SITL goes quiet, a frame budget, the scenario's end or ``should_stop()``; it returns a plain
summary dict.  Several can run at once (threads, processes or Dask tasks), one per SITL
instance: ports 9002 + 10·instance.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from marinesim.core.errors import ConfigError
from marinesim.interop.sitl.frame import FRAMES, ServoMap
from marinesim.interop.sitl.lockstep import Lockstep
from marinesim.interop.sitl.plant import EnginePlant
from marinesim.interop.sitl.server import instance_port, serve
from marinesim.interop.sitl.truthlog import TruthLog

__all__ = ["BUNDLED_FLOORS", "bathymetry_path", "reference_plant", "servo_map_for",
           "serve_scenario"]  # fmt: skip

#: Bundled seafloors for ``--bathymetry`` (besides a gridded CSV file).
BUNDLED_FLOORS = ("flat20", "recorded_sawtooth")
_DATA = Path(__file__).with_name("data")
#: Period of the per-frame hooks (the truth log's row period) [s of physics time].
HOOK_PERIOD = 0.05


def bathymetry_path(name: str) -> Path:
    """A bundled floor's CSV (``recorded_sawtooth``) or a user's bathymetry file.

    Raises
    ------
    ConfigError
        Neither a bundled name nor an existing file.
    """
    if name == "recorded_sawtooth":
        return _DATA / "recorded_sawtooth.csv"
    p = Path(name)
    if not p.is_file():
        raise ConfigError(
            f"bathymetry {name!r} is not a bundled floor ({', '.join(BUNDLED_FLOORS)}) or an "
            "existing gridded CSV file",
            param="--bathymetry",
        )
    return p.resolve()


def _floor_sets(
    scenario: str | Path,
    variables: Sequence[str],
    sets: Sequence[str],
    seed: int | None,
    terrain: str | None,
    bathymetry: str | None,
) -> list[str]:
    """``--set`` overrides that put ``terrain``/``bathymetry`` under the first vehicle's
    rangefinder (found by loading the scenario once)."""
    if terrain is None and bathymetry is None:
        return []
    from marinesim.engine.plugins.rangefinder import RangefinderSensor
    from marinesim.scenario import load_simulation

    sim = load_simulation(
        scenario, variables=list(variables) or None, sets=list(sets) or None, seed=seed
    )
    blk = sim.blocks[0]
    rf = [s.plugin.name for s in sim.slots
          if s.block is blk and isinstance(s.plugin, RangefinderSensor)]  # fmt: skip
    if not rf:
        raise ConfigError(
            f"entity {blk.name!r} has no 'rangefinder' sensor to measure the floor",
            param="--terrain" if terrain is not None else "--bathymetry",
        )
    key = f"entities.{blk.name}.sensors.{rf[0]}.params.terrain"
    if terrain is not None and bathymetry is not None:
        raise ConfigError(
            "give either --terrain (a profile replayed along time) or --bathymetry (a floor "
            "under the vehicle's position), not both",
            param="--terrain",
        )
    if terrain is not None:
        from marinesim.environment.terrain import BUILTIN_PROFILES

        if terrain in BUILTIN_PROFILES:
            return [f"{key}={terrain}"]
        p = Path(terrain)
        if not p.is_file():
            raise ConfigError(
                f"terrain {terrain!r} is not a shipped profile ({', '.join(BUILTIN_PROFILES)}) "
                "or an existing profile file",
                param="--terrain",
            )
        return [f"{key}={p.resolve()}"]
    assert bathymetry is not None
    if bathymetry == "flat20":
        env = ["environment.terrain.model=flat", "environment.terrain.depth=20.0"]
    else:
        path = bathymetry_path(bathymetry)
        env = ["environment.terrain.model=grid", f"environment.terrain.file={path}"]
    return [*env, f"{key}=environment"]


_REF_VARS = {"u0": 0.0, "u_start": None, "u_ramp": 4.0, "delay": 0.3, "period": 0.1,
             "out_of_range": 99.0}  # fmt: skip


def reference_plant(
    variables: Sequence[str],
    bathymetry: str | None,
    faults: Sequence[Any],
    t200_csv: str | Path | None,
) -> Any:
    """The recorded sessions' plant configured from ``NAME=VALUE`` strings (u0 [m/s],
    u_start [s], u_ramp [s], delay [s], period [s], out_of_range [m]) and a floor."""
    import os

    from marinesim.environment.terrain import read_bathymetry

    from .refplant import ReferencePlant

    cfg = dict(_REF_VARS)
    for item in variables:
        key, sep, raw = item.partition("=")
        if not sep or key.strip() not in cfg:
            raise ConfigError(
                f"--var {item!r}: the reference plant takes {', '.join(cfg)} (NAME=VALUE)",
                param="--var",
            )
        try:
            cfg[key.strip()] = float(raw)
        except ValueError:
            raise ConfigError(f"--var {item!r}: not a number", param="--var") from None
    floor: Any = "flat20"
    if bathymetry in (None, "flat20"):
        floor = "flat20"
    elif bathymetry in ("recorded_sawtooth", "sawtooth"):
        floor = "sawtooth"  # the exact formula of the recordings
    else:
        floor = read_bathymetry(bathymetry_path(bathymetry))
    csv = t200_csv if t200_csv is not None else os.environ.get("MARINESIM_T200_CSV")
    if csv is None:
        raise ConfigError(
            "the reference plant needs Blue Robotics' T200 table (t200_performance_10-20V.csv, "
            "not shipped): pass --t200-csv or set MARINESIM_T200_CSV",
            param="--t200-csv",
        )
    return ReferencePlant(
        csv, floor, u0=cfg["u0"], u_start=cfg["u_start"], u_ramp=cfg["u_ramp"],
        rng_period=cfg["period"], rng_delay=cfg["delay"], faults=list(faults),
        out_of_range=cfg["out_of_range"],
        name=f"reference ({bathymetry or 'flat20'})",
    )  # fmt: skip


def servo_map_for(
    motors: int,
    values: Mapping[str, float] | None = None,
    lines: Mapping[str, tuple[int, int]] | None = None,
    *,
    frame: int | None = None,
    file: str | Path | None = None,
) -> tuple[ServoMap, int]:
    """Servo map and FRAME_CONFIG for a vehicle with ``motors`` thrusters.

    ``frame`` (``--frame``) wins over ``values["FRAME_CONFIG"]``; without either: 2 (the
    Heavy), or ArduSub's default 1 when parameters were given without FRAME_CONFIG.
    FRAME_CONFIG 1 (6 motors) on an 8-thruster vehicle drives each side's two verticals from
    that side's vertical output (:meth:`ServoMap.on_heavy`).

    Raises
    ------
    ConfigError
        A frame whose motor count does not fit the vehicle (``file:line`` of FRAME_CONFIG).
    """
    vals = dict(values or {})
    fc = frame if frame is not None else int(vals.get("FRAME_CONFIG", 1 if vals else 2))
    name, n = FRAMES.get(fc, (f"FRAME_CONFIG {fc}", -1))
    if n == 6 and motors == 8:
        return ServoMap.from_params(6, vals).on_heavy(), fc
    if n != motors:
        line, col = (lines or {}).get("FRAME_CONFIG", (None, None))
        given = frame is not None
        raise ConfigError(
            f"{name} drives {n if n > 0 else 'an unsupported number of'} motors but the "
            f"scenario's vehicle has {motors} thrusters (BlueROV2 Heavy: FRAME_CONFIG 2, or 1)",
            file=None if given else file,
            line=None if given else line,
            column=None if given else col,
            param="--frame" if given else "FRAME_CONFIG",
        )
    return ServoMap.from_params(motors, vals), fc


def serve_scenario(
    scenario: str | Path | None,
    *,
    instance: int = 0,
    port: int | None = None,
    host: str = "127.0.0.1",
    variables: Sequence[str] = (),
    sets: Sequence[str] = (),
    seed: int | None = None,
    params: str | Path | None = None,
    strict: bool = False,
    frame: int | None = None,
    sq_min: float | None = None,
    out: str | Path | None = None,
    idle_exit: float | None = None,
    max_frames: int | None = None,
    should_stop: Callable[[], bool | str | None] | None = None,
    on_bound: Callable[[int, EnginePlant, int], None] | None = None,
    on_frame: Callable[[Any, Any, int], None] | None = None,
    physics: str = "engine",
    terrain: str | None = None,
    bathymetry: str | None = None,
    faults: Sequence[str] = (),
    t200_csv: str | Path | None = None,
    fmt: str = "parquet",
    on_stream: Callable[[Any], None] | None = None,
) -> dict[str, Any]:
    """Serve ``scenario`` to one SITL instance; return the session summary.

    Parameters
    ----------
    scenario : str or Path
        Scenario file or bundled name (``ardusub_sawtooth``).
    instance, port, host
        SITL instance (port 9002 + 10·instance unless ``port`` is given) and bind address.
    variables, sets, seed
        Scenario ``--var NAME=VALUE`` / ``--set path=value`` / root seed.
    params, strict, frame, sq_min
        ArduSub parameter dump (FRAME_CONFIG, SERVOx_FUNCTION, MOT_n_DIRECTION,
        RNGFND_SQ_MIN), unknown names as errors, FRAME_CONFIG override, quality threshold.
    out : path, optional
        Directory for ``truth.csv``, the engine log (``engine/``) and ``summary.json``.
    idle_exit, max_frames, should_stop
        When to stop (seconds without packets, physics frames, a callable polled between
        datagrams; a string it returns, e.g. ``"SIGTERM"``, becomes the summary's reason).
        Every way out — these, the scenario's end, an exception, a signal turned into
        ``KeyboardInterrupt`` — closes the truth log on a whole row, finalises the engine log
        (manifest status ``interrupted``) and writes ``summary.json``.
    on_bound : callable, optional
        ``on_bound(port, plant, frame_config)`` once the port is bound.
    on_frame : callable, optional
        ``on_frame(packet, reply, sitl_time_us)`` on the frames the truth log samples (the
        first frame, then each frame reaching the next multiple of 0.05 s of physics time):
        the other frames run no Python beyond the UDP I/O and the plant step.
    physics : str
        ``engine`` (the scenario's vehicle) or ``reference`` (the recorded sessions' plant,
        :class:`~marinesim.interop.sitl.refplant.ReferencePlant`; ``scenario`` is unused and
        ``variables`` set ``u0``, ``u_start``, ``u_ramp``, ``delay``, ``period``).
    terrain : str, optional
        Engine physics: the rangefinder's time-replayed profile (shipped name or file).
    bathymetry : str, optional
        Seafloor under the vehicle: ``flat20``, ``recorded_sawtooth`` (bundled) or a gridded
        bathymetry CSV; the rangefinder then measures it.
    faults : sequence of str
        Scripted sonar faults ``KIND:START:END`` (kinds nan, zero, out_of_range).
    t200_csv : path, optional
        Reference physics: Blue Robotics' T200 table (default ``$MARINESIM_T200_CSV``).
    fmt : str
        Format of the engine log under ``out`` (``parquet``, ``csv``, ``both`` or ``mcap``).
    on_stream : callable, optional
        ``on_stream(sim)`` each time the engine log starts (the first run and after each SITL
        restart), e.g. to serve it live.
    """
    from marinesim.interop.ardupilot import read_param_dump
    from marinesim.scenario import load_simulation

    from . import register_plugins
    from .refplant import parse_fault

    register_plugins()
    bind_port = instance_port(instance) if port is None else int(port)
    if not 0 <= bind_port < 65536:
        raise ConfigError(f"port {bind_port} out of range", param="--port")
    fault_list = [parse_fault(f) for f in faults]
    values: dict[str, float] = {}
    lines: dict[str, tuple[int, int]] = {}
    if params is not None:
        pf = read_param_dump(params, strict=strict)
        values, lines = pf.values, pf.lines
    out_dir = None if out is None else Path(out)
    plant: Any
    if physics == "reference":
        plant = reference_plant(variables, bathymetry, fault_list, t200_csv)
        if terrain is not None:
            raise ConfigError(
                "--terrain replays a profile through the engine's rangefinder; the reference "
                "plant's sonar measures its --bathymetry",
                param="--terrain",
            )
        name, sq = plant.name, 0.0
        fc = frame if frame is not None else int(values.get("FRAME_CONFIG", 1))
        if fc != 1:
            given = frame is not None
            raise ConfigError(
                f"the reference plant is the vectored frame (FRAME_CONFIG 1, motors on "
                f"SERVO1-6), got {fc}",
                file=None if given else params,
                line=None if given else lines.get("FRAME_CONFIG", (None, None))[0],
                param="--frame" if given else "FRAME_CONFIG",
            )
    elif physics == "engine":
        if scenario is None:
            raise ConfigError("a scenario is needed with --physics engine", param="scenario")
        extra = _floor_sets(scenario, variables, sets, seed, terrain, bathymetry)
        sim = load_simulation(
            scenario, variables=list(variables) or None, sets=[*sets, *extra] or None, seed=seed
        )
        motors = EnginePlant(sim).servo_map.motors
        smap, fc = servo_map_for(motors, values, lines, frame=frame, file=params)
        sq = sq_min if sq_min is not None else float(values.get("RNGFND_SQ_MIN", 90.0))
        plant = EnginePlant(
            sim, smap, sq_min=sq, stream_dir=None if out_dir is None else out_dir / "engine",
            faults=fault_list, fmt=fmt, on_stream=on_stream,
        )  # fmt: skip
        name = sim.name
    else:
        raise ConfigError(
            f"physics {physics!r}: expected 'engine' or 'reference'", param="--physics"
        )
    log = TruthLog(plant, out_dir, period=HOOK_PERIOD) if out_dir is not None else None

    def frame_hook(pkt: Any, reply: Any, t_us: int) -> None:
        if log is not None:
            log(pkt, reply, t_us)
        if on_frame is not None:
            on_frame(pkt, reply, t_us)

    hooked = log is not None or on_frame is not None
    lock = Lockstep(plant, on_frame=frame_hook if hooked else None, hook_period=HOOK_PERIOD)
    wall0 = time.perf_counter()
    reason = "interrupted"
    try:
        res = serve(
            lock,
            host=host,
            port=bind_port,
            idle_timeout=idle_exit,
            max_frames=max_frames,
            should_stop=should_stop,
            on_bound=None if on_bound is None else (lambda p: on_bound(p, plant, fc)),
        )
        reason = res.reason
    finally:
        if log is not None:
            log.close()
        plant.finish(reason if reason not in ("idle", "frames") else f"SITL stopped ({reason})")
        wall = time.perf_counter() - wall0
        st = lock.stats
        summary: dict[str, Any] = {
            "scenario": name,
            "physics": physics,
            "faults": [f"{f.kind}:{f.t0:g}:{f.t1:g}" for f in fault_list],
            "instance": instance,
            "port": bind_port,
            "frame_config": fc,
            "sq_min": sq,
            "reason": reason,
            "sim_time_s": plant.t,
            "wall_s": wall,
            "speedup": plant.t / wall if wall > 0 else None,
            "frames": st.frames,
            "repeats": st.repeats,
            "stale": st.stale,
            "missing": st.missing,
            "resyncs": st.resyncs,
            "restarts": st.restarts,
            "strays": st.strays,
            "malformed": st.malformed,
            "packets_32": st.packets_32,
            "last_error": st.last_error,
            "sitl_rate_hz": st.sitl_rate_hz,
            "truth_files": [str(p) for p in (log.files if log is not None else [])],
            "engine_logs": [str(p) for p in plant.stream_dirs],
        }
        if out_dir is not None:
            out_dir.mkdir(parents=True, exist_ok=True)
            (out_dir / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    return summary
