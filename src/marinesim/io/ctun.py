"""CTUN-style logs of the SURFTRAK harness: write, read, and merge (SURFTRAK spec §13).

* :func:`read_table` / :func:`write_table` — plain numeric CSV (header row; empty cell = NaN;
  an optional unnamed index column), with ``file:line`` errors.
* :func:`merge_ordered` — ``pandas.merge_ordered(ctun, stamped, on='TimeUS',
  fill_method='ffill')`` semantics implemented explicitly: outer union of TimeUS in ascending
  order, equal TimeUS merged into one row, every column forward-filled (leading gaps stay
  empty).  Column order: ``TimeUS``, then the CTUN columns, then the stamped ones.
* :func:`figure_metrics` — the figure title's ``CRt var`` (sample variance, ddof 1, empty cells
  skipped, (cm/s)²) and ``RF error sum`` (Σ|SAlt − DSAlt| over merged rows, m).
* :func:`run_tables` / :func:`write_run` — the tables of a marinesim run.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from marinesim.core.errors import DataError

__all__ = [
    "figure_metrics",
    "figure_title",
    "merge_ordered",
    "read_table",
    "run_tables",
    "write_run",
    "write_table",
]

Table = dict[str, np.ndarray]


def read_table(path: str | Path, *, index_col: bool | None = None) -> Table:
    """Read a numeric CSV into ``{column: float array}`` (empty cells → NaN).

    Parameters
    ----------
    path : str or Path
        CSV file with a header row.
    index_col : bool, optional
        Drop a first column with an empty header (pandas' index).  Default: detect.

    Raises
    ------
    DataError
        ``file:line:column`` for a non-numeric cell or a ragged row.
    """
    p = Path(path)
    try:
        fh = p.open(newline="", encoding="utf-8")
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror}", file=p) from None
    with fh:
        reader = csv.reader(fh)
        try:
            header = next(reader)
        except StopIteration:
            raise DataError("empty file (no header row)", file=p, line=1) from None
        drop = header[0] == "" if index_col is None else index_col
        names = header[1:] if drop else header
        if not names or any(not n for n in names):
            raise DataError("header has an empty column name", file=p, line=1)
        cols: list[list[float]] = [[] for _ in names]
        for lineno, row in enumerate(reader, start=2):
            if not row:
                continue
            cells = row[1:] if drop else row
            if len(cells) != len(names):
                raise DataError(
                    f"expected {len(names)} cells, got {len(cells)}", file=p, line=lineno
                )
            for j, cell in enumerate(cells):
                if cell == "":
                    cols[j].append(math.nan)
                    continue
                try:
                    cols[j].append(float(cell))
                except ValueError:
                    raise DataError(
                        f"{names[j]}: not a number: {cell!r}", file=p, line=lineno, column=j + 1
                    ) from None
    return {n: np.asarray(c, dtype=float) for n, c in zip(names, cols, strict=True)}


def _fmt(x: float) -> str:
    if math.isnan(x):
        return ""
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return repr(float(x))


def write_table(
    path: str | Path,
    table: Mapping[str, np.ndarray],
    columns: Sequence[str] | None = None,
    *,
    index: bool = False,
) -> Path:
    """Write ``table`` as CSV (NaN → empty cell); ``index`` adds pandas' unnamed index column."""
    cols = list(columns) if columns is not None else list(table)
    p = Path(path)
    n = len(next(iter(table.values()))) if table else 0
    with p.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(([""] if index else []) + cols)
        data = [np.asarray(table[c], dtype=float).tolist() for c in cols]
        for i in range(n):
            row = [_fmt(d[i]) for d in data]
            w.writerow(([str(i)] if index else []) + row)
    return p


def merge_ordered(
    left: Mapping[str, np.ndarray], right: Mapping[str, np.ndarray], on: str = "TimeUS"
) -> Table:
    """Ordered outer merge on ``on`` with forward fill (pandas ``merge_ordered`` semantics).

    Parameters
    ----------
    left, right : mapping of str → ndarray
        Tables sharing the key column ``on``; keys unique within each table.

    Returns
    -------
    dict
        ``on`` first, then left's other columns, then right's.
    """
    lk = np.asarray(left[on], dtype=float)
    rk = np.asarray(right[on], dtype=float)
    for name, k in (("left", lk), ("right", rk)):
        if len(np.unique(k)) != len(k):
            raise DataError(f"{name} table has repeated {on} values")
    keys = np.union1d(lk, rk)
    out: Table = {on: keys}
    for tab, k in ((left, lk), (right, rk)):
        pos = np.searchsorted(keys, k)
        for name, col in tab.items():
            if name == on:
                continue
            full = np.full(len(keys), np.nan)
            full[pos] = col
            # forward fill
            idx = np.where(~np.isnan(full), np.arange(len(full)), -1)
            idx = np.maximum.accumulate(idx)
            filled = np.where(idx >= 0, full[np.maximum(idx, 0)], np.nan)
            out[name] = filled
    return out


def figure_metrics(merged: Mapping[str, np.ndarray]) -> tuple[float, float]:
    """(CRt var in (cm/s)², RF error sum in m) over all merged rows (NaN cells skipped)."""
    crt = np.asarray(merged["CRt"], dtype=float)
    crt = crt[~np.isnan(crt)]
    var = float(np.var(crt, ddof=1)) if len(crt) > 1 else math.nan
    err = np.abs(np.asarray(merged["SAlt"], float) - np.asarray(merged["DSAlt"], float))
    return var, float(np.nansum(err))


def figure_title(log_dir: str, merged: Mapping[str, np.ndarray]) -> str:
    """``<log_dir>, CRt var: <.2f>, RF error sum: <.3f>``."""
    var, err = figure_metrics(merged)
    return f"{log_dir}, CRt var: {var:.2f}, RF error sum: {err:.3f}"


CTUN_ORDER = (
    "timestamp", "TimeUS", "ThI", "ABst", "ThO", "ThH", "DAlt", "Alt", "BAlt", "DSAlt", "SAlt",
    "TAlt", "DCRt", "CRt",
)  # fmt: skip
STAMPED_ORDER = ("TimeUS", "terrain_cm", "sub_cm", "rf_cm", "signal_quality")
RUN_ORDER = (
    "t", "terrain", "true_altitude", "DAlt", "Alt", "TAlt", "DSAlt", "SAlt", "DCRt", "CRt",
    "healthy", "mode_state",
)  # fmt: skip


def run_tables(result: Any, vehicle: int = 0) -> tuple[Table, Table, Table, Table]:
    """(run log, ctun, stamped, merged) tables of one vehicle of a SURFTRAK run result."""
    c = {k: np.asarray(v[vehicle]) for k, v in result.columns.items()}
    s = {k: np.asarray(v[vehicle]) for k, v in result.stamped.items()}
    run = {k: c[k] for k in RUN_ORDER}
    ctun = {k: c[k] for k in CTUN_ORDER}
    stamped = {k: s[k] for k in STAMPED_ORDER}
    merged = merge_ordered(ctun, stamped)
    return run, ctun, stamped, merged


def write_run(result: Any, out_csv: str | Path, vehicle: int = 0) -> dict[str, Path]:
    """Write a run: ``RUN.csv`` (run log) and, beside it, ``RUN.messages.csv``,
    ``RUN.ctun.csv``, ``RUN.stamped.csv``, ``RUN.merged.csv``.  Returns the paths."""
    out = Path(out_csv)
    if out.parent and not out.parent.exists():
        raise DataError(f"output directory does not exist: {out.parent}", file=out)
    stem = out.with_suffix("")
    run, ctun, stamped, merged = run_tables(result, vehicle)
    paths = {
        "run": write_table(out, run, RUN_ORDER),
        "ctun": write_table(f"{stem}.ctun.csv", ctun, CTUN_ORDER),
        "stamped": write_table(f"{stem}.stamped.csv", stamped, STAMPED_ORDER),
        "merged": write_table(f"{stem}.merged.csv", merged, index=True),
    }
    mpath = Path(f"{stem}.messages.csv")
    with mpath.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["t", "severity", "text"])
        for m in result.messages:
            if m.vehicle == vehicle:
                w.writerow([f"{m.t:.4f}", m.severity, m.text])
    paths["messages"] = mpath
    return paths
