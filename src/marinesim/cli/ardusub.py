"""``marinesim ardusub``: the logs and parameter files ArduSub users have."""

from __future__ import annotations

import warnings
from pathlib import Path

import typer

from marinesim.cli.options import default_out, out_folder, out_option

__all__ = ["register"]

ardusub_app = typer.Typer(
    help="ArduSub logs (.BIN, .tlog) and parameter dumps (.params, .parm).",
    no_args_is_help=True,
)


@ardusub_app.command("log")
def log_cmd(
    log: Path = typer.Argument(..., help="DataFlash .BIN or MAVLink .tlog (may be gzipped)."),
    csv_: bool = typer.Option(False, "--csv", help="Write one <TYPE>.csv per message type."),
    out: Path | None = out_option(
        "Directory for the CSV tables (default: marinesim-runs/<log name>_csv)"
    ),
    types: str | None = typer.Option(
        None, "--types", help="Comma-separated message types to keep (default: all)."
    ),
    allow_truncated: bool = typer.Option(
        False, "--allow-truncated", help="Read the complete records of a cut-off log."
    ),
) -> None:
    """Read a log; print its message counts, or extract the messages to CSV tables."""
    from marinesim.io.ardulog import read_log, write_csv_tables

    want = [t.strip() for t in types.split(",") if t.strip()] if types else None
    lg = read_log(log, want, allow_truncated=allow_truncated)
    total = sum(lg.counts.values())
    typer.echo(f"{log}: {lg.kind}, {total} records of {len(lg.counts)} types")
    if lg.tail_bytes:
        typer.echo(f"note: {lg.tail_bytes} bytes after the last record (the logger's last block)")
    if want:
        missing = [t for t in want if t.upper() not in lg.counts]
        if missing:
            typer.echo(f"warning: no records of {', '.join(missing)}", err=True)
    if not csv_:
        for name, n in sorted(lg.counts.items(), key=lambda kv: -kv[1]):
            typer.echo(f"  {name:24s} {n}")
        return
    target = out_folder(out if out is not None else default_out(f"{log.name.split('.')[0]}_csv"))
    paths = write_csv_tables(lg, target)
    for name, p in paths.items():
        typer.echo(f"  {name:24s} {lg.counts.get(name, 0):8d}  {p}")
    typer.echo(f"wrote {len(paths)} tables to {target}")


@ardusub_app.command("params")
def params_cmd(
    file: Path = typer.Argument(..., help="QGC .params, MAVProxy .parm or ArduSub defaults."),
    strict: bool = typer.Option(False, "--strict", help="Names ArduSub does not have are errors."),
) -> None:
    """Load a parameter dump; print what marinesim's SURFTRAK chain takes from it."""
    from marinesim.core.errors import ConfigWarning
    from marinesim.interop.ardupilot import read_param_dump, surftrak_params

    pf = read_param_dump(file, strict=strict)
    typer.echo(f"{file}: {len(pf.values)} parameters ({pf.format or 'empty'})")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfigWarning)
        warnings.simplefilter("ignore", FutureWarning)
        sp, ignored = surftrak_params(pf, strict=strict)
    used = {k: v for k, v in sp.model_dump().items() if isinstance(v, (int, float))}
    typer.echo(f"SURFTRAK chain ({len(used)} values; {len(ignored)} ArduSub parameters unused):")
    for k in sorted(used):
        typer.echo(f"  {k:18s} {used[k]:g}")


def register(app: typer.Typer) -> None:
    """Add the ``ardusub`` command group."""
    app.add_typer(ardusub_app, name="ardusub")
