"""Rotor dynamics (spec actuators_6dof.md §2.3): exact values, per-step dt, batching."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from marinesim.actuators import thruster_dynamics as td
from marinesim.core import registry
from marinesim.core.errors import ConfigError
from marinesim.core.params import validate


def test_first_order_gtest_value_is_exact() -> None:
    p = td.FirstOrder(time_constant=0.5)
    s = td.update(p, np.zeros((1, 1)), np.ones((1, 1)), 0.5)
    assert s[0, 0] == 1.0 - math.exp(-1.0)
    assert s[0, 0] == pytest.approx(0.6321205588285577, abs=0.0)


def test_first_order_is_the_exact_exponential_not_euler() -> None:
    # tau*ds/dt = u - s with u held: s(h) = u + (s0 - u) exp(-h/tau), for any h (even h > tau)
    p = td.FirstOrder(time_constant=0.05)
    for h in (0.001, 0.05, 0.3):
        s = td.update(p, np.array([[2.0]]), np.array([[-1.0]]), h)[0, 0]
        assert s == pytest.approx(-1.0 + 3.0 * math.exp(-h / 0.05), rel=1e-14)
    # two half steps equal one full step (semigroup property of the exact solution)
    s_half = td.update(p, td.update(p, np.array([[0.3]]), 1.0, 0.01), 1.0, 0.01)
    s_full = td.update(p, np.array([[0.3]]), 1.0, 0.02)
    assert s_half[0, 0] == pytest.approx(s_full[0, 0], rel=1e-14)


def test_zero_order_returns_input() -> None:
    p = td.ZeroOrder()
    out = td.update(p, np.array([[5.0, 6.0]]), np.array([[10.0, 20.0]]), 0.2)
    np.testing.assert_array_equal(out, [[10.0, 20.0]])


def test_yoerger_uses_the_per_step_dt_and_converges() -> None:
    p = td.Yoerger(alpha=0.01, beta=1.0)
    s = np.zeros((1, 1))
    s1 = td.update(p, s, 25.0, 0.01)
    assert s1[0, 0] == 0.01 * 25.0  # s + h*(beta*u - alpha*0)
    s2 = td.update(p, s1, 25.0, 0.01)
    assert s2[0, 0] == pytest.approx(0.25 + 0.01 * (25.0 - 0.01 * 0.25 * 0.25), rel=1e-15)
    # the steady state sqrt(beta*u/alpha) = 50 is reached with a fixed step (upstream's growing
    # step would diverge instead)
    for _ in range(4000):
        s = td.update(p, s, 25.0, 0.01)
    assert s[0, 0] == pytest.approx(50.0, rel=1e-6)


def test_bessa_divides_the_whole_bracket_by_jmsp() -> None:
    p = td.Bessa(jmsp=0.05, kv1=0.002, kv2=0.0005, kt=0.05, rm=0.5)
    s0, u, h = 3.0, 24.0, 0.01
    expected = s0 + h * (u * 0.05 / 0.5 - 0.002 * s0 - 0.0005 * s0 * abs(s0)) / 0.05
    assert td.update(p, np.array([[s0]]), u, h)[0, 0] == pytest.approx(expected, rel=1e-15)
    s = np.zeros((1, 1))
    for _ in range(20000):
        s = td.update(p, s, u, h)
    assert s[0, 0] == pytest.approx(td.steady_state(p, u), rel=1e-9)


def test_batch_of_vehicles_and_thrusters_equals_elementwise() -> None:
    rng = np.random.default_rng(1)
    s = rng.normal(size=(4, 3)) * 10
    u = rng.normal(size=(4, 3)) * 10
    for p in (td.FirstOrder(time_constant=0.1), td.Yoerger(alpha=0.02, beta=0.8), td.ZeroOrder()):
        batch = td.step(p, s, u, None, 0.01)
        for i in range(4):
            for j in range(3):
                one = td.step(p, s[i : i + 1, j : j + 1], u[i : i + 1, j : j + 1], None, 0.01)
                assert batch[i, j] == one[0, 0]


@settings(max_examples=60, deadline=None)
@given(
    s=st.floats(-1e3, 1e3),
    u=st.floats(-1e3, 1e3),
    h=st.floats(1e-4, 10.0),
    tau=st.floats(1e-3, 10.0),
)
def test_first_order_lies_between_state_and_input(s: float, u: float, h: float, tau: float) -> None:
    out = td.update(td.FirstOrder(time_constant=tau), s, u, h)
    lo, hi = min(s, u), max(s, u)
    assert lo - 1e-12 * (1 + abs(lo)) <= out <= hi + 1e-12 * (1 + abs(hi))


@settings(max_examples=40, deadline=None)
@given(u=st.floats(-100.0, 100.0), alpha=st.floats(0.001, 0.1))
def test_yoerger_stays_finite_inside_the_stability_bound(u: float, alpha: float) -> None:
    p = td.Yoerger(alpha=alpha, beta=1.0)
    s_star = abs(td.steady_state(p, abs(u) + 1.0))
    h = 0.5 * td.stability_limit(p, s_star)
    h = min(h, 1.0)
    s = np.zeros((1, 1))
    for _ in range(300):
        s = td.update(p, s, u, h)
    assert np.isfinite(s).all()
    assert abs(s[0, 0]) <= 1.01 * s_star + 1e-9


def test_registry_names_and_params() -> None:
    assert set(registry.names("thruster_dynamics")) >= {
        "zero_order",
        "first_order",
        "yoerger",
        "bessa",
    }
    model = registry.get("thruster_dynamics", "first_order")
    p = validate(model.Params, {"time_constant": 0.1})
    np.testing.assert_array_equal(model.init(p, 2, 3), np.zeros((2, 3)))


def test_bad_time_constant_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="time_constant"):
        validate(
            td.FirstOrder, {"time_constant": 0.0}, file="x.yaml", prefix="thrusters.0.dynamics"
        )
    with pytest.raises(ConfigError, match="did you mean 'time_constant'"):
        validate(td.FirstOrder, {"time_constant": 0.1, "time_constnt": 0.1})


def _replay(params: dict, t: list[float], cmd: list[float]) -> np.ndarray:
    from marinesim.reference.actuators import _replay_dynamics

    cols = {
        "signal": np.array(["s"] * len(t), dtype=object),
        "k": np.arange(len(t), dtype=float),
        "t": np.array(t),
        "cmd": np.array(cmd),
    }
    return _replay_dynamics({"params": params}, cols)["state"]


def test_first_call_rule_of_the_upstream_gtests() -> None:
    # FirstOrder(0.5): update(0, 0) = 0 (latch), update(1, 0.5) = 1 - e^-1
    out = _replay({"type": "FirstOrder", "timeConstant": 0.5}, [0.0, 0.5], [0.0, 1.0])
    assert out[0] == 0.0 and out[1] == 1.0 - math.exp(-1.0)
    # the command of the first call is ignored by the stateful models ...
    out = _replay({"type": "FirstOrder", "timeConstant": 0.5}, [0.0, 0.5], [7.0, 1.0])
    assert out[0] == 0.0 and out[1] == 1.0 - math.exp(-1.0)
    for p in (
        {"type": "Yoerger", "alpha": 0.5, "beta": 0.5},
        {"type": "Bessa", "Jmsp": 0.5, "Kv1": 0.5, "Kv2": 0.5, "Kt": 0.5, "Rm": 0.5},
    ):
        assert _replay(p, [0.0], [3.0])[0] == 0.0
    # ... but ZeroOrder has no latch: update(10, 0) = 10, update(20, 0.2) = 20
    np.testing.assert_array_equal(
        _replay({"type": "ZeroOrder"}, [0.0, 0.2], [10.0, 20.0]), [10, 20]
    )


def test_yoerger_replay_uses_per_step_dt_not_the_growing_upstream_dt() -> None:
    t = [k * 0.01 for k in range(6)]
    out = _replay({"type": "Yoerger", "alpha": 0.01, "beta": 1.0}, t, [25.0] * 6)
    s = 0.0
    for k in range(1, 6):
        s = s + (t[k] - t[k - 1]) * (25.0 - 0.01 * s * abs(s))
        assert out[k] == s
