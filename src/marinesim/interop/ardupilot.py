"""ArduPilot parameter files (QGC / MAVProxy ``.params``) for the SURFTRAK chain.

Rows are ``sysid compid NAME VALUE type`` (QGC) or ``NAME VALUE`` / ``NAME,VALUE``
(MAVProxy, Mission Planner); ``#`` starts a comment.  Names are ArduSub's Sub 4.5 names
(:class:`~marinesim.control.surftrak.SurftrakParams`); current master (4.7-dev) names are
accepted as aliases with their unit conversion and a ``FutureWarning``.  Parameters that exist
in ArduPilot but have no effect in marinesim (``LOG_BITMASK``, ``SIM_*``, …) are listed in
:data:`IGNORED` and reported once as "accepted, no effect".  Any other name is a
:class:`~marinesim.core.errors.ConfigError` naming ``file:line:NAME`` with a did-you-mean.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from marinesim.control.surftrak import MASTER_ALIASES, SurftrakParams
from marinesim.core.errors import ConfigError, ConfigWarning, suggest
from marinesim.core.params import validate

__all__ = [
    "ALIASES",
    "IGNORED",
    "IGNORED_PREFIXES",
    "ParamFile",
    "parse_param_overrides",
    "parse_params_text",
    "read_params",
    "surftrak_params",
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


@dataclass
class ParamFile:
    """Parsed rows: ``values[name]`` (float), ``lines[name]`` (1-based line, column)."""

    file: str | None
    values: dict[str, float] = field(default_factory=dict)
    lines: dict[str, tuple[int, int]] = field(default_factory=dict)


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
        elif len(parts) == 2:
            name, sval = parts
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
        out.values[name] = value
        out.lines[name] = (lineno, col)
    return out


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
    *sources: ParamFile | Mapping[str, float], base: SurftrakParams | None = None
) -> tuple[SurftrakParams, list[str]]:
    """Build :class:`SurftrakParams` from parsed files / mappings (later ones win).

    Returns
    -------
    (params, ignored)
        The validated parameters and the sorted names accepted with no effect.

    Raises
    ------
    ConfigError
        Unknown name (``file:line:column: NAME: unknown parameter; did you mean …``) or an
        invalid value.
    """
    known = set(SurftrakParams.model_fields)
    data: dict[str, float] = dict(base.model_dump()) if base is not None else {}
    ignored: set[str] = set()
    marks: dict[str, tuple[int, int]] = {}
    files: dict[str, str | None] = {}
    for src in sources:
        pf = src if isinstance(src, ParamFile) else ParamFile(None, dict(src), {})
        for name, value in pf.values.items():
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
                close = suggest(name, sorted(known | set(ALIASES)))
                msg = "unknown ArduSub parameter"
                if close:
                    msg += f"; did you mean {close[0]!r}?"
                raise ConfigError(msg, file=pf.file, line=line, column=col, param=name)
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
    if ignored:
        warnings.warn(
            "accepted, no effect in marinesim: " + ", ".join(sorted(ignored)),
            ConfigWarning,
            stacklevel=2,
        )
    return params, sorted(ignored)


def read_params(
    path: str | Path, overrides: Iterable[str] = ()
) -> tuple[SurftrakParams, list[str]]:
    """Read a ``.params`` file (and ``NAME=VALUE`` overrides) into :class:`SurftrakParams`."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read parameter file: {exc.strerror}", file=p) from None
    sources = [parse_params_text(text, file=p)]
    ov = list(overrides)
    if ov:
        sources.append(parse_param_overrides(ov))
    return surftrak_params(*sources)
