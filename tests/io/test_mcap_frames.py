"""NED/FRD ↔ ENU/FLU at the ROS boundary (marinesim.io.mcap.frames): properties."""

from __future__ import annotations

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from marinesim.core.frames import quat_from_euler, rotation_from_quat
from marinesim.io.mcap.frames import (
    enu_flu_quat,
    euler_ned_to_enu_quat,
    frd_to_flu,
    heading_to_enu_yaw,
    ned_to_enu,
)

finite = st.floats(-1e6, 1e6, allow_nan=False)
angle = st.floats(-np.pi, np.pi, allow_nan=False)
vec = st.tuples(finite, finite, finite)


@given(vec)
def test_vector_maps_are_involutions(v: tuple[float, float, float]) -> None:
    a = np.array(v)
    assert np.array_equal(ned_to_enu(ned_to_enu(a)), a)
    assert np.array_equal(frd_to_flu(frd_to_flu(a)), a)
    assert np.array_equal(ned_to_enu(a), [v[1], v[0], -v[2]])


@settings(max_examples=200)
@given(angle, st.floats(-1.5, 1.5), angle)
@example(0.0, 0.0, np.pi)  # q[0] = 6e-17, the map's q[0] = 0.0
def test_quaternion_map_is_an_involution_and_rotates_like_the_vectors(
    roll: float, pitch: float, yaw: float
) -> None:
    q = quat_from_euler(roll, pitch, yaw)
    back = enu_flu_quat(enu_flu_quat(q))
    # the same rotation: q or −q (a sign taken from q[0] fails where q[0] is ±6e-17 and the
    # map gives back 0.0, e.g. roll 0, pitch 0, yaw π)
    assert np.allclose(back, q, atol=1e-12) or np.allclose(back, -q, atol=1e-12)
    # a body vector: through NED then to ENU equals FLU then through the ROS rotation
    b = np.array([1.0, -2.0, 0.5])
    via_ned = ned_to_enu(rotation_from_quat(q) @ b)
    via_enu = rotation_from_quat(enu_flu_quat(q)) @ frd_to_flu(b)
    assert np.allclose(via_ned, via_enu, atol=1e-12)


@settings(max_examples=200)
@given(angle, st.floats(-1.5, 1.5), angle)
def test_euler_rule_phi_minus_theta_half_pi_minus_psi(
    roll: float, pitch: float, yaw: float
) -> None:
    q = euler_ned_to_enu_quat(roll, pitch, yaw)
    r = quat_from_euler(roll, -pitch, np.pi / 2 - yaw)
    assert np.allclose(q, r * np.sign(r[0]), atol=1e-12) or np.allclose(q, -r, atol=1e-12)


def test_a_vehicle_heading_east_moves_plus_x_and_has_zero_yaw() -> None:
    # heading 090 (east) at 2 m/s for 1 s: NED displacement (0, 2, 0)
    step_ned = np.array([0.0, 2.0, 0.0])
    assert np.array_equal(ned_to_enu(step_ned), [2.0, 0.0, -0.0])
    assert heading_to_enu_yaw(90.0) == 0.0
    assert np.isclose(heading_to_enu_yaw(0.0), np.pi / 2)  # north is +y, yaw 90°
    assert np.isclose(heading_to_enu_yaw(180.0), -np.pi / 2)
    q = euler_ned_to_enu_quat(0.0, 0.0, np.deg2rad(90.0))
    assert np.allclose(q, [1.0, 0.0, 0.0, 0.0], atol=1e-15)
    # the body's forward axis, rotated by the ROS orientation, points along +x (east)
    assert np.allclose(rotation_from_quat(q) @ [1.0, 0.0, 0.0], [1.0, 0.0, 0.0])


@given(st.floats(-720.0, 720.0, allow_nan=False))
def test_heading_to_yaw_range_and_inverse(h: float) -> None:
    y = heading_to_enu_yaw(h)
    assert -np.pi < y <= np.pi
    assert np.isclose((90.0 - np.rad2deg(y)) % 360.0, h % 360.0, atol=1e-9) or np.isclose(
        abs(((90.0 - np.rad2deg(y)) - h + 180.0) % 360.0 - 180.0), 0.0, atol=1e-9
    )
