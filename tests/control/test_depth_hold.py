"""Motors throttle stage and the surface/bottom detector (SURFTRAK spec §5.2, §8.4)."""

from __future__ import annotations

import numpy as np
import pytest

from marinesim.control.depth_hold import BOTTOM_TRIGGER_LOOPS, Motors, SurfaceBottomDetector
from marinesim.control.posz import alpha


def test_motors_filter_and_limits():
    m = Motors(0.5)
    thr = m.output(1.0)
    a = alpha(0.0025, 2.0)
    assert m.throttle == pytest.approx(0.5 + a * 0.5)
    assert thr == pytest.approx(2 * (m.throttle - 0.5))
    for _ in range(4000):
        m.output(2.0)  # above the range: the filtered throttle is clamped to 1
    assert m.throttle == 1.0 and m.limit == 1.0 and m.saturated
    for _ in range(4000):
        m.output(-1.0)
    assert m.throttle == 0.0 and m.limit == -1.0


def test_surface_hysteresis():
    d = SurfaceBottomDetector(0.0, -10.0)
    d.update(-0.11, 0.0, 0.0)
    assert not d.at_surface
    d.update(-0.09, 0.0, 0.0)
    assert d.at_surface
    d.update(-0.14, 0.0, 0.0)  # within the 5 cm hysteresis
    assert d.at_surface
    d.update(-0.16, 0.0, 0.0)
    assert not d.at_surface


def test_bottom_after_one_second_and_cleared_at_once():
    d = SurfaceBottomDetector(np.zeros(2), -10.0)
    first = None
    for k in range(500):
        d.update(np.array([-5.0, -5.0]), np.array([0.0, 0.2]), np.array([-1.0, -1.0]))
        if d.at_bottom[0] and first is None:
            first = k + 1
    assert first == BOTTOM_TRIGGER_LOOPS + 1  # 1.00 s, ±1 loop
    assert not d.at_bottom[1]  # moving: never
    d.update(np.array([-5.0, -5.0]), np.zeros(2), np.zeros(2))
    assert not d.at_bottom.any() and d.count[0] == 0
    d.update(-5.0 + np.zeros(2), np.zeros(2), -np.ones(2), armed=False)
    assert not d.at_bottom.any()
