"""uSimMarine's configuration text as the program reads it: ``param = value`` lines of a
ProcessConfig block under one rule set (dep_uSimMarine or uSimMarineV22), with the
program-exact helpers (start position, drift vector, booleans, number formatting).

The text handling is MOOS-specific but stays in the models layer: :func:`configure` builds
the model's parameters, which the engine (below ``interop``) needs as well.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from marinesim.core.errors import ConfigError, ConfigWarning, suggest
from marinesim.core.frames import moos_angle360_c as _angle360
from marinesim.core.frames import moos_heading_to_radians
from marinesim.models.usm.config_schema import (
    _BY_NAME,
    _TRUE_FALSE,
    _V22_PID_NAMES,
    _V22_PID_PREFIXES,
    DEPRECATED,
    Compat,
    Param,
    UsmConfig,
    Variant,
    _known_names,
)
from marinesim.models.usm.thrustmap import (
    ThrustMap,
    format_number_x,
    is_moos_number,
    moos_atof,
    parse_number,
)

# ---------------------------------------------------------------------------------------
# Small program-exact helpers
# ---------------------------------------------------------------------------------------


def split_config_line(text: str) -> tuple[str, str] | None:
    """Apply MOOS's line rules to ``"key = value // comment"`` (§5.1).

    Comments (``//``) are removed, then every blank, tab and CR is deleted; the line is split at
    the first '='.

    Returns
    -------
    (key, value) or None
        None when the line has no '=' or an empty key or value (MOOS drops it).
    """
    if "//" in text:
        text = text[: text.index("//")]
    text = text.replace(" ", "").replace("\t", "").replace("\r", "")
    key, sep, value = text.partition("=")
    if not sep or not key or not value:
        return None
    return key, value


def drift_from_vector(ang: float, mag: float) -> tuple[float, float]:
    """Drift components (east, north) [m/s] of a compass angle [deg] and magnitude [m/s].

    The program's arithmetic (§3.10): angle360, θ = ((90 − ang)·π)/180 wrapped once into
    [−π, π], then (cos θ·mag, sin θ·mag).  A negative magnitude flips the direction.
    """
    theta = float(moos_heading_to_radians(_angle360(ang)))
    return math.cos(theta) * mag, math.sin(theta) * mag


_START_KEYS = {
    "x": "start_x",
    "y": "start_y",
    "heading": "start_heading",
    "deg": "start_heading",
    "hdg": "start_heading",
    "speed": "start_speed",
    "spd": "start_speed",
    "depth": "start_depth",
    "dep": "start_depth",
}
_START_POSITIONAL = ("start_x", "start_y", "start_heading", "start_speed", "start_depth")


def parse_start_pos(value: str, compat: Compat = "moos") -> tuple[dict[str, float], str | None]:
    """Parse a ``start_pos`` / ``USM_RESET`` value (§3.12).

    Parameters
    ----------
    value : str
        Comma-separated ``key=value`` items (or bare values taken by position).
    compat : {"doc", "moos"}
        ``"moos"``: values read with ``atof`` (junk → 0); ``"doc"``: a value that is not a
        number is a problem.

    Returns
    -------
    (dict, str or None)
        The fields applied (``start_x`` …) before the first problem, and the problem (None
        when the whole value was read).
    """
    out: dict[str, float] = {}
    for i, raw in enumerate(value.split(",")):
        item = raw.strip().lower()
        key, sep, val = item.partition("=")
        if not sep:
            val = key
            name = _START_POSITIONAL[i] if i < len(_START_POSITIONAL) else None
            if name is None:
                return out, f"item {raw.strip()!r} has no key and position {i + 1} has none"
        else:
            name = _START_KEYS.get(key.strip())
            if name is None:
                return out, f"unknown key {key.strip()!r} in item {raw.strip()!r}"
        if compat == "doc":
            num = parse_number(val, "doc")
            if num is None:
                return out, f"value {val.strip()!r} of item {raw.strip()!r} is not a number"
        else:
            num = moos_atof(val.strip())
        out[name] = num
    return out, None


def _bool_value(text: str) -> bool | None:
    low = text.strip().lower()
    if low in _TRUE_FALSE:
        return low == "true"
    return None


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return format_number_x(value, 6)
    if isinstance(value, ThrustMap):
        text = value.to_text() or "(empty)"
        extra = f"; factor {format_number_x(value.thrust_factor)}"
        if value.reflect:
            extra += "; reflect"
        return text + extra
    name = getattr(value, "name", None)
    if name is not None and hasattr(value, "radius"):
        return f"field {name!r} ({len(value)} vectors, radius {format_number_x(value.radius)} m)"
    return str(value)


# ---------------------------------------------------------------------------------------
# One evaluation of the lines under one rule set
# ---------------------------------------------------------------------------------------


@dataclass
class _Line:
    key: str  # as written (blanks deleted)
    value: str  # blanks deleted
    line: int | None
    raw_value: str  # value as written (for YAML-like strict checks)


LoadCurrentField = Callable[..., Any]


class _Eval:
    """Applies the lines under one rule set, collecting values, warnings and errors."""

    def __init__(
        self,
        variant: Variant,
        compat: Compat,
        file: str | None,
        base_dir: Path | None,
        loader: LoadCurrentField | None,
        primary: bool,
    ) -> None:
        self.variant = variant
        self.compat = compat
        self.file = file
        self.base_dir = base_dir
        self.loader = loader
        self.primary = primary
        self.values: dict[str, Any] = {}
        self.origins: dict[str, int | None] = {}
        self.extras: dict[str, str] = {}
        self.tm = ThrustMap(20.0, False)
        self.tm_lines = 0
        self.warnings: list[ConfigWarning] = []
        self.errors: list[ConfigError] = []
        self.noted: set[str] = set()
        self.counts: dict[str, int] = {}

    # -- reporting
    def warn(self, msg: str, ln: _Line, param: str) -> None:
        self.warnings.append(ConfigWarning(msg, file=self.file, line=ln.line, param=param))

    def error(self, msg: str, ln: _Line, param: str) -> None:
        self.errors.append(ConfigError(msg, file=self.file, line=ln.line, param=param))

    def reject(self, doc_msg: str, moos_msg: str, ln: _Line, param: str) -> None:
        """A line the program does not take: doc → error, moos → warning (line ignored)."""
        if self.compat == "doc":
            self.error(doc_msg, ln, param)
        else:
            self.warn(moos_msg, ln, param)

    def invalid(self, msg: str, ln: _Line, param: str, moos_action: str) -> None:
        """A known parameter with an invalid value: doc → error, moos → program + warning."""
        p = _BY_NAME.get(param)
        self.noted.add(p.field if p is not None and p.field else param)
        self.reject(msg, f"{msg}; {moos_action}", ln, param)

    def set(self, name: str, value: Any, ln: _Line) -> None:
        self.values[name] = value
        self.origins[name] = ln.line
        self.counts[name] = self.counts.get(name, 0) + 1

    # -- numbers
    def number(self, ln: _Line, p: Param) -> float | None:
        v = parse_number(ln.value, self.compat)
        doc_v = parse_number(ln.value, "doc")
        if doc_v is not None and not is_moos_number(ln.value):
            # row 6: an exponent (or another form the program rejects), warned in both modes
            self.noted.add(p.field or p.name)
            self.warn(
                f"value {ln.value!r} is written with an exponent: documented mode reads "
                f'{format_number_x(doc_v, 9)}, compat="moos" rejects the line as the program '
                "does (unhandled config line, the previous value stays)",
                ln,
                p.name,
            )
        if v is None:
            if self.compat == "doc":
                self.error(f"expected a number, got {ln.value!r}", ln, p.name)
            elif doc_v is None:
                self.warn(
                    f"value {ln.value!r} is not a number: unhandled config line, "
                    "the previous value stays",
                    ln,
                    p.name,
                )
        return v

    # -- apply one line
    def apply(self, ln: _Line) -> None:
        key = ln.key.lower() if self.variant == "usm_v22" else ln.key.upper().lower()
        if self.variant == "usm" and key in DEPRECATED:
            new = DEPRECATED[key]
            self.warn(f"deprecated parameter {ln.key!r}: use {new!r}", ln, ln.key)
            key = new
        if self.variant == "usm_v22" and key == "turn_loss" and self.compat == "doc":
            key = "turn_spd_loss"  # documented name accepted as an alias in default mode
        if self.compat == "doc" and len(ln.value) >= 2 and ln.value[0] == ln.value[-1] == '"':
            # the documentation quotes some values (thrust_map = "..."); the program does not
            # strip quotes, so compat="moos" sees a malformed value (reported as a difference)
            ln = _Line(ln.key, ln.value[1:-1], ln.line, ln.raw_value)
        p = _BY_NAME.get(key)
        if p is None or self.variant not in p.variants:
            if self.variant == "usm_v22" and (
                key in _V22_PID_NAMES or key.startswith(_V22_PID_PREFIXES)
            ):
                self._unsupported(ln, key, "uSimMarineV22's embedded PID")
                return
            close = suggest(key, _known_names(self.variant))
            hint = f"; did you mean {close[0]!r}?" if close else ""
            self.noted.add("unknown:" + key)
            self.reject(
                f"unknown parameter {ln.key!r}{hint}",
                f"unknown parameter {ln.key!r} (unhandled config line, ignored){hint}",
                ln,
                ln.key,
            )
            return
        getattr(self, "_k_" + p.kind)(ln, p)

    def _unsupported(self, ln: _Line, key: str, what: str) -> None:
        msg = f"{what} ({key!r}) is not supported yet"
        self.reject(msg, msg + "; line ignored", ln, key)

    def _k_unsupported(self, ln: _Line, p: Param) -> None:
        self._unsupported(ln, p.name, "parameter")

    def _k_app(self, ln: _Line, p: Param) -> None:
        self.extras[p.name] = ln.value

    def _k_string(self, ln: _Line, p: Param) -> None:
        self.set(p.field or p.name, ln.value, ln)

    def _k_bool(self, ln: _Line, p: Param) -> None:
        b = _bool_value(ln.value)
        low = ln.value.strip().lower()
        if self.variant == "usm_v22":
            # uSimMarineV22's own vocabularies (both modes: they are its documented values)
            if p.name == "thrust_mode_diff" and low in ("differential", "normal"):
                b = low == "differential"
            elif p.name == "thrust_mode_reverse" and low in ("reverse", "normal"):
                b = low == "reverse"
            elif (
                b is None
                and self.compat == "moos"
                and p.name in ("sim_pause", "dual_state")
                and low in ("on", "yes", "off", "no")
            ):
                b = low in ("on", "yes")  # setBooleanOnString
        if not p.program:
            return self._doc_only(ln, p, b)
        if b is None:
            self.invalid(
                f"expected true or false, got {ln.value!r}",
                ln,
                p.name,
                "unhandled config line, the previous value stays",
            )
            return
        if p.name == "thrust_reflect":
            self.tm.set_reflect(b)
            self.origins["thrust_reflect"] = ln.line
            return
        self.set(p.field or p.name, b, ln)

    def _k_number(self, ln: _Line, p: Param) -> None:
        if self.variant == "usm_v22" and p.name == "turn_spd_loss" and self.compat == "moos":
            v: float | None = moos_atof(ln.value)  # the program reads it with atof
            if not is_moos_number(ln.value):
                self.warn(
                    f"value {ln.value!r} is read with atof as {format_number_x(v or 0.0, 9)} "
                    "by the program",
                    ln,
                    p.name,
                )
        else:
            v = self.number(ln, p)
        if v is None:
            return
        if not p.program:
            return self._doc_only(ln, p, v)
        name = p.field or p.name
        lo, hi = p.minimum, p.maximum
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            rng = f"[{format_number_x(lo) if lo is not None else '-inf'}, " + (
                f"{format_number_x(hi)}]" if hi is not None else "inf)"
            )
            msg = f"value {format_number_x(v, 9)} is outside {rng}"
            if p.name in ("start_depth", "max_acceleration", "max_deceleration"):
                self.invalid(msg, ln, p.name, "the program uses 0")
                if self.compat == "moos":
                    self.set(name, 0.0, ln)
            elif p.name == "turn_rate":
                c = min(max(v, 0.0), 100.0)
                self.invalid(msg, ln, p.name, f"the program clips it to {format_number_x(c)}")
                if self.compat == "moos":
                    self.set(name, c, ln)
            else:
                action = "unhandled config line, the previous value stays"
                if p.name == "thrust_factor":
                    action = "the program ignores a negative factor"
                self.invalid(msg, ln, p.name, action)
            return
        if p.name == "thrust_factor":
            self.tm.set_thrust_factor(v)
            self.origins["thrust_factor"] = ln.line
            return
        self.set(name, v, ln)

    def _doc_only(self, ln: _Line, p: Param, v: Any) -> None:
        """turn_loss, current_field_active: honoured in doc, ignored by the program."""
        name = p.field or p.name
        if self.compat == "moos":
            same = p.name == "turn_loss" and v == 0.85
            if not same:
                self.noted.add(name)
                self.warn(
                    f"{p.name!r} is not a parameter of the program (unhandled config line): "
                    f'compat="moos" ignores it'
                    + (" and uses 0.85" if p.name == "turn_loss" else "")
                    + f"; documented mode uses {_fmt(v)}",
                    ln,
                    p.name,
                )
            return
        if v is None:
            self.error(f"expected true or false, got {ln.value!r}", ln, p.name)
            return
        if (
            p.minimum is not None
            and isinstance(v, float)
            and not (p.minimum <= v <= (p.maximum if p.maximum is not None else math.inf))
        ):
            self.error(
                f"value {format_number_x(v, 9)} is outside [{format_number_x(p.minimum)}, "
                f"{format_number_x(p.maximum or math.inf)}]",
                ln,
                p.name,
            )
            return
        if p.name == "turn_loss" and v != 0.85:
            self.noted.add(name)
            self.warn(
                f"turn_loss {format_number_x(v, 9)} is honoured in documented mode; the real "
                'program has no such parameter (0.85 is hard-coded) and compat="moos" '
                "ignores it",
                ln,
                p.name,
            )
        elif p.name == "current_field_active":
            self.noted.add(name)
            self.warn(
                "current_field_active is honoured in documented mode; the real program ignores "
                'it (compat="moos")',
                ln,
                p.name,
            )
        self.set(name, v, ln)

    def _k_path(self, ln: _Line, p: Param) -> None:
        self.noted.add("current_field")
        if self.compat == "moos":
            self.warn(
                "current_field is not implemented by the program (unhandled config line): "
                'compat="moos" ignores it; documented mode loads the field',
                ln,
                p.name,
            )
            return
        path = Path(ln.value)
        if not path.is_absolute() and self.base_dir is not None:
            path = Path(self.base_dir) / path
        self.warn(
            "current_field is honoured in documented mode; the real program ignores it "
            '(compat="moos")',
            ln,
            p.name,
        )
        if not self.primary:
            self.set("current_field", str(path), ln)
            return
        if self.loader is None:
            self.error(
                "current_field needs a file reader: load the configuration through "
                "marinesim.interop.moos (or pass load_current_field=)",
                ln,
                p.name,
            )
            return
        try:
            loaded = self.loader(path, file=self.file, line=ln.line)
        except ConfigError as exc:
            self.errors.append(exc)
            return
        fld, warns = loaded if isinstance(loaded, tuple) else (loaded, [])
        self.warnings.extend(warns)
        self.set("current_field", fld, ln)

    def _k_drift_vector(self, ln: _Line, p: Param) -> None:
        ang_t, sep, mag_t = ln.value.partition(",")
        ang = parse_number(ang_t, self.compat) if sep else None
        mag = parse_number(mag_t, self.compat) if sep else None
        if ang is None or mag is None:
            doc_ok = sep and parse_number(ang_t, "doc") is not None
            doc_ok = doc_ok and parse_number(mag_t, "doc") is not None
            if doc_ok and self.compat == "moos":
                self.noted.add("drift_x")
                self.noted.add("drift_y")
                self.warn(
                    f"value {ln.value!r} uses an exponent: the program rejects the line "
                    "(unhandled), documented mode accepts it",
                    ln,
                    p.name,
                )
                return
            self.invalid(
                f"expected 'angle,magnitude' (two numbers), got {ln.value!r}",
                ln,
                p.name,
                "unhandled config line, the drift stays",
            )
            return
        dx, dy = drift_from_vector(ang, mag)
        self.set("drift_x", dx, ln)
        self.set("drift_y", dy, ln)

    def _k_start_pos(self, ln: _Line, p: Param) -> None:
        vals, problem = parse_start_pos(ln.value, self.compat)
        if problem is not None:
            if self.compat == "doc":
                self.error(problem, ln, p.name)
                return
            self.noted.update(_START_POSITIONAL)
            self.warn(
                f"{problem}: the program keeps the items before it and reports the line "
                "as unhandled",
                ln,
                p.name,
            )
        for k, v in vals.items():
            self.set(k, v, ln)

    def _k_thrust_map(self, ln: _Line, p: Param) -> None:
        self.tm_lines += 1
        self.origins["thrust_map"] = ln.line
        try:
            warns = self.tm.add_text(ln.value, self.compat, file=self.file, line=ln.line)
        except ConfigError as exc:
            self.errors.append(exc)
            self.noted.add("thrust_map")
            return
        if warns:
            self.noted.add("thrust_map")
        self.warnings.extend(warns)


def _order(variant: Variant, compat: Compat, lines: list[_Line]) -> list[_Line]:
    if variant == "usm" and compat == "moos":
        return list(reversed(lines))
    return list(lines)


def _normalise(lines: Iterable[Any], file: str | None) -> list[_Line]:
    out: list[_Line] = []
    for i, item in enumerate(lines, start=1):
        if isinstance(item, str):
            text, lineno = item, i
        else:
            seq = tuple(item)
            if len(seq) == 3:
                key, value, lineno = seq
            elif len(seq) == 2:
                key, value = seq
                lineno = i
            else:
                raise ConfigError(
                    f"configuration item {item!r} is not (key, value[, line])", file=file
                )
            text = f"{key}={value}"
        split = split_config_line(str(text))
        if split is None:
            continue
        key, value = split
        raw = str(text).partition("=")[2].strip()
        out.append(_Line(key, value, int(lineno) if lineno is not None else None, raw))
    return out


def _evaluate(
    lines: list[_Line],
    variant: Variant,
    compat: Compat,
    file: str | None,
    base_dir: Path | None,
    loader: LoadCurrentField | None,
    primary: bool,
) -> _Eval:
    ev = _Eval(variant, compat, file, base_dir, loader, primary)
    for ln in _order(variant, compat, lines):
        ev.apply(ln)
    return ev


def _globals_values(
    gl: Mapping[str, Any] | None, file: str | None, compat: Compat
) -> tuple[dict[str, Any], list[ConfigWarning]]:
    out: dict[str, Any] = {}
    warns: list[ConfigWarning] = []
    if not gl:
        return out, warns
    low = {str(k).lower(): v for k, v in gl.items()}

    def num(name: str) -> float | None:
        raw = low.get(name.lower())
        if raw is None:
            return None
        try:
            v = float(str(raw).strip())
        except ValueError:
            v = math.nan
        if not math.isfinite(v):
            warns.append(
                ConfigWarning(
                    f"global {name} = {raw!r} is not a number; ignored", file=file, param=name
                )
            )
            return None
        return v

    lat, lon = num("LatOrigin"), num("LongOrigin")
    if lat is not None and lon is not None:
        if -80.0 <= lat <= 84.0 and -180.0 <= lon <= 180.0:
            out["lat_origin"], out["long_origin"] = lat, lon
        else:
            warns.append(
                ConfigWarning(
                    f"datum ({format_number_x(lat, 6)}, {format_number_x(lon, 6)}) is outside the "
                    "UTM range (lat [-80, 84], lon [-180, 180]): no lat/long is published",
                    file=file,
                    param="LatOrigin",
                )
            )
    elif (lat is None) != (lon is None):
        warns.append(
            ConfigWarning(
                "only one of LatOrigin/LongOrigin is set: no datum, no lat/long is published",
                file=file,
                param="LatOrigin" if lat is None else "LongOrigin",
            )
        )
    warp = num("MOOSTimeWarp")
    if warp is not None and warp > 0:
        out["time_warp"] = warp
    return out, warns


def _diff_warnings(a: _Eval, b: _Eval, primary: Compat, file: str | None) -> list[ConfigWarning]:
    """§10.3: report every parameter whose effective value differs between the modes."""
    doc, moos = (a, b) if primary == "doc" else (b, a)
    noted = a.noted  # differences the primary mode has already explained line by line
    out: list[ConfigWarning] = []
    names = [n for n in dict.fromkeys(list(doc.values) + list(moos.values))]
    defaults = {f.name: f.default for f in fields(UsmConfig)}
    for name in names:
        if name in noted:
            continue
        dv = doc.values.get(name, defaults.get(name))
        mv = moos.values.get(name, defaults.get(name))
        if dv == mv:
            continue
        line = a.origins.get(name) if name in a.origins else b.origins.get(name)
        dl, ml = doc.origins.get(name), moos.origins.get(name)
        order = (
            " (the program applies the lines in reverse order: the first occurrence wins)"
            if doc.variant == "usm" and max(doc.counts.get(name, 0), moos.counts.get(name, 0)) > 1
            else ""
        )
        out.append(
            ConfigWarning(
                f"effective value differs between modes: documented mode gives {_fmt(dv)}"
                + (f" (line {dl})" if dl is not None else "")
                + f', compat="moos" gives {_fmt(mv)}'
                + (f" (line {ml})" if ml is not None else "")
                + order,
                file=file,
                line=line,
                param=name,
            )
        )
    if doc.tm != moos.tm and ("thrust_map" not in noted or doc.tm_lines > 1):
        line = a.origins.get("thrust_map") or b.origins.get("thrust_map")
        out.append(
            ConfigWarning(
                f"the thrust map differs between modes: documented mode gives {_fmt(doc.tm)}, "
                f'compat="moos" gives {_fmt(moos.tm)}'
                + (
                    " (several thrust_map lines are added in reverse order by the program)"
                    if doc.tm_lines > 1 and doc.variant == "usm"
                    else ""
                ),
                file=file,
                line=line,
                param="thrust_map",
            )
        )
    return out
