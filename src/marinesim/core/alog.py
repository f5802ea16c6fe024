"""MOOS ``.alog`` logs (pLogger's text format): a streaming writer and a reader.

Format (as pLogger writes it; ``reference/moos_live/README.md`` §2.1):

* a header of ``%%`` lines: a rule of 59 ``%``, ``%% LOG FILE:`` with the file name,
  ``%% FILE OPENED ON`` with a ``ctime`` date, ``%% LOGSTART`` with the MOOS time [s] the log
  counts from (16 significant digits), and the rule again;
* one data line per message: time since LOGSTART [s] left-aligned in 15 columns with 5
  decimals, the variable in 20 columns, the source process in 15 columns, then the value
  (a double with 5 decimals, at least 12 columns; a string as posted) and one space;
* a string value may hold newlines: the lines that follow, up to the next line starting
  with a ``TIME VARIABLE SOURCE`` triple, belong to it.

Reading gives :class:`Alog` (records in file order; the time column is *not* sorted in
pLogger's asynchronous logs).  The format sits in ``core`` because two layer-3 packages use it
and may not import each other: ``interop.moos`` (the MOOS app, replays of real logs) and
``io`` (``io.alog``: a log as the run tables of a marinesim run, pandas view, plotting).

Example
-------
>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "a.alog"
>>> with AlogWriter(p, logstart=100.0) as w:
...     w.write(100.5, "NAV_X", "uSimMarine", 1.25)
>>> read_alog(p).records[0].value
1.25
"""

from __future__ import annotations

import math
import re
import time as _time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np

from marinesim.core.errors import DataError

__all__ = [
    "Alog",
    "AlogRecord",
    "AlogWriter",
    "NodeReporter",
    "format_line",
    "moos_number",
    "node_report",
    "read_alog",
]

_RULE = "%" * 59
_DATA = re.compile(r"^(-?\d+\.\d+)\s+(\S+)\s+(\S+)\s+(.*)$", re.DOTALL)
_NUM = re.compile(r"^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*$")
#: Format specs of :func:`moos_number` by number of decimals (built once, not per call).
_SPECS = {d: f".{d}f" for d in range(17)}
#: The NAV fields a node report reads (suffix after the prefix -> key of the report's values).
_NODE_FIELDS = ("X", "Y", "SPEED", "HEADING", "DEPTH", "LAT", "LONG")


def format_line(t: float, var: str, src: str, value: float | str) -> str:
    """One data line (without the newline): time since LOGSTART, variable, source, value."""
    if isinstance(value, str):
        val = value
    else:
        val = f"{float(value):<12.5f}"
    return f"{t:<15.5f} {var:<20} {src:<15} {val} "


def moos_number(value: float, digits: int) -> str:
    """A double as MOOS-IvP's ``doubleToStringX`` prints it: ``digits`` decimals, trailing
    zeros and a trailing point dropped, ``-0`` as ``0``."""
    spec = _SPECS.get(digits)
    text = format(float(value), spec if spec is not None else f".{digits}f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def node_report(
    *,
    name: str,
    x: float,
    y: float,
    speed: float,
    heading: float,
    depth: float,
    moos_time: float,
    lat: float | None = None,
    lon: float | None = None,
    vtype: str = "kayak",
    length: float = 4.0,
    mode: str | None = None,
    allstop: str | None = None,
    index: int = 0,
) -> str:
    """A ``NODE_REPORT_LOCAL`` value as pNodeReporter (MOOS-IvP 24.8) writes it.

    Fields in pNodeReporter's order: ``NAME, X, Y, SPD, HDG, DEP, LAT, LON, TYPE, MODE,
    ALLSTOP, INDEX, YAW, TIME, LENGTH``; x/y/speed/heading/depth with 2 decimals, lat/lon
    with 8, YAW (radians, counter-clockwise from east, in [-pi, pi)) with 7; ``INDEX`` is left
    out when 0, as pNodeReporter does.  pMarineViewer draws vehicles from these posts; alogview
    from those logged as ``NODE_REPORT`` (see :func:`marinesim.io.alog.write_result_alog`).
    """
    mn = moos_number
    text = (
        f"NAME={name},X={mn(x, 2)},Y={mn(y, 2)},SPD={mn(speed, 2)},HDG={mn(heading, 2)},"
        f"DEP={mn(depth, 2)}"
    )
    if lat is not None and lon is not None and math.isfinite(lat) and math.isfinite(lon):
        text += f",LAT={mn(lat, 8)},LON={mn(lon, 8)}"
    text += f",TYPE={vtype}"
    if mode:
        text += f",MODE={mode}"
    if allstop:
        text += f",ALLSTOP={allstop}"
    if index:
        text += f",INDEX={int(index)}"
    yaw = math.remainder(math.radians(90.0 - heading), 2.0 * math.pi)
    return f"{text},YAW={mn(yaw, 7)},TIME={mn(moos_time, 2)},LENGTH={mn(length, 2)}"


class NodeReporter:
    """Writes ``NODE_REPORT_LOCAL`` lines for one vehicle from its NAV posts (the log side of
    pNodeReporter): call :meth:`update` with each post, :meth:`report` after each NAV record.

    Parameters
    ----------
    name : str
        Vehicle name (pNodeReporter uses the community name).
    prefix : str
        Navigation prefix (``NAV``).
    vtype, length : str, float
        ``TYPE`` and ``LENGTH`` [m] (pNodeReporter's ``platform_type`` / ``platform_length``).
    mode : str, optional
        ``MODE`` field (``NOHELM-EVER`` for a run with no IvP helm).
    """

    def __init__(
        self,
        name: str,
        prefix: str = "NAV",
        *,
        vtype: str = "kayak",
        length: float = 4.0,
        mode: str | None = None,
    ) -> None:
        self.name, self.prefix, self.vtype, self.length, self.mode = (
            name,
            prefix,
            vtype,
            float(length),
            mode,
        )
        self.index = 0
        self._v: dict[str, float] = {}
        # the posts a report reads, by full variable name (the other posts change nothing)
        self._fields = {f"{prefix}_{f}": f for f in _NODE_FIELDS}
        self._x = f"{prefix}_X"

    def update(self, var: str, value: float | str) -> None:
        """Note one post (only ``<prefix>_*`` doubles matter)."""
        f = self._fields.get(var)
        if f is not None and not isinstance(value, str):
            self._v[f] = float(value)

    def update_many(self, items: Iterable[tuple[str, float | str]]) -> bool:
        """:meth:`update` with each ``(var, value)`` of a packet; True when ``<prefix>_X``
        was among them (a NAV record: time for a report)."""
        fields, v = self._fields, self._v
        nav = False
        for var, value in items:
            f = fields.get(var)
            if f is not None and not isinstance(value, str):
                v[f] = float(value)
                nav = nav or var == self._x
        return nav

    def report(self, moos_time: float) -> str | None:
        """The report for ``moos_time`` (None before a first X and Y)."""
        v = self._v
        if not ("X" in v and "Y" in v) or not (math.isfinite(v["X"]) and math.isfinite(v["Y"])):
            return None
        text = node_report(
            name=self.name,
            x=v["X"],
            y=v["Y"],
            speed=v.get("SPEED", 0.0),
            heading=v.get("HEADING", 0.0),
            depth=v.get("DEPTH", 0.0),
            moos_time=moos_time,
            lat=v.get("LAT"),
            lon=v.get("LONG"),
            vtype=self.vtype,
            length=self.length,
            mode=self.mode,
            index=self.index,
        )
        self.index += 1
        return text


class AlogWriter:
    """Stream MOOS messages to an ``.alog`` file (pLogger's header and line format).

    Parameters
    ----------
    path : str or Path
        File to write (parent directories are created).
    logstart : float
        MOOS time [s] the log's time column counts from.
    flush_every : int
        Lines between flushes (a crash loses at most this many lines).

    Notes
    -----
    Use as a context manager or call :meth:`close`; every line is written as it comes, so
    the log of a run that stops early is kept.
    """

    def __init__(self, path: str | Path, *, logstart: float, flush_every: int = 64) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh: IO[str] | None = self.path.open("w", encoding="utf-8", newline="\n")
        except OSError as exc:
            raise DataError(f"cannot write log: {exc.strerror or exc}", file=str(path)) from None
        self.logstart = float(logstart)
        self.lines = 0
        self._flush_every = max(1, int(flush_every))
        self._mids: dict[str, dict[str, str]] = {}
        fh = self._fh
        fh.write(f"{_RULE}\n")
        fh.write(f"%% LOG FILE:       {self.path}\n")
        fh.write(f"%% FILE OPENED ON  {_time.ctime()}\n")
        fh.write(f"%% LOGSTART           {self.logstart:.16g}\n")
        fh.write(f"{_RULE}\n")
        fh.flush()

    def write(self, moos_time: float, var: str, src: str, value: float | str) -> None:
        """Log one message posted at MOOS time ``moos_time`` [s] (NaN doubles are skipped)."""
        if self._fh is None:
            raise DataError("log already closed", file=str(self.path))
        if not isinstance(value, str) and not math.isfinite(float(value)):
            return
        self._fh.write(format_line(moos_time - self.logstart, var, src, value) + "\n")
        self.lines += 1
        if self.lines % self._flush_every == 0:
            self._fh.flush()

    def write_many(
        self, moos_time: float, src: str, items: Iterable[tuple[str, float | str]]
    ) -> None:
        """Log the posts of one packet (``(var, value)`` pairs, all at ``moos_time``) as
        :meth:`write` does, with the time column formatted once."""
        if self._fh is None:
            raise DataError("log already closed", file=str(self.path))
        head = f"{moos_time - self.logstart:<15.5f} "
        # the variable and source columns of a (source, variable), formatted once
        mids = self._mids.get(src)
        if mids is None:
            if len(self._mids) > 64:  # ever new sources: do not grow forever
                self._mids.clear()
            mids = self._mids[src] = {}
        lines = []
        isfinite = math.isfinite
        for var, value in items:
            mid = mids.get(var)
            if mid is None:
                if len(mids) > 4096:
                    mids.clear()
                mid = mids[var] = f"{var:<20} {src:<15} "
            if isinstance(value, str):
                lines.append(f"{head}{mid}{value} \n")
            elif isfinite(value):
                lines.append(f"{head}{mid}{float(value):<12.5f} \n")
        self._fh.write("".join(lines))
        before = self.lines
        self.lines += len(lines)
        if self.lines // self._flush_every != before // self._flush_every:
            self._fh.flush()

    def flush(self) -> None:
        """Push buffered lines to the file."""
        if self._fh is not None:
            self._fh.flush()

    def close(self) -> None:
        """Flush and close (idempotent)."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __enter__(self) -> AlogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class AlogRecord:
    """One logged message: time since LOGSTART [s], variable, source, value, file line."""

    t: float
    var: str
    src: str
    value: float | str
    line: int


@dataclass
class Alog:
    """A read ``.alog``.

    Attributes
    ----------
    path : str
        File name.
    logstart : float
        MOOS time of the log's zero [s] (NaN when the header has none).
    header : list of str
        The ``%%`` lines.
    records : list of AlogRecord
        Data lines in file order.
    """

    path: str
    logstart: float
    header: list[str]
    records: list[AlogRecord] = field(default_factory=list)

    def variables(self) -> list[str]:
        """Variable names in order of first appearance."""
        return list(dict.fromkeys(r.var for r in self.records))

    def series(self, var: str, src: str | None = None) -> tuple[np.ndarray, list[Any]]:
        """Times [s] (stable-sorted) and values of one variable (optionally of one source)."""
        recs = [r for r in self.records if r.var == var and (src is None or r.src == src)]
        recs.sort(key=lambda r: r.t)
        return np.array([r.t for r in recs], dtype=float), [r.value for r in recs]

    def numeric(self, var: str, src: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Times and float values of a numeric variable (string values skipped)."""
        t, vals = self.series(var, src)
        keep = [i for i, v in enumerate(vals) if not isinstance(v, str)]
        return t[keep], np.array([vals[i] for i in keep], dtype=float)


def _value(text: str) -> float | str:
    if text.endswith(" "):
        text = text[:-1]
    if _NUM.match(text):
        return float(text)
    return text


def _iter_records(lines: Iterable[str], path: str) -> Iterator[tuple[str, int, str]]:
    for lineno, raw in enumerate(lines, start=1):
        yield raw.rstrip("\n").rstrip("\r"), lineno, path


def read_alog(path: str | Path) -> Alog:
    """Read an ``.alog`` file (pLogger's or ours).

    Raises
    ------
    DataError
        Missing or unreadable file, or a file with neither a header nor data lines.
    """
    p = Path(path)
    try:
        fh = p.open("r", encoding="utf-8", errors="surrogateescape")
    except FileNotFoundError:
        raise DataError("file not found", file=str(p)) from None
    except OSError as exc:
        raise DataError(f"cannot read file: {exc.strerror or exc}", file=str(p)) from None
    header: list[str] = []
    logstart = math.nan
    records: list[AlogRecord] = []
    cur: list[Any] | None = None  # [t, var, src, text, line]

    def done() -> None:
        if cur is not None:
            records.append(AlogRecord(cur[0], cur[1], cur[2], _value(cur[3]), cur[4]))

    with fh:
        for line, lineno, _ in _iter_records(fh, str(p)):
            if line.startswith("%%"):
                header.append(line)
                if line.startswith("%% LOGSTART"):
                    try:
                        logstart = float(line.split()[2])
                    except (IndexError, ValueError):
                        raise DataError(
                            f"bad LOGSTART line {line!r}", file=str(p), line=lineno
                        ) from None
                continue
            m = _DATA.match(line)
            if m is None or not m.group(1)[-1].isdigit():
                if cur is None:
                    raise DataError(f"not an alog line: {line[:60]!r}", file=str(p), line=lineno)
                cur[3] += "\n" + line  # continuation of a multi-line string value
                continue
            done()
            cur = [float(m.group(1)), m.group(2), m.group(3), m.group(4), lineno]
        done()
    if not header and not records:
        raise DataError("empty alog", file=str(p))
    return Alog(str(p), logstart, header, records)
