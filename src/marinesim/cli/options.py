"""Options every command shares: ``-o/--out``, ``--fig-format`` and the deprecated spellings.

The output rule, the same for every command that writes files:

* ``-o/--out DIR`` names the folder the command writes into (the files get their default
  names inside it).  The folder is created when missing; when its parent is missing too, the
  folders are created with a warning naming them (a typo in a path shows at once).
* ``-o/--out FILE.ext``, where ``.ext`` is a suffix the command writes (``.csv``, ``.png`` ...),
  names the main file itself; its folder follows the same rule.  An existing directory whose
  name ends in such a suffix is an error (ambiguous).
* Without ``-o``, the command writes into ``marinesim-runs/<label>/`` in the current folder
  (the label names what ran, e.g. ``demo_survey-seed7``) and prints the path.

The old spellings ``--outdir``, ``--output`` and ``--out-dir`` are hidden aliases that still
work and print a deprecation warning.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import typer
from typer.core import TyperCommand

from marinesim.core.errors import ConfigError, DataError

__all__ = [
    "FIG_FORMATS",
    "RUNS_ROOT",
    "default_out",
    "out_file",
    "out_folder",
    "OUT_HELP",
    "check_fig_format",
    "deprecated_option",
    "fig_format_option",
    "LIVE_PORT",
    "live_port_option",
    "optional_value_command",
    "out_option",
    "pick_out",
    "utf8_inputs",
]

#: Figure formats every drawing command accepts (``--fig-format``); PNG is the default.
FIG_FORMATS = ("png", "pdf", "svg")
OUT_HELP = "Output directory (files get their default names inside it)"
#: Where commands write when ``-o/--out`` is not given (relative to the current folder).
RUNS_ROOT = Path("marinesim-runs")


def default_out(label: str) -> Path:
    """``marinesim-runs/<label>``: the folder of a command run without ``-o/--out``."""
    safe = "".join(c if c.isalnum() or c in "-_.=+" else "_" for c in str(label)).strip(".")
    return RUNS_ROOT / (safe or "run")


def out_folder(folder: Path, *, param: str = "-o/--out", create: bool = True) -> Path:
    """Check (and create) the folder a command writes into.

    A folder whose parent is missing too is created with its parents, with a warning on
    stderr naming the folders that were created (a typo in a path shows at once); folders
    under ``marinesim-runs/`` are created without a word.

    Raises
    ------
    ConfigError
        ``folder`` or one of its parents is an existing file.
    """
    folder = Path(folder)
    if folder.exists():
        if not folder.is_dir():
            raise ConfigError(f"{str(folder)!r} is an existing file, not a folder", param=param)
        return folder
    missing = [folder]
    parent = folder.parent
    while str(parent) not in ("", ".") and not parent.exists():
        missing.append(parent)
        parent = parent.parent
    if parent.exists() and not parent.is_dir():
        raise ConfigError(f"cannot create {str(folder)!r}: {str(parent)!r} is a file", param=param)
    if create:
        folder.mkdir(parents=True, exist_ok=True)
        under_default = folder.parts[:1] == RUNS_ROOT.parts
        if len(missing) > 1 and not under_default:
            typer.echo(
                f"warning: {param}: created the missing folder {str(missing[-1])!r} for "
                f"{str(folder)!r} (check the path)",
                err=True,
            )
    return folder


def out_file(
    out: Path | None,
    *,
    label: str,
    name: str,
    suffixes: tuple[str, ...],
    param: str = "-o/--out",
) -> Path:
    """The main file a command writes, by the output rule (its folder checked and created).

    Parameters
    ----------
    out : Path or None
        ``-o/--out`` (None: ``marinesim-runs/<label>/<name>``).
    label : str
        Label of the default folder.
    name : str
        File name inside a folder.
    suffixes : tuple of str
        Suffixes (lower case, with the dot) that make ``out`` the file itself.
    """
    target = Path(out) if out is not None else default_out(label)
    if target.suffix.lower() in suffixes:
        if target.is_dir():
            raise ConfigError(
                f"{str(target)!r} is a directory; -o/--out names a folder (files inside get "
                f"their default names) or a new {'/'.join(suffixes)} file",
                param=param,
            )
        out_folder(target.parent, param=param)
        return target
    return out_folder(target, param=param) / name


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


#: Default TCP port of ``--live`` (the Foxglove WebSocket protocol's customary port).
LIVE_PORT = 8765


def live_port_option(name: str = "--live-port") -> int:
    """The TCP port option of ``--live`` (``--port`` on run/demo, ``--live-port`` where
    ``--port`` means something else), on loopback; 0 picks any free port."""
    return typer.Option(LIVE_PORT, name, help="TCP port of --live on loopback (0: any free port).")


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


def optional_value_command(*names: str) -> type[TyperCommand]:
    """A command class whose options ``names`` take an optional value: ``--plot`` alone gives
    ``""``, ``--plot FIG`` gives ``"FIG"`` (a following token that starts with ``-`` is the next
    option, not the value).  For commands without positional arguments."""

    class _Command(TyperCommand):
        def parse_args(self, ctx, args):  # noqa: ANN001, ANN202
            fixed: list[str] = []
            for i, a in enumerate(args):
                fixed.append(a)
                if a in names and (i + 1 == len(args) or args[i + 1].startswith("-")):
                    fixed.append("")
            return super().parse_args(ctx, fixed)

    return _Command


_BINARY_SUFFIXES = (".parquet", ".png", ".pdf", ".svg", ".bin", ".gz", ".tlog", ".npz", ".npy")


@contextlib.contextmanager
def utf8_inputs(*paths: Path) -> Iterator[None]:
    """Turn a UnicodeDecodeError raised while reading ``paths`` into a DataError naming the
    file, line and byte (exit 2, no traceback).

    Files are checked only after a reader failed, so a good input costs nothing; folders are
    searched for their text files (not Parquet or figures).
    """
    try:
        yield
    except UnicodeDecodeError as exc:
        from marinesim.core.textio import decode_text

        files: list[Path] = []
        for p in paths:
            p = Path(p)
            if p.is_dir():
                files += sorted(
                    f
                    for f in p.rglob("*")
                    if f.is_file() and f.suffix.lower() not in _BINARY_SUFFIXES
                )
            elif p.is_file():
                files.append(p)
        for f in files:
            with contextlib.suppress(OSError):
                decode_text(f.read_bytes(), file=f, error=DataError)
        where = paths[0] if paths else None
        raise DataError(
            f"not UTF-8 text ({exc.reason} at byte {exc.start}); save the file as UTF-8",
            file=where,
        ) from None
