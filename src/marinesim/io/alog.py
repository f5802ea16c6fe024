"""MOOS ``.alog`` logs (pLogger's format) as marinesim run tables, and runs written as logs.

The text format itself (header, line layout, multi-line values, the streaming
:class:`AlogWriter` and the reader) is :mod:`marinesim.core.alog`, shared with
``interop.moos``; this module re-exports it and adds the io side.

Reading gives :class:`Alog` (records in file order, the time column unsorted as pLogger
writes it, with a pandas view).  :func:`alog_to_result` turns it into the
:class:`~marinesim.engine.results.RunResult` of a marinesim run (``truth.pos`` north/east/
down from ``NAV_Y``/``NAV_X``/``NAV_DEPTH``, ``truth.heading``, ``truth.speed``; the ``*_GT``
variables as truth and ``NAV_*`` as ``belief.pos`` when a log has both; every other numeric
variable as ``moos.<VAR>``), so ``marinesim plot`` and the Python API treat an ``.alog`` like
one of our run directories.  :func:`write_result_alog` writes a RunResult as an ``.alog``.

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
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from marinesim.core import alog as _fmt
from marinesim.core.alog import AlogRecord, AlogWriter, NodeReporter, format_line
from marinesim.core.errors import DataError
from marinesim.engine.results import Event, RunResult, Signal

__all__ = [
    "Alog",
    "AlogRecord",
    "AlogWriter",
    "DbClock",
    "NodeReporter",
    "alog_to_result",
    "format_line",
    "load_alog_result",
    "read_alog",
    "write_result_alog",
    "write_table_alog",
]


@dataclass
class Alog(_fmt.Alog):
    """A read ``.alog`` with a pandas view; attributes as :class:`marinesim.core.alog.Alog`
    (``path``, ``logstart``, ``header``, ``records``)."""

    def to_pandas(self) -> Any:
        """Long table: ``t``, ``var``, ``src``, ``dval`` (NaN for strings), ``sval``."""
        import pandas as pd

        return pd.DataFrame(
            {
                "t": [r.t for r in self.records],
                "var": [r.var for r in self.records],
                "src": [r.src for r in self.records],
                "dval": [np.nan if isinstance(r.value, str) else r.value for r in self.records],
                "sval": [r.value if isinstance(r.value, str) else "" for r in self.records],
            }
        )


def read_alog(path: str | Path) -> Alog:
    """Read an ``.alog`` file (pLogger's or ours); :func:`marinesim.core.alog.read_alog`.

    Raises
    ------
    DataError
        Missing or unreadable file, or a file with neither a header nor data lines.
    """
    log = _fmt.read_alog(path)
    return Alog(log.path, log.logstart, log.header, log.records)


def _hold(t: np.ndarray, v: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Last value with time ≤ ``at`` (NaN before the first)."""
    if len(t) == 0:
        return np.full(len(at), np.nan)
    idx = np.searchsorted(t, at, side="right") - 1
    out = v[np.clip(idx, 0, None)].astype(float)
    out[idx < 0] = np.nan
    return out


#: Setpoint variables and the signal names the time-series figure looks for.
_SETPOINTS = {
    "DESIRED_HEADING": "helm.desired_heading",
    "DESIRED_SPEED": "helm.desired_speed",
    "DESIRED_DEPTH": "helm.desired_depth",
}


def _guess_prefix(alog: _fmt.Alog) -> str:
    names = set(alog.variables())
    if "NAV_X" in names:
        return "NAV"
    for v in alog.variables():
        if v.endswith("_X") and v[:-2] + "_Y" in names and not v.startswith("TRUE"):
            return v[:-2]
    return "NAV"


def alog_to_result(alog: _fmt.Alog, *, prefix: str | None = None) -> RunResult:
    """The run table of an ``.alog``: one entity per source of ``<prefix>_X``.

    Frames are the ``<prefix>_X`` time stamps of the first source (every variable sampled
    with its last value at or before each frame).  ``prefix`` defaults to ``NAV`` when the
    log has ``NAV_X``, else the first ``P_X`` that has a ``P_Y``.

    Raises
    ------
    DataError
        The log has no ``<prefix>_X`` record.
    """
    prefix = prefix or _guess_prefix(alog)
    xvar = f"{prefix}_X"
    if any(r.var == f"{xvar}_GT" for r in alog.records):
        xvar += "_GT"  # the truth sets the frames (NAV_* may start later, at the first fix)
    srcs = list(dict.fromkeys(r.src for r in alog.records if r.var == xvar))
    if not srcs:
        raise DataError(f"no {xvar} in the log: nothing to tabulate", file=alog.path)
    frames, _ = alog.numeric(xvar, srcs[0])
    frames = np.unique(frames)
    numeric_vars = [
        v
        for v in alog.variables()
        if any(not isinstance(r.value, str) for r in alog.records if r.var == v)
    ]
    n, tt = len(srcs), len(frames)

    def sig(var: str, src: str | None) -> np.ndarray:
        t, v = alog.numeric(var, src)
        return _hold(t, v, frames)

    has_gt = xvar.endswith("_GT")
    signals: dict[str, Signal] = {}

    def pos(sfx: str) -> np.ndarray:
        out = np.empty((n, tt, 3))
        for i, s in enumerate(srcs):
            out[i, :, 0] = sig(f"{prefix}_Y{sfx}", s)
            out[i, :, 1] = sig(f"{prefix}_X{sfx}", s)
            depth = sig(f"{prefix}_DEPTH{sfx}", s)
            out[i, :, 2] = np.where(np.isnan(depth), 0.0, depth)
        return out

    def scalar(var: str) -> np.ndarray:
        out = np.empty((n, tt, 1))
        for i, s in enumerate(srcs):
            out[i, :, 0] = sig(var, s)
        return out

    gt = "_GT" if has_gt else ""
    signals["truth.pos"] = Signal(pos(gt), "m", ("north", "east", "down"))
    signals["truth.heading"] = Signal(scalar(f"{prefix}_HEADING{gt}"), "deg", ())
    signals["truth.speed"] = Signal(scalar(f"{prefix}_SPEED{gt}"), "m/s", ())
    if has_gt:
        signals["belief.pos"] = Signal(pos(""), "m", ("north", "east", "down"))
    for var in numeric_vars:
        if var in _SETPOINTS:
            vals = np.repeat(sig(var, None)[None, :, None], n, axis=0)
            signals[_SETPOINTS[var]] = Signal(vals, "", ())
    for var in numeric_vars:
        name = f"moos.{var}"
        per_src = var.startswith(prefix + "_") or var in ("TRUE_X", "TRUE_Y")
        if per_src:
            vals = scalar(var)
        else:
            vals = np.repeat(sig(var, None)[None, :, None], n, axis=0)
        signals[name] = Signal(vals, "", ())
    events: list[Event] = []
    last: dict[str, str] = {}
    for r in sorted(alog.records, key=lambda r: r.t):
        if isinstance(r.value, str) and last.get(r.var) != r.value and "\n" not in r.value:
            last[r.var] = r.value
            events.append(Event(r.t, r.src, "info", r.var, r.value))
    entities = [
        {"id": i, "name": s, "block": "moos", "index": i, "team": ""} for i, s in enumerate(srcs)
    ]
    manifest = {
        "scenario": Path(alog.path).name,
        "status": "completed",
        "source_format": "alog",
        "alog_logstart": alog.logstart,
        "seed": None,
    }
    return RunResult(frames, signals, entities, events, [], manifest)


def load_alog_result(path: str | Path, *, prefix: str | None = None) -> RunResult:
    """:func:`read_alog` then :func:`alog_to_result`."""
    return alog_to_result(read_alog(path), prefix=prefix)


def _var_name(name: str, label: str | None) -> str:
    base = re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_").upper()
    return f"{base}_{label.upper()}" if label else base


def write_result_alog(
    result: RunResult,
    path: str | Path,
    *,
    logstart: float | None = None,
    prefix: str = "NAV",
    signals: Sequence[str] | None = None,
    node_reports: bool = True,
    vtype: str = "kayak",
    length: float = 4.0,
) -> Path:
    """Write a run's log as an ``.alog`` (source = entity name).

    ``truth.pos`` becomes ``<prefix>_X`` (east), ``<prefix>_Y`` (north), ``<prefix>_DEPTH``;
    ``truth.heading`` / ``truth.speed`` become ``<prefix>_HEADING`` / ``<prefix>_SPEED``.
    When the run has a navigation belief (``belief.pos``), ``NAV_*`` carry the belief and the
    truth goes to ``NAV_*_GT`` (as a MOOS vehicle with an INS logs it).  Every other signal
    ``a.b`` becomes ``A_B`` (one variable per component, ``A_B_LABEL``).
    Frame k is stamped ``logstart + t[k]``; ``logstart`` defaults to the UNIX time of writing
    (pLogger's LOGSTART is the MOOS time at its start: UNIX time at warp 1).

    With ``node_reports`` every entity also gets one node report per frame, as pNodeReporter
    writes it (``NAME`` = entity name, ``TYPE`` = ``vtype``, ``LENGTH`` = ``length`` [m],
    ``MODE=NOHELM-EVER``: no IvP helm ran).  What alogview draws decides the form (checked
    with alogview under Xvfb, docs/guide/moos-batch.md):

    * one entity: ``NODE_REPORT_LOCAL`` (its own pNodeReporter's post) and, once per second,
      ``DB_TIME`` from ``MOOSDB_<entity>``, as a vehicle's pLogger logs its MOOSDB's clock:
      alogview names the log's vehicle after that source and draws it, with its trail, from
      ``NAV_X`` / ``NAV_Y`` / ``NAV_HEADING``;
    * several entities: ``NODE_REPORT`` (the form a shoreside community logs), which alogview
      draws as one vessel per ``NAME``; no ``DB_TIME``: alogview draws one vehicle per log
      from the ``NAV_*`` of that log, and those of several vehicles in one log would make one
      vehicle jumping between them.
    """
    if logstart is None:
        logstart = float(round(time.time(), 2))
    names = list(signals) if signals is not None else list(result.signals)
    sig = result.signals
    nav = f"{prefix}_"
    has_belief = "belief.pos" in sig and "belief.pos" in names
    gt = "_GT" if has_belief else ""
    plan: list[tuple[np.ndarray, str]] = []  # (values (N,T), variable)
    if has_belief:  # what navigation believes is NAV_*, the truth goes to *_GT
        bp = sig["belief.pos"].values
        plan += [(bp[:, :, 1], nav + "X"), (bp[:, :, 0], nav + "Y"), (bp[:, :, 2], nav + "DEPTH")]
        for name, var in (("belief.heading", "HEADING"), ("belief.speed", "SPEED")):
            src_name = name if name in sig else "truth." + name.split(".")[1]
            if src_name in sig:
                plan.append((sig[src_name].values[:, :, 0], nav + var))
    if "truth.pos" in sig and "truth.pos" in names:
        tp = sig["truth.pos"].values
        plan += [
            (tp[:, :, 1], f"{nav}X{gt}"),
            (tp[:, :, 0], f"{nav}Y{gt}"),
            (tp[:, :, 2], f"{nav}DEPTH{gt}"),
        ]
    for name, var in (("truth.heading", "HEADING"), ("truth.speed", "SPEED")):
        if name in sig and name in names:
            plan.append((sig[name].values[:, :, 0], f"{nav}{var}{gt}"))
    special = {"truth.pos", "truth.heading", "truth.speed", "belief.pos", "belief.heading",
               "belief.speed"}  # fmt: skip
    for name in names:
        if name in special or name not in sig:
            continue
        s = sig[name]
        k = s.values.shape[2]
        for j in range(k):
            label = (s.labels[j] if j < len(s.labels) else str(j)) if k > 1 else None
            plan.append((s.values[:, :, j], _var_name(name, label)))
    ents = [str(e.get("name", i)) for i, e in enumerate(result.entities)]
    reporters = [
        NodeReporter(ent, prefix, vtype=vtype, length=length, mode="NOHELM-EVER") for ent in ents
    ]
    report = node_reports and any(var == f"{nav}X{gt}" for _v, var in plan)
    report_var = "NODE_REPORT_LOCAL" if len(ents) == 1 else "NODE_REPORT"
    db = DbClock(ents[0]) if len(ents) == 1 else None
    with AlogWriter(path, logstart=logstart, flush_every=4096) as w:
        for k, t in enumerate(np.asarray(result.t, dtype=float)):
            mt = logstart + float(t)
            if db is not None:
                db.post(w, mt)
            for i, ent in enumerate(ents):
                rep = reporters[i]
                for vals, var in plan:
                    val = float(vals[i, k])
                    w.write(mt, var, ent, val)
                    if report and var.endswith(gt):  # the report shows the true vehicle
                        rep.update(var[: len(var) - len(gt)] if gt else var, val)
                if report:
                    text = rep.report(mt)
                    if text is not None:
                        w.write(mt, report_var, ent, text)
    return Path(path)


def write_table_alog(
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    path: str | Path,
    *,
    src: str,
    time_column: str = "t",
    skip: Iterable[str] = (),
    logstart: float | None = None,
    inputs: Sequence[str] = (),
    input_src: str = "input",
    node: NodeReporter | None = None,
    community: str | None = None,
) -> Path:
    """Write a wide table (one row per iteration, one column per variable) as an ``.alog``.

    Each non-blank cell of a column not in ``skip`` becomes one line stamped
    ``logstart + row[time_column]``, in column order (a MOOS app's order of publication).
    ``inputs`` (e.g. ``DESIRED_THRUST``) are logged with source ``input_src`` before the row's
    publications, when they change (as the posts that set them would be).  With ``node``,
    one ``NODE_REPORT_LOCAL`` follows every row that has ``<prefix>_X``.  With
    ``community``, ``DB_TIME`` from ``MOOSDB_<community>`` once per second (:class:`DbClock`:
    alogview names the log's vehicle after it).  ``logstart`` defaults to the UNIX time of
    writing.
    """
    if logstart is None:
        logstart = float(round(time.time(), 2))
    cols = list(columns)
    ti = cols.index(time_column)
    ins = [(cols.index(c), c) for c in inputs if c in cols]
    skipped = set(skip) | {time_column} | set(inputs)
    keep = [(j, c) for j, c in enumerate(cols) if c not in skipped]
    nav_x = f"{node.prefix}_X" if node is not None else ""
    last: dict[str, Any] = {}
    db = DbClock(community) if community else None
    with AlogWriter(path, logstart=logstart, flush_every=4096) as w:
        for row in rows:
            mt = logstart + float(row[ti])
            if db is not None:
                db.post(w, mt)
            for j, c in ins:
                v = row[j]
                if _blank(v) or last.get(c) == v:
                    continue
                last[c] = v
                w.write(mt, c, input_src, v if isinstance(v, str) else float(v))
            has_nav = False
            for j, c in keep:
                v = row[j]
                if _blank(v):
                    continue
                val = v if isinstance(v, str) else float(v)
                w.write(mt, c, src, val)
                if node is not None:
                    node.update(c, val)
                    has_nav = has_nav or c == nav_x
            if has_nav and node is not None:
                text = node.report(mt)
                if text is not None:
                    w.write(mt, "NODE_REPORT_LOCAL", src, text)
    return Path(path)


class DbClock:
    """``DB_TIME`` lines as a vehicle's pLogger logs its MOOSDB's clock: the MOOS time, from
    ``MOOSDB_<community>``, at the first line and then once per second of MOOS time.
    alogview and alogsplit name a log's vehicle after this source (``vname`` of the split's
    summary)."""

    def __init__(self, community: str) -> None:
        self.src = f"MOOSDB_{community}"
        self._next = -math.inf

    def post(self, w: AlogWriter, moos_time: float) -> None:
        """Write ``DB_TIME`` at ``moos_time`` when a new second of MOOS time has begun."""
        if moos_time >= self._next:
            w.write(moos_time, "DB_TIME", self.src, moos_time)
            self._next = math.floor(moos_time) + 1.0


def _blank(v: Any) -> bool:
    return v is None or v == "" or (isinstance(v, float) and math.isnan(v))
