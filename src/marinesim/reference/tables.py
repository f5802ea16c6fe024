"""CSV tables of the reference cases: one reader for expected outputs and replay tables."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from marinesim.core.errors import DataError

__all__ = ["load_table"]


def load_table(
    path: str | Path, what: str = "reference table"
) -> tuple[list[str], dict[str, NDArray[Any]]]:
    """Read a reference CSV (``.csv`` or ``.csv.gz``): header and columns.

    Numbers are parsed with Python's ``float``, so the ``%.17g`` values a program wrote read
    back as the exact doubles; a blank cell is NaN.

    Parameters
    ----------
    path : str or Path
        The file (gzip-compressed where its name ends in ``.gz``).
    what : str
        How messages name the file (``"reference table"``, ``"CSV file"``...).

    Returns
    -------
    header : list of str
        Column names in file order (surrounding blanks stripped).
    columns : dict
        Column name → float array, or an object array of strings where a cell is neither a
        number nor blank (labels such as ``map_id`` or a vehicle name).

    Raises
    ------
    DataError
        Unreadable or malformed file, no header, a row whose cell count differs from the
        header's (with its line).
    """
    from marinesim.core.textio import read_input_text

    p = Path(path)
    text = read_input_text(p, what=what, error=DataError, gz=p.name.endswith(".gz"))
    reader = csv.reader(io.StringIO(text))
    rows: list[list[str]] = []
    lines: list[int] = []
    try:
        for r in reader:
            rows.append(r)
            lines.append(reader.line_num)
    except csv.Error as exc:
        raise DataError(f"malformed CSV: {exc}", file=p, line=reader.line_num) from None
    if not rows:
        raise DataError(f"empty {what}", file=p)
    header = [h.strip() for h in rows[0]]
    body = []
    for r, line in zip(rows[1:], lines[1:], strict=True):
        if not r:
            continue
        if len(r) != len(header):
            raise DataError(f"row has {len(r)} cells, header has {len(header)}", file=p, line=line)
        body.append(r)
    cols: dict[str, NDArray[Any]] = {}
    for j, name in enumerate(header):
        cells = [r[j] for r in body]
        try:
            cols[name] = np.array([float(c) if c.strip() else np.nan for c in cells], dtype=float)
        except ValueError:
            cols[name] = np.array(cells, dtype=object)
    return header, cols
