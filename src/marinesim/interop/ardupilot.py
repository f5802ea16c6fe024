"""ArduPilot parameter files: QGC ``.params``, MAVProxy ``.parm``, ArduSub's defaults.

Rows are ``sysid compid NAME VALUE type`` (QGC, tab separated) or ``NAME VALUE`` /
``NAME,VALUE`` (MAVProxy, Mission Planner, ``Tools/autotest/default_params/sub.parm``); ``#``
starts a comment.  :func:`read_param_dump` reads a whole real dump (≈ 1400 names):

* a name given twice with different values is a :class:`~marinesim.core.errors.ConfigError`
  naming both lines (the same value twice, as in ``sub.parm``, is fine);
* a binary, truncated or foreign file is a :class:`~marinesim.core.errors.DataError` naming
  the byte offset (never a traceback);
* names ArduSub does not have (:data:`ARDUSUB_NAMES`: ArduSub 4.7-dev's own list, plus the
  Sub 4.5 names marinesim uses) give **one** warning listing them, an error with
  ``strict=True``; a name that looks like a misspelt parameter marinesim uses is an error.

For the SURFTRAK chain, :func:`surftrak_params` maps the names onto
:class:`~marinesim.control.surftrak.SurftrakParams` (Sub 4.5 names; current master (4.7-dev)
names are accepted as aliases with their unit conversion and a ``FutureWarning``).
Parameters with no effect in marinesim are reported once as "accepted, no effect".
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

from marinesim.control.surftrak import MASTER_ALIASES, SurftrakParams
from marinesim.core.errors import ConfigError, ConfigWarning, DataError, suggest
from marinesim.core.params import validate
from marinesim.sensors.ekf3_height import Ekf3HeightParams

__all__ = [
    "ALIASES",
    "IGNORED",
    "IGNORED_PREFIXES",
    "ParamFile",
    "ardusub_names",
    "EKF3_NAMES",
    "decode_param_bytes",
    "ekf3_params",
    "parse_param_overrides",
    "param_sources",
    "parse_params_text",
    "read_param_dump",
    "read_params",
    "surftrak_params",
    "unknown_names",
]

#: master name → (Sub 4.5 name, factor to 4.5 units) (defined beside SurftrakParams).
ALIASES: dict[str, tuple[str, float]] = MASTER_ALIASES

#: ArduPilot parameters accepted with no effect in marinesim.
IGNORED = frozenset(
    {
        "LOG_BITMASK",
        "FS_TERRAIN_ENAB",
        "RNGFND1_POS_X",
        "RNGFND1_POS_Y",
        "RNGFND1_POS_Z",
        "WPNAV_SPEED_UP",
        "WPNAV_SPEED_DN",
        "WPNAV_SPEED",
        "SYSID_THISMAV",
        "SCR_ENABLE",
        "SCR_USER1",
        "SCR_USER2",
    }
)
#: Prefixes of ignored parameter groups.
IGNORED_PREFIXES = ("SIM_", "BTN", "SERIAL", "GCS_", "ARMING_")


@lru_cache(maxsize=1)
def ardusub_names() -> frozenset[str]:
    """Every parameter name ArduSub knows (4.7-dev list shipped with marinesim, plus the Sub
    4.5 names of :class:`SurftrakParams` and the master aliases)."""
    text = (
        resources.files("marinesim.interop.sitl")
        .joinpath("data/ardusub_param_names.txt")
        .read_text(encoding="utf-8")
    )
    names = {ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")}
    return frozenset(names | set(SurftrakParams.model_fields) | set(MASTER_ALIASES) | IGNORED)


@dataclass
class ParamFile:
    """Parsed rows: ``values[name]`` (float), ``lines[name]`` (1-based line, column)."""

    file: str | None
    values: dict[str, float] = field(default_factory=dict)
    lines: dict[str, tuple[int, int]] = field(default_factory=dict)
    format: str = ""


def decode_param_bytes(data: bytes, *, file: str | Path | None = None) -> str:
    """Text of a parameter file; DataError naming the byte offset for a binary/foreign file."""
    nul = data.find(b"\x00")
    if nul >= 0:
        raise DataError(
            f"byte offset {nul}: NUL byte: not a text parameter file (binary or foreign data)",
            file=file,
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(
            f"byte offset {exc.start}: not UTF-8 text: not a parameter file", file=file
        ) from None


def parse_params_text(text: str, *, file: str | Path | None = None) -> ParamFile:
    """Parse ``.params`` text into names and values (no name checks yet).

    Raises
    ------
    ConfigError
        ``file:line`` for a malformed row or a non-numeric value.
    """
    out = ParamFile(str(file) if file is not None else None)
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.replace(",", " ").split()
        if len(parts) == 5:
            name, sval = parts[2], parts[3]
            out.format = out.format or "qgc"
        elif len(parts) == 2:
            name, sval = parts
            out.format = out.format or ("mission_planner" if "," in line else "mavproxy")
        else:
            raise ConfigError(
                f"expected 'sysid compid NAME VALUE type' or 'NAME VALUE', got {raw.strip()!r}",
                file=file,
                line=lineno,
            )
        col = raw.find(name) + 1
        try:
            value = float(sval)
        except ValueError:
            raise ConfigError(
                f"value {sval!r} is not a number", file=file, line=lineno, column=col, param=name
            ) from None
        if not math.isfinite(value):
            raise ConfigError(
                "value must be finite", file=file, line=lineno, column=col, param=name
            )
        if name in out.values and out.values[name] != value:
            first = out.lines[name][0]
            raise ConfigError(
                f"given twice with different values: line {first} sets {out.values[name]:g}, "
                f"line {lineno} sets {value:g}",
                file=file,
                line=lineno,
                column=col,
                param=name,
            )
        if name not in out.values:
            out.lines[name] = (lineno, col)
        out.values[name] = value
    return out


def unknown_names(names: Iterable[str]) -> list[str]:
    """The names ArduSub does not have (sorted)."""
    known = ardusub_names()
    return sorted(n for n in names if n not in known)


def read_param_dump(path: str | Path, *, strict: bool = False) -> ParamFile:
    """Read a whole ArduPilot parameter dump (QGC ``.params``, MAVProxy ``.parm``, defaults).

    Parameters
    ----------
    path : str or Path
    strict : bool
        Unknown names are an error instead of one warning.

    Returns
    -------
    ParamFile
        Every row (values as floats; ``format`` = ``qgc``, ``mavproxy`` or
        ``mission_planner``).

    Raises
    ------
    ConfigError
        Unreadable file, malformed row (``file:line``), a name twice with different values
        (naming both lines), unknown names with ``strict``.
    DataError
        Binary, truncated or foreign file (naming the byte offset).
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read parameter file: {exc.strerror}", file=p) from None
    pf = parse_params_text(decode_param_bytes(data, file=p), file=p)
    unknown = unknown_names(pf.values)
    if unknown:
        first = unknown[0]
        line, col = pf.lines[first]
        msg = f"{len(unknown)} name(s) ArduSub does not have: {', '.join(unknown)}"
        if strict:
            raise ConfigError(msg + " (--strict)", file=p, line=line, column=col, param=first)
        warnings.warn(f"{p}: {msg}", ConfigWarning, stacklevel=2)
    return pf


def parse_param_overrides(items: Iterable[str]) -> ParamFile:
    """``NAME=VALUE`` strings (command line ``--param``) as a :class:`ParamFile`."""
    out = ParamFile("--param")
    for i, item in enumerate(items, start=1):
        if "=" not in item:
            raise ConfigError(f"expected NAME=VALUE, got {item!r}", file="--param", line=i)
        name, sval = (s.strip() for s in item.split("=", 1))
        try:
            out.values[name] = float(sval)
        except ValueError:
            raise ConfigError(
                f"value {sval!r} is not a number", file="--param", line=i, param=name
            ) from None
        out.lines[name] = (i, 1)
    return out


def surftrak_params(
    *sources: ParamFile | Mapping[str, float],
    base: SurftrakParams | None = None,
    strict: bool = False,
    used_elsewhere: Iterable[str] = (),
) -> tuple[SurftrakParams, list[str]]:
    """Build :class:`SurftrakParams` from parsed files / mappings (later ones win).

    ``used_elsewhere``: names another model of the run reads (e.g. the EK3_* names of the
    EKF3 height model): skipped here, neither ignored nor unknown.

    Returns
    -------
    (params, ignored)
        The validated parameters and the sorted names accepted with no effect.

    Raises
    ------
    ConfigError
        A name ArduSub does not have that looks like a misspelt parameter marinesim uses
        (``file:line:column: NAME: unknown ArduSub parameter; did you mean …``), any name
        ArduSub does not have with ``strict``, or an invalid value.  Other names ArduSub
        does not have give one :class:`ConfigWarning` listing them; ArduSub's own
        parameters with no effect in marinesim are returned as ``ignored``.
    """
    known = set(SurftrakParams.model_fields)
    data: dict[str, float] = dict(base.model_dump()) if base is not None else {}
    ignored: set[str] = set()
    marks: dict[str, tuple[int, int]] = {}
    files: dict[str, str | None] = {}
    unknown: list[str] = []
    ardusub = ardusub_names()
    elsewhere = frozenset(used_elsewhere)
    for src in sources:
        pf = src if isinstance(src, ParamFile) else ParamFile(None, dict(src), {})
        for name, value in pf.values.items():
            if name in elsewhere:
                continue
            line, col = pf.lines.get(name, (None, None))
            target = name
            if name in ALIASES:
                target, factor = ALIASES[name]
                value = value * factor
                warnings.warn(
                    f"{name} is ArduSub's current (master) name; read as {target} = {value:g} "
                    "(Sub 4.5 units)",
                    FutureWarning,
                    stacklevel=2,
                )
            elif name in IGNORED or name.startswith(IGNORED_PREFIXES):
                ignored.add(name)
                continue
            elif name not in known:
                if name in ardusub:
                    ignored.add(name)
                    continue
                close = suggest(name, sorted(known | set(ALIASES)))
                if close or strict:
                    msg = "unknown ArduSub parameter"
                    if close:
                        msg += f"; did you mean {close[0]!r}?"
                    raise ConfigError(msg, file=pf.file, line=line, column=col, param=name)
                unknown.append(name)
                continue
            field_info = SurftrakParams.model_fields[target]
            if field_info.annotation is int:
                if value != int(value):
                    raise ConfigError(
                        f"must be an integer, got {value}", file=pf.file, line=line, param=name
                    )
                value = int(value)
            data[target] = value
            if line is not None:
                marks[target] = (line, col or 1)
            files[target] = pf.file
    try:
        params = validate(SurftrakParams, data, marks=marks)
    except ConfigError as exc:
        name = exc.param or ""
        raise ConfigError(
            exc.message, file=files.get(name), line=exc.line, column=exc.column, param=exc.param
        ) from None
    if unknown:
        warnings.warn(
            f"{len(unknown)} name(s) ArduSub does not have (ignored): "
            + ", ".join(sorted(set(unknown))),
            ConfigWarning,
            stacklevel=2,
        )
    if ignored:
        warnings.warn(
            "accepted, no effect in marinesim: " + ", ".join(sorted(ignored)),
            ConfigWarning,
            stacklevel=2,
        )
    return params, sorted(ignored)


def read_params(
    path: str | Path, overrides: Iterable[str] = (), used_elsewhere: Iterable[str] = ()
) -> tuple[SurftrakParams, list[str]]:
    """Read a ``.params`` file (and ``NAME=VALUE`` overrides) into :class:`SurftrakParams`
    (``used_elsewhere``: as :func:`surftrak_params`)."""
    sources = param_sources(path, overrides)
    return surftrak_params(*sources, used_elsewhere=used_elsewhere)


def param_sources(path: str | Path | None, overrides: Iterable[str] = ()) -> list[ParamFile]:
    """The parsed ``.params`` file (if any) and the ``NAME=VALUE`` overrides, in that order."""
    sources = []
    if path is not None:
        sources.append(_read_param_file(path))
    ov = list(overrides)
    if ov:
        sources.append(parse_param_overrides(ov))
    return sources


def _read_param_file(path: str | Path) -> ParamFile:
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read parameter file: {exc.strerror}", file=p) from None
    return parse_params_text(decode_param_bytes(data, file=p), file=p)


#: ArduPilot parameters the EKF3 height model reads (:class:`Ekf3HeightParams`).
EKF3_NAMES = frozenset(
    n for n in Ekf3HeightParams.model_fields if n.startswith("EK3_")
)


def ekf3_params(*sources: ParamFile) -> Ekf3HeightParams:
    """The EKF3 height model's parameters from parsed files / overrides (later ones win).

    Raises
    ------
    ConfigError
        An invalid value, naming its file, line and parameter.
    """
    data: dict[str, float] = {}
    where: dict[str, tuple[str | None, tuple[int, int] | None]] = {}
    for pf in sources:
        for name in EKF3_NAMES & pf.values.keys():
            data[name] = pf.values[name]
            where[name] = (pf.file, pf.lines.get(name))
    try:
        return validate(Ekf3HeightParams, data)
    except ConfigError as exc:
        file, mark = where.get(exc.param or "", (None, None))
        raise ConfigError(
            exc.message, file=file, line=mark[0] if mark else None,
            column=mark[1] if mark else None, param=exc.param,
        ) from None  # fmt: skip
