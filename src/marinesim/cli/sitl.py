"""``marinesim sitl``: serve a marinesim vehicle to ArduPilot SITL (``--model JSON``)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import typer

from marinesim.cli.options import out_option

__all__ = ["register"]


def sitl(
    scenario: str = typer.Argument(..., help="Scenario file or bundled name (ardusub_sawtooth)."),
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
) -> None:
    """Serve a scenario's vehicle to ArduPilot SITL over SIM_JSON (lockstep, one tick per frame).

    Start SITL with ``--model JSON`` (e.g. ``sim_vehicle.py -v ArduSub --model JSON`` or
    ``ardusub --model JSON --speedup 10 -I0``); SITL instance I sends to port 9002 + 10·I.
    """
    from marinesim.cli import grammar
    from marinesim.cli.run import check_source
    from marinesim.interop.sitl.session import serve_scenario

    quiet = quiet or grammar.quiet()  # `marinesim -q sitl` as `sitl -q`
    check_source(scenario)
    wall0 = time.perf_counter()
    state = {"next": 10.0, "frames": 0}

    def on_frame(pkt: Any, reply: Any, t_us: int) -> None:
        state["frames"] += 1
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
                f"frames {state['frames']}  ({t / max(wall, 1e-9):.1f}x wall)"
            )

    def on_bound(p: int, plant: Any, fc: int) -> None:
        if not quiet:
            typer.echo(
                f"marinesim sitl: {plant.sim.name}: {plant.servo_map.motors} thrusters "
                f"(FRAME_CONFIG {fc}) at {plant.rate_hz:g} Hz, rng_1 NaN below signal quality "
                f"{plant.sq_min:g}; listening on udp {host}:{p} "
                f"(SITL: ardusub --model JSON -I{instance})"
            )

    try:
        summary = serve_scenario(
            scenario, instance=instance, port=port, host=host, variables=var or (),
            sets=set_ or (), seed=seed, params=params, strict=strict, frame=frame,
            sq_min=sq_min, out=out, idle_exit=idle_exit, max_frames=max_frames,
            on_bound=on_bound, on_frame=on_frame,
        )  # fmt: skip
    except KeyboardInterrupt:
        typer.echo("marinesim sitl: interrupted", err=True)
        raise typer.Exit(130) from None
    typer.echo(
        f"marinesim sitl: {summary['reason']}: sim {summary['sim_time_s']:.2f} s in "
        f"{summary['wall_s']:.1f} s wall; frames {summary['frames']} repeats "
        f"{summary['repeats']} stale {summary['stale']} missing {summary['missing']} restarts "
        f"{summary['restarts']} malformed {summary['malformed']}"
    )


def register(app: typer.Typer) -> None:
    """Add ``sitl`` to the ``marinesim`` command (and the ``sitl_servo`` plugin to the
    registry, so that ``marinesim run/check/plugins`` know the bundled ardusub scenarios)."""
    from marinesim.interop.sitl import register_plugins

    register_plugins()
    app.command("sitl")(sitl)
