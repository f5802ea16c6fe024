"""Angles, headings, quaternions."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from marinesim.core.frames import (
    angle180,
    angle360,
    euler_from_quat,
    heading_to_yaw,
    quat_from_euler,
    rotation_from_euler,
    rotation_from_quat,
    yaw_to_heading,
)

finite = st.floats(-1e4, 1e4, allow_nan=False)


@given(finite)
def test_angle_wrap_ranges(a: float) -> None:
    w360, w180 = float(angle360(a)), float(angle180(a))
    assert 0.0 <= w360 < 360.0
    assert -180.0 < w180 <= 180.0
    assert np.isclose(np.cos(np.deg2rad(w360)), np.cos(np.deg2rad(a)), atol=1e-9)


def test_heading_yaw_marine_convention() -> None:
    np.testing.assert_allclose(heading_to_yaw([0, 90, 180, 270]), [0, np.pi / 2, -np.pi, -np.pi / 2])
    np.testing.assert_allclose(yaw_to_heading([0, np.pi / 2, -np.pi / 2]), [0, 90, 270])


@given(st.floats(-3, 3), st.floats(-1.5, 1.5), st.floats(-3.1, 3.1))
def test_quaternion_euler_roundtrip(r: float, p: float, y: float) -> None:
    q = quat_from_euler(r, p, y)
    assert np.isclose(np.linalg.norm(q), 1.0)
    np.testing.assert_allclose(rotation_from_quat(q), rotation_from_euler(r, p, y), atol=1e-12)
    if abs(p) < 1.5:
        back = euler_from_quat(q)
        np.testing.assert_allclose(rotation_from_euler(*back), rotation_from_euler(r, p, y), atol=1e-9)


def test_rotation_heading_east_maps_forward_to_east() -> None:
    r = rotation_from_euler(0.0, 0.0, np.pi / 2)
    np.testing.assert_allclose(r @ [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], atol=1e-15)
