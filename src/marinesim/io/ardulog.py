"""ArduPilot logs: DataFlash ``.BIN`` and MAVLink ``.tlog`` (read with pymavlink).

* :func:`read_log` — every record of the wanted types as columns (``{type: {field: array}}``),
  in file order, with pymavlink's decoded values (scaled fields scaled, strings decoded).
  ``.gz`` files are decompressed first.  A file that is not a log of that kind, or that ends
  inside a record, is a :class:`~marinesim.core.errors.DataError` naming the byte offset.
* :func:`write_csv_tables` — one CSV per message type (``marinesim ardusub log --csv``).
* :func:`surftrak_series` / :func:`surftrak_log_figure` — the SURFTRAK figure from a real log:
  mode changes, CTUN targets and altitudes, RFND, the baro depth; optionally a marinesim run
  on the same axes (the backend's ``truth.csv``, whose ``sitl_time_us`` is the log's TimeUS,
  or a ``marinesim surftrak run`` CSV, aligned at the SURFTRAK engagement).

Time: DataFlash rows carry ``TimeUS`` (µs since boot); tlog rows carry ``time_boot_ms`` where
the message has it and ``tlog_wall_s`` (the tlog's own µs wall stamp, s) always.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import math
import os
import re
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from marinesim.core.errors import DataError

__all__ = [
    "ArduLog",
    "MODE_NAMES",
    "detect_kind",
    "read_log",
    "surftrak_log_figure",
    "surftrak_series",
    "write_csv_tables",
]

#: ArduSub custom mode numbers.
MODE_NAMES = {
    0: "STABILIZE", 1: "ACRO", 2: "ALT_HOLD", 3: "AUTO", 4: "GUIDED", 7: "CIRCLE",
    9: "SURFACE", 16: "POSHOLD", 19: "MANUAL", 20: "MOTOR_DETECT", 21: "SURFTRAK",
}  # fmt: skip

_DF_HEAD = b"\xa3\x95"
_MAV_MAGIC = (0xFE, 0xFD)


@dataclass
class ArduLog:
    """Columns of a log's records.

    Attributes
    ----------
    path : Path
    kind : str
        ``bin`` or ``tlog``.
    tables : dict
        Message type → column name → array (numbers as float64, text as object).
    counts : dict
        Records read per type (all types, also those not kept).
    tail_bytes : int
        Bytes after the last complete record: the logger's last, partly filled block (the
        file size is then a whole number of 512-byte blocks, as ArduPilot writes its logs),
        or what ``allow_truncated`` let through.
    """

    path: Path
    kind: str
    tables: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    tail_bytes: int = 0

    def table(self, name: str) -> dict[str, np.ndarray]:
        """One message type's columns (DataError naming the types present if absent)."""
        if name not in self.tables:
            have = ", ".join(sorted(self.tables)) or "none"
            raise DataError(f"no {name} records in the log (types read: {have})", file=self.path)
        return self.tables[name]


def _open_bytes(path: Path) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror}", file=path) from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise DataError(f"gzip data is damaged or truncated: {exc}", file=path) from None
    return data


def detect_kind(data: bytes, path: Path | None = None) -> str:
    """``bin`` or ``tlog`` from the first bytes; DataError (byte offset) for anything else."""
    if len(data) < 3:
        raise DataError(f"byte offset {len(data)}: file too short for a log", file=path)
    if data[:2] == _DF_HEAD:
        return "bin"
    if len(data) > 8 and data[8] in _MAV_MAGIC:
        return "tlog"
    raise DataError(
        f"byte offset 0: not a DataFlash log (starts with {data[:2].hex()}, expected a395) "
        f"nor a MAVLink tlog (byte 8 is {data[8]:#04x} if present, expected 0xfe or 0xfd)"
        if len(data) > 8
        else "byte offset 0: not a DataFlash log or a MAVLink tlog",
        file=path,
    )


def _columns(rows: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    names: list[str] = []
    for r in rows:
        for k in r:
            if k not in names:
                names.append(k)
    out: dict[str, np.ndarray] = {}
    for k in names:
        vals = [r.get(k) for r in rows]
        try:
            out[k] = np.array([np.nan if v is None else float(v) for v in vals], dtype=float)
        except (TypeError, ValueError):
            out[k] = np.array(["" if v is None else v for v in vals], dtype=object)
    return out


def _dict(m: Any) -> dict[str, Any]:
    d = m.to_dict()
    d.pop("mavpackettype", None)
    for k, v in list(d.items()):
        if isinstance(v, bytes):
            d[k] = v.decode("latin-1").rstrip("\x00")
        elif isinstance(v, (list, tuple)):
            d.pop(k)
            for i, x in enumerate(v):
                d[f"{k}[{i}]"] = x
    return d


#: Unparsed bytes allowed after the last record (pymavlink: "garbage at end" of APM logs).
TAIL_SLACK = 528
_SKIPPED = re.compile(r"Skipped (\d+) bad bytes in log at offset (\d+)")


@contextlib.contextmanager
def _quiet_fd2() -> Any:
    """Silence C-level writes to file descriptor 2 (pymavlink's compiled indexer)."""
    try:
        saved = os.dup(2)
    except OSError:  # no stderr at all
        yield
        return
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def _read_bin(path: Path, data: bytes, types: set[str] | None, allow_truncated: bool) -> ArduLog:
    from pymavlink import DFReader

    fd, tmp = tempfile.mkstemp(suffix=".BIN")
    err = io.StringIO()
    rows: dict[str, list[dict[str, Any]]] = {}
    counts: dict[str, int] = {}
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(err), _quiet_fd2():
            try:
                rd = DFReader.DFReader_binary(tmp, zero_time_base=False)
            except Exception as exc:  # pymavlink raises plain errors on damaged headers
                raise DataError(
                    f"byte offset 0: not a readable DataFlash log: {exc}", file=path
                ) from None
            while True:
                at = rd.offset
                try:
                    m = rd.recv_msg()
                except Exception as exc:
                    raise DataError(
                        f"byte offset {at}: undecodable DataFlash record: {exc}", file=path
                    ) from None
                if m is None:
                    break
                t = m.get_type()
                counts[t] = counts.get(t, 0) + 1
                if types is None or t in types:
                    rows.setdefault(t, []).append(_dict(m))
            end = int(rd.offset)
            if hasattr(rd, "filehandle"):
                rd.filehandle.close()
    finally:
        os.unlink(tmp)
    hit = _SKIPPED.search(err.getvalue())
    if hit:
        raise DataError(
            f"byte offset {hit.group(2)}: {hit.group(1)} bytes that are no DataFlash record "
            "(damaged log)",
            file=path,
        )
    tail = len(data) - min(end, len(data))
    if tail >= TAIL_SLACK or not counts.get("FMT", 0) or len(counts) <= 1:
        raise DataError(
            f"byte offset {end}: the DataFlash log stops being readable here ({tail} of "
            f"{len(data)} bytes left): truncated or damaged",
            file=path,
        )
    if tail and len(data) % 512 and not allow_truncated:
        raise DataError(
            f"byte offset {end}: the log ends inside a record ({tail} bytes, and the size "
            f"{len(data)} is not a whole number of the logger's blocks): truncated "
            "(allow_truncated / --allow-truncated reads the complete records)",
            file=path,
        )
    return ArduLog(path, "bin", {k: _columns(v) for k, v in rows.items()}, counts, tail)


def _read_tlog(path: Path, data: bytes, types: set[str] | None, allow_truncated: bool) -> ArduLog:
    from pymavlink.dialects.v20 import ardupilotmega as mav

    parser = mav.MAVLink(None)
    parser.robust_parsing = True
    rows: dict[str, list[dict[str, Any]]] = {}
    counts: dict[str, int] = {}
    off = 0
    n = len(data)
    tail = 0
    while off < n:
        if n - off < 8 + 8:
            tail = n - off
            if not allow_truncated:
                raise DataError(
                    f"byte offset {off}: the tlog ends inside a record ({tail} bytes left): "
                    "truncated",
                    file=path,
                )
            break
        stamp = int.from_bytes(data[off : off + 8], "big")
        p = off + 8
        magic = data[p]
        if magic not in _MAV_MAGIC:
            raise DataError(
                f"byte offset {p}: expected a MAVLink packet (0xfe or 0xfd), got {magic:#04x}",
                file=path,
            )
        plen = data[p + 1]
        size = (8 + plen) if magic == 0xFE else (12 + plen + (13 if data[p + 2] & 1 else 0))
        if p + size > n:
            tail = n - off
            if not allow_truncated:
                raise DataError(
                    f"byte offset {p}: the tlog ends inside a MAVLink packet ({n - p} of "
                    f"{size} bytes): truncated",
                    file=path,
                )
            break
        try:
            msgs = parser.parse_buffer(data[p : p + size]) or []
        except Exception as exc:
            raise DataError(
                f"byte offset {p}: undecodable MAVLink packet: {exc}", file=path
            ) from None
        for m in msgs:
            t = m.get_type()
            if t == "BAD_DATA":
                continue
            counts[t] = counts.get(t, 0) + 1
            if types is None or t in types:
                d = _dict(m)
                d["tlog_wall_s"] = stamp / 1e6
                rows.setdefault(t, []).append(d)
        off = p + size
    if not counts:
        raise DataError("byte offset 0: no MAVLink packet decoded: not a tlog", file=path)
    return ArduLog(path, "tlog", {k: _columns(v) for k, v in rows.items()}, counts, tail)


def read_log(
    path: str | Path, types: Iterable[str] | None = None, *, allow_truncated: bool = False
) -> ArduLog:
    """Read a DataFlash ``.BIN`` or a MAVLink ``.tlog`` (optionally gzipped).

    Parameters
    ----------
    path : str or Path
    types : iterable of str, optional
        Message types to keep (default: all).
    allow_truncated : bool
        Read the complete records of a log that ends inside a record.

    Raises
    ------
    DataError
        Unreadable, foreign or truncated file (the message names the byte offset).
    """
    p = Path(path)
    data = _open_bytes(p)
    kind = detect_kind(data, p)
    want = None if types is None else {t.upper() for t in types}
    if kind == "bin":
        return _read_bin(p, data, want, allow_truncated)
    return _read_tlog(p, data, want, allow_truncated)


def _csv_cell(v: Any) -> Any:
    """One CSV cell: numbers as plain decimal text (``repr`` of the Python value, so NumPy
    scalars do not print as ``np.float64(...)``), NaN as an empty cell, bytes decoded."""
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        f = float(v)
        return "" if math.isnan(f) else repr(f)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).decode("utf-8", "replace").rstrip("\x00")
    return v


def write_csv_tables(log: ArduLog, out_dir: str | Path) -> dict[str, Path]:
    """One ``<TYPE>.csv`` per message type in ``out_dir``; returns type → path."""
    d = Path(out_dir)
    d.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    for name, cols in sorted(log.tables.items()):
        path = d / f"{name}.csv"
        keys = list(cols)
        with path.open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(keys)
            n = len(cols[keys[0]]) if keys else 0
            for i in range(n):
                w.writerow([_csv_cell(cols[k][i]) for k in keys])
        paths[name] = path
    return paths


# ------------------------------------------------------------------------------------------
# SURFTRAK figure from a real log

_SURFTRAK_TYPES = ("CTUN", "RFND", "BARO", "MODE", "MSG")
_TLOG_TYPES = ("HEARTBEAT", "GLOBAL_POSITION_INT", "VFR_HUD", "DISTANCE_SENSOR", "RANGEFINDER",
               "SYSTEM_TIME", "STATUSTEXT")  # fmt: skip


def surftrak_series(log: ArduLog) -> dict[str, Any]:
    """The SURFTRAK figure's series from a log (time in s since boot).

    Returns
    -------
    dict
        ``t_ctun`` + CTUN ``DAlt, Alt, TAlt, DSAlt, SAlt, DCRt, CRt`` (m, cm/s; .BIN only),
        ``t_rfnd`` + ``rfnd`` (m), ``t_baro`` + ``baro`` (baro z up, m), ``modes``
        [(t, name)], ``texts`` [(t, text)] of ``rangefinder target`` messages.
    """
    out: dict[str, Any] = {"modes": [], "texts": []}
    if log.kind == "bin":
        ct = log.table("CTUN")
        out["t_ctun"] = ct["TimeUS"] / 1e6
        for k in ("DAlt", "Alt", "TAlt", "DSAlt", "SAlt", "DCRt", "CRt"):
            out[k] = ct[k]
        if "RFND" in log.tables:
            rf = log.tables["RFND"]
            sel = rf["Instance"] == 0 if "Instance" in rf else np.ones(len(rf["TimeUS"]), bool)
            out["t_rfnd"], out["rfnd"] = rf["TimeUS"][sel] / 1e6, rf["Dist"][sel]
        if "BARO" in log.tables:
            ba = log.tables["BARO"]
            sel = ba["I"] == 0 if "I" in ba else np.ones(len(ba["TimeUS"]), bool)
            out["t_baro"], out["baro"] = ba["TimeUS"][sel] / 1e6, ba["Alt"][sel]
        if "MODE" in log.tables:
            mo = log.tables["MODE"]
            for t, num in zip(mo["TimeUS"], mo["ModeNum"], strict=True):
                out["modes"].append((t / 1e6, MODE_NAMES.get(int(num), f"mode {int(num)}")))
        if "MSG" in log.tables:
            ms = log.tables["MSG"]
            for t, txt in zip(ms["TimeUS"], ms["Message"], strict=True):
                if "rangefinder target" in str(txt):
                    out["texts"].append((t / 1e6, str(txt)))
        return out
    gp = log.table("GLOBAL_POSITION_INT")
    out["t_baro"] = gp["time_boot_ms"] / 1e3
    out["baro"] = gp["relative_alt"] / 1e3
    if "DISTANCE_SENSOR" in log.tables:
        ds = log.tables["DISTANCE_SENSOR"]
        out["t_rfnd"], out["rfnd"] = ds["time_boot_ms"] / 1e3, ds["current_distance"] / 100.0
    if "HEARTBEAT" in log.tables and "SYSTEM_TIME" in log.tables:
        hb, st = log.tables["HEARTBEAT"], log.tables["SYSTEM_TIME"]
        boot = np.interp(hb["tlog_wall_s"], st["tlog_wall_s"], st["time_boot_ms"] / 1e3)
        vehicle = hb["autopilot"] == 3  # MAV_AUTOPILOT_ARDUPILOTMEGA, not the GCS
        prev = None
        for t, mode in zip(boot[vehicle], hb["custom_mode"][vehicle], strict=True):
            if mode != prev:
                out["modes"].append((float(t), MODE_NAMES.get(int(mode), f"mode {int(mode)}")))
                prev = mode
    return out


def _read_overlay(path: Path) -> dict[str, np.ndarray]:
    from marinesim.io.ctun import read_table

    p = path / "truth.csv" if path.is_dir() else path
    return read_table(p)


def surftrak_log_figure(
    log: ArduLog, *, overlay: str | Path | None = None, title: str | None = None
) -> Any:
    """Three panels (depth, rangefinder, climb rate) of a real ArduSub log, mode changes marked.

    Parameters
    ----------
    log : ArduLog
        From :func:`read_log` (a ``.BIN`` gives CTUN; a ``.tlog`` gives depth, distance
        sensor and modes only).
    overlay : path, optional
        A marinesim run drawn on the same axes: ``marinesim sitl -o DIR`` (``truth.csv``, on
        the log's clock) or a ``marinesim surftrak run`` CSV (``t``, ``Alt``, ``DSAlt``,
        ``true_altitude``, ``terrain``), shifted so that its SURFTRAK engagement (first
        DSAlt > 0) meets the log's.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib import rc_context
    from matplotlib.figure import Figure

    s = surftrak_series(log)
    with rc_context({"font.size": 9, "lines.linewidth": 0.6}):
        fig = Figure(figsize=(8.5, 11), layout="constrained")
        ax = fig.subplots(3, 1, sharex=True)
        if "t_ctun" in s:
            t = s["t_ctun"]
            ax[0].plot(t, s["DAlt"], label="target z (CTUN.DAlt)")
            ax[0].plot(t, s["Alt"], label="EKF z (CTUN.Alt)")
            ax[0].plot(t, s["TAlt"], label="seafloor estimate (CTUN.TAlt)")
            ds = np.where(s["DSAlt"] < 0, np.nan, s["DSAlt"])
            ax[1].plot(t, ds, label="rangefinder target (CTUN.DSAlt)")
            ax[1].plot(t, s["SAlt"], label="rangefinder used (CTUN.SAlt)")
            ax[2].plot(t, s["DCRt"], label="desired climb rate (CTUN.DCRt)")
            ax[2].plot(t, s["CRt"], label="climb rate (CTUN.CRt)")
        if "t_baro" in s:
            lab = "baro depth, z up (BARO.Alt)" if log.kind == "bin" else "z up (relative_alt)"
            ax[0].plot(s["t_baro"], s["baro"], label=lab, alpha=0.7)
        if "t_rfnd" in s:
            lab = "rangefinder (RFND.Dist)" if log.kind == "bin" else "DISTANCE_SENSOR"
            ax[1].plot(s["t_rfnd"], s["rfnd"], label=lab, alpha=0.7)
        if overlay is not None:
            _draw_overlay(ax, s, Path(overlay))
        for a in ax:
            for tm, _name in s["modes"]:
                a.axvline(tm, color="0.5", lw=0.6, ls="--")
            a.grid(axis="x")
            a.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize=8)
        ymax = ax[0].get_ylim()[1]
        for tm, name in s["modes"]:
            ax[0].text(tm, ymax, name, rotation=90, va="top", ha="right", fontsize=7)
        ax[0].set_ylabel("z, up from the surface [m]")
        ax[1].set_ylabel("distance to the seafloor [m]")
        ax[2].set_ylabel("climb rate [cm/s]")
        ax[2].set_xlabel("time since boot [s]")
        targets = "; ".join(f"{tm:.1f} s: {txt}" for tm, txt in s["texts"][:3])
        fig.suptitle(title or f"{log.path.name} ({log.kind})" + (f"\n{targets}" if targets else ""))
    return fig


def _draw_overlay(ax: Sequence[Any], s: Mapping[str, Any], path: Path) -> None:
    tab = _read_overlay(path)
    if "sitl_time_us" in tab:  # marinesim sitl truth.csv: same clock as the log
        t = tab["sitl_time_us"] / 1e6
        ax[0].plot(t, -tab["z"], label="marinesim truth z up", ls=":")
        if "floor_z" in tab and np.any(np.isfinite(tab["floor_z"])):
            ax[0].plot(t, tab["floor_z"], label="marinesim seafloor z up", ls=":")
            ax[1].plot(t, tab["true_alt"], label="marinesim true altitude", ls=":")
        return
    if "t" not in tab:
        raise DataError("overlay has neither sitl_time_us nor t columns", file=path)
    t = tab["t"]
    shift = 0.0
    if "DSAlt" in tab and "DSAlt" in s:
        eng_run = t[np.argmax(tab["DSAlt"] > 0)] if np.any(tab["DSAlt"] > 0) else None
        eng_log = s["t_ctun"][np.argmax(s["DSAlt"] > 0)] if np.any(s["DSAlt"] > 0) else None
        if eng_run is not None and eng_log is not None:
            shift = float(eng_log - eng_run)
    for col, a, lab in (("Alt", 0, "marinesim z up (Alt)"), ("terrain", 0, "marinesim seafloor"),
                        ("DSAlt", 1, "marinesim target (DSAlt)"),
                        ("true_altitude", 1, "marinesim true altitude"),
                        ("CRt", 2, "marinesim climb rate (CRt)")):  # fmt: skip
        if col in tab:
            y = np.where(tab[col] < 0, np.nan, tab[col]) if col == "DSAlt" else tab[col]
            ax[a].plot(t + shift, y, label=lab + (f", +{shift:.1f} s" if shift else ""), ls=":")
