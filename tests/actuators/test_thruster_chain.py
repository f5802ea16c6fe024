"""The thruster chain (spec actuators_6dof.md §2.1–2.2, §2.5)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from marinesim.actuators import thrust_conversion as tc
from marinesim.actuators import thruster as th
from marinesim.actuators import thruster_dynamics as td
from marinesim.core.errors import ConfigError, ConfigWarning, NumericalError

ALL_KNOBS = th.ThrusterParams(
    clamp_min=-1.0,
    clamp_max=1.0,
    gain=1500.0,
    dynamics=td.FirstOrder(time_constant=0.1),
    propeller_efficiency=0.9,
    conversion=tc.DeadZone(
        rotor_constant_l=4e-4, rotor_constant_r=5e-4, delta_l=-2500, delta_r=2000
    ),
    thrust_efficiency=0.8,
    thrust_min=-500.0,
    thrust_max=600.0,
)


def bank(*thrusters: th.ThrusterParams) -> th.ThrusterBankParams:
    return th.ThrusterBankParams(thrusters=thrusters)


def test_chain_order_by_hand() -> None:
    b = bank(ALL_KNOBS)
    st0 = th.init(b, 1)
    h = 0.01
    c = 1.2  # clamped to 1, gain 1500
    s = th.step(b, st0, [[c]], None, h)
    u = 1500.0 * 1.0
    a = math.exp(-h / 0.1)
    rotor = 0.0 * a + (1 - a) * u
    omega = 0.9 * rotor
    bb = omega * abs(omega)
    f = 5e-4 * (bb - 2000) if bb >= 2000 else (4e-4 * (bb + 2500) if bb <= -2500 else 0.0)
    thrust = min(max(0.8 * f, -500.0), 600.0)
    assert s.dynamics_input[0, 0] == u
    assert s.rotor[0, 0] == pytest.approx(rotor, rel=1e-15)
    assert s.omega[0, 0] == pytest.approx(omega, rel=1e-15)
    assert s.thrust[0, 0] == pytest.approx(thrust, rel=1e-14)
    assert bool(s.clamp_saturated[0, 0]) is True
    # propeller efficiency is not compounded into the stored state
    for _ in range(200):
        s = th.step(b, s, [[c]], None, h)
    assert s.rotor[0, 0] == pytest.approx(1500.0, rel=1e-6)
    assert s.omega[0, 0] == pytest.approx(0.9 * 1500.0, rel=1e-6)
    assert s.thrust[0, 0] == 600.0 and bool(s.thrust_saturated[0, 0])


def test_min_ge_max_means_unlimited_with_warning() -> None:
    # UUV Simulator documentation snippet: clamp 0/0 and thrust 0/0 -> no clamp, no limit
    doc = th.ThrusterParams(
        clamp_min=0,
        clamp_max=0,
        thrust_min=0,
        thrust_max=0,
        dynamics=td.ZeroOrder(),
        conversion=tc.Basic(rotor_constant=0.001),
    )
    e = th.effective(doc)
    assert (e.clamp_min, e.clamp_max, e.thrust_min, e.thrust_max) == (
        -np.inf,
        np.inf,
        -np.inf,
        np.inf,
    )
    s = th.step(bank(doc), th.init(bank(doc), 1), [[1000.0]], None, 0.01)
    assert s.thrust[0, 0] == 1000.0  # 0.001 * 1000^2, neither clamped nor limited
    # LAUV: clamp 3000 / -3000 (swapped) -> no clamp; thrust limits +-50 kept
    lauv = th.ThrusterParams(
        clamp_min=3000,
        clamp_max=-3000,
        thrust_min=-50,
        thrust_max=50,
        dynamics=td.FirstOrder(time_constant=0.05),
        conversion=tc.Basic(rotor_constant=0.0002),
    )
    with pytest.warns(
        ConfigWarning,
        match=r"lauv.yaml:31:5: thrusters\.0\.clamp_min: clamp_min \(3000\) >= clamp_max \(-3000\)",
    ):
        th.check(
            lauv, file="lauv.yaml", marks={"thrusters.0.clamp_min": (31, 5)}, prefix="thrusters.0"
        )
    with pytest.raises(ConfigError, match="strict"):
        th.check(lauv, strict=True)
    s = th.step(bank(lauv), th.init(bank(lauv), 1), [[5000.0]], None, 0.01)
    assert s.dynamics_input[0, 0] == 5000.0


def test_efficiency_outside_unit_interval_is_replaced_by_one() -> None:
    p = th.ThrusterParams(
        thrust_efficiency=1.5,
        propeller_efficiency=-0.2,
        dynamics=td.ZeroOrder(),
        conversion=tc.Basic(rotor_constant=1.0),
    )
    e = th.effective(p)
    assert (e.thrust_efficiency, e.propeller_efficiency) == (1.0, 1.0)
    names = [w[0] for w in th.warnings_for(p)]
    assert names == ["thrust_efficiency", "propeller_efficiency"]
    ok = p.model_copy(update={"thrust_efficiency": 0.5, "propeller_efficiency": 0.0})
    assert th.warnings_for(ok) == []
    assert th.effective(ok).propeller_efficiency == 0.0


def test_disabled_thruster_decays() -> None:
    p = th.ThrusterParams(
        enabled=False,
        clamp_min=-1,
        clamp_max=1,
        dynamics=td.FirstOrder(time_constant=0.1),
        conversion=tc.Basic(rotor_constant=1.0),
    )
    b = bank(p)
    s = th.ThrusterState(
        *(np.array([[x]]) for x in (100.0, 0, 0, 0)), np.zeros((1, 1), bool), np.zeros((1, 1), bool)
    )
    s = th.step(b, s, [[50.0]], None, 0.1)
    assert s.dynamics_input[0, 0] == 0.0
    assert s.rotor[0, 0] == pytest.approx(100.0 * math.exp(-1.0), rel=1e-15)


def test_wrench_of_a_reversed_thruster_and_tam() -> None:
    # ECA A9 / LAUV style: rpy (0, 0, pi) -> positive thrust pushes along body -x
    p = th.ThrusterParams(
        position=(-0.5, 0.1, 0.2),
        rpy=(0.0, 0.0, math.pi),
        dynamics=td.ZeroOrder(),
        conversion=tc.Basic(rotor_constant=1.0),
    )
    w = th.wrench(bank(p), [[10.0]])
    np.testing.assert_allclose(w[0, :3], [-10.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(w[0, 3:], np.cross([-0.5, 0.1, 0.2], [-10.0, 0.0, 0.0]), atol=1e-12)


def test_batch_equals_per_thruster_and_per_vehicle() -> None:
    thr = [
        ALL_KNOBS,
        th.ThrusterParams(
            dynamics=td.Yoerger(alpha=0.01, beta=1.0), conversion=tc.Basic(rotor_constant=0.01)
        ),
        th.ThrusterParams(
            dynamics=td.Bessa(jmsp=0.05, kv1=0.002, kv2=0.0005, kt=0.05, rm=0.5),
            conversion=tc.LinearInterp(
                input_values=(-5, 0, 2, 5), output_values=(-100, -10, 20, 120)
            ),
            gain=0.2,
        ),
    ]
    b = bank(*thr)
    rng = np.random.default_rng(7)
    cmds = rng.uniform(-2, 2, size=(30, 5, 3))
    s = th.init(b, 5)
    singles = [[th.init(bank(t), 1) for t in thr] for _ in range(5)]
    for k in range(30):
        s = th.step(b, s, cmds[k], None, 0.01)
        for i in range(5):
            for j, t in enumerate(thr):
                singles[i][j] = th.step(
                    bank(t), singles[i][j], cmds[k, i : i + 1, j : j + 1], None, 0.01
                )
                assert s.thrust[i, j] == singles[i][j].thrust[0, 0]
                assert s.rotor[i, j] == singles[i][j].rotor[0, 0]


def test_non_finite_rotor_raises_numerical_error() -> None:
    p = th.ThrusterParams(
        name="aft",
        dynamics=td.Yoerger(alpha=1.0, beta=1.0),
        conversion=tc.Basic(rotor_constant=1.0),
    )
    b = bank(p)
    s = th.init(b, 2)
    with pytest.raises(NumericalError, match=r"vehicle\[0\].*t=1.5 s.*aft"):
        for _ in range(50):
            s = th.step(b, s, [[1e6], [0.0]], {"t": 1.5}, 10.0)


def test_yoerger_stability_warning_needs_a_finite_clamp() -> None:
    p = th.ThrusterParams(
        clamp_min=-100,
        clamp_max=100,
        dynamics=td.Yoerger(alpha=0.5, beta=1.0),
        conversion=tc.Basic(rotor_constant=1.0),
    )
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        th.check(p, dt=0.5)
    assert any("unstable" in str(r.message) for r in rec)
    assert not any("unstable" in m for _, m in th.warnings_for(p, dt=1e-4))


def test_axis_and_rpy_are_exclusive() -> None:
    with pytest.raises(ValueError, match="either axis or rpy"):
        th.ThrusterParams(
            axis=(1, 0, 0),
            rpy=(0, 0, 0),
            dynamics=td.ZeroOrder(),
            conversion=tc.Basic(rotor_constant=1),
        )


@settings(max_examples=30, deadline=None)
@given(c=st.floats(-5.0, 5.0), n=st.integers(1, 4))
def test_limits_respected(c: float, n: int) -> None:
    b = bank(ALL_KNOBS)
    s = th.init(b, n)
    for _ in range(5):
        s = th.step(b, s, np.full((n, 1), c), None, 0.05)
    assert np.all(s.thrust >= -500.0) and np.all(s.thrust <= 600.0)
    assert np.all(np.abs(s.dynamics_input) <= 1500.0)


@settings(max_examples=15, deadline=None)
@given(
    n=st.integers(1, 4),
    cmds=st.lists(st.floats(-3.0, 3.0), min_size=12, max_size=12),
    h=st.sampled_from([0.001, 0.01, 0.02]),
)
def test_batch_property_equals_single_thruster_runs(n: int, cmds: list, h: float) -> None:
    thr = (
        ALL_KNOBS,
        th.ThrusterParams(
            dynamics=td.ZeroOrder(), conversion=tc.Basic(rotor_constant=2.0), gain=-1.0
        ),
        th.ThrusterParams(
            dynamics=td.Yoerger(alpha=0.01, beta=1.0), conversion=tc.Basic(rotor_constant=0.01)
        ),
    )
    b = bank(*thr)
    c = np.resize(np.asarray(cmds), (4, n, 3))
    s = th.init(b, n)
    ones = [[th.init(bank(t), 1) for t in thr] for _ in range(n)]
    for k in range(4):
        s = th.step(b, s, c[k], None, h)
        for i in range(n):
            for j, t in enumerate(thr):
                ones[i][j] = th.step(bank(t), ones[i][j], c[k, i : i + 1, j : j + 1], None, h)
    got = np.array([[ones[i][j].thrust[0, 0] for j in range(3)] for i in range(n)])
    np.testing.assert_array_equal(s.thrust, got)
