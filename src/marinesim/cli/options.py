"""Options every command shares: ``-o/--out``, ``--fig-format`` and the deprecated spellings.

``-o/--out`` names a directory for a run (the files get their default names inside it); a
path with a file suffix the command writes (``.csv``, ``.png`` ...) is that file.  The old
spellings ``--outdir``, ``--output`` and ``--out-dir`` are hidden aliases that still work and
print a deprecation warning.
"""

from __future__ import annotations

from pathlib import Path

import typer

from marinesim.core.errors import ConfigError

__all__ = [
    "FIG_FORMATS",
    "OUT_HELP",
    "check_fig_format",
    "deprecated_option",
    "fig_format_option",
    "out_option",
    "pick_out",
]

#: Figure formats every drawing command accepts (``--fig-format``); PNG is the default.
FIG_FORMATS = ("png", "pdf", "svg")
OUT_HELP = "Output directory (files get their default names inside it)"


def out_option(help_text: str = OUT_HELP, default: Path | None = None) -> Path | None:
    """The ``-o/--out`` option."""
    return typer.Option(default, "-o", "--out", help=help_text, metavar="DIR")


def deprecated_option(*names: str) -> Path | None:
    """A hidden, deprecated spelling of ``-o/--out``."""
    return typer.Option(None, *names, hidden=True, metavar="DIR")


def fig_format_option() -> str:
    """The ``--fig-format png|pdf|svg`` option (default png)."""
    return typer.Option("png", "--fig-format", help="Figure format: png, pdf or svg.",
                        metavar="png|pdf|svg")  # fmt: skip


def check_fig_format(fmt: str, param: str = "--fig-format") -> str:
    """The format in lower case; ConfigError (exit 2) unless it is png, pdf or svg."""
    low = str(fmt).lower().lstrip(".")
    if low not in FIG_FORMATS:
        raise ConfigError(
            f"figure format {fmt!r} is not supported (use {', '.join(FIG_FORMATS)})", param=param
        )
    return low


def pick_out(out: Path | None, **deprecated: Path | None) -> Path | None:
    """``-o/--out`` or the deprecated spelling that was given (with a warning on stderr).

    Parameters
    ----------
    out : Path or None
        The value of ``-o/--out``.
    **deprecated : Path or None
        Old spelling (option name without dashes, ``_`` for ``-``) → its value.

    Raises
    ------
    ConfigError
        Two spellings given with different values.
    """
    chosen = out
    for name, value in deprecated.items():
        if value is None:
            continue
        flag = "--" + name.replace("_", "-")
        typer.echo(f"warning: {flag} is deprecated; use -o/--out", err=True)
        if chosen is not None and Path(chosen) != Path(value):
            raise ConfigError(f"give -o/--out or {flag}, not both", param=flag)
        chosen = value
    return chosen
