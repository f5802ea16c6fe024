"""VehicleState derived views."""

from __future__ import annotations

import numpy as np

from marinesim.core.state import VehicleState


def test_from_pose_views() -> None:
    s = VehicleState.from_pose(np.array([1.0, 2.0]), np.array([3.0, 4.0]), np.array([5.0, 0.0]),
                               np.array([90.0, 225.0]), speed=np.array([2.0, 1.0]))
    assert s.n == 2
    np.testing.assert_allclose(s.heading_deg, [90.0, 225.0])
    np.testing.assert_allclose(s.depth, [5.0, 0.0])
    np.testing.assert_allclose(s.vel_ned[0], [0.0, 2.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(s.speed_over_ground, [2.0, 1.0])
    np.testing.assert_allclose(s.course_deg, [90.0, 225.0])


def test_zeros_shapes_never_squeezed() -> None:
    s = VehicleState.zeros(1)
    assert s.pos.shape == (1, 3) and s.quat.shape == (1, 4)
    np.testing.assert_array_equal(s.quat[0], [1, 0, 0, 0])
