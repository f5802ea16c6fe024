"""T200 CSV tables at the boundary: ragged rows, non-finite and out-of-range cells."""

from __future__ import annotations

import pytest

from marinesim.actuators.t200 import read_t200_csv
from marinesim.core.errors import DataError

HEAD = "voltage_V,pwm_us,force_N,current_A\n"
ROWS = [f"{v},{p},{(p - 1500) / 40},{abs(p - 1500) / 40}" for v in (12, 16) for p in (1100, 1500, 1900)]


def _write(tmp_path, rows):
    p = tmp_path / "t200.csv"
    p.write_text(HEAD + "\n".join(rows) + "\n")
    return p


def test_table_reads(tmp_path):
    tab = read_t200_csv(_write(tmp_path, ROWS))
    assert tab.voltages.tolist() == [12.0, 16.0]


@pytest.mark.parametrize(
    ("row", "match"),
    [
        ("12,1700,5,5,99", "5 cells, the header has 4"),
        ("12,1700,5", "3 cells"),
        ("12,1700,nan,5", "outside"),
        ("12,1700,1e308,5", "outside"),
        ("true,1700,5,5", "not a number"),
    ],
)
def test_bad_rows_are_located(tmp_path, row, match):
    p = _write(tmp_path, [*ROWS, row])
    with pytest.raises(DataError, match=match) as exc:
        read_t200_csv(p)
    assert exc.value.line == len(ROWS) + 2 and exc.value.file == str(p)
