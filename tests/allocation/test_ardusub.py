"""ArduSub factor mixer (specs/allocation.md §7, §8.2, §9.7)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from marinesim.allocation.ardusub import command_wrench, current_limit_gain, mix, pwm_from_output
from marinesim.allocation.tam import Geometry
from marinesim.allocation.vehicles import ardusub_factors, get_layout
from marinesim.core.errors import ConfigError

# ArduSub command column → wrench row and sign (throttle positive = ascend = −Z)
CMD_TO_WRENCH = {0: (3, 1), 1: (4, 1), 2: (5, 1), 3: (2, -1), 4: (0, 1), 5: (1, 1)}


def test_factor_signs_agree_with_pinv() -> None:
    bp = Geometry(get_layout("bluerov2_heavy")).b_pinv
    fac = ardusub_factors()
    checked = 0
    for col, (row, sign) in CMD_TO_WRENCH.items():
        for i in range(8):
            if fac[i, col] != 0:
                assert np.sign(fac[i, col]) == np.sign(sign * bp[i, row]), (i, col)
                checked += 1
    assert checked == 24


def test_coupling_canonical_geometry() -> None:
    w = command_wrench(Geometry(get_layout("bluerov2_heavy")).b, ardusub_factors())
    assert w[0, 4] == pytest.approx(2.83, abs=0.005)  # forward → X
    assert w[1, 5] == pytest.approx(2.83, abs=0.005)  # lateral → Y
    assert w[5, 5] == pytest.approx(-0.014, abs=0.0005)  # lateral → spurious N
    assert w[2, 3] == pytest.approx(-4.0, abs=1e-12)  # throttle → Z up
    assert w[3, 0] == pytest.approx(0.86, abs=1e-12)
    assert w[4, 1] == pytest.approx(0.472, abs=1e-12)
    assert w[5, 2] == pytest.approx(0.670, abs=0.0005)
    off = w.copy()
    for col, (row, _) in CMD_TO_WRENCH.items():
        off[row, col] = 0.0
    off[5, 5] = 0.0
    assert np.abs(off).max() < 1e-12


def test_coupling_wu_geometry_and_pinv_cancels_it() -> None:
    g = Geometry(get_layout("bluerov2_heavy_wu2018"))
    w = command_wrench(g.b, ardusub_factors())
    assert w[4, 4] == pytest.approx(0.24, abs=0.005)  # forward → M
    assert w[3, 5] == pytest.approx(-0.24, abs=0.005)  # lateral → K
    np.testing.assert_allclose(np.abs(g.b_pinv[4:, 0]), 0.177, atol=0.0005)
    np.testing.assert_allclose(np.abs(g.b_pinv[4:, 1]), 0.098, atol=0.001)  # spec prints 2 digits


def test_mix_groups_normalised_separately() -> None:
    fac = ardusub_factors()
    out = mix([0, 0, 1.0, 0, 1.0, 1.0], fac)  # yaw + forward + lateral saturate the horizontals
    assert np.abs(out[0, :4]).max() == pytest.approx(1.0)
    np.testing.assert_allclose(out[0, 4:], 0.0)
    both = mix([0, 0, 0, 1.0, 1.0, 0], fac)  # full ascend and full forward: no trading
    np.testing.assert_allclose(both[0, 4:], -1.0)
    np.testing.assert_allclose(np.abs(both[0, :4]), 1.0)
    clamped = mix([0, 0, 0, 1.0, 0, 0], fac, throttle_thrust_max=0.5)
    np.testing.assert_allclose(clamped[0, 4:], -0.5)
    inv = mix([0, 0, 0, 0, 0.5, 0], fac, directions=[-1, 1, 1, 1, 1, 1, 1, 1])
    assert inv[0, 0] == pytest.approx(0.5) and inv[0, 1] == pytest.approx(-0.5)
    np.testing.assert_allclose(pwm_from_output([-1.0, 0.0, 1.0]), [1100.0, 1500.0, 1900.0])
    with pytest.raises(ConfigError):
        mix(np.zeros(5), fac)


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.float64, (5, 6), elements=st.floats(-1, 1)))
def test_mix_outputs_bounded_and_batched(cmds: np.ndarray) -> None:
    fac = ardusub_factors()
    out = mix(cmds, fac)
    assert out.shape == (5, 8) and np.all(np.abs(out) <= 1.0)
    for j in range(5):
        np.testing.assert_array_equal(out[j], mix(cmds[j], fac)[0])


def test_current_limiter_gain() -> None:
    g = np.array([1.0, 1.0, 0.5, 0.5])
    cur = np.array([40.0, 60.0, 40.0, 45.0])
    rate = np.array([0.0, 0.0, 0.0, 200.0])
    new = current_limit_gain(g, cur, rate, max_current=50.0, dt=0.1)
    k = 0.1 / 5.1
    np.testing.assert_allclose(new[:3], [1.0, 1.0 + k * (1 - 1.2), 0.5 + k * (1 - 0.8)])
    # I_p = 45 + 5·0.1·200 = 145 > 1.5·50 → ratio 2.5
    assert new[3] == pytest.approx(0.5 + k * (1 - 2.5))
    np.testing.assert_allclose(current_limit_gain(g, cur, rate, 0.0, 0.1), 1.0)
