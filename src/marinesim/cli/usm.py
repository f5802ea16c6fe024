"""``marinesim usm ...``: the MOOS face of the uSimMarine model.

Glue only: the logic lives in :mod:`marinesim.interop.moos` (files, runner, interface texts)
and :mod:`marinesim.reference.usm` (replays).
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import typer

from marinesim.cli.options import (
    check_fig_format,
    deprecated_option,
    fig_format_option,
    out_file,
    out_option,
    pick_out,
)
from marinesim.core.errors import ConfigError, EngineError, MarinesimError, NumericalError

_VARIANTS = ("usm", "usm_v22")
_COMPATS = ("doc", "moos")


def _check_choice(value: str | None, choices: tuple[str, ...], param: str) -> None:
    if value is not None and value not in choices:
        raise ConfigError(f"must be one of {', '.join(choices)}, not {value!r}", param=param)


def _emit(warns: list[Any]) -> None:
    for w in warns:
        typer.echo(f"warning: {w}", err=True)


def _save_log(run: Any, output: Path, src: str, mission: Path | None = None) -> None:
    """The run's log: MOOS ``.alog`` (published variables) when the name says so, else CSV.

    The ``.alog``'s ``DB_TIME`` names the vehicle after the mission's ``Community`` (the
    process name when it has none), as the vehicle's own pLogger log would."""
    if output.suffix.lower() == ".alog":
        from marinesim.interop.moos import runner
        from marinesim.io.alog import NodeReporter, write_table_alog

        inputs = tuple(getattr(runner, "INPUT_COLUMNS", ()))
        cols = set(run.columns)
        xs = [c[:-2] for c in run.columns if c.endswith("_X") and c != "TRUE_X"]
        prefix = next((p for p in xs if p + "_Y" in cols), "NAV")
        node = NodeReporter(src, prefix, mode="NOHELM-EVER")
        write_table_alog(
            run.columns,
            run.rows,
            output,
            src=src,
            skip=runner.MODEL_COLUMNS,
            inputs=inputs,
            input_src="uTimerScript",
            node=node,
            community=_community(mission) or src,
        )
    else:
        run.to_csv(output)


def _community(mission: Path | None) -> str:
    """The mission file's ``Community`` ('' without one, or without a readable file)."""
    from marinesim.interop.moos.moosfile import read_moos_file

    if mission is None or not mission.is_file():
        return ""
    return (read_moos_file(mission).global_value("Community") or "").strip()


def _save_mcap(run: Any, output: Path, src: str, file: Path) -> Path:
    """``log.mcap`` beside the log (``<stem>.mcap`` when -o named the log file)."""
    from marinesim.io.mcap.tracks import usm_run_mcap

    path = output.with_suffix(".mcap")
    return usm_run_mcap(run, path, src, {"scenario": str(file)})


def register(app: typer.Typer) -> None:
    """Add the ``usm`` command group to ``app``."""
    usm = typer.Typer(
        name="usm",
        help="uSimMarine (MOOS-IvP) face: .moos files, example/interface, check, run, replay.",
        no_args_is_help=False,
        invoke_without_command=True,
        pretty_exceptions_enable=False,
    )

    @usm.callback(invoke_without_command=True)
    def usm_main(
        ctx: typer.Context,
        example: bool = typer.Option(
            False, "--example", "-e", help="Print an example configuration block."
        ),
        interface: bool = typer.Option(
            False, "--interface", "-i", help="Print the subscriptions and publications."
        ),
        version: bool = typer.Option(False, "--version", hidden=True),
        alias: str = typer.Option(
            None, "--alias", help="Process name: the ProcessConfig block to read or print."
        ),
        variant: str = typer.Option(
            "usm", "--variant", help="usm (uSimMarine) or usm_v22 (uSimMarineV22)."
        ),
    ) -> None:
        """uSimMarine-exact simulation driven by MOOS mission files."""
        from marinesim import __version__

        _check_choice(variant, _VARIANTS, "--variant")
        ctx.obj = {"alias": alias, "variant": variant}
        if version:
            # `usm` is not the MOOS app face (that is `marinesim moos`): the version belongs to
            # `marinesim --version`; -v is --verbose on every command
            typer.echo(
                "warning: `marinesim usm --version` is deprecated; use `marinesim --version` "
                "(or `marinesim moos --version`, the MOOS app face)",
                err=True,
            )
            typer.echo(
                f"marinesim {__version__} usm (uSimMarine and uSimMarineV22 of MOOS-IvP a2a9b716)"
            )
            return
        if example:
            from marinesim.interop.moos.interface import example_text

            typer.echo(example_text(variant, alias), nl=False)  # type: ignore[arg-type]
            return
        if interface:
            from marinesim.interop.moos.interface import interface_text

            typer.echo(interface_text(variant), nl=False)  # type: ignore[arg-type]
            return
        if ctx.invoked_subcommand is None:
            typer.echo(ctx.get_help())

    def _block(ctx: typer.Context, block: str | None) -> str | None:
        return block or (ctx.obj or {}).get("alias")

    def _variant(ctx: typer.Context, variant: str | None) -> str | None:
        if variant is not None:
            _check_choice(variant, _VARIANTS, "--variant")
            return variant
        v = (ctx.obj or {}).get("variant")
        return None if v == "usm" else v

    @usm.command("check")
    def check_cmd(
        ctx: typer.Context,
        file: Path = typer.Argument(..., help="The .moos mission file."),
        compat: str = typer.Option("doc", "--compat", help="doc (documented) or moos."),
        block: str = typer.Option(None, "--block", help="Block name (default uSimMarine)."),
        variant: str = typer.Option(None, "--variant", help="usm or usm_v22 (default: block)."),
    ) -> None:
        """Validate the uSimMarine block and print the effective parameters and differences."""
        from marinesim.interop.moos.files import load_usm_config
        from marinesim.interop.moos.interface import check_report

        _check_choice(compat, _COMPATS, "--compat")
        loaded = load_usm_config(
            file,
            compat=compat,
            variant=_variant(ctx, variant),  # type: ignore[arg-type]
            block=_block(ctx, block),
        )
        typer.echo(
            check_report(loaded.config, loaded.warnings, file=str(file), block=loaded.block),
            nl=False,
        )

    @usm.command("run")
    def run_cmd(
        ctx: typer.Context,
        file: Path = typer.Argument(..., help="The .moos mission file.", metavar="FILE.moos"),
        duration: float = typer.Option(..., "--duration", help="Simulated time [s]."),
        out: Path = out_option(
            "Output directory (log.csv inside; default marinesim-runs/<file>); "
            "a path ending in .csv (or .alog: MOOS pLogger format) names the log itself."
        ),
        output: Path = deprecated_option("--output"),
        plot: bool = typer.Option(
            False, "--plot", help="Draw trajectory and time series (with the actuators)."
        ),
        fig_format: str = fig_format_option(),
        script: Path = typer.Option(None, "--script", help="Event script (uTimerScript lines)."),
        compat: str = typer.Option("doc", "--compat", help="doc (documented) or moos."),
        block: str = typer.Option(None, "--block", help="Block name (default uSimMarine)."),
        variant: str = typer.Option(None, "--variant", help="usm or usm_v22 (default: block)."),
        log_format: str = typer.Option(
            "csv",
            "--format",
            help="csv (default; .alog by the -o name) or mcap: log.mcap beside the log (ROS 2 "
            "topics for Foxglove / ros2 bag: odometry, NavSatFix, /tf, scene).",
            metavar="csv|mcap",
        ),
    ) -> None:
        """Run the uSimMarine block (dt = 1/AppTick) with timed events; write a CSV."""
        from marinesim.interop.moos.runner import run_moos_file

        _check_choice(compat, _COMPATS, "--compat")
        _check_choice(log_format, ("csv", "mcap"), "--format")
        if log_format == "mcap":
            from marinesim.io.mcap import require

            require("mcap")
        fmt = check_fig_format(fig_format)
        output = out_file(
            pick_out(out, output=output), label=file.stem, name="log.csv",
            suffixes=(".csv", ".alog"),
        )  # fmt: skip
        src = _block(ctx, block) or ("uSimMarineV22" if _variant(ctx, variant) else "uSimMarine")
        from marinesim.cli.progress import Progress

        try:
            with Progress(file.name, None, unit="steps") as bar:
                run = run_moos_file(
                    file,
                    duration=duration,
                    script=script,
                    compat=compat,  # type: ignore[arg-type]
                    variant=_variant(ctx, variant),  # type: ignore[arg-type]
                    block=_block(ctx, block),
                    progress=bar,
                )
        except BaseException as exc:
            partial = getattr(exc, "result", None)
            if partial is None:  # failed before the first iteration: nothing to keep
                raise
            _save_log(partial, output, src, file)
            if log_format == "mcap":
                _save_mcap(partial, output, src, file)
            typer.echo(
                f"run stopped at t = {partial.rows[-1][0]:g} s: partial log written to {output} "
                f"({len(partial.rows)} rows)",
                err=True,
            )
            if isinstance(exc, (MarinesimError, KeyboardInterrupt)):
                raise
            raise EngineError(f"run failed: {type(exc).__name__}: {exc}") from exc
        _emit(run.config_warnings)
        for w in run.warnings:
            typer.echo(f"warning: {w}", err=True)
        _save_log(run, output, src, file)
        typer.echo(f"wrote {output} ({len(run.rows)} rows, {len(run.columns)} columns)")
        if log_format == "mcap":
            typer.echo(f"wrote {_save_mcap(run, output, src, file)} (ROS 2 topics)")
        if plot:
            from marinesim.io.plots import save_usm_run_figures

            for path in save_usm_run_figures(run, output.parent, fmt=fmt, title=file.name):
                typer.echo(f"figure: {path}")

    @usm.command("replay")
    def replay_cmd(
        case: Path = typer.Argument(
            ..., help="A reference NAME.scenario.json.", metavar="CASE.scenario.json"
        ),
        out: Path = out_option(
            "Output directory (NAME.csv inside; default marinesim-runs/replay-NAME); a path "
            "ending in .csv names the file."
        ),
        output: Path = deprecated_option("--output"),
        compat: str = typer.Option("moos", "--compat", help="moos (default) or doc."),
    ) -> None:
        """Replay a reference scenario and write the columns of its expected.csv."""
        _check_choice(compat, _COMPATS, "--compat")
        if not case.exists():
            raise ConfigError("file not found", file=case)
        from marinesim.reference import usm as ref_usm

        kwargs: dict[str, Any] = {}
        if "compat" in inspect.signature(ref_usm.replay_case).parameters:
            kwargs["compat"] = compat
        elif compat != "moos":
            raise ConfigError(
                "replays run in compat=moos only (the cases are the real program's output)",
                param="--compat",
            )
        stem = case.name.removesuffix(".scenario.json")
        output = out_file(
            pick_out(out, output=output), label=f"replay-{stem}", name=f"{stem}.csv",
            suffixes=(".csv",),
        )  # fmt: skip
        try:
            df = ref_usm.replay_case(case, **kwargs)
        except NumericalError as exc:
            partial = getattr(exc, "result", None)
            if partial is not None:  # keep the rows replayed before the state went non-finite
                partial.to_csv(output, index=False, float_format="%.17g")
                typer.echo(f"wrote {output} ({len(partial)} rows before the failure)", err=True)
            raise
        df.to_csv(output, index=False, float_format="%.17g")
        typer.echo(f"wrote {output} ({len(df)} rows, {len(df.columns)} columns)")

    app.add_typer(usm, name="usm")
