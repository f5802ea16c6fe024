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

__all__ = ["servo_map_for", "serve_scenario"]


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
    scenario: str | Path,
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
    should_stop: Callable[[], bool] | None = None,
    on_bound: Callable[[int, EnginePlant, int], None] | None = None,
    on_frame: Callable[[Any, Any, int], None] | None = None,
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
        When to stop (seconds without packets, physics frames, a callable).
    on_bound : callable, optional
        ``on_bound(port, plant, frame_config)`` once the port is bound.
    on_frame : callable, optional
        ``on_frame(packet, reply, sitl_time_us)`` after every physics frame.
    fmt : str
        Format of the engine log under ``out`` (``parquet``, ``csv``, ``both`` or ``mcap``).
    on_stream : callable, optional
        ``on_stream(sim)`` each time the engine log starts (the first run and after each SITL
        restart), e.g. to serve it live.
    """
    from marinesim.interop.ardupilot import read_param_dump
    from marinesim.scenario import load_simulation

    from . import register_plugins

    register_plugins()
    bind_port = instance_port(instance) if port is None else int(port)
    if not 0 <= bind_port < 65536:
        raise ConfigError(f"port {bind_port} out of range", param="--port")
    sim = load_simulation(
        scenario, variables=list(variables) or None, sets=list(sets) or None, seed=seed
    )
    motors = EnginePlant(sim).servo_map.motors
    values: dict[str, float] = {}
    lines: dict[str, tuple[int, int]] = {}
    if params is not None:
        pf = read_param_dump(params, strict=strict)
        values, lines = pf.values, pf.lines
    smap, fc = servo_map_for(motors, values, lines, frame=frame, file=params)
    sq = sq_min if sq_min is not None else float(values.get("RNGFND_SQ_MIN", 90.0))
    out_dir = None if out is None else Path(out)
    plant = EnginePlant(
        sim,
        smap,
        sq_min=sq,
        stream_dir=None if out_dir is None else out_dir / "engine",
        fmt=fmt,
        on_stream=on_stream,
    )
    log = TruthLog(plant, out_dir) if out_dir is not None else None

    def frame_hook(pkt: Any, reply: Any, t_us: int) -> None:
        if log is not None:
            log(pkt, reply, t_us)
        if on_frame is not None:
            on_frame(pkt, reply, t_us)

    lock = Lockstep(plant, on_frame=frame_hook)
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
        plant.finish("SITL stopped" if reason != "interrupted" else "interrupted")
        wall = time.perf_counter() - wall0
        st = lock.stats
        summary: dict[str, Any] = {
            "scenario": sim.name,
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
