"""The 6-DOF terms on arrays (marinesim.models.sixdof.arrays) and the set-up helpers
(marinesim.models.sixdof.setup), Fossen 2021, against hand values and identities."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from marinesim.models.sixdof import arrays, setup

REF = Path(__file__).resolve().parents[2] / "src/marinesim/reference/data/pvs/model_constants.json"
RNG = np.random.default_rng(7)


def _consts(prefix: str) -> dict:
    data = json.loads(REF.read_text())["vehicles"]
    return next(v for k, v in data.items() if k.startswith(prefix))


def test_m_rb_matches_pvs_remus() -> None:
    c = _consts("remus100")
    a, b = 0.8, 0.095
    m = 4 / 3 * math.pi * 1026 * a * b**2
    i_g = np.diag([(2 / 5) * m * b**2, (1 / 5) * m * (a**2 + b**2), (1 / 5) * m * (a**2 + b**2)])
    np.testing.assert_allclose(setup.m_rb(m, [0, 0, 0.02], i_g), c["MRB"], rtol=1e-14, atol=1e-14)


def test_hmtrx_inverse_property() -> None:
    r = RNG.normal(size=3)
    np.testing.assert_allclose(setup.hmtrx(r) @ setup.hmtrx(-r), np.eye(6), atol=1e-14)


def test_coriolis_vector_equals_matrix_form_and_is_workless() -> None:
    a = RNG.normal(size=(6, 6))
    mass = a @ a.T + 6 * np.eye(6)
    nu = RNG.normal(size=(5, 6))
    c = arrays.m2c(mass, nu)
    vec = arrays.coriolis_times(mass, nu)
    np.testing.assert_allclose(np.einsum("nij,nj->ni", c, nu), vec, rtol=1e-12, atol=1e-12)
    # C(ν) is skew-symmetric for the m2c parametrisation: νᵀ C(ν) ν = 0
    np.testing.assert_allclose(np.sum(nu * vec, axis=1), 0.0, atol=1e-10)
    np.testing.assert_allclose(c + np.swapaxes(c, 1, 2), 0.0, atol=1e-12)


def test_coriolis_zeroed_entries_match_matrix() -> None:
    mass = np.diag([2.0, 3.0, 4.0, 0.5, 0.7, 0.9])
    nu = RNG.normal(size=(4, 6))
    zero = ((4, 0), (0, 4), (5, 1), (1, 5))
    c = arrays.m2c(mass, nu)
    for i, j in zero:
        c[:, i, j] = 0.0
    np.testing.assert_allclose(
        np.einsum("nij,nj->ni", c, nu),
        arrays.coriolis_times(mass, nu, zero),
        rtol=1e-12,
        atol=1e-12,
    )


def test_rexrov_wrench_hand_check() -> None:
    """Spec §6: ν_r = (1, 0, 0, 0, 0, 0) → damping X = −823.04 N; −C_A ν_r moments (0, −103.32, 6.8773)."""
    from marinesim.models import presets

    model = presets.build("rexrov")
    nu_r = np.array([[1.0, 0, 0, 0, 0, 0]])
    damp = arrays.damping_times(model.d_l, nu_r, model.d_lf, model.d_q)
    assert -damp[0, 0] == pytest.approx(-823.04, abs=1e-9)
    ca = -arrays.coriolis_times(model.m_a, nu_r, symmetric=True)
    np.testing.assert_allclose(ca[0], [0, 0, 0, 0, -103.32, 6.8773], atol=1e-12)


def test_g_vect_equals_rotation_form() -> None:
    phi, theta = RNG.uniform(-1, 1, 5), RNG.uniform(-1, 1, 5)
    rot = arrays.rzyx(phi, theta, RNG.uniform(-3, 3, 5))
    r_g, r_b = np.array([0.01, -0.02, 0.05]), np.array([0.0, 0.01, -0.03])
    g1 = arrays.g_vect(300.0, 310.0, theta, phi, r_g, r_b)
    g2 = arrays.g_vect_rot(300.0, 310.0, rot, r_g, r_b)
    np.testing.assert_allclose(g1, g2, rtol=1e-12, atol=1e-12)


def test_euler_kinematics_matches_matrices() -> None:
    eta = RNG.uniform(-1, 1, (6, 6))
    nu = RNG.normal(size=(6, 6))
    r = arrays.rzyx(eta[:, 3], eta[:, 4], eta[:, 5])
    t = arrays.tzyx(eta[:, 3], eta[:, 4])
    expect = np.concatenate(
        (np.einsum("nij,nj->ni", r, nu[:, :3]), np.einsum("nij,nj->ni", t, nu[:, 3:])), 1
    )
    np.testing.assert_allclose(arrays.euler_kinematics(eta, nu), expect, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        r @ np.swapaxes(r, 1, 2), np.broadcast_to(np.eye(3), (6, 3, 3)), atol=1e-14
    )


def test_quaternion_rate_is_tangent() -> None:
    q = RNG.normal(size=(8, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    qd = arrays.quat_kinematics(q, RNG.normal(size=(8, 3)))
    np.testing.assert_allclose(np.sum(q * qd, axis=1), 0.0, atol=1e-14)


def test_hoerner_and_cross_flow() -> None:
    assert setup.hoerner(2 * 0.0109, 1.0) == pytest.approx(1.9661)
    assert setup.hoerner(100.0, 1.0) == pytest.approx(0.5593)
    # pure sway: Y = −½ρ T C_D v|v| · (21 strips × L/20), yaw moment from the asymmetric strip span
    nu = np.array([[0, 0.5, 0, 0, 0, 0.0]])
    out = arrays.cross_flow_drag_pvs(2.0, 0.25, 0.2, nu)
    cd = setup.hoerner(0.25, 0.2)
    assert out[0, 1] == pytest.approx(-0.5 * 1026 * 0.2 * cd * 0.25 * 21 * 0.1, rel=1e-12)
    assert out[0, 0] == out[0, 2] == 0.0


def test_terms_on_floats_equal_terms_on_arrays() -> None:
    """One source: the same term functions on floats (as compiled kernels see them) and on
    numpy component arrays give the same bits."""
    from marinesim.core import frames
    from marinesim.models.sixdof import terms

    eta = RNG.uniform(-1, 1, (4, 6))
    nu = RNG.normal(size=(4, 6))
    arr = arrays.euler_kinematics(eta, nu)
    for i in range(4):
        e, v = eta[i].tolist(), nu[i].tolist()
        trig = (
            math.cos(e[3]), math.sin(e[3]), math.cos(e[4]), math.sin(e[4]),
            math.cos(e[5]), math.sin(e[5]),
        )  # fmt: skip
        r = frames.rotation_zyx_c(*trig)
        pos = [r[3 * k] * v[0] + r[3 * k + 1] * v[1] + r[3 * k + 2] * v[2] for k in range(3)]
        rates = frames.euler_rates_c(*trig[:4], *v[3:])
        np.testing.assert_allclose(arr[i], [*pos, *rates], rtol=1e-15, atol=1e-16)
        g = terms.hydrostatic_restoring(300.0, 301.0, (0, 0, 0.02), (0, 0, 0), *r[6:9])
        want = -arrays.g_vect(
            300.0, 301.0, eta[i : i + 1, 4], eta[i : i + 1, 3], (0, 0, 0.02), (0, 0, 0)
        )
        np.testing.assert_allclose(g, want[0], rtol=1e-15, atol=1e-13)


def test_cross_flow_strips_match_explicit_sum() -> None:
    """The strip loop equals the strip-by-strip numpy sum, incl. r = 0 and x* on a strip."""
    from marinesim.models.sixdof import pvs_vehicles as pv

    k, xl = pv._cross_flow_consts(1.6, 0.19, 0.19)
    v = RNG.normal(size=400)
    r = RNG.normal(size=400)
    r[:20] = 0.0
    v[20:30] = 0.0
    r[30:40] = -v[30:40] / xl[5]
    s = v[:, None] + r[:, None] * xl
    ucf = np.abs(s) * s
    nu = np.zeros((400, 6))
    nu[:, 1], nu[:, 5] = v, r
    out = arrays.cross_flow_drag_pvs(1.6, 0.19, 0.19, nu)
    scale = np.maximum(1.0, k * np.abs(ucf).sum(axis=1))
    assert np.max(np.abs(out[:, 1] + k * ucf.sum(axis=1)) / scale) < 1e-14
    assert np.max(np.abs(out[:, 5] + k * (ucf * xl).sum(axis=1)) / scale) < 1e-14
