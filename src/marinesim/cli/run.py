"""``marinesim run``, ``demo``, ``plot``, ``plugins`` and ``scenarios``: glue over the Python API.

The logic lives in :mod:`marinesim.scenario` (loading, building), :mod:`marinesim.engine`
(running) and :mod:`marinesim.io` (logs, figures).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from marinesim.cli import grammar
from marinesim.cli.options import (
    deprecated_option,
    fig_format_option,
    live_port_option,
    out_option,
    pick_out,
)
from marinesim.core.errors import ConfigError, EngineError, MarinesimError, NumericalError

_ENTITY_KINDS = ("motion", "controller", "autonomy", "sensor", "interaction", "metric")


def _echo(text: str) -> None:
    typer.echo(text)


def _echo_metrics(rows: list[dict[str, Any]], limit: int = 24) -> None:
    """Print the run's metric summary (the first ``limit`` rows; all are in metrics.csv)."""
    for r in rows[:limit]:
        who = r.get("entity") or "world"
        val = r.get("value")
        txt = f"{val:.6g}" if isinstance(val, float) else str(val)
        _echo(f"  {r.get('plugin', '')}: {who}: {r.get('metric')} = {txt} {r.get('unit') or ''}")
    if len(rows) > limit:
        _echo(f"  ... {len(rows) - limit} more rows in metrics.csv")


def _default_outdir(sim: Any) -> Path:
    from marinesim.io.log import safe_name  # a scenario name never leaves the folder

    return Path("marinesim-runs") / f"{safe_name(sim.name)}-seed{sim.seed}"


def check_source(source: str) -> None:
    """Reject what is not a scenario before the YAML loader sees it.

    A ``.moos`` mission file points to ``marinesim usm run``; a name that is neither a file
    nor a bundled scenario gets a did-you-mean among the bundled names.

    Raises
    ------
    ConfigError
        With the hint.
    """
    from marinesim.core.errors import suggest
    from marinesim.scenario import builtin_names

    if source.lower().endswith(".moos"):
        raise ConfigError(
            "this is a .moos file: use `marinesim usm run " + source + " --duration SECONDS`",
            file=source,
        )
    names = list(builtin_names())
    if Path(source).exists() or source in names:
        return
    if "/" in source or "\\" in source or source.lower().endswith((".yaml", ".yml")):
        raise ConfigError("scenario file not found", file=source)
    close = suggest(source, names)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise ConfigError(
        f"no scenario file or bundled scenario named {source!r}; {hint}"
        f"(bundled: {', '.join(names)}; `marinesim scenarios` lists them)"
    )


def _execute(
    source: str,
    *,
    outdir: Path | None,
    seed: int | None,
    variables: list[str] | None,
    sets: list[str] | None,
    plot: bool,
    fmt: str,
    progress: bool,
    fig_format: str = "png",
    live_port: int | None = None,
    compiled: bool | None = None,
) -> int:
    """Load, run, save and plot; return the exit code (0 ok, 1 failed/diverged)."""
    from marinesim.cli.options import check_fig_format
    from marinesim.engine.outputs import stop_on_signals
    from marinesim.io.log import FORMATS
    from marinesim.scenario import load_simulation

    want_alog = fmt == "alog"  # MOOS .alog, with the loadable Parquet log beside it
    if want_alog:
        fmt = "parquet"
    if fmt not in FORMATS:
        raise ConfigError(
            f"unknown log format {fmt!r} (use csv, parquet, both, alog or mcap)", param="--format"
        )
    fig_format = check_fig_format(fig_format)
    check_source(source)
    sim = load_simulation(source, variables=variables or None, sets=sets or None, seed=seed)
    sim.compiled = compiled
    if outdir is not None:  # the output rule: missing parents are created with a warning
        from marinesim.cli.options import out_folder

        out_folder(outdir)
    out = outdir if outdir is not None else _default_outdir(sim)
    if live_port is not None:  # the same topics as log.mcap, over the Foxglove WebSocket
        from marinesim.io.mcap.live import attach_live

        sim.stream_to(out, fmt)
        def announce(url: str) -> None:
            _echo(
                f"live: Foxglove WebSocket on {url} (Open connection → Foxglove WebSocket), "
                f"paced at {sim.clock.time_warp:g}x real time"
            )

        attach_live(sim, port=live_port, on_start=announce)
    else:
        sim.stream_to(out, fmt)  # folder checked before the first step; the log streams
    if sim.seed_drawn:
        _echo(f"seed: {sim.seed} (drawn from OS entropy; saved in the manifest and scenario.yaml)")
    man = sim.manifest()
    if man["perfect_navigation"]:
        names = man["perfect_navigation"]
        shown = ", ".join(names[:6]) + (f", ... ({len(names)} in all)" if len(names) > 6 else "")
        _echo(f"note: perfect navigation (belief = truth, no estimator) for {shown}")
    if man["oracle"]:
        _echo(f"note: oracle truth access for {', '.join(man['oracle'])}")
    result = None
    error: BaseException | None = None
    try:
        from marinesim.cli.progress import compile_notice

        with compile_notice(), stop_on_signals(sim) as received:
            if progress and grammar.progress_wanted() != "off":
                result = _run_with_bar(sim)
            else:
                result = sim.run()
    except MarinesimError as exc:
        error = exc
        result = getattr(exc, "result", None)
    except KeyboardInterrupt:  # a second signal: the streamed log is kept (exit 130)
        typer.echo(f"interrupted: partial log in {out} (status interrupted)", err=True)
        raise
    except Exception as exc:  # a plugin bug: keep the log, report it as a failed run
        error = EngineError(f"run failed at t = {sim.t:g} s: {type(exc).__name__}: {exc}")
        error.__cause__ = exc
        result = getattr(exc, "result", None)
    if result is not None:
        files = sim.output_files
        if want_alog:
            from marinesim.io.alog import write_result_alog

            files["log_alog"] = write_result_alog(result, Path(out) / "log.alog")
        logs = [
            str(files[k])
            for k in ("log_alog", "log_mcap", "log_csv", "log_parquet")
            if k in files
        ]
        _echo(f"log: {', '.join(logs)} (status {result.status}, {len(result.t)} frames)")
        _echo(f"manifest: {files['manifest']}")
        warned = [e for e in result.events if e.severity in ("warning", "error", "critical")]
        if warned:
            _echo(
                f"events: {len(warned)} warnings/errors in {files['events']} (first: {warned[0].text})"
            )
        if plot and len(result.t) > 0 and "log_error" not in result.manifest:
            from marinesim.io.figures import save_all_figures

            for path in save_all_figures(result, out, fmt=fig_format).values():
                _echo(f"figure: {path}")
        if "metrics" in files:
            _echo(f"metrics: {files['metrics']} ({len(result.metrics)} rows)")
            _echo_metrics(result.metrics)
    if error is not None:
        raise error
    assert result is not None
    if result.status == "diverged":
        # raised (not returned): the CLI's entry point maps MarinesimError to exit code 1
        diverged = [e for e in result.events if e.kind == "NumericalError"]
        text = diverged[0].text if diverged else "non-finite state"
        raise NumericalError(f"run diverged (log kept in {out}): {text}")
    if result.status == "interrupted":
        why = result.manifest.get("ended_by")
        typer.echo(f"interrupted by {why}: partial log in {out} (status interrupted)", err=True)
        return 143 if received[:1] == ["SIGTERM"] else 130
    _echo(
        f"ended by: {result.manifest.get('ended_by')} at t = {result.t[-1]:g} s "
        f"(wall {result.manifest.get('wall_time_s', 0.0):.2f} s)"
    )
    return 0


def check_scenario(
    source: str,
    *,
    variables: list[str] | None = None,
    sets: list[str] | None = None,
    strict: bool = False,
) -> str:
    """Load and build a scenario without running it; return the summary ``check`` prints.

    Parameters
    ----------
    source : str
        Scenario file or bundled scenario name.
    variables, sets : list of str, optional
        ``--var NAME=VALUE`` and ``--set PATH=VALUE`` items.
    strict : bool
        Configuration warnings become errors (as ``strict: true`` in the file).

    Raises
    ------
    ConfigError
        Whatever ``marinesim run`` would reject, located at its file, line and parameter.
    """
    from marinesim.scenario import load_simulation

    all_sets = list(sets or []) + (["strict=true"] if strict else [])
    sim = load_simulation(source, variables=variables or None, sets=all_sets or None)
    man = sim.manifest()
    end = sim.clock.end
    lines = [
        f"scenario {sim.name}: ok"
        + ("" if strict else f" (sha256 {man.get('scenario_sha256', '-')})"),
        f"  seed {sim.seed}" + (" (drawn from OS entropy)" if sim.seed_drawn else ""),
        f"  dt {man['dt']:g} s, {man['substeps']} substep(s), t = {sim.clock.start:g}"
        f" -> {'open end' if end is None else f'{end:g} s'}",
    ]
    for blk in sim.blocks:
        lines.append(f"  block {blk.name}: {blk.n} vehicle(s)")
        for p in man["plugins"]:
            if p.get("block") != blk.name:
                continue
            rate = f" at {p['rate_hz']:g} Hz" if p.get("rate_hz") else ""
            lines.append(f"    {p['kind']:<11} {p['name']} ({p['plugin']}){rate}")
    blocks = {b.name for b in sim.blocks}
    world = [p for p in man["plugins"] if p.get("block") not in blocks]
    for p in world:
        lines.append(f"  world {p['kind']:<11} {p['name']} ({p['plugin']})")
    if man["perfect_navigation"]:
        lines.append(
            "  perfect navigation (belief = truth): " + ", ".join(man["perfect_navigation"])
        )
    return "\n".join(lines)


def _run_with_bar(sim: Any) -> Any:
    """Run with the simulated-time progress (bar on a terminal, 10 % lines otherwise)."""
    from marinesim.cli.progress import Progress

    start = sim.clock.start
    end = sim.clock.end
    with Progress(sim.name, end - start if end is not None else None, unit="s") as bar:
        import time

        state = {"calls": 0, "wall": time.perf_counter()}

        def cb(t: float, t_end: float | None) -> None:
            # every 25 plugin ticks, or 0.1 s of wall time: a compiled call runs up to
            # thousands of ticks in one callback, which must move the bar too
            state["calls"] += 1
            now = time.perf_counter()
            if state["calls"] % 25 == 0 or now - state["wall"] >= 0.1:
                state["wall"] = now
                bar.update(round(t - start, 3))

        result = sim.run(progress=cb)
        bar.update(round(sim.t - start, 3))
    return result


def register(app: typer.Typer) -> None:
    """Add ``run``, ``demo``, ``plot``, ``plugins`` and ``scenarios`` to ``app``."""

    @app.command("run")
    def run_cmd(
        scenario: str = typer.Argument(
            ..., help="Scenario YAML file (or a bundled scenario name).", metavar="SCENARIO"
        ),
        out: Path = out_option("Output directory (default marinesim-runs/<name>-seed<seed>)."),
        outdir: Path = deprecated_option("--outdir"),
        seed: int = typer.Option(None, "--seed", help="Override the scenario seed."),
        var: list[str] = typer.Option(
            None, "--var", help="Template variable NAME=VALUE (repeatable).", metavar="NAME=VALUE"
        ),
        set_: list[str] = typer.Option(
            None,
            "--set",
            help="Override PATH=VALUE, e.g. time.end=60 [s] (repeatable).",
            metavar="PATH=VALUE",
        ),
        no_plot: bool = typer.Option(False, "--no-plot", help="Do not draw the figures."),
        fmt: str = typer.Option(
            "parquet",
            "--format",
            help="Log format: parquet (streamed, default), csv, both, alog (MOOS pLogger "
            "format + Parquet) or mcap (ROS 2 topics for Foxglove/ros2 bag + Parquet).",
            metavar="csv|parquet|both|alog|mcap",
        ),
        fig_format: str = fig_format_option(),
        no_progress: bool = typer.Option(False, "--no-progress", help="No progress bar."),
        live: bool = typer.Option(
            False,
            "--live",
            help="Serve the run's ROS 2 topics over the Foxglove WebSocket protocol on "
            "loopback while it goes, paced at real time (or the scenario's time_warp).",
        ),
        port: int = live_port_option("--port"),
        compiled: bool = typer.Option(
            None,
            "--compiled/--no-compiled",
            help="Require the compiled tick (exit 2 saying why it does not apply) / run every "
            "tick through the plugins. Default: compiled where it applies; the manifest's "
            "compiled_why_not says why not.",
            show_default=False,
        ),
    ) -> None:
        """Run a scenario: progress bar, log (CSV/Parquet + manifest) and figures."""
        code = _execute(
            scenario,
            outdir=pick_out(out, outdir=outdir),
            fig_format=fig_format,
            seed=seed,
            variables=var,
            sets=set_,
            plot=not no_plot,
            fmt=fmt,
            progress=not no_progress,
            live_port=port if live else None,
            compiled=compiled,
        )
        if code:
            raise typer.Exit(code)

    @app.command("demo")
    def demo_cmd(
        out: Path = out_option("Output directory (default marinesim-runs/demo_survey-seed<seed>)."),
        outdir: Path = deprecated_option("--outdir"),
        end: float = typer.Option(
            None,
            "--end",
            help="End time [s] (default: the scenario's 900 s or when all vehicles are done).",
        ),
        seed: int = typer.Option(None, "--seed", help="Override the seed (spawn jitter)."),
        no_plot: bool = typer.Option(False, "--no-plot", help="Do not draw the figures."),
        fig_format: str = fig_format_option(),
        fmt: str = typer.Option(
            "both",
            "--format",
            help="Log format: both (CSV + Parquet, default), parquet, csv, alog or mcap "
            "(ROS 2 topics for Foxglove/ros2 bag + Parquet).",
            metavar="csv|parquet|both|alog|mcap",
        ),
        live: bool = typer.Option(
            False, "--live", help="Serve the run's ROS 2 topics over Foxglove WebSocket (see run)."
        ),
        port: int = live_port_option("--port"),
    ) -> None:
        """Run the bundled 3-vehicle survey (current field, gust script); write log and figures."""
        sets = [f"time.end={end}"] if end is not None else None
        code = _execute(
            "demo_survey",
            outdir=pick_out(out, outdir=outdir),
            fig_format=fig_format,
            seed=seed,
            variables=None,
            sets=sets,
            plot=not no_plot,
            fmt=fmt,
            progress=True,
            live_port=port if live else None,
        )
        if code:
            raise typer.Exit(code)

    @app.command("check")
    def check_cmd(
        source: str = typer.Argument(
            ..., help="Scenario YAML file, a bundled scenario name, or a .moos mission file."
        ),
        var: list[str] = typer.Option(
            None, "--var", help="Template variable NAME=VALUE (repeatable).", metavar="NAME=VALUE"
        ),
        set_: list[str] = typer.Option(
            None, "--set", help="Override PATH=VALUE (repeatable).", metavar="PATH=VALUE"
        ),
        strict: bool = typer.Option(
            False, "--strict", help="Treat configuration warnings as errors."
        ),
    ) -> None:
        """Validate a scenario (or a .moos file's uSimMarine block) without running it."""
        if source.lower().endswith(".moos"):
            from marinesim.interop.moos.files import load_usm_config
            from marinesim.interop.moos.interface import check_report

            loaded = load_usm_config(Path(source))
            if strict and loaded.warnings:
                raise ConfigError(f"{loaded.warnings[0]} (--strict: warnings are errors)")
            typer.echo(
                check_report(loaded.config, loaded.warnings, file=source, block=loaded.block),
                nl=False,
            )
            return
        _echo(check_scenario(source, variables=var, sets=set_, strict=strict))

    @app.command("plot")
    def plot_cmd(
        rundir: Path = typer.Argument(
            ...,
            help="Run directory written by 'marinesim run', a MOOS .alog, or a run's .mcap.",
            metavar="RUNDIR",
        ),
        out: Path = out_option("Where to write the figures (default: the run directory)."),
        outdir: Path = deprecated_option("--outdir"),
        fig_format: str = fig_format_option(),
    ) -> None:
        """Re-draw the figures of a saved run (SURFTRAK runs get the SURFTRAK figure too)."""
        from marinesim.cli.options import check_fig_format, out_folder, utf8_inputs
        from marinesim.io.figures import save_all_figures
        from marinesim.io.log import load_run

        fmt = check_fig_format(fig_format)
        with utf8_inputs(rundir):
            if rundir.suffix.lower() == ".alog":  # a MOOS log (pLogger's or ours)
                from marinesim.io.alog import load_alog_result

                result, default_dir = load_alog_result(rundir), rundir.parent
            elif rundir.suffix.lower() == ".mcap":  # our ROS 2 MCAP log
                from marinesim.io.mcap.reader import load_mcap_result

                result, default_dir = load_mcap_result(rundir), rundir.parent
                if result.manifest.get("mcap_note"):
                    typer.echo(f"note: {result.manifest['mcap_note']}", err=True)
            else:
                result, default_dir = load_run(rundir), rundir
        folder = out_folder(pick_out(out, outdir=outdir) or default_dir)
        for p in save_all_figures(result, folder, fmt=fmt).values():
            _echo(f"figure: {p}")

    @app.command("scenarios")
    def scenarios_cmd() -> None:
        """List the bundled scenarios."""
        import yaml

        from marinesim.scenario import builtin_names, builtin_path

        for name in builtin_names():
            text = builtin_path(name).read_text(encoding="utf-8")
            desc = ""
            for line in text.splitlines():
                if line.startswith("description:"):
                    desc = str(yaml.safe_load(line.partition(":")[2]) or "")
            _echo(f"{name:20s} {desc}")

    plugins = typer.Typer(
        name="plugins",
        help="List registered plugins and show their parameters.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
    )
    app.add_typer(plugins)

    @plugins.command("list")
    def plugins_list() -> None:
        """Registered engine plugins by kind."""
        from marinesim.core import registry

        for kind in _ENTITY_KINDS:
            names = registry.names(kind)
            if not names:
                continue
            _echo(f"{kind}:")
            for name in names:
                try:
                    cls = registry.get(kind, name)
                    desc = cls.describe() if hasattr(cls, "describe") else ""
                except ImportError as exc:
                    desc = f"(unavailable: {exc})"
                _echo(f"  {name:26s} {desc}")

    @plugins.command("show")
    def plugins_show(
        name: str = typer.Argument(..., help="Plugin name, e.g. waypoints."),
        kind: str = typer.Option(None, "--kind", help="Kind, when the name exists in several."),
        example: bool = typer.Option(
            False, "--example", help="Print a scenario entry with every parameter."
        ),
        interface: bool = typer.Option(
            False, "--interface", help="Print the topics it subscribes to and publishes."
        ),
    ) -> None:
        """Parameters (type, default, unit), topics and hooks of one plugin."""
        from marinesim.engine.describe import plugin_example, plugin_info, plugin_interface

        if example and interface:
            raise ConfigError("give --example or --interface, not both", param="--interface")
        if example:
            _echo(plugin_example(name, kind))
        elif interface:
            typer.echo(plugin_interface(name, kind), nl=False)
        else:
            _echo(plugin_info(name, kind))
