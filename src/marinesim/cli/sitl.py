"""``marinesim sitl``: serve a marinesim vehicle to ArduPilot SITL (``--model JSON``)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import typer

from marinesim.cli.options import live_port_option, out_option
from marinesim.core.errors import ConfigError

__all__ = ["register", "sitl_port_args"]


def sitl(
    scenario: str | None = typer.Argument(
        None, help="Scenario file or bundled name (ardusub_sawtooth); not with --physics reference."
    ),
    port: int | None = typer.Option(
        None, "--port", help="UDP port to bind (default 9002 + 10·instance)."
    ),
    instance: int = typer.Option(
        0, "-I", "--instance", help="SITL instance number (its -I); sets the default port."
    ),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind."),
    var: list[str] = typer.Option(None, "--var", help="Scenario variable NAME=VALUE."),
    set_: list[str] = typer.Option(None, "--set", help="Scenario override path=value."),
    seed: int | None = typer.Option(None, "--seed", help="Root seed."),
    params: Path | None = typer.Option(
        None,
        "--params",
        help="ArduSub parameter dump (.parm/.params): FRAME_CONFIG, SERVOn_FUNCTION, "
        "MOT_n_DIRECTION, RNGFND_SQ_MIN.",
    ),
    strict: bool = typer.Option(False, "--strict", help="Unknown parameter names are errors."),
    frame: int | None = typer.Option(
        None,
        "--frame",
        help="ArduSub FRAME_CONFIG: 2 vectored 6-DOF (8 motors, default) or 1 vectored "
        "(6 motors; verticals drive both of their side). Default: from --params, else 2.",
    ),
    sq_min: float | None = typer.Option(
        None, "--sq-min", help="Readings with signal quality below this are sent as NaN [%]."
    ),
    out: Path | None = out_option(
        "Directory for truth.csv, the engine log (engine/) and summary.json, all streamed"
    ),
    idle_exit: float | None = typer.Option(
        None, "--idle-exit", help="Stop after this many seconds without packets."
    ),
    max_frames: int | None = typer.Option(None, "--max-frames", help="Stop after N frames."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress lines."),
    physics: str = typer.Option(
        "engine",
        "--physics",
        help="engine: the scenario's vehicle; reference: the recorded sessions' BlueROV2 plant "
        "(README §4 of the ardusub_sitl reference; FRAME_CONFIG 1; --var u0, u_start, u_ramp, "
        "delay, period, out_of_range).",
    ),
    terrain: str | None = typer.Option(
        None,
        "--terrain",
        help="Engine physics: the rangefinder replays this terrain profile along time (shipped "
        "name: sawtooth, trapezoid, square, stress, zeros; or a profile file).",
    ),
    bathymetry: str | None = typer.Option(
        None,
        "--bathymetry",
        help="Seafloor under the vehicle's position, measured by the rangefinder: flat20, "
        "recorded_sawtooth (the recordings' 60 m sawtooth), or a gridded bathymetry CSV.",
    ),
    sonar_fault: list[str] = typer.Option(
        None,
        "--sonar-fault",
        help="Scripted sonar fault KIND:START:END [s], repeatable; KIND nan (no data), zero "
        "(0.0 m bursts) or out_of_range (99 m).",
    ),
    t200_csv: Path | None = typer.Option(
        None,
        "--t200-csv",
        help="Reference physics: Blue Robotics' t200_performance_10-20V.csv (not shipped; "
        "default $MARINESIM_T200_CSV).",
    ),
    fmt: str = typer.Option(
        "parquet",
        "--format",
        help="Engine log format under --out: parquet (default), csv, both, or mcap (ROS 2 "
        "topics for Foxglove/ros2 bag + Parquet).",
        metavar="parquet|csv|both|mcap",
    ),
    live: bool = typer.Option(
        False, "--live", help="Serve the run's ROS 2 topics over the Foxglove WebSocket protocol."
    ),
    live_port: int = live_port_option(),
) -> None:
    """Serve a scenario's vehicle to ArduPilot SITL over SIM_JSON (lockstep, one tick per frame).

    Start SITL with ``--model JSON`` (e.g. ``sim_vehicle.py -v ArduSub --model JSON`` or
    ``ardusub --model JSON --speedup 10 -I0``); SITL instance I sends to port 9002 + 10·I.
    """
    from marinesim.cli import grammar
    from marinesim.cli.run import check_source
    from marinesim.interop.sitl.session import serve_scenario

    quiet = quiet or grammar.quiet()  # `marinesim -q sitl` as `sitl -q`
    if physics == "engine":
        if scenario is None:
            raise ConfigError(
                "give a scenario (e.g. ardusub_sawtooth), or --physics reference", param="scenario"
            )
        check_source(scenario)
    from marinesim.io.log import FORMATS

    if fmt not in FORMATS:
        raise ConfigError(
            f"unknown log format {fmt!r} (use {', '.join(FORMATS)})", param="--format"
        )
    if fmt != "parquet" and out is None:
        raise ConfigError("--format needs -o/--out (the engine log goes there)", param="--format")
    if physics == "reference" and (fmt != "parquet" or live):
        raise ConfigError(
            "--format and --live write the engine log; the reference plant has none "
            "(use --physics engine)",
            param="--live" if live else "--format",
        )
    on_stream = None
    if live:
        if out is None:
            raise ConfigError("--live needs -o/--out (it serves the streamed log)", param="--live")
        from marinesim.io.mcap.live import attach_live

        def on_stream(sim: Any) -> None:
            def announce(url: str) -> None:
                typer.echo(f"live: Foxglove WebSocket on {url}")

            attach_live(sim, port=live_port, pace=False, on_start=announce)  # lockstep paces

    wall0 = time.perf_counter()
    state = {"next": 10.0}

    def on_frame(pkt: Any, reply: Any, t_us: int) -> None:
        # called every 0.05 s of physics time (the truth log's rows), not every frame
        t = float(reply.timestamp)
        if t < state["next"] - 10.0:
            state["next"] = 10.0  # SITL restarted
        if not quiet and t >= state["next"]:
            state["next"] += 10.0
            wall = time.perf_counter() - wall0
            rng = reply.rng.get(1)
            rtxt = "-" if rng is None else f"{rng:.2f} m"
            typer.echo(
                f"t {t:7.1f} s  depth {reply.position[2]:6.2f} m  rng_1 {rtxt}  "
                f"frame {pkt.frame_count}  ({t / max(wall, 1e-9):.1f}x wall)"
            )

    def on_bound(p: int, plant: Any, fc: int) -> None:
        if not quiet:
            typer.echo(
                f"marinesim sitl: {_plant_text(plant, fc)}; listening on udp {host}:{p} "
                f"(SITL: ardusub --model JSON {sitl_port_args(p)})"
            )

    import signal
    import threading

    received: list[str] = []

    def on_signal(signum: int, _frame: Any) -> None:
        received.append(signal.Signals(signum).name)
        if len(received) > 1:
            raise KeyboardInterrupt(received[-1])  # a second signal: stop at once (logs kept)

    old: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        summary = serve_scenario(
            scenario, instance=instance, port=port, host=host, variables=var or (),
            sets=set_ or (), seed=seed, params=params, strict=strict, frame=frame,
            sq_min=sq_min, out=out, idle_exit=idle_exit, max_frames=max_frames,
            on_bound=on_bound, on_frame=on_frame, physics=physics, terrain=terrain,
            bathymetry=bathymetry, faults=sonar_fault or (), t200_csv=t200_csv,
            should_stop=lambda: received[0] if received else None,
            fmt=fmt, on_stream=on_stream,
        )  # fmt: skip
    except KeyboardInterrupt:
        typer.echo("marinesim sitl: interrupted (logs and summary.json kept)", err=True)
        raise typer.Exit(143 if received[:1] == ["SIGTERM"] else 130) from None
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    typer.echo(
        f"marinesim sitl: {summary['reason']}: sim {summary['sim_time_s']:.2f} s in "
        f"{summary['wall_s']:.1f} s wall; frames {summary['frames']} repeats "
        f"{summary['repeats']} stale {summary['stale']} missing {summary['missing']} restarts "
        f"{summary['restarts']} strays {summary['strays']} malformed {summary['malformed']}"
    )
    if received:
        raise typer.Exit(143 if received[0] == "SIGTERM" else 130)


def _plant_text(plant: Any, fc: int) -> str:
    if getattr(plant, "sim", None) is None:
        return f"{plant.name}: 6 thrusters (FRAME_CONFIG {fc}) at {plant.rate_hz:g} Hz"
    return (
        f"{plant.sim.name}: {plant.servo_map.motors} thrusters (FRAME_CONFIG {fc}) at "
        f"{plant.rate_hz:g} Hz, rng_1 NaN below signal quality {plant.sq_min:g}"
    )


def sitl_port_args(port: int) -> str:
    """The SITL options that make it send to UDP ``port``: ``-I<n>`` where the port is an
    instance's default (9002 + 10·n), else ``--sim-port-out <port>`` (which wins over -I)."""
    from marinesim.interop.sitl.server import BASE_PORT

    k, r = divmod(port - BASE_PORT, 10)
    if port >= BASE_PORT and r == 0:
        return f"-I{k}"
    return f"--sim-port-out {port}"


def register(app: typer.Typer) -> None:
    """Add ``sitl`` to the ``marinesim`` command (and the ``sitl_servo`` plugin to the
    registry, so that ``marinesim run/check/plugins`` know the bundled ardusub scenarios)."""
    from marinesim.interop.sitl import register_plugins

    register_plugins()
    app.command("sitl")(sitl)
