"""The one CSV reader of the reference cases (expected outputs and actuator replay tables)."""

from __future__ import annotations

import gzip
import math
from pathlib import Path

import numpy as np
import pytest

from marinesim.core.errors import DataError
from marinesim.reference import actuators, usm
from marinesim.reference.tables import load_table


def test_one_reader_for_both_kinds() -> None:
    assert actuators.load_table is load_table
    assert usm.load_table is load_table


def test_numbers_blanks_and_labels(tmp_path: Path) -> None:
    p = tmp_path / "t.csv.gz"
    x = 0.1 + 0.2  # %.17g reads back as the same double
    text = f" t , y ,map_id\n0,{x!r},a\n\n1, ,b\n"
    p.write_bytes(gzip.compress(text.encode(), mtime=0))
    header, cols = load_table(p)
    assert header == ["t", "y", "map_id"]
    assert cols["t"].dtype == float and list(cols["t"]) == [0.0, 1.0]
    assert cols["y"][0] == x and math.isnan(cols["y"][1])
    assert cols["map_id"].dtype == object and list(cols["map_id"]) == ["a", "b"]
    df = usm.read_expected(p)
    assert list(df.columns) == header
    assert np.array_equal(df["y"].to_numpy(), cols["y"], equal_nan=True)
    assert list(df["map_id"]) == ["a", "b"]


def test_ragged_row_names_its_line(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_text("a,b\n1,2\n\n\n3\n")
    with pytest.raises(DataError, match="row has 1 cells, header has 2") as exc:
        load_table(p)
    assert exc.value.line == 5


@pytest.mark.parametrize(
    ("what", "message"), [("reference table", "empty reference table"), ("CSV file", "empty CSV")]
)
def test_empty_file(tmp_path: Path, what: str, message: str) -> None:
    p = tmp_path / "t.csv"
    p.write_text("")
    with pytest.raises(DataError, match=message):
        load_table(p, what=what)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DataError):
        usm.read_expected(tmp_path / "absent.expected.csv")
