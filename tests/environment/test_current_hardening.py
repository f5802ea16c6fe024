"""Current-field (.cfd) values at the boundary: non-finite and out-of-range values, radius."""

from __future__ import annotations

import numpy as np
import pytest

from marinesim.core.errors import ConfigError
from marinesim.environment.current import CurrentField
from marinesim.interop.moos.files import load_current_field


@pytest.mark.parametrize(
    "line",
    [
        "x=0, y=0, mag=nan, ang=90",
        "x=0, y=0, mag=1, ang=" + "9" * 400,
        "x=" + "1" * 400 + ", y=0, mag=1, ang=0",
        "x=0, y=0, mag=5000, ang=0",
        "x=0, y=0, xdot=inf, ydot=0",
    ],
)
def test_bad_values_skip_the_line_with_a_warning(line):
    fld, warns = CurrentField.parse(f"radius: 10\n{line}\nx=1, y=1, mag=1, ang=0\n", file="f.cfd")
    assert len(fld) == 1
    assert len(warns) == 1 and warns[0].line == 2 and "f.cfd:2" in str(warns[0])
    fx, fy = fld.force([0.0], [0.0])
    assert np.isfinite(fx).all() and np.isfinite(fy).all()


def test_non_positive_radius_is_reported():
    fld, warns = CurrentField.parse("radius: 0\nx=0, y=0, mag=1, ang=0\n", file="f.cfd")
    assert fld.radius == 0.0
    assert [w.param for w in warns] == ["radius"] and "no force" in str(warns[0])


def test_file_errors_name_the_referring_line(tmp_path):
    with pytest.raises(ConfigError) as exc:
        load_current_field(tmp_path, file="m.moos", line=9)
    assert str(exc.value).startswith("m.moos:9: current_field: ")
    p = tmp_path / "f.cfd"
    p.write_bytes(b"radius: 10\nx=0, y=0, mag=1, ang=0 // \xff\n")
    with pytest.raises(ConfigError, match="byte 0xff") as exc:
        load_current_field(p)
    assert exc.value.line == 2
