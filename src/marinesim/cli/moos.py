"""``marinesim moos ...``: join a live MOOS-IvP community as uSimMarine, replay real missions.

Glue only: the client, the app loop and the replay live in :mod:`marinesim.interop.moos`
(``client``, ``app``, ``replay``), the ``.alog`` format in :mod:`marinesim.io.alog`.

``marinesim moos MISSION.moos [ALIAS]`` is the app (``run`` is the default sub-command, so
the MOOS-IvP calling convention — mission file first, then an optional alias — works as
pAntler launches apps); ``marinesim moos replay MISSION.moos REAL.alog -o OUT`` judges the
model open loop against a real mission log.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import typer
from typer.core import TyperGroup

from marinesim.cli.options import live_port_option
from marinesim.core.errors import ConfigError, EngineError

_VARIANTS = ("usm", "usm_v22")
_GROUP_VALUE_OPTS = ("--alias", "--variant")


class _DefaultRunGroup(TyperGroup):
    """A group whose first positional argument, when not a sub-command, runs ``run``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        i = 0
        while i < len(args):
            a = args[i]
            if a in _GROUP_VALUE_OPTS:
                i += 2
                continue
            if a.startswith("-"):
                i += 1
                continue
            if a not in self.commands:
                args = [*args[:i], "run", *args[i:]]
            break
        return super().parse_args(ctx, args)


def _check_variant(v: str | None) -> None:
    if v is not None and v not in _VARIANTS:
        raise ConfigError(f"must be one of {', '.join(_VARIANTS)}, not {v!r}", param="--variant")


def register(app: typer.Typer) -> None:
    """Add the ``moos`` command group to ``app``."""
    moos = typer.Typer(
        name="moos",
        cls=_DefaultRunGroup,
        help=(
            "MOOS-IvP: 'marinesim moos MISSION.moos' joins the MOOSDB as uSimMarine(V22); "
            "'moos replay' judges the model against a real mission log."
        ),
        invoke_without_command=True,
        no_args_is_help=False,
        pretty_exceptions_enable=False,
    )

    @moos.callback(invoke_without_command=True)
    def moos_main(
        ctx: typer.Context,
        example: bool = typer.Option(False, "--example", "-e", help="Print an example block."),
        interface: bool = typer.Option(
            False, "--interface", "-i", help="Print the subscriptions and publications."
        ),
        version: bool = typer.Option(False, "--version", help="Print the version."),
        alias: str = typer.Option(None, "--alias", help="Process name (and block to read)."),
        variant: str = typer.Option(None, "--variant", help="usm (uSimMarine) or usm_v22."),
    ) -> None:
        """MOOS-IvP face of marinesim."""
        from marinesim import __version__

        _check_variant(variant)
        ctx.obj = {"alias": alias, "variant": variant}
        if version:
            typer.echo(
                f"marinesim {__version__} moos (MOOS 10 wire protocol; uSimMarine and "
                "uSimMarineV22 of MOOS-IvP a2a9b716)"
            )
            raise typer.Exit(0)
        if example or interface:
            from marinesim.interop.moos.interface import example_text, interface_text

            v = variant or "usm"
            if example:
                typer.echo(example_text(v, alias), nl=False)  # type: ignore[arg-type]
            else:
                typer.echo(interface_text(v), nl=False)  # type: ignore[arg-type]
            raise typer.Exit(0)
        if ctx.invoked_subcommand is None:
            typer.echo(ctx.get_help())

    @moos.command("run")
    def run_cmd(
        ctx: typer.Context,
        mission: Path = typer.Argument(..., help="The .moos mission file."),
        name: str = typer.Argument(None, help="Process name (MOOS convention: 2nd argument)."),
        alias: str = typer.Option(None, "--alias", help="Process name (and block to read)."),
        out: Path = typer.Option(
            None, "-o", "--out", help="The .alog to write (default: MISSION_<name>.alog here)."
        ),
        duration: float = typer.Option(
            None, "--duration", help="Stop after this many MOOS seconds (default: until Ctrl-C)."
        ),
        connect_timeout: float = typer.Option(
            30.0, "--connect-timeout", help="Wall seconds to keep retrying the MOOSDB (0: forever)."
        ),
        block: str = typer.Option(None, "--block", help="Block to read (default: by name)."),
        variant: str = typer.Option(None, "--variant", help="usm or usm_v22 (default: block)."),
        scenario: Path = typer.Option(
            None,
            "--scenario",
            help="A marinesim scenario (moos_actuators controller) behind the same MOOS face.",
        ),
        log_format: str = typer.Option(
            "alog",
            "--format",
            help="alog (default) or mcap: also the published navigation as ROS 2 topics in "
            "the .alog's name with .mcap (Foxglove / ros2 bag).",
            metavar="alog|mcap",
        ),
        live: bool = typer.Option(
            False, "--live", help="Serve the navigation as ROS 2 topics over Foxglove WebSocket."
        ),
        live_port: int = live_port_option(),
        prepare: bool = typer.Option(
            False,
            "--prepare",
            help="Compute and store the start record of this launch, then exit (no MOOSDB "
            "needed): the next launch posts its first NAV before the model loads.",
        ),
    ) -> None:
        """Join the MOOSDB of MISSION.moos as uSimMarine / uSimMarineV22; log to an .alog."""
        from marinesim.cli.moos_run import run_app

        obj = ctx.obj or {}
        _check_variant(variant)
        run_app(
            mission,
            name,
            alias=alias or obj.get("alias"),
            out=out,
            duration=duration,
            connect_timeout=connect_timeout,
            block=block,
            variant=variant or obj.get("variant"),
            scenario=scenario,
            echo=lambda s: typer.echo(s, err=True),
            log_format=log_format,
            live=live,
            live_port=live_port,
            prepare=prepare,
        )

    @moos.command("batch")
    def batch_cmd(
        mission: Path = typer.Argument(..., help="The mission (.moos with an ANTLER block)."),
        replicas: int = typer.Option(1, "--replicas", help="Runs per design point."),
        sweep: Path = typer.Option(
            None, "--sweep", help="YAML 'grid: {BLOCK.param or GLOBAL: [values]}'."
        ),
        workers: int = typer.Option(1, "--workers", help="Local Dask worker processes."),
        scheduler: str = typer.Option(None, "--scheduler", help="A Dask scheduler address."),
        out: Path = typer.Option(Path("moos-batch"), "-o", "--out", help="Output folder."),
        until: str = typer.Option(
            "MISSION=complete", "--until", help="VARIABLE=VALUE that ends a run as completed."
        ),
        timeout: float = typer.Option(600.0, "--timeout", help="MOOS seconds before a run is cut."),
        reference: Path = typer.Option(
            None, "--reference", help="A recorded run (.alog) to measure the track against."
        ),
    ) -> None:
        """Fly MISSION many times with its real MOOS apps and marinesim as the simulator."""
        from marinesim.batch.moos import run_batch

        res = run_batch(
            mission,
            replicas=replicas,
            sweep=sweep,
            workers=workers,
            scheduler=scheduler,
            outdir=out,
            until=until,
            timeout_moos=timeout,
            reference=reference,
            say=lambda s: typer.echo(s, err=True),
        )
        done = int(res.runs["completed"].sum())
        typer.echo(f"{done}/{len(res.runs)} runs completed; {res.outdir / 'runs.csv'}")
        typer.echo(res.summary.to_string(index=False, float_format=lambda v: f"{v:.4g}"))

    @moos.command("replay")
    def replay_cmd(
        ctx: typer.Context,
        mission: Path = typer.Argument(..., help="The mission's .moos file."),
        alog: Path = typer.Argument(..., help="The real mission's .alog."),
        out: Path = typer.Option(..., "-o", "--out", help="Write the model's NAV_* (.alog/.csv)."),
        as_json: bool = typer.Option(False, "--json", help="Print variable → deviation as JSON."),
        delivery: str = typer.Option(
            "auto",
            "--delivery",
            help="Schedule CSV; 'auto' = RUN.delivery.csv beside RUN.alog; 'none' = plain rule.",
        ),
        block: str = typer.Option(None, "--block", help="Simulator block (default: by name)."),
        variant: str = typer.Option(None, "--variant", help="usm or usm_v22 (default: block)."),
    ) -> None:
        """Feed a real log's DESIRED_* into usm/usm_v22; exit 1 beyond the README tolerance."""
        from marinesim.interop.moos.replay import replay_alog

        _check_variant(variant)
        if out.suffix.lower() not in (".alog", ".csv"):
            raise ConfigError(f"{str(out)!r}: use a .alog or .csv file name", param="--out")
        res = replay_alog(
            mission,
            alog,
            delivery=delivery,
            variant=variant or (ctx.obj or {}).get("variant"),  # type: ignore[arg-type]
            block=block,
        )
        res.write(out)
        if as_json:
            typer.echo(json.dumps(res.deviations))
            typer.echo(f"rule: {res.rule_text}; wrote {out}", err=True)
        else:
            typer.echo(res.report())
            typer.echo(f"wrote {out}")
        if not res.passed:
            bad = ", ".join(
                f"{k} {v:.3g} > {res.tolerances[k]:.3g}" for k, v in res.failures.items()
            )
            raise EngineError(f"replay deviates beyond the tolerance: {bad}")

    @moos.command("compare")
    def compare_cmd(
        run: Path = typer.Argument(..., help="The mission log to judge (.alog)."),
        refs: list[Path] = typer.Argument(..., help="Recorded runs of the same mission (.alog)."),
        as_json: bool = typer.Option(False, "--json", help="Print the figures as JSON."),
    ) -> None:
        """Closed-loop figures of RUN against each recorded run (README §2.3 metrics)."""
        from marinesim.interop.moos.spread import compare_tracks, mission_track

        mine = mission_track(run)
        table = {r.name: compare_tracks(mine, mission_track(r)) for r in refs}
        report = {
            "duration_from_motion_s": mine.duration_from_motion,
            "wpt_changes_after_motion_s": mine.wpt_changes,
            "runs": table,
        }
        if as_json:
            typer.echo(json.dumps(report))
            return
        typer.echo(
            f"{run.name}: complete - motion start {mine.duration_from_motion:.2f} s, path "
            f"{mine.path_length:.1f} m, WPT_INDEX changes (s after motion start): "
            + ", ".join(f"{t:.2f}->{v:g}" for t, v in mine.wpt_changes)
        )
        for name, m in table.items():
            typer.echo(
                f"  vs {name}: along-track max {m['max_dist_equal_along_track_m']:.2f} m, "
                f"Hausdorff {m['hausdorff_m']:.2f} m, equal time since motion "
                f"{m['max_dist_equal_time_from_motion_start_m']:.2f} m, duration diff "
                f"{m['duration_from_motion_diff_s']:.2f} s"
            )

    app.add_typer(moos, name="moos")


def _nav_stream(
    app_: Any,
    loaded: Any,
    settings: Any,
    mission: Path,
    log: Path,
    log_format: str,
    live: bool,
    live_port: int,
) -> Any:
    """The app's navigation as ROS 2 topics (``--format mcap``, ``--live``), or None.

    With ``--scenario`` the engine's own log is streamed instead (``<log stem>/``: Parquet and,
    with ``--format mcap``, ``log.mcap``; ``--live`` serves its topics).
    """
    if log_format != "mcap" and not live:
        return None
    if hasattr(app_, "sim"):
        return _EngineLog(app_.sim, log.with_suffix(""), log_format, live_port if live else None)
    from marinesim.io.mcap.tracks import NavStream

    cfg = loaded.config
    lat, lon = getattr(cfg, "lat_origin", None), getattr(cfg, "long_origin", None)
    prefix = "NAV" if hasattr(app_, "scenario") else str(cfg.prefix)
    nav = NavStream(
        settings.name,
        prefix,
        path=log.with_suffix(".mcap") if log_format == "mcap" else None,
        live_port=live_port if live else None,
        origin=(lat, lon) if lat is not None and lon is not None else None,
        identity={"scenario": str(mission)},
        on_live_start=lambda url: typer.echo(
            f"{settings.name}: live: Foxglove WebSocket on {url}", err=True
        ),
    )
    app_.on_iterate = nav.add
    return nav


class _EngineLog:
    """The scenario vehicle's engine log under ``directory`` (and ``--live``), finalised by
    :meth:`close` when the app stops (status ``interrupted``, ended by the MOOS app)."""

    def __init__(self, sim: Any, directory: Path, log_format: str, live_port: int | None):
        self.sim = sim
        sim.stream_to(directory, "mcap" if log_format == "mcap" else "parquet")
        self.log = None
        self.live = None
        if live_port is not None:
            from marinesim.io.mcap.live import attach_live

            def announce(url: str) -> None:
                typer.echo(f"{sim.name}: live: Foxglove WebSocket on {url}", err=True)

            # the app's loop paces
            self.live = attach_live(sim, port=live_port, pace=False, on_start=announce)

    def close(self) -> None:
        self.sim.interrupt("MOOS app stopped")
        self.sim.run()
        files = self.sim.output_files
        self.log = files.get("log_mcap") or files.get("log_parquet")


def _has_block(mission: Path, name: str) -> bool:
    from marinesim.interop.moos.moosfile import read_moos_file

    return read_moos_file(mission).find_block(name) is not None
