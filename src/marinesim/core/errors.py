"""Typed errors and warnings of marinesim.

Every error that reaches a user names where the problem is: file, line, column and the dotted
parameter path, formatted as ``file:line:column: param.path: message``.  The command-line
interface prints these without a traceback and exits with code 2 (configuration or data
errors) or 1 (a failed or diverged run).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: pathlib is not imported on the MOOS start path
    from pathlib import Path

__all__ = [
    "ConfigError",
    "ConfigWarning",
    "DataError",
    "DependencyNotInstalled",
    "EngineError",
    "MarinesimError",
    "NumericalError",
    "UnknownNameError",
    "format_location",
    "suggest",
]


def format_location(
    file: str | Path | None = None,
    line: int | None = None,
    column: int | None = None,
    param: str | None = None,
) -> str:
    """Return the ``file:line:column: param: `` prefix of a message (empty parts left out).

    Parameters
    ----------
    file : str or Path, optional
        File the problem is in.
    line, column : int, optional
        1-based line and column.
    param : str, optional
        Dotted parameter path (``entities.auv.motion.params.turn_rate``).

    Returns
    -------
    str
        The prefix, ending in ``": "`` when not empty.
    """
    parts: list[str] = []
    if file is not None:
        loc = str(file)
        if line is not None:
            loc += f":{line}"
            if column is not None:
                loc += f":{column}"
        parts.append(loc)
    elif line is not None:
        parts.append(f"line {line}" + (f":{column}" if column is not None else ""))
    if param:
        parts.append(param)
    return "".join(p + ": " for p in parts)


def suggest(name: str, known: Iterable[str], n: int = 3) -> list[str]:
    """Close matches of ``name`` among ``known`` (difflib, cutoff 0.6), best first."""
    import difflib  # only when a name is unknown

    known_list = list(known)
    lower = {k.lower(): k for k in known_list}
    hits = difflib.get_close_matches(name.lower(), list(lower), n=n, cutoff=0.6)
    return [lower[h] for h in hits]


class MarinesimError(Exception):
    """Base class of every error marinesim raises on purpose."""


class _Located:
    """Mixin keeping file/line/column/param and formatting them in front of the message.

    Parameters
    ----------
    message : str
        What is wrong, in words.
    file, line, column, param
        Where (see :func:`format_location`).
    """

    file: str | None
    line: int | None
    column: int | None
    param: str | None
    message: str

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        line: int | None = None,
        column: int | None = None,
        param: str | None = None,
    ) -> None:
        super().__init__(self._init_location(message, file, line, column, param))

    def _init_location(
        self,
        message: str,
        file: str | Path | None,
        line: int | None,
        column: int | None,
        param: str | None,
    ) -> str:
        self.message = message
        self.file = str(file) if file is not None else None
        self.line = line
        self.column = column
        self.param = param
        return format_location(file, line, column, param) + message


class ConfigError(_Located, MarinesimError):
    """A configuration value is missing, unknown or invalid (located: see :class:`_Located`)."""

    def located(
        self, file: str | Path | None = None, line: int | None = None, column: int | None = None
    ) -> ConfigError:
        """Return a copy with the location filled in where it was missing."""
        return (
            type(self)(
                self.message,
                file=self.file or file,
                line=self.line or line,
                column=self.column or column,
                param=self.param,
            )
            if type(self) is ConfigError
            else self
        )


class UnknownNameError(ConfigError):
    """A registry lookup failed; the message lists close matches and the known names.

    Example: ``unknown motion model 'fosen6dof'; did you mean 'fossen6dof'? (known: ...)``.
    """

    def __init__(
        self,
        kind: str,
        name: str,
        known: Iterable[str],
        *,
        file: str | Path | None = None,
        line: int | None = None,
        column: int | None = None,
        param: str | None = None,
    ) -> None:
        known_sorted = sorted(known)
        self.kind = kind
        self.name = name
        self.known = known_sorted
        close = suggest(name, known_sorted)
        msg = f"unknown {kind} {name!r}"
        if close:
            msg += "; did you mean " + " or ".join(repr(c) for c in close) + "?"
        msg += f" (known: {', '.join(known_sorted) if known_sorted else 'none'})"
        super().__init__(msg, file=file, line=line, column=column, param=param)


class DataError(_Located, MarinesimError):
    """A data file (thrust map, current field, terrain, reference CSV) is malformed."""


class NumericalError(MarinesimError):
    """A state became non-finite or left its physical bounds.

    Parameters
    ----------
    message : str
        What diverged (field, value).
    entity : str
        Entity name, e.g. ``auv[2]``.
    t : float
        Simulation time [s].
    """

    def __init__(self, message: str, *, entity: str | None = None, t: float | None = None) -> None:
        self.entity = entity
        self.t = t
        prefix = ""
        if entity is not None:
            prefix += f"{entity}: "
        if t is not None:
            prefix += f"t={t:.6g} s: "
        super().__init__(prefix + message)


class EngineError(MarinesimError):
    """The engine itself found an inconsistency (missed hook, bad plugin declaration)."""


class DependencyNotInstalled(MarinesimError):
    """An optional dependency is missing; the message names the extra to install."""

    def __init__(self, package: str, extra: str) -> None:
        self.package = package
        self.extra = extra
        super().__init__(
            f"{package} is not installed; install it with: pip install 'marinesim[{extra}]'"
        )


class ConfigWarning(_Located, UserWarning):
    """A configuration is accepted but behaves in a way the user may not expect.

    Raised as an error where the scenario says ``strict: true``.
    """
