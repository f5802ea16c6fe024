"""USM_RESET item values that are not plain numbers (issue §5: no silent default).

The program reads each value with C ``atof`` (spec §3.12): junk becomes 0 and "12abc" 12, and
marinesim does the same.  ``apply_mail`` warns about every value that is not a plain
number, and rejects a non-finite one (C ``atof("nan")`` would poison the state), keeping the
previous value of that field.
"""

from __future__ import annotations

import pytest

from marinesim.models import usm as km
from marinesim.models.usm.config import configure


@pytest.mark.parametrize("compat", ["doc", "moos"])
def test_junk_values_are_read_like_atof(compat: str) -> None:
    cfg, _w = configure([], variant="usm", compat=compat)
    st = km.init(cfg, 1)
    st, _posts, _w = km.apply_mail(cfg, st, "USM_RESET", "x=12abc,y=junk", moos_time=0.1)
    assert float(st.x[0]) == 12.0 and float(st.y[0]) == 0.0


@pytest.mark.parametrize("value", ["nan", "abc"])
def test_non_numeric_reset_value_is_reported(value: str) -> None:
    cfg, _w = configure([], variant="usm", compat="doc")
    st = km.init(cfg, 1)
    st, _posts, warns = km.apply_mail(cfg, st, "USM_RESET", f"x={value},y=2", moos_time=0.1)
    assert float(st.y[0]) == 2.0
    assert any("USM_RESET" in w and value in w for w in warns), warns


def test_nan_reset_keeps_previous_value() -> None:
    cfg, _w = configure([], variant="usm", compat="moos")
    st = km.init(cfg, 2)
    st, _p, _w = km.apply_mail(cfg, st, "USM_RESET", "x=5", moos_time=0.1)
    st, _p, warns = km.apply_mail(cfg, st, "USM_RESET", "x=-inf,heading=90", moos_time=0.2)
    assert st.x.tolist() == [5.0, 5.0] and st.heading.tolist() == [90.0, 90.0]
    assert any("non-finite" in w for w in warns)
