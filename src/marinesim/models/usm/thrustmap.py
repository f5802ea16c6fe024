"""uSimMarine's thrust map: thrust [%] ↔ speed [m/s] (spec usimmarine.md §4).

API (used by :mod:`marinesim.models.usm` and :mod:`marinesim.reference.usm`)
------------------------------------------------------------------------------------
``ThrustMap(thrust_factor=20.0, reflect=False)``
    An empty map (the factor rule applies until a positive pair exists).
``tm.add_pair(t, s) -> bool``
    §4.1 rules; ``False`` (map unchanged) when the pair is rejected.
``tm.add_text(text, compat="doc"|"moos", file=, line=, param="thrust_map") -> list[ConfigWarning]``
    Parse one ``thrust_map`` value into the map (§4.2 / §10.1 row 2).  ``compat="doc"`` drops
    each invalid pair alone and raises :class:`ConfigError` on a malformed item;
    ``compat="moos"`` stops at the first invalid or malformed item, as the program.
``ThrustMap.parse(text, compat, thrust_factor=20.0, reflect=False, file=, line=)``
    ``-> (ThrustMap, warnings)``, a fresh map built from one value.
``tm.speed(thrust) -> ndarray``
    Forward lookup (§4.3), vectorised over any array shape (thrust in %, speed in m/s).
``tm.thrust(speed, compat="doc"|"moos") -> ndarray``
    Inverse lookup (§4.4; ``"doc"`` = the documented least-magnitude rule of §10.1 row 8).
``tm.plateau_differs(speed) -> ndarray[bool]``
    Where the two inverse rules give different answers (for the run-time warning of §10.3).
``tm.thrust_factor``, ``tm.reflect``, ``tm.pos_pairs``, ``tm.neg_pairs``, ``tm.map_pos()``,
``tm.map_neg()`` (report strings of §4.5), ``tm.set_thrust_factor(v)`` (negative ignored),
``tm.set_reflect(b)``, ``tm.copy()``, ``tm.freeze()`` (further changes raise).

The arithmetic is the program's, operation by operation, so lookups agree with the reference
table ``usm/thrustmap_lookup`` to the last bit in practice.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from marinesim.core.errors import ConfigError, ConfigWarning
from marinesim.core.moostext import is_moos_number, moos_atof

__all__ = [
    "MAX_THRUST",
    "MIN_THRUST",
    "ThrustMap",
    "format_number_x",
    "is_moos_number",
    "moos_atof",
    "parse_number",
]

Compat = Literal["doc", "moos"]

#: Thrust domain of the map [%].
MIN_THRUST = -100.0
MAX_THRUST = 100.0

# possessive quantifiers: a failed match costs time linear in the text, not quadratic
_FLOAT_RE = re.compile(r"[+-]?(?:\d++(?:\.\d*+)?|\.\d++)(?:[eE][+-]?\d++)?+")


def parse_number(text: str, compat: Compat) -> float | None:
    """Read a configuration number the way the chosen mode does (§5.1, §10.1 row 6).

    Parameters
    ----------
    text : str
        The value text.
    compat : {"doc", "moos"}
        ``"moos"``: ``isNumber`` then ``atof`` (no exponent); ``"doc"``: any finite float
        literal (exponent allowed).

    Returns
    -------
    float or None
        The value, or None when the mode rejects the text or it is not finite (a digit
        string too long for a double).
    """
    s = text.strip()
    if compat == "moos":
        if not is_moos_number(s):
            return None
        m = moos_atof(s)
        return m if math.isfinite(m) else None  # a digit string beyond 1.8e308 (inf)
    if not _FLOAT_RE.fullmatch(s):
        return None
    v = float(s)
    return v if math.isfinite(v) else None


def format_number_x(value: float, digits: int = 4) -> str:
    """MOOS-IvP ``doubleToStringX``: ``digits`` decimals, trailing zeros and '.' removed."""
    s = f"{value:.{digits}f}"
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    if s in ("-0", ""):
        s = "0"
    return s


_F64 = NDArray[np.float64]


def _thrust_on_segment(s: _F64, lt: _F64, ls: _F64, rt: _F64, rs: _F64) -> _F64:
    """Thrust at speed ``s`` on the segment (lt, ls)–(rt, rs), as the program inverts it.

    slope = (rs − ls)/(rt − lt), intercept b = ls − slope·lt, thrust (s − b)/slope; a flat
    segment (slope 0) gives its left thrust, a segment of no positive run 0.
    """
    run = rt - lt
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = (rs - ls) / run
        b = ls - slope * lt
        val = np.where(slope == 0, lt, (s - b) / slope)
    return np.where(run <= 0, 0.0, val)


def _pair_text(t: float, s: float) -> str:
    return f"{format_number_x(t)}:{format_number_x(s)}"


class ThrustMap:
    """Piecewise-linear thrust [%] → speed [m/s] map of uSimMarine (spec §4).

    Parameters
    ----------
    thrust_factor : float
        Speed = thrust / factor while there is no positive pair (uSimMarine's default 20;
        0 → speed 0).  Negative values are ignored (the default stays).
    reflect : bool
        Mirror the positive side for negative thrust, only while there are no negative pairs.
    pairs : iterable of (float, float), optional
        Pairs added in order with :meth:`add_pair` (rejected ones are skipped).
    """

    __slots__ = ("_cache", "_factor", "_frozen", "_neg", "_negk", "_pos", "_posk", "_reflect")

    def __init__(
        self,
        thrust_factor: float = 20.0,
        reflect: bool = False,
        pairs: Iterable[tuple[float, float]] | None = None,
    ) -> None:
        self._pos: dict[float, float] = {}
        self._neg: dict[float, float] = {}
        self._posk: list[float] = []  # sorted thrusts of each side (bisect: no re-sorting)
        self._negk: list[float] = []
        self._factor = 20.0
        self._reflect = bool(reflect)
        self._frozen = False
        self._cache: dict[str, NDArray[np.float64]] | None = None
        self.set_thrust_factor(thrust_factor)
        for t, s in pairs or ():
            self.add_pair(t, s)

    # ------------------------------------------------------------------ state
    @property
    def thrust_factor(self) -> float:
        """Legacy factor [% per m/s] used while the positive side is empty."""
        return self._factor

    @property
    def reflect(self) -> bool:
        """Whether negative thrust mirrors the positive side (only with no negative pairs)."""
        return self._reflect

    @property
    def pos_pairs(self) -> tuple[tuple[float, float], ...]:
        """Positive pairs (thrust %, speed m/s), ascending thrust."""
        return tuple((t, self._pos[t]) for t in self._posk)

    @property
    def neg_pairs(self) -> tuple[tuple[float, float], ...]:
        """Negative pairs (thrust %, speed m/s), ascending thrust."""
        return tuple((t, self._neg[t]) for t in self._negk)

    @property
    def using_thrust_factor(self) -> bool:
        """True while the positive side is empty (speed = thrust / factor)."""
        return not self._pos

    def _check_mutable(self) -> None:
        if self._frozen:
            raise AttributeError("this ThrustMap is frozen; use .copy() to change it")
        self._cache = None

    def freeze(self) -> ThrustMap:
        """Forbid further changes and return ``self``."""
        self._frozen = True
        return self

    def copy(self) -> ThrustMap:
        """An unfrozen copy."""
        new = ThrustMap(self._factor, self._reflect)
        new._pos = dict(self._pos)
        new._neg = dict(self._neg)
        new._posk = list(self._posk)
        new._negk = list(self._negk)
        return new

    def set_thrust_factor(self, value: float) -> None:
        """Set the factor; a negative (or non-finite) value is ignored, as in the program."""
        self._check_mutable()
        if math.isfinite(value) and value >= 0:
            self._factor = float(value)

    def set_reflect(self, value: bool) -> None:
        """Set the reflect flag."""
        self._check_mutable()
        self._reflect = bool(value)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ThrustMap):
            return NotImplemented
        return (
            self._pos == other._pos
            and self._neg == other._neg
            and self._factor == other._factor
            and self._reflect == other._reflect
        )

    def __hash__(self) -> int:
        return hash((self.pos_pairs, self.neg_pairs, self._factor, self._reflect))

    def __repr__(self) -> str:
        pairs = ", ".join(_pair_text(t, s) for t, s in self.neg_pairs + self.pos_pairs)
        return (
            f"ThrustMap([{pairs}], thrust_factor={format_number_x(self._factor)}, "
            f"reflect={self._reflect})"
        )

    # ------------------------------------------------------------- building
    def reject_reason(self, thrust: float, speed: float) -> str | None:
        """Why :meth:`add_pair` would reject the pair (None when it would accept it).

        Returns
        -------
        str or None
            "out of domain [-100, 100]", "sign mismatch", "non-zero speed at zero thrust",
            or "not monotonic after 'T:S'" / "not monotonic before 'T:S'".
        """
        if not (math.isfinite(thrust) and math.isfinite(speed)):
            return "not a finite number"
        if thrust < MIN_THRUST or thrust > MAX_THRUST:
            return "out of domain [-100, 100]"
        if thrust == 0:
            return None if speed == 0 else "non-zero speed at zero thrust"
        if (thrust > 0 and speed < 0) or (thrust < 0 and speed > 0):
            return "sign mismatch (thrust and speed must have the same sign)"
        # The side is non-decreasing already: only the new pair's neighbours can break it
        # (the first violation in thrust order is the left one).  O(log n) per pair.
        side, keys = (self._pos, self._posk) if thrust > 0 else (self._neg, self._negk)
        i = bisect.bisect_left(keys, thrust)
        if i > 0 and speed < side[keys[i - 1]]:
            return f"not monotonic after '{_pair_text(keys[i - 1], side[keys[i - 1]])}'"
        j = i + 1 if i < len(keys) and keys[i] == thrust else i
        if j < len(keys) and side[keys[j]] < speed:
            return f"not monotonic before '{_pair_text(keys[j], side[keys[j]])}'"
        return None

    def add_pair(self, thrust: float, speed: float) -> bool:
        """Add one (thrust %, speed m/s) pair by the program's rules (§4.1).

        Returns
        -------
        bool
            False when rejected (out of [-100, 100], sign mismatch, non-zero speed at zero
            thrust, or the side would stop being non-decreasing); the map is then unchanged.
            ``0:0`` is accepted and changes nothing.
        """
        self._check_mutable()
        if self.reject_reason(thrust, speed) is not None:
            return False
        t = float(thrust)
        if thrust != 0:
            side, keys = (self._pos, self._posk) if t > 0 else (self._neg, self._negk)
            if t not in side:
                bisect.insort(keys, t)
            side[t] = float(speed)
        return True

    def add_text(
        self,
        text: str,
        compat: Compat = "doc",
        *,
        file: str | Path | None = None,
        line: int | None = None,
        param: str = "thrust_map",
    ) -> list[ConfigWarning]:
        """Add the pairs of one ``thrust_map`` value (§4.2, §10.1 row 2).

        Parameters
        ----------
        text : str
            Comma-separated ``thrust:speed`` items.
        compat : {"doc", "moos"}
            ``"doc"``: each invalid pair is dropped alone (warning); a malformed item is a
            :class:`ConfigError`.  ``"moos"``: adding stops at the first invalid or
            malformed item (warning naming it and the dropped items).
        file, line, param
            Location for messages.

        Returns
        -------
        list of ConfigWarning
            One per invalid item.  The text is the same in both modes when they would
            differ, naming what each mode drops.

        Raises
        ------
        ConfigError
            ``compat="doc"`` and an item is not ``number:number``.
        """
        self._check_mutable()
        warns: list[ConfigWarning] = []
        if not text.strip():
            return warns
        items = [it.strip() for it in text.split(",")]
        # suffix counts of non-empty items: listing what a stop drops stays O(1) per item
        after = [0] * (len(items) + 1)
        for k in range(len(items) - 1, -1, -1):
            after[k] = after[k + 1] + (1 if items[k] else 0)

        def _rest(i: int, shown: int = 5) -> str:
            """The non-empty items after item ``i``, at most ``shown`` of them named."""
            names: list[str] = []
            k = i + 1
            while k < len(items) and len(names) < shown:
                if items[k]:
                    names.append(repr(items[k]))
                k += 1
            more = after[i + 1] - len(names)
            return ", ".join(names) + (f" and {more} more" if more > 0 else "")

        def where(msg: str) -> ConfigWarning:
            return ConfigWarning(msg, file=file, line=line, param=param)

        for i, item in enumerate(items):
            left, sep, right = item.partition(":")
            t = parse_number(left, compat) if sep else None
            s = parse_number(right, compat) if sep else None
            if t is None or s is None:
                rest = _rest(i)
                doc_t = parse_number(left, "doc") if sep else None
                doc_s = parse_number(right, "doc") if sep else None
                if compat == "doc":
                    raise ConfigError(
                        f"malformed item {item!r}: expected 'thrust:speed' with two numbers",
                        file=file,
                        line=line,
                        param=param,
                    )
                msg = f"item {item!r} is not 'number:number'"
                if doc_t is not None and doc_s is not None:
                    msg = f"item {item!r} uses an exponent, which the program rejects"
                msg += '; compat="moos" stops here'
                if rest:
                    msg += ", dropping " + rest
                msg += " (documented mode: a malformed item is an error)"
                warns.append(where(msg))
                return warns
            reason = self.reject_reason(t, s)
            if reason is None:
                self.add_pair(t, s)
                continue
            rest = _rest(i)
            msg = (
                f"pair {item!r} is {reason}"
                if reason.startswith("not")
                else (f"pair {item!r} rejected: {reason}")
            )
            if rest:
                msg += '; documented mode drops this pair only, compat="moos" also drops ' + rest
            else:
                msg += "; the pair is dropped"
            warns.append(where(msg))
            if compat == "moos":
                return warns
        return warns

    @classmethod
    def parse(
        cls,
        text: str,
        compat: Compat = "doc",
        *,
        thrust_factor: float = 20.0,
        reflect: bool = False,
        file: str | Path | None = None,
        line: int | None = None,
    ) -> tuple[ThrustMap, list[ConfigWarning]]:
        """Build a map from one ``thrust_map`` value; see :meth:`add_text`.

        Returns
        -------
        (ThrustMap, list of ConfigWarning)
        """
        tm = cls(thrust_factor, reflect)
        warns = tm.add_text(text, compat, file=file, line=line)
        return tm, warns

    # -------------------------------------------------------------- lookups
    def _arrays(self) -> dict[str, NDArray[np.float64]]:
        if self._cache is not None:
            return self._cache
        pos = self.pos_pairs
        neg = self.neg_pairs
        c: dict[str, NDArray[np.float64]] = {}
        pt = np.array([p[0] for p in pos], dtype=np.float64)
        ps = np.array([p[1] for p in pos], dtype=np.float64)
        nt = np.array([p[0] for p in neg], dtype=np.float64)
        ns = np.array([p[1] for p in neg], dtype=np.float64)
        c["pt"], c["ps"], c["nt"], c["ns"] = pt, ps, nt, ns
        if pos:
            top = ps[-1]
            # left point i: (0,0) then the pairs; right point i: the pairs then (100, top)
            c["pos_lt"] = np.concatenate(([0.0], pt))
            c["pos_ls"] = np.concatenate(([0.0], ps))
            c["pos_rt"] = np.concatenate((pt, [MAX_THRUST]))
            c["pos_rs"] = np.concatenate((ps, [top]))
            c["pos_slope"], c["pos_flat"] = self._segments(
                c["pos_lt"], c["pos_ls"], c["pos_rt"], c["pos_rs"]
            )
        if neg:
            low = ns[0]
            c["neg_lt"] = np.concatenate(([MIN_THRUST], nt))
            c["neg_ls"] = np.concatenate(([low], ns))
            c["neg_rt"] = np.concatenate((nt, [0.0]))
            c["neg_rs"] = np.concatenate((ns, [0.0]))
            c["neg_slope"], c["neg_flat"] = self._segments(
                c["neg_lt"], c["neg_ls"], c["neg_rt"], c["neg_rs"]
            )
        self._cache = c
        return c

    @staticmethod
    def _segments(
        lt: NDArray[np.float64],
        ls: NDArray[np.float64],
        rt: NDArray[np.float64],
        rs: NDArray[np.float64],
    ) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        """Per-segment slope (rise/run, as the program divides) and the run <= 0 flag."""
        run = rt - lt
        flat = run <= 0
        with np.errstate(divide="ignore", invalid="ignore"):
            slope = np.where(flat, 0.0, (rs - ls) / np.where(flat, 1.0, run))
        return slope, flat

    def _speed_pos(self, t: NDArray[np.float64]) -> NDArray[np.float64]:
        c = self._arrays()
        if not self._pos:
            if self._factor == 0:
                return np.zeros_like(t)
            return t / self._factor
        i = np.searchsorted(c["pt"], t, side="right")  # pairs with thrust <= t
        i = np.minimum(i, len(c["pt"]))
        lt = c["pos_lt"][i]
        out = ((t - lt) * c["pos_slope"][i]) + c["pos_ls"][i]
        out = np.where(c["pos_flat"][i], 0.0, out)
        return np.where(t >= MAX_THRUST, c["ps"][-1], out)

    def _speed_neg(self, t: NDArray[np.float64]) -> NDArray[np.float64]:
        c = self._arrays()
        if not self._neg:
            if self._reflect:
                return -1.0 * self._speed_pos(-t)
            return np.zeros_like(t)
        r = np.searchsorted(c["nt"], t, side="left")  # first pair with thrust >= t
        lt = c["neg_lt"][r]
        out = ((t - lt) * c["neg_slope"][r]) + c["neg_ls"][r]
        out = np.where(c["neg_flat"][r], 0.0, out)
        return np.where(t <= MIN_THRUST, c["ns"][0], out)

    def speed(self, thrust: ArrayLike) -> NDArray[np.float64]:
        """Forward lookup: speed [m/s] for thrust [%] (§4.3), element-wise.

        Parameters
        ----------
        thrust : array_like
            Thrust in percent, any shape; not clipped.

        Returns
        -------
        ndarray of float64
            Same shape.  A map saturates at its end pairs beyond ±100; the factor rule
            (empty positive side) is unclipped; negative thrust gives 0 with neither negative
            pairs nor reflect.
        """
        t = np.asarray(thrust, dtype=np.float64)
        pos = t > 0
        neg = t < 0
        if pos.all():
            return self._speed_pos(t)
        out = np.zeros_like(t)
        if pos.any():
            out = np.where(pos, self._speed_pos(np.where(pos, t, 1.0)), out)
        if neg.any():
            out = np.where(neg, self._speed_neg(np.where(neg, t, -1.0)), out)
        return out

    def _thrust_pos(self, s: NDArray[np.float64], compat: Compat) -> NDArray[np.float64]:
        c = self._arrays()
        if not self._pos:
            if self._factor == 0:
                return np.zeros_like(s)
            return s * self._factor
        ps, pt = c["ps"], c["pt"]
        top = ps[-1]
        k = np.searchsorted(ps, s, side="left")  # pairs with speed < s
        k = np.minimum(k, len(ps) - 1)
        val = _thrust_on_segment(s, c["pos_lt"][k], c["pos_ls"][k], pt[k], ps[k])
        if compat == "moos":
            return np.where(s >= top, MAX_THRUST, val)
        # documented: a speed on a plateau (or beyond the top) → least thrust reaching it
        first_at = pt[np.minimum(np.searchsorted(ps, np.minimum(s, top), side="left"), len(ps) - 1)]
        exact = ps[np.minimum(np.searchsorted(ps, s, side="left"), len(ps) - 1)] == s
        val = np.where(exact, first_at, val)
        return np.where(s >= top, first_at, val)

    def _thrust_neg(self, s: NDArray[np.float64], compat: Compat) -> NDArray[np.float64]:
        c = self._arrays()
        if not self._neg:
            if self._reflect:
                return -1.0 * self._thrust_pos(-s, compat)
            return np.zeros_like(s)
        ns, nt = c["ns"], c["nt"]
        low = ns[0]
        r = np.searchsorted(c["neg_rs"], s, side="left")  # first right point with speed >= s
        r = np.minimum(r, len(ns))
        val = _thrust_on_segment(s, c["neg_lt"][r], c["neg_ls"][r], c["neg_rt"][r], c["neg_rs"][r])
        if compat == "moos":
            return np.where(s <= low, MIN_THRUST, val)
        # documented: least magnitude = the highest thrust among pairs with that speed
        sc = np.maximum(s, low)
        last = np.searchsorted(ns, sc, side="right") - 1  # last pair with speed <= s
        last = np.maximum(last, 0)
        last_at = nt[last]
        exact = ns[last] == sc
        val = np.where(exact, last_at, val)
        return np.where(s <= low, last_at, val)

    def thrust(self, speed: ArrayLike, compat: Compat = "doc") -> NDArray[np.float64]:
        """Inverse lookup: thrust [%] for a speed [m/s] (§4.4, §10.1 row 8), element-wise.

        Parameters
        ----------
        speed : array_like
            Speed in m/s, any shape.
        compat : {"doc", "moos"}
            ``"moos"``: the program (top plateau → 100, bottom → −100, negative middle
            plateau → its most negative thrust).  ``"doc"``: a speed on a plateau, or beyond
            the end pairs, maps to the least-magnitude thrust that reaches it.

        Returns
        -------
        ndarray of float64
            Same shape.
        """
        if compat not in ("doc", "moos"):
            raise ConfigError(f"compat must be 'doc' or 'moos', not {compat!r}", param="compat")
        s = np.asarray(speed, dtype=np.float64)
        out = np.zeros_like(s)
        pos = s > 0
        neg = s < 0
        if np.any(pos):
            out = np.where(pos, self._thrust_pos(np.where(pos, s, 1.0), compat), out)
        if np.any(neg):
            out = np.where(neg, self._thrust_neg(np.where(neg, s, -1.0), compat), out)
        return out

    def plateau_differs(self, speed: ArrayLike) -> NDArray[np.bool_]:
        """Where the documented and the program's inverse lookups disagree (beyond 1e-9 %)."""
        a = self.thrust(speed, "doc")
        b = self.thrust(speed, "moos")
        return np.abs(a - b) > 1e-9

    # -------------------------------------------------------------- reports
    def map_pos(self) -> str:
        """Positive pairs as the program reports them: ``"20,2.4, 50,4.2"`` (§4.5)."""
        return ", ".join(f"{format_number_x(t)},{format_number_x(s)}" for t, s in self.pos_pairs)

    def map_neg(self) -> str:
        """Negative pairs ``"-100:-3.5, -75:-3.2"``, or the reflect notice (§4.5)."""
        if self._reflect:
            return "Positive thrust-map reflected"
        return ", ".join(f"{format_number_x(t)}:{format_number_x(s)}" for t, s in self.neg_pairs)

    def to_text(self) -> str:
        """The pairs as a ``thrust_map`` value (``"-100:-3.5, 20:2.4"``); '' when empty."""
        return ", ".join(_pair_text(t, s) for t, s in self.neg_pairs + self.pos_pairs)
