"""T200 model: shipped fit vs Blue Robotics' data (specs/allocation.md §4), plant table, limits."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from marinesim.actuators.t200 import (
    KGF,
    T200Cubic,
    T200Table,
    basis,
    check_voltage,
    envelope,
    load_fit,
    pwm_from_u,
    u_from_pwm,
)
from marinesim.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data" / "t200"
CSV = DATA / "t200_performance_10-20V.csv"
needs_data = pytest.mark.skipif(not CSV.is_file(), reason="T200 data not available")


def _data() -> dict[str, np.ndarray]:
    a = np.loadtxt(CSV, delimiter=",", skiprows=1)
    return {"V": a[:, 0], "pwm": a[:, 1], "I": a[:, 3], "F": a[:, 7]}


# spec §4.3 coefficient table (10 significant digits)
SPEC_COEF = {
    "force_to_u_pos": [
        0.769366312,
        0.0649268471,
        -0.1099491811,
        -0.0003526396663,
        -0.003633608336,
        0.005827877527,
        3.821440377e-06,
        -7.442390098e-06,
        9.661371241e-05,
        -0.0001034337573,
    ],
    "force_to_u_neg": [
        -0.6409072616,
        0.08466032522,
        0.08535883866,
        0.0006055127306,
        -0.004854402733,
        -0.004304197079,
        7.9923039e-06,
        8.67026399e-06,
        0.0001268391648,
        7.340434296e-05,
    ],
    "u_to_force_pos": [
        8.766823319,
        10.52387273,
        -3.08128393,
        -21.63665551,
        1.209404365,
        0.2614706854,
        -6.677901489,
        4.335078007,
        -0.06563975343,
        -0.00652846747,
    ],
    "u_to_force_neg": [
        -18.46518997,
        -10.50352777,
        4.402829758,
        -0.01323995469,
        2.684526045,
        -0.3174449787,
        -9.468437046,
        -2.50717677,
        -0.08311992463,
        0.007256217983,
    ],
    "u_to_current_pos": [
        -2.422145173,
        14.12781405,
        0.1063781123,
        -23.60310768,
        -1.065961259,
        0.01061741988,
        7.882889067,
        2.75841435,
        -0.005285732248,
        -0.0003903861182,
    ],
    "u_to_current_neg": [
        -3.309428191,
        -16.36222351,
        0.274803608,
        -28.32990238,
        1.189652622,
        -0.00158853235,
        -10.3986444,
        2.885343803,
        0.003203786087,
        -9.160468796e-05,
    ],
}
# spec §4.5 MRoboSub parity constants
SPEC_MROBOSUB = {
    "POS_OUTPUT": [
        0.756924697,
        0.636963573,
        -0.107355204,
        -0.0336043212,
        -0.0357989822,
        0.00566506822,
        0.00346542474,
        -0.000655502962,
        0.000943572014,
        -9.97867702e-05,
    ],
    "NEG_OUTPUT": [
        -0.631593255,
        0.830153860,
        0.0833952711,
        0.0577598731,
        -0.0477313219,
        -0.00418002921,
        0.00727259340,
        0.000745132556,
        0.00123669564,
        7.04993222e-05,
    ],
    "POS_CURRENT": [
        -2.29807257,
        14.1276903,
        0.0762148798,
        -22.9819557,
        -1.10520151,
        0.0133898496,
        7.22859467,
        2.79722052,
        -0.00563116993,
        -0.000446630658,
    ],
    "NEG_CURRENT": [
        -3.18412975,
        -16.3211291,
        0.247631145,
        -27.7774741,
        1.21451522,
        0.000536855892,
        -9.67907823,
        2.93657755,
        0.00455541983,
        -0.000117926955,
    ],
    "POS_POWER": [
        0.953215518,
        1.10333738,
        -0.330202018,
        -1.99208517,
        0.103546119,
        0.0282231393,
        -0.842297013,
        0.447743134,
        -0.00628233791,
        -0.000706918724,
    ],
    "NEG_POWER": [
        -1.91033060,
        -1.05256570,
        0.456828578,
        -0.158452791,
        0.259661426,
        -0.0332207446,
        -1.07869796,
        -0.258917607,
        -0.00814000406,
        0.000763760288,
    ],
}


def test_shipped_coefficients_match_spec_table() -> None:
    fit = load_fit()
    for key, ref in SPEC_COEF.items():
        # the spec prints 10 significant digits
        np.testing.assert_allclose(fit.coefficients[key], ref, rtol=1e-9 * 10, err_msg=key)


def test_mrobosub_profile_matches_published_constants() -> None:
    fit = load_fit()
    for key, ref in SPEC_MROBOSUB.items():
        np.testing.assert_allclose(fit.mrobosub[key], ref, rtol=1e-8, err_msg=key)


@needs_data
def test_fit_script_reproduces_shipped_file() -> None:
    spec = importlib.util.spec_from_file_location(
        "fit_t200_script", ROOT / "scripts" / "fit_t200.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    doc = mod.build(DATA)
    fit = load_fit()
    for key, coef in doc["coefficients"].items():
        np.testing.assert_allclose(coef, fit.coefficients[key], rtol=1e-9, err_msg=key)
    # predictions agree to 1e-9 (the basis is ill-conditioned; compare predictions)
    a = np.linspace(-40, 50, 31)
    phi = basis(a, 16.0)
    for key, coef in doc["coefficients"].items():
        np.testing.assert_allclose(phi @ coef, phi @ fit.coefficients[key], atol=1e-9)


@needs_data
def test_fit_residuals_meet_acceptance() -> None:
    d = _data()
    m = T200Cubic()
    c = load_fit().coefficients
    u = u_from_pwm(d["pwm"])
    for side, mask, rms_max in (("pos", d["F"] > 0, 3.8), ("neg", d["F"] < 0, 3.4)):
        assert mask.sum() == (552 if side == "pos" else 553)
        r_us = 400.0 * (basis(d["F"][mask], d["V"][mask]) @ c[f"force_to_u_{side}"] - u[mask])
        assert math.sqrt(np.mean(r_us**2)) <= rms_max
        assert np.max(np.abs(r_us)) <= 22.0
        r_i = basis(u[mask], d["V"][mask]) @ c[f"u_to_current_{side}"] - d["I"][mask]
        assert math.sqrt(np.mean(r_i**2)) <= 0.165
        r_f = m.u_to_force(u[mask], d["V"][mask]) - d["F"][mask]
        assert math.sqrt(np.mean(r_f**2)) <= (0.44 if side == "pos" else 0.30)


def test_golden_vectors_16v() -> None:
    m = T200Cubic()
    f = np.array([-30.0, -10.0, -1.0, 1.0, 10.0, 30.0])
    u = m.force_to_u(f, 16.0)
    np.testing.assert_allclose(
        u, [-0.806176, -0.404552, -0.115101, 0.109506, 0.350323, 0.702751], atol=6e-7
    )
    np.testing.assert_allclose(
        pwm_from_u(u), [1177.5295, 1338.1793, 1453.9598, 1543.8023, 1640.1293, 1781.1004], atol=6e-5
    )
    uu = np.array([-1.0, -0.5, -0.2, 0.2, 0.5, 1.0])
    np.testing.assert_allclose(
        m.u_to_force(uu, 16.0),
        [-41.394179, -13.997916, -3.327772, 4.131847, 17.293866, 53.779430],
        atol=6e-7,
    )
    np.testing.assert_allclose(
        m.u_to_current(uu, 16.0),
        [25.047408, 4.318089, 0.403688, 0.427124, 4.376827, 24.532640],
        atol=6e-7,
    )
    # outside the envelope the cubic extrapolates: not achievable at 12 V
    assert m.force_to_u(-30.0, 12.0) == pytest.approx(-1.0269, abs=5e-5)


def test_mrobosub_vectors_14v8() -> None:
    m = T200Cubic(profile="mrobosub")
    f = np.array([0.01, 0.1, 1, 2, 3, 4, 5]) * KGF
    np.testing.assert_allclose(
        m.force_to_u(f, 14.8), [0.089, 0.116, 0.359, 0.568, 0.731, 0.870, 1.005], atol=6e-4
    )
    np.testing.assert_allclose(
        m.force_to_u(-f[:6], 14.8), [-0.088, -0.123, -0.418, -0.657, -0.846, -1.028], atol=6e-4
    )
    np.testing.assert_allclose(
        m.u_to_current([0.5, 0.8, 1.0, -1.0], 14.8), [4.1, 13.0, 22.5, 22.9], atol=0.05
    )


@pytest.mark.parametrize("bad", [9.99, 20.01, -16.0, float("nan"), float("inf")])
def test_voltage_out_of_range_is_a_clear_error(bad: float) -> None:
    with pytest.raises(ConfigError, match="voltage") as exc:
        T200Cubic().force_to_u(10.0, bad)
    assert exc.value.param == "voltage"


def test_voltage_clamp_policy_for_plant() -> None:
    np.testing.assert_allclose(check_voltage([5.0, 15.0, 25.0], policy="clamp"), [10.0, 15.0, 20.0])


def test_dead_band_and_zero_force() -> None:
    m = T200Cubic()
    tiny = np.array([-0.09, -1e-6, 0.0, 1e-6, 0.09])
    assert np.all(m.force_to_u(tiny, 16.0) == 0.0)
    assert np.all(m.current(tiny, 16.0) == 0.0)
    # F → 0± jumps across the ESC dead band (§4.3)
    m0 = T200Cubic(zero_force=0.0)
    eps = 1e-9
    assert pwm_from_u(m0.force_to_u(eps, 16.0)) == pytest.approx(1531, abs=1.0)
    assert pwm_from_u(m0.force_to_u(-eps, 16.0)) == pytest.approx(1469, abs=1.0)
    assert pwm_from_u(m0.force_to_u(eps, 10.0)) == pytest.approx(1560, abs=1.0)
    assert pwm_from_u(m0.force_to_u(-eps, 10.0)) == pytest.approx(1442, abs=1.0)
    # just above the threshold the output is already past the dead band
    assert pwm_from_u(m.force_to_u(0.0981, 16.0)) > 1528.0


def test_signal_inversion_flips_pwm_only() -> None:
    np.testing.assert_allclose(pwm_from_u([0.5, -0.25], [True, False]), [1300.0, 1400.0])


@settings(max_examples=25, deadline=None)
@given(st.floats(10.0, 20.0))
def test_branches_strictly_monotone(v: float) -> None:
    m = T200Cubic()
    fmax, fmin = envelope(v)
    f_pos = np.linspace(0.1, float(fmax), 400)
    f_neg = np.linspace(float(fmin), -0.1, 400)
    assert np.all(np.diff(m.force_to_u(f_pos, v)) > 0)
    assert np.all(np.diff(m.force_to_u(f_neg, v)) > 0)
    u = np.linspace(0.09, 1.0, 200)
    assert np.all(np.diff(m.u_to_force(u, v)) > 0)
    assert np.all(np.diff(m.u_to_force(-u[::-1], v)) > 0)


@pytest.mark.parametrize("v", [10.0, 12.0, 14.0, 16.0, 18.0, 20.0])
def test_inverse_at_envelope_edge(v: float) -> None:
    m = T200Cubic()
    fmax, _ = envelope(v)
    pwm = pwm_from_u(m.force_to_u(fmax, v))
    assert 1885.0 <= pwm <= 1900.0 or v == 20.0  # §4.3: 1888–1897 µs (20 V extrapolates past 1)


def test_envelope_16v_and_limits() -> None:
    fmax, fmin = envelope(16.0)
    assert float(fmax) == pytest.approx(51.43622732069733, abs=1e-12)
    assert float(fmin) == pytest.approx(-39.90792903824067, abs=1e-12)
    m = T200Cubic()
    hi, lo = m.force_limits(16.0, 15.0)
    assert m.current(hi, 16.0) == pytest.approx(15.0, abs=1e-6)
    assert m.current(lo, 16.0) == pytest.approx(15.0, abs=1e-6)
    hi_all, lo_all = m.force_limits([10.0, 16.0, 20.0])
    assert np.all(np.abs(m.force_to_u(hi_all, [10.0, 16.0, 20.0])) <= 1.0 + 1e-9)
    assert np.all(np.abs(m.force_to_u(lo_all, [10.0, 16.0, 20.0])) <= 1.0 + 1e-9)


@needs_data
def test_plant_exact_at_rows_and_zero_band() -> None:
    d = _data()
    t = T200Table(d["V"], d["pwm"], d["F"], d["I"])
    f, i = t.plant(d["pwm"], d["V"])
    np.testing.assert_allclose(f, d["F"], atol=1e-12)
    np.testing.assert_allclose(i, d["I"], atol=1e-12)
    # inside the zero band (1472–1528 µs at 16 V) the force is exactly zero, also between steps
    p = np.linspace(1472.0, 1528.0, 57)
    f16, _ = t.plant(p, 16.0)
    assert np.all(f16 == 0.0)
    # bilinear between voltages: midpoint of 16 and 18 V at 1900 µs
    fm, _ = t.plant(1900.0, 17.0)
    assert float(fm) == pytest.approx(0.5 * (51.43622732069733 + 58.99819789825733), abs=1e-9)
    # table allocator model: the per-motor limit sits on the measured curve
    hi, lo = t.force_limits(16.0, 15.0)
    assert float(t.current(hi, 16.0)) == pytest.approx(15.0, abs=1e-9)
    assert float(t.current(lo, 16.0)) == pytest.approx(15.0, abs=1e-9)
    # inverse table model jumps the dead band to the first thrust PWM
    assert pwm_from_u(t.force_to_u(0.2, 16.0)) == pytest.approx(1532.0)
    assert pwm_from_u(t.force_to_u(-0.2, 16.0)) == pytest.approx(1468.0)
