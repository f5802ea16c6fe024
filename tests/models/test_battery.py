"""Internal-resistance battery (``marinesim.models.battery``): sag, discharge, batching."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from marinesim.core.errors import ConfigError
from marinesim.core.params import validate
from marinesim.models import battery


def test_voltage_sags_by_r_times_i() -> None:
    p = battery.Params(v_full=16.8, v_empty=12.8, internal_resistance=0.05, initial_soc=1.0)
    s = battery.init(p, 3)
    v = battery.voltage(p, s, np.array([0.0, 10.0, 50.0]))
    np.testing.assert_allclose(v, [16.8, 16.3, 14.3], rtol=0, atol=1e-12)


def test_open_circuit_voltage_linear_in_charge() -> None:
    p = battery.Params(v_full=16.0, v_empty=12.0)
    np.testing.assert_allclose(
        battery.open_circuit_voltage(p, [0.0, 0.25, 1.0, 1.5, -1.0]), [12, 13, 16, 16, 12]
    )


def test_discharge_is_coulomb_counting() -> None:
    # 18 A·h at 36 A for 60 s removes 0.6 A·h = 1/30 of the charge
    p = battery.Params(capacity_ah=18.0)
    s = battery.init(p, 1)
    for _ in range(600):
        s = battery.step(p, s, np.array([36.0]), 0.1)
    np.testing.assert_allclose(s.soc, [1.0 - 1.0 / 30.0], rtol=0, atol=1e-12)


def test_empty_battery_clips_at_zero() -> None:
    p = battery.Params(capacity_ah=0.001, initial_soc=0.01)
    s = battery.step(p, battery.init(p, 2), np.array([100.0, 0.0]), 10.0)
    assert s.soc[0] == 0.0 and s.soc[1] == pytest.approx(0.01)


def test_bad_parameters_are_located_errors() -> None:
    with pytest.raises(ConfigError, match="v_empty"):
        validate(battery.Params, {"v_full": 12.0, "v_empty": 14.0}, file="b.yaml")
    with pytest.raises(ConfigError, match="capacity"):
        validate(battery.Params, {"capacity": 10.0}, file="b.yaml")


@settings(max_examples=40, deadline=None)
@given(
    soc=st.floats(0.0, 1.0),
    i1=st.floats(0.0, 200.0),
    i2=st.floats(0.0, 200.0),
    r=st.floats(0.0, 0.5),
)
def test_voltage_never_rises_with_load(soc: float, i1: float, i2: float, r: float) -> None:
    p = battery.Params(internal_resistance=r, initial_soc=soc)
    s = battery.init(p, 1)
    lo, hi = sorted((i1, i2))
    assert battery.voltage(p, s, [hi])[0] <= battery.voltage(p, s, [lo])[0] + 1e-12


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 6), cur=st.floats(0.0, 80.0), dt=st.floats(0.001, 5.0))
def test_batched_rows_equal_single_vehicle(n: int, cur: float, dt: float) -> None:
    p = battery.Params(initial_soc=0.7)
    currents = np.linspace(0.0, cur, n)
    s_n = battery.step(p, battery.init(p, n), currents, dt)
    for i in range(n):
        s_1 = battery.step(p, battery.init(p, 1), currents[i : i + 1], dt)
        assert s_n.soc[i] == s_1.soc[0]
