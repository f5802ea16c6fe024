"""``marinesim surftrak``: run the SURFTRAK harness, the six-terrain suite, and the figure."""

from __future__ import annotations

import math
from pathlib import Path

import typer

from marinesim.cli.options import (
    FIG_FORMATS,
    check_fig_format,
    default_out,
    deprecated_option,
    fig_format_option,
    optional_value_command,
    out_file,
    out_folder,
    out_option,
    pick_out,
    utf8_inputs,
)

__all__ = ["register"]

surftrak_app = typer.Typer(
    help="ArduSub SURFTRAK (range hold) with the ardusub_surftrak SITL harness reproduced.",
    no_args_is_help=True,
)


def _load_params(params: Path | None, overrides: list[str], ekf3: bool = False):  # noqa: ANN202
    """SurftrakParams (and, with ``ekf3``, the EKF3 height model's EK3_* values, which the
    autopilot's parameters then leave out of their "accepted, no effect" list)."""
    from marinesim.interop.ardupilot import (
        EKF3_NAMES,
        ekf3_params,
        param_sources,
        read_params,
        surftrak_params,
    )
    from marinesim.interop.surftrak_runner import sitl_params

    used = EKF3_NAMES if ekf3 else frozenset()
    sources = param_sources(params, overrides)
    if params is not None:
        sp = read_params(params, overrides, used_elsewhere=used)[0]
    elif overrides:
        sp = surftrak_params(*sources, base=sitl_params(), used_elsewhere=used)[0]
    else:
        sp = sitl_params()
    return (sp, ekf3_params(*sources)) if ekf3 else sp


def _load_pilot(pilot: Path | None, stick):  # noqa: ANN001, ANN202
    if pilot is None:
        return None
    from marinesim.control.pilot import read_pilot_script

    return read_pilot_script(pilot, stick=stick)


def _bathymetry_profile(path: Path, track: str, duration: float):  # noqa: ANN202
    """Read a bathymetry grid and sample it under the straight track (a terrain profile)."""
    from marinesim.core.errors import ConfigError
    from marinesim.environment.terrain import profile_along_track, read_bathymetry

    parts = track.split(",")
    try:
        vals = [float(v) for v in parts]
    except ValueError:
        vals = []
    if len(vals) != 4:
        raise ConfigError(
            f"--track expects NORTH,EAST,HEADING_DEG,SPEED (4 numbers), got {track!r}",
            param="track",
        )
    bathy = read_bathymetry(path)
    n0, e0, hdg, speed = vals
    return profile_along_track(
        bathy, north0=n0, east0=e0, heading_deg=hdg, speed=speed, duration=max(duration, 0.1),
        name=path.stem,
    )  # fmt: skip


def _check_figure_format(fmt: str, param: str) -> None:
    """ConfigError (exit 2) unless matplotlib can write figures of this format."""
    from matplotlib.backend_bases import FigureCanvasBase

    from marinesim.core.errors import ConfigError

    known = sorted(FigureCanvasBase.get_supported_filetypes())
    if fmt.lower() not in known:
        raise ConfigError(
            f"figure format {fmt!r} is not supported ({', '.join(known)})", param=param
        )


def _fmt(x: float, spec: str = ".3f") -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


@surftrak_app.command("run", cls=optional_value_command("--plot"))
def run_cmd(
    terrain: str | None = typer.Option(
        None, "--terrain", help="Terrain file or shipped profile name."
    ),
    out: Path | None = out_option(
        "Output directory (run.csv + .messages/.ctun/.stamped/.merged.csv inside; default "
        "marinesim-runs/surftrak-<terrain>-seed<seed>); a path ending in .csv names the run "
        "log itself."
    ),
    delay: float = typer.Option(0.3, "--delay", help="Rangefinder delay [s]."),
    noise: float = typer.Option(0.05, "--noise", help="Rangefinder noise sigma [m]."),
    duration: float = typer.Option(150.0, "--duration", help="Simulated time [s]."),
    seed: int = typer.Option(0, "--seed", help="Root seed."),
    params: Path | None = typer.Option(None, "--params", help="ArduPilot .params file."),
    param: list[str] = typer.Option(
        [], "--param", help="NAME=VALUE override (repeatable).", metavar="NAME=VALUE"
    ),
    pilot: Path | None = typer.Option(None, "--pilot", help="Pilot script (TIME KIND VALUE)."),
    start_z: float = typer.Option(-11.15, "--start-z", help="Initial z, up [m]."),
    plot: str | None = typer.Option(
        None,
        "--plot",
        metavar="[FIG]",
        help="Draw the 3-panel figure: beside the run log (RUN.<fmt>), or into FIG when a "
        "file name is given (its suffix sets the format).",
    ),
    fig_format: str = fig_format_option(),
    bathymetry: Path | None = typer.Option(
        None, "--bathymetry", help="Gridded bathymetry CSV (instead of --terrain)."
    ),
    track: str = typer.Option(
        "0,0,0,0.5",
        "--track",
        help="With --bathymetry: NORTH,EAST,HEADING_DEG,SPEED [m, m, deg, m/s].",
    ),
    ekf3: bool = typer.Option(
        False,
        "--ekf3",
        help="The autopilot reads height and climb rate through ArduSub's EKF3 height model "
        "(EK3_* from --params/--param), as the firmware does; default: the truth.",
    ),
) -> None:
    """Run SURFTRAK over a terrain and write a CTUN-style log (+ messages, ctun, merged)."""
    from marinesim.core.errors import ConfigError
    from marinesim.interop.surftrak_runner import run_surftrak
    from marinesim.io.ctun import write_run

    if (terrain is None) == (bathymetry is None):
        raise ConfigError("give exactly one of --terrain and --bathymetry", param="terrain")
    fmt = check_fig_format(fig_format)
    fig_path: Path | None = None
    if plot:  # --plot FIG: the figure file, its suffix sets the format
        fig_path = Path(plot)
        if fig_path.suffix:
            fmt = check_fig_format(fig_path.suffix.lstrip("."), param="--plot")
        else:
            fig_path = fig_path.with_suffix(f".{fmt}")
    label = f"surftrak-{terrain if terrain is not None else Path(str(bathymetry)).stem}-seed{seed}"
    run_csv = out_file(out, label=Path(label).name, name="run.csv", suffixes=(".csv",))
    ekf = None
    if ekf3:
        p, ekf = _load_params(params, param, ekf3=True)
    else:
        p = _load_params(params, param)
    if bathymetry is not None:
        terrain = _bathymetry_profile(bathymetry, track, duration + delay)
    from marinesim.cli.progress import compile_notice

    with compile_notice():
        res = run_surftrak(
            terrain, delay=delay, noise=noise, duration=duration, seed=seed, params=p,
            pilot=_load_pilot(pilot, p.stick()), start_z=start_z, ekf3=ekf,
        )  # fmt: skip
    paths = write_run(res, run_csv)
    m = res.metrics
    typer.echo(
        f"{res.terrain.name}: {duration:g} s, delay {delay:g} s, KPv {p.kpv:.2f} "
        f"(50*PSC_JERK_Z/PILOT_ACCEL_Z), target {_fmt(m['target'], '.2f')} m, "
        f"RMS e {_fmt(m['rms_e'])} m, max e {_fmt(m['max_e'])} m, min e {_fmt(m['min_e'])} m"
        + (f"; EKF3 height, EK3_HGT_DELAY {ekf.EK3_HGT_DELAY:g} ms" if ekf is not None else "")
    )
    for msg in res.messages:
        typer.echo(f"  {msg.t:8.2f} s  {msg.severity:7s} {msg.text}")
    typer.echo(f"wrote {paths['run']} (+ .messages/.ctun/.stamped/.merged.csv)")
    if plot is not None:
        from marinesim.io.surftrak_plot import plot_result

        fig = plot_result(res, str(run_csv.with_suffix("")))
        target = fig_path or run_csv.with_name(f"{run_csv.stem}.{fmt}")
        out_folder(target.parent, param="--plot")
        fig.savefig(target)
        typer.echo(f"wrote {target}")


@surftrak_app.command("suite")
def suite_cmd(
    delay: float = typer.Option(0.3, "--delay", help="Rangefinder delay [s]."),
    duration: float = typer.Option(150.0, "--duration", help="Simulated time per terrain [s]."),
    seed: int = typer.Option(0, "--seed", help="Root seed."),
    params: Path | None = typer.Option(None, "--params", help="ArduPilot .params file."),
    param: list[str] = typer.Option(
        [], "--param", help="NAME=VALUE override (repeatable).", metavar="NAME=VALUE"
    ),
    out: Path | None = out_option(
        "Output directory for logs and figures (default marinesim-runs/surftrak_suite-seed<seed>)."
    ),
    out_dir: Path | None = deprecated_option("--out-dir"),
    fig_format: str = fig_format_option(),
    old_format: str | None = typer.Option(None, "--format", hidden=True),
) -> None:
    """Run all six terrains and print the tracking metrics; write logs and figures."""
    from marinesim.core.errors import ConfigError
    from marinesim.environment.terrain import BUILTIN_PROFILES
    from marinesim.interop.surftrak_runner import run_surftrak
    from marinesim.io.ctun import write_run
    from marinesim.io.surftrak_plot import plot_result

    out_dir = pick_out(out, out_dir=out_dir) or default_out(f"surftrak_suite-seed{seed}")
    if old_format is not None:
        typer.echo("warning: --format is deprecated; use --fig-format", err=True)
        fig_format = old_format
    fmt = check_fig_format(fig_format)
    if not (math.isfinite(duration) and duration > 0):
        raise ConfigError(f"duration must be a finite number of seconds > 0, got {duration}",
                          param="duration")  # fmt: skip
    if not (math.isfinite(delay) and delay >= 0):
        raise ConfigError(f"delay must be a finite number of seconds >= 0, got {delay}",
                          param="delay")  # fmt: skip
    p = _load_params(params, param)
    out_folder(out_dir)
    typer.echo(f"delay {delay:g} s, KPv {p.kpv:.2f}, {duration:g} s per terrain, seed {seed}")
    head = (
        f"{'terrain':20s} {'target':>7s} {'RMS e':>7s} {'max e':>7s} {'min e':>7s} "
        f"{'CRt min':>7s} {'CRt max':>7s} {'CRt var':>8s} {'RF err':>8s} {'targets':>7s}"
    )
    typer.echo(head)
    from marinesim.cli.progress import Progress, compile_notice

    with Progress("terrains", len(BUILTIN_PROFILES)) as bar:
        for k, name in enumerate(BUILTIN_PROFILES):
            with compile_notice():
                res = run_surftrak(name, delay=delay, duration=duration, seed=seed, params=p)
            m = res.metrics
            write_run(res, out_dir / f"{name}.csv")
            fig = plot_result(res, str(out_dir / name))
            fig.savefig(out_dir / f"{name}.{fmt}")
            typer.echo(
                f"{name:20s} {_fmt(m['target'], '7.2f')} {_fmt(m['rms_e'], '7.3f')} "
                f"{_fmt(m['max_e'], '7.3f')} {_fmt(m['min_e'], '7.3f')} {m['crt_min']:7.0f} "
                f"{m['crt_max']:7.0f} {m['crt_var']:8.2f} {m['rf_error_sum']:8.3f} "
                f"{int(m['n_targets']):7d}"
            )
            bar.update(k + 1)
    typer.echo(f"wrote logs and figures to {out_dir}")


@surftrak_app.command("plot")
def plot_cmd(
    merged: Path = typer.Argument(
        ...,
        help="merged.csv, a run directory with merged.csv or ctun.csv + stamped_terrain.csv, "
        "or a real ArduSub log (.BIN DataFlash or .tlog, may be gzipped).",
    ),
    overlay: Path | None = typer.Option(
        None,
        "--overlay",
        help="With a .BIN/.tlog: a marinesim run on the same axes (marinesim sitl -o DIR, "
        "or a marinesim surftrak run CSV).",
    ),
    out: Path | None = typer.Option(
        None,
        "-o",
        "--out",
        help="Output directory (the figure is <name>.<fmt> inside) or a figure file "
        "(.png, .pdf, .svg); default marinesim-runs/<name>/<name>.<fmt>.",
        metavar="DIR",
    ),
    fig_format: str = fig_format_option(),
    log_dir: str | None = typer.Option(None, "--log-dir", help="Title prefix (default: folder)."),
) -> None:
    """Draw the 3-panel figure from a merged log; print its title."""
    from marinesim.io.surftrak_plot import plot_merged_file

    fmt = check_fig_format(fig_format)
    if _is_ardupilot_log(merged):
        stem = merged.name.split(".")[0]
    else:
        stem = merged.name if merged.is_dir() else (merged.parent.name or merged.stem)
    stem = stem or "surftrak"
    if out is not None and out.suffix and not out.is_dir():
        check_fig_format(out.suffix.lstrip("."), "--out")
    with utf8_inputs(merged, *([overlay] if overlay is not None else [])):
        if _is_ardupilot_log(merged):
            from marinesim.io.ardulog import read_log, surftrak_log_figure

            log = read_log(merged, ("CTUN", "RFND", "BARO", "MODE", "MSG", "HEARTBEAT",
                                    "GLOBAL_POSITION_INT", "DISTANCE_SENSOR", "SYSTEM_TIME"))  # fmt: skip
            fig = surftrak_log_figure(log, overlay=overlay, title=log_dir)
        else:
            if overlay is not None:
                from marinesim.core.errors import ConfigError

                raise ConfigError("--overlay needs a .BIN or .tlog log", param="--overlay")
            fig = plot_merged_file(merged, log_dir)
    suffixes = tuple(f".{f}" for f in FIG_FORMATS)
    target = out_file(out, label=stem, name=f"{stem}.{fmt}", suffixes=suffixes)
    fig.savefig(target)
    typer.echo(fig._suptitle.get_text())
    typer.echo(f"wrote {target}")


def _is_ardupilot_log(path: Path) -> bool:
    """A DataFlash .BIN or MAVLink .tlog (optionally .gz) by name."""
    name = path.name.lower().removesuffix(".gz")
    return path.is_file() and name.endswith((".bin", ".tlog"))


def register(app: typer.Typer) -> None:
    """Add the ``surftrak`` command group to ``app``."""
    app.add_typer(surftrak_app, name="surftrak")
