"""Lift/drag models (§3.2–3.4) and the fin step (§3.1)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from marinesim.actuators import fins as fn
from marinesim.actuators import lift_drag as ld
from marinesim.actuators import thruster_dynamics as td
from marinesim.core import registry
from marinesim.core.frames import rotation_from_euler

QUAD = ld.Quadratic(lift_constant=9.8688, drag_constant=6.513408)
TWO = ld.TwoLines(
    area=0.04155,
    fluid_density=1027,
    a0=0.0,
    alpha_stall=0.174533,
    cla=13.98,
    cla_stall=-3.0,
    cda=0.5,
    cda_stall=1.2,
)


def test_quadratic_values_by_hand() -> None:
    a = 0.1
    v = 1.5 * np.array([math.cos(a), math.sin(a), 0.0])
    f, ang = ld.compute(QUAD, v)
    u2 = 1.5**2
    lift, drag = 9.8688 * a * u2, 6.513408 * a * a * u2
    e_l = -np.array([-v[1], v[0], 0.0]) / 1.5
    e_d = -v / 1.5
    assert ang == pytest.approx(a, rel=1e-15)
    np.testing.assert_allclose(f, lift * e_l + drag * e_d, rtol=1e-14, atol=1e-15)


def test_still_fin_gives_zero_force() -> None:
    for p in (QUAD, TWO):
        f, _ = ld.compute(p, np.zeros(3))
        np.testing.assert_array_equal(f, np.zeros(3))
        f, _ = ld.compute(p, np.array([1e-8, 0.0, 0.0]))
        assert np.all(np.abs(f) < 1e-12)


def test_sign_check_positive_deflection_pushes_plus_y() -> None:
    # relative velocity v_L along +x of the joint-origin frame (vehicle moving forward), fin
    # turned by +delta about z ("nose towards +y"): force along +y, the water deflected to -y
    bank = fn.FinBankParams(
        fins=(fn.FinParams(lower=-1, upper=1, dynamics=td.ZeroOrder(), liftdrag=QUAD),)
    )
    delta = 0.05
    _, _, _, f_b, _ = fn.fin_forces(bank, [[delta]], [[2.0, 0, 0, 0, 0, 0]])
    assert f_b[0, 0, 1] > 0
    assert f_b[0, 0, 1] == pytest.approx(9.8688 * delta * 4.0, rel=5e-3)


def test_two_lines_matches_upstream_for_positive_alpha() -> None:
    for a in (0.05, 0.174, 0.3, 1.2):
        v = 2.0 * np.array([math.cos(a), math.sin(a), 0.0])
        f, alpha = ld.compute(TWO, v)
        q = 0.5 * 1027 * 4.0
        if a > 0.174533:
            cl = 13.98 * 0.174533 + (-3.0) * (a - 0.174533)
            cd = 0.5 * 0.174533 + 1.2 * (a - 0.174533)
        else:
            cl, cd = 13.98 * a, 0.5 * a
        e_l = -np.array([-v[1], v[0], 0.0]) / 2.0
        np.testing.assert_allclose(
            f, cl * q * 0.04155 * e_l + cd * q * 0.04155 * (-v / 2.0), rtol=1e-12
        )


symmetric_speeds = st.floats(0.01, 5.0)


@settings(max_examples=80, deadline=None)
@given(a=st.floats(0.0, math.pi / 2 - 1e-6), u=symmetric_speeds)
def test_two_lines_lift_odd_drag_even_nonnegative(a: float, u: float) -> None:
    vp = u * np.array([math.cos(a), math.sin(a), 0.0])
    vm = u * np.array([math.cos(a), -math.sin(a), 0.0])
    fp, ap = ld.compute(TWO, vp)
    fm, am = ld.compute(TWO, vm)
    assert am == -ap
    # decompose into lift (perpendicular to v) and drag (along -v)
    for f, v in ((fp, vp), (fm, vm)):
        drag = -np.dot(f, v) / u
        assert drag >= -1e-12 * (1 + abs(drag))
    lift_p = np.dot(fp, -np.array([-vp[1], vp[0], 0.0]) / u)
    lift_m = np.dot(fm, -np.array([-vm[1], vm[0], 0.0]) / u)
    assert lift_m == pytest.approx(-lift_p, rel=1e-12, abs=1e-12)
    assert -np.dot(fm, vm) == pytest.approx(-np.dot(fp, vp), rel=1e-12, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(a=st.floats(-math.pi, math.pi), u=symmetric_speeds)
def test_quadratic_symmetry_and_reverse_flow(a: float, u: float) -> None:
    v = u * np.array([math.cos(a), math.sin(a), 0.0])
    f, ang = ld.compute(QUAD, v)
    fr, angr = ld.compute(QUAD, np.array([v[0], -v[1], 0.0]))
    assert abs(ang) <= math.pi / 2 + 1e-15
    # mirror about the x axis: lift flips, drag stays
    np.testing.assert_allclose([fr[0], -fr[1]], [f[0], f[1]], rtol=1e-9, atol=1e-9)
    assert -np.dot(f, v) >= -1e-9  # drag never pushes along the flow


def test_fin_step_clamp_lag_and_dynamics() -> None:
    fin = fn.FinParams(
        position=(-0.4, 0.0, 0.04),
        rpy=(0.0, 0.0, 0.0),
        lower=-0.3,
        upper=0.3,
        dynamics=td.FirstOrder(time_constant=0.2),
        liftdrag=QUAD,
    )
    bank = fn.FinBankParams(fins=(fin, fin))
    s = fn.init(bank, 2)
    nu = np.array([[1.5, 0, 0, 0, 0, 0], [1.0, 0.1, 0, 0, 0, 0.2]])
    s1 = fn.step(
        bank, s, [[1.0, -0.1], [0.0, 0.2]], {"current_body": np.zeros((2, 3))}, 0.01, nu=nu
    )
    assert s1.cmd_clamped[0, 0] == 0.3  # clamped to the upper limit
    assert s1.angle[0, 0] == pytest.approx(0.3 * (1 - math.exp(-0.05)), rel=1e-14)
    np.testing.assert_array_equal(s1.angle_used, np.zeros((2, 2)))  # one-step lag
    s2 = fn.step(bank, s1, [[1.0, -0.1], [0.0, 0.2]], None, 0.01, nu=nu)
    np.testing.assert_array_equal(s2.angle_used, s1.angle)
    # batch equals per-vehicle
    for i in range(2):
        bank1 = fn.FinBankParams(fins=(fin,))
        one = fn.fin_forces(bank1, s1.angle[i : i + 1, 1:2], nu[i : i + 1])
        np.testing.assert_array_equal(one[3][0, 0], s2.force_body[i, 1])
    # wrench sums forces and moments about CO
    w = s2.wrench()
    np.testing.assert_allclose(w[:, :3], s2.force_body.sum(axis=1))


def test_fin_current_and_rotation_enter_relative_velocity() -> None:
    fin = fn.FinParams(
        position=(-1.0, 0.0, 0.0), lower=-1, upper=1, dynamics=td.ZeroOrder(), liftdrag=QUAD
    )
    bank = fn.FinBankParams(fins=(fin,))
    # vehicle at rest in a current of +1 m/s along x == vehicle moving at -1 m/s
    a = fn.fin_forces(bank, [[0.1]], [[0, 0, 0, 0, 0, 0]], [[1.0, 0, 0]])
    b = fn.fin_forces(bank, [[0.1]], [[-1.0, 0, 0, 0, 0, 0]])
    np.testing.assert_allclose(a[3], b[3], rtol=1e-15)
    # yaw rate r at p = (-1, 0, 0): omega x p = (0, -r, 0)
    c = fn.fin_forces(bank, [[0.0]], [[0, 0, 0, 0, 0, 0.5]])
    np.testing.assert_allclose(c[0][0, 0], [0.0, -0.5, 0.0], atol=1e-15)


def test_fin_frame_covariance_flu_to_frd() -> None:
    # the same fin in Gazebo FLU (rpy) and imported FRD (T R: rpy (r+pi, -p, -y)) gives T F
    t = np.diag([1.0, -1.0, -1.0])
    rpy = (0.7904, -0.0998, -0.1003)
    flu = fn.FinParams(
        position=(-0.7, -0.08, 0.08),
        rpy=rpy,
        lower=-1,
        upper=1,
        dynamics=td.ZeroOrder(),
        liftdrag=TWO,
    )
    frd = flu.model_copy(
        update={"position": (-0.7, 0.08, -0.08), "rpy": (rpy[0] + math.pi, -rpy[1], -rpy[2])}
    )
    np.testing.assert_allclose(
        rotation_from_euler(*frd.rpy), t @ rotation_from_euler(*rpy), atol=1e-15
    )
    nu_flu = np.array([[1.2, 0.1, -0.2, 0.01, 0.02, 0.03]])
    nu_frd = nu_flu * np.array([1, -1, -1, 1, -1, -1])
    for delta in (-0.3, 0.0, 0.2):
        a = fn.fin_forces(fn.FinBankParams(fins=(flu,)), [[delta]], nu_flu)
        b = fn.fin_forces(fn.FinBankParams(fins=(frd,)), [[delta]], nu_frd)
        np.testing.assert_allclose(b[3][0, 0], t @ a[3][0, 0], rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(b[4][0, 0], t @ a[4][0, 0], rtol=1e-12, atol=1e-13)


def test_fin_limits_validated() -> None:
    with pytest.raises(ValueError, match="lower < upper"):
        fn.FinParams(lower=0.5, upper=0.5, dynamics=td.ZeroOrder(), liftdrag=QUAD)


def test_lift_drag_registry() -> None:
    assert set(registry.names("lift_drag")) == {"quadratic", "two_lines"}
    assert registry.get("lift_drag", "two_lines").Params is ld.TwoLines
