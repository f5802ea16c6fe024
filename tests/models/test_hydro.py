"""Textbook functions of marinesim.models.sixdof.hydro (Fossen 2021) against hand values and identities."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from marinesim.models.sixdof import hydro

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
    np.testing.assert_allclose(hydro.m_rb(m, [0, 0, 0.02], i_g), c["MRB"], rtol=1e-14, atol=1e-14)


def test_hmtrx_inverse_property() -> None:
    r = RNG.normal(size=3)
    np.testing.assert_allclose(hydro.hmtrx(r) @ hydro.hmtrx(-r), np.eye(6), atol=1e-14)


def test_coriolis_vector_equals_matrix_form_and_is_workless() -> None:
    a = RNG.normal(size=(6, 6))
    mass = a @ a.T + 6 * np.eye(6)
    nu = RNG.normal(size=(5, 6))
    c = hydro.m2c(mass, nu)
    vec = hydro.coriolis_times(mass, nu)
    np.testing.assert_allclose(np.einsum("nij,nj->ni", c, nu), vec, rtol=1e-12, atol=1e-12)
    # C(ν) is skew-symmetric for the m2c parametrisation: νᵀ C(ν) ν = 0
    np.testing.assert_allclose(np.sum(nu * vec, axis=1), 0.0, atol=1e-10)
    np.testing.assert_allclose(c + np.swapaxes(c, 1, 2), 0.0, atol=1e-12)


def test_coriolis_zeroed_entries_match_matrix() -> None:
    mass = np.diag([2.0, 3.0, 4.0, 0.5, 0.7, 0.9])
    nu = RNG.normal(size=(4, 6))
    zero = ((4, 0), (0, 4), (5, 1), (1, 5))
    c = hydro.m2c(mass, nu)
    for i, j in zero:
        c[:, i, j] = 0.0
    np.testing.assert_allclose(
        np.einsum("nij,nj->ni", c, nu), hydro.coriolis_times(mass, nu, zero), rtol=1e-12, atol=1e-12
    )


def test_rexrov_wrench_hand_check() -> None:
    """Spec §6: ν_r = (1, 0, 0, 0, 0, 0) → damping X = −823.04 N; −C_A ν_r moments (0, −103.32, 6.8773)."""
    from marinesim.models import presets

    model = presets.build("rexrov")
    nu_r = np.array([[1.0, 0, 0, 0, 0, 0]])
    damp = hydro.damping_times(model.d_l, nu_r, model.d_lf, model.d_q)
    assert -damp[0, 0] == pytest.approx(-823.04, abs=1e-9)
    ca = -hydro.coriolis_times(model.m_a, nu_r, symmetric=True)
    np.testing.assert_allclose(ca[0], [0, 0, 0, 0, -103.32, 6.8773], atol=1e-12)


def test_g_vect_equals_rotation_form() -> None:
    phi, theta = RNG.uniform(-1, 1, 5), RNG.uniform(-1, 1, 5)
    rot = hydro.rzyx(phi, theta, RNG.uniform(-3, 3, 5))
    r_g, r_b = np.array([0.01, -0.02, 0.05]), np.array([0.0, 0.01, -0.03])
    g1 = hydro.g_vect(300.0, 310.0, theta, phi, r_g, r_b)
    g2 = hydro.g_vect_rot(300.0, 310.0, rot, r_g, r_b)
    np.testing.assert_allclose(g1, g2, rtol=1e-12, atol=1e-12)


def test_euler_kinematics_matches_matrices() -> None:
    eta = RNG.uniform(-1, 1, (6, 6))
    nu = RNG.normal(size=(6, 6))
    r = hydro.rzyx(eta[:, 3], eta[:, 4], eta[:, 5])
    t = hydro.tzyx(eta[:, 3], eta[:, 4])
    expect = np.concatenate(
        (np.einsum("nij,nj->ni", r, nu[:, :3]), np.einsum("nij,nj->ni", t, nu[:, 3:])), 1
    )
    np.testing.assert_allclose(hydro.euler_kinematics(eta, nu), expect, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        r @ np.swapaxes(r, 1, 2), np.broadcast_to(np.eye(3), (6, 3, 3)), atol=1e-14
    )


def test_quaternion_rate_is_tangent() -> None:
    q = RNG.normal(size=(8, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    qd = hydro.quat_kinematics(q, RNG.normal(size=(8, 3)))
    np.testing.assert_allclose(np.sum(q * qd, axis=1), 0.0, atol=1e-14)


def test_hoerner_and_cross_flow() -> None:
    assert hydro.hoerner(2 * 0.0109, 1.0) == pytest.approx(1.9661)
    assert hydro.hoerner(100.0, 1.0) == pytest.approx(0.5593)
    # pure sway: Y = −½ρ T C_D v|v| · (21 strips × L/20), yaw moment from the asymmetric strip span
    nu = np.array([[0, 0.5, 0, 0, 0, 0.0]])
    out = hydro.cross_flow_drag_pvs(2.0, 0.25, 0.2, nu)
    cd = hydro.hoerner(0.25, 0.2)
    assert out[0, 1] == pytest.approx(-0.5 * 1026 * 0.2 * cd * 0.25 * 21 * 0.1, rel=1e-12)
    assert out[0, 0] == out[0, 2] == 0.0


def test_terms_on_floats_equal_terms_on_arrays() -> None:
    """One source: the same term functions on floats (as compiled kernels see them) and on
    numpy component arrays give the same bits."""
    from marinesim.core import frames
    from marinesim.models.sixdof import terms

    eta = RNG.uniform(-1, 1, (4, 6))
    nu = RNG.normal(size=(4, 6))
    arr = hydro.euler_kinematics(eta, nu)
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
        want = -hydro.g_vect(
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
    out = hydro.cross_flow_drag_pvs(1.6, 0.19, 0.19, nu)
    scale = np.maximum(1.0, k * np.abs(ucf).sum(axis=1))
    assert np.max(np.abs(out[:, 1] + k * ucf.sum(axis=1)) / scale) < 1e-14
    assert np.max(np.abs(out[:, 5] + k * (ucf * xl).sum(axis=1)) / scale) < 1e-14


def _wrench_cols(lin, flow, extra=()):  # noqa: ANN001, ANN202
    n = len(lin)
    cols = {"vehicle": np.array(["rexrov"] * n, dtype=object)}
    cols["case"] = np.array(["c"] * n, dtype=object)
    for j, c in enumerate("xyz"):
        cols[f"lin_{c}"] = np.array([v[j] for v in lin], dtype=float)
        cols[f"ang_{c}"] = np.zeros(n)
        cols[f"flow_{c}"] = np.array([v[j] for v in flow], dtype=float)
    for name in ("nuR_u", "nuR_v", "nuR_w", "nuR_p", "nuR_q", "nuR_r", *extra):
        cols[name] = np.zeros(n)
    return cols


def test_uuv_wrench_flow_is_rotated_into_a_yawed_link() -> None:
    # world ENU flow 0.5 m/s towards north (+y); link yawed +90° (its x points north):
    # body flow (0.5, 0, 0) FLU, so ν_r,u = 1.5 − 0.5
    cols = _wrench_cols([(1.5, 0, 0)], [(0, 0.5, 0)])
    out = hydro.uuv_wrench_replay({"inputs": "link held at rpy (0, 0, 1.5707963267948966)"}, cols)
    np.testing.assert_allclose(out["nuR_u"], [1.0], rtol=1e-15)
    np.testing.assert_allclose(out["nuR_v"], [0.0], atol=1e-15)
    plain = hydro.uuv_wrench_replay({"inputs": "identity orientation"}, cols)
    np.testing.assert_allclose([plain["nuR_u"][0], plain["nuR_v"][0]], [1.5, 0.5])  # v FRD = −y


def test_uuv_wrench_filter_protocol_from_the_entry() -> None:
    # first call at t = 0.02 with dt = 0.02: a_f = 0.3·(ν_r − 0)/0.02 already on row 0;
    # then ν_r constant: a_f decays by 0.7 per call
    cols = _wrench_cols([(0.2, 0, 0)] * 3, [(0, 0, 0)] * 3, extra=("accF_u", "addedmass_u"))
    out = hydro.uuv_wrench_replay({"procedure": "first call at t = 0.02, dt = 0.02"}, cols)
    a0 = 0.3 * 0.2 / 0.02
    np.testing.assert_allclose(out["accF_u"], [a0, 0.7 * a0, 0.49 * a0], rtol=1e-14)
    np.testing.assert_allclose(out["addedmass_u"][0], -779.79 * a0, rtol=1e-14)  # col 0 of M_A
    default = hydro.uuv_wrench_replay({}, cols)  # t = 0, 0.01, 0.02: no update at t = 0
    np.testing.assert_allclose(default["accF_u"], [0.0, 0.3 * 20.0, 0.7 * 0.3 * 20.0])


def test_uuv_hydro_params_reject_bad_input() -> None:
    with pytest.raises(ValueError, match="nautilus"):
        hydro.uuv_hydro_params("nautilus")
    with pytest.raises(ValueError, match="6 or 36"):
        hydro.uuv_hydro_params({"added_mass": [1, 2, 3]})


def test_uuv_wrench_nested_parameters_and_other_column_names() -> None:
    # a pasted plugin block (nested, strings) and columns named nuR_0..5 / F_x_gz
    cols = {
        "vehicle": np.array(["v1"], dtype=object),
        "case": np.array(["sway"], dtype=object),
        "lin_u": np.array([0.0]),
        "lin_v": np.array([0.5]),  # FLU +y (port) → FRD v = −0.5
        "lin_w": np.array([0.0]),
    }
    cols.update({f"nuR_{i}": np.zeros(1) for i in range(6)})
    cols.update({"damp_1": np.zeros(1), "F_y_gz": np.zeros(1)})
    entry = {
        "vehicles": {
            "v1": {
                "volume": 1.8,
                "hydrodynamic_model": {
                    "type": "fossen",
                    "added_mass": " ".join(["0"] * 36),
                    "linear_damping": "-10 -20 -30 -1 -2 -3",
                    "quadratic_damping": "0 -40 0 0 0 0",
                },
            }
        }
    }
    out = hydro.uuv_wrench_replay(entry, cols)
    assert out["nuR_1"][0] == -0.5
    d = -(20 + 40 * 0.5) * -0.5  # −D v with D = 20 + 40|v|
    assert out["damp_1"][0] == pytest.approx(d, rel=1e-15)
    assert out["F_y_gz"][0] == pytest.approx(-d, rel=1e-15)  # FRD → FLU
