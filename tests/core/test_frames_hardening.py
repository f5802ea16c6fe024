"""Headings stay in [0, 360): a tiny negative angle plus 360 rounds to exactly 360.0."""

from __future__ import annotations

import numpy as np

from marinesim.control.guidance import bearing_deg
from marinesim.core.frames import angle360, moos_angle360


def test_tiny_negative_angles_wrap_to_zero_not_360():
    a = np.array([-1e-14, -5e-324, -1e-300, 720.0 - 1e-13, 10.0, -10.0])
    for wrap in (angle360, moos_angle360):
        out = wrap(a.copy())
        assert np.all((out >= 0.0) & (out < 360.0)), (wrap.__name__, out.tolist())
        assert out[0] == 0.0 and out[4] == 10.0 and out[5] == 350.0


def test_bearing_is_below_360():
    b = bearing_deg(np.zeros(3), np.zeros(3), np.ones(3), np.array([-1e-17, -1e-300, 0.0]))
    assert np.all((b >= 0.0) & (b < 360.0))
