"""The batched Fossen 6-DOF model: validation, kinematics, integration order, divergence."""

from __future__ import annotations

import numpy as np
import pytest

from marinesim.core.errors import ConfigError, ConfigWarning
from marinesim.models import presets
from marinesim.models.sixdof import fossen6dof as f6

BASE = {
    "mass": 18.0,
    "inertia": [[0.05, 0, 0], [0, 1.77, 0], [0, 0, 1.77]],
    "added_mass": [1, 16, 16, 0.005, 1.3, 1.3],
    "linear_damping": [2.4, 23, 23, 0.3, 9.7, 9.7],
    "quadratic_damping": [2.4, 80, 80, 0.0006, 9.1, 9.1],
    "neutrally_buoyant": True,
    "r_g": [0, 0, 0.01],
}


def test_negative_damping_is_rejected_with_hint() -> None:
    with pytest.raises(ConfigError, match=r"linear_damping.*SNAME-signed"):
        f6.build({**BASE, "linear_damping": [-2.4, 23, 23, 0.3, 9.7, 9.7]})
    with pytest.raises(ConfigError, match="quadratic_damping"):
        f6.build({**BASE, "quadratic_damping": [2.4, -80, 80, 0.0006, 9.1, 9.1]})


def test_unknown_key_and_bad_mass_matrix() -> None:
    with pytest.raises(ConfigError, match="did you mean"):
        f6.build({**BASE, "linear_dampng": [1] * 6})
    with pytest.raises(ConfigError, match="positive semi-definite"):
        f6.build({**BASE, "added_mass": [-30, 16, 16, 0.005, 1.3, 1.3]})
    with pytest.raises(ConfigError, match="volume"):
        f6.build({k: v for k, v in BASE.items() if k != "neutrally_buoyant"})


def test_wet_weight_warning() -> None:
    with pytest.warns(ConfigWarning, match="dry mass"):
        f6.build({**{k: v for k, v in BASE.items() if k != "neutrally_buoyant"}, "volume": 0.01})


def test_quaternion_stays_unit_and_matches_euler_model() -> None:
    mq = f6.build(BASE)
    me = f6.build({**BASE, "attitude": "euler"})
    tau = np.array([20.0, 1.0, -2.0, 0.05, 0.2, 0.3])
    sq, se = f6.init(mq, 1, euler=[0.1, -0.2, 0.3]), f6.init(me, 1, euler=[0.1, -0.2, 0.3])
    for _ in range(200):
        sq = f6.step(mq, sq, tau, None, 0.01)
        se = f6.step(me, se, tau, None, 0.01)
        assert abs(np.linalg.norm(sq.att) - 1) < 1e-12
    np.testing.assert_allclose(sq.nu, se.nu, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(f6.euler_angles(mq, sq), se.att, atol=1e-8)
    np.testing.assert_allclose(sq.pos, se.pos, atol=1e-8)


def test_rk4_is_fourth_order() -> None:
    m = f6.build(BASE)
    tau = np.array([30.0, 5.0, 3.0, 0.1, 0.5, 0.4])

    def run(h: float) -> np.ndarray:
        s = f6.init(m, 1)
        for _ in range(round(1.0 / h)):
            s = f6.step(m, s, tau, None, h)
        return np.concatenate((s.pos[0], s.nu[0]))

    ref = run(0.0125 / 4)
    e1 = np.max(np.abs(run(0.05) - ref))
    e2 = np.max(np.abs(run(0.025) - ref))
    assert 10 < e1 / e2 < 22  # 2^4 = 16


def test_semi_implicit_euler_is_first_order_and_close() -> None:
    m_rk = f6.build(BASE)
    m_se = f6.build({**BASE, "integrator": "semi_implicit_euler"})
    tau = np.array([30.0, 0, 0, 0, 0, 0.4])
    a, b = f6.init(m_rk, 1), f6.init(m_se, 1)
    for _ in range(100):
        a = f6.step(m_rk, a, tau, None, 0.01)
        b = f6.step(m_se, b, tau, None, 0.01)
    assert 0 < np.max(np.abs(a.nu - b.nu)) < 1e-2


def test_divergence_stops_only_that_vehicle() -> None:
    m = f6.build({**BASE, "max_speed": 10.0})
    s = f6.init(m, 3)
    tau = np.zeros((3, 6))
    tau[1, 0] = 1e9
    s1 = f6.step(m, s, tau, None, 0.1)
    assert s1.alive.tolist() == [True, False, True]
    assert len(s1.events) == 1 and "vehicle[1]" in s1.events[0] and "t=0.1 s" in s1.events[0]
    np.testing.assert_array_equal(s1.nu[1], s.nu[1])  # frozen
    tau2 = np.zeros((3, 6))
    tau2[:, 0] = 10.0
    s2 = f6.step(m, s1, tau2, None, 0.1)
    assert s2.events == () and s2.alive.tolist() == [True, False, True]
    assert s2.nu[0, 0] > 0 and s2.nu[2, 0] > 0 and s2.nu[1, 0] == 0


def test_nan_input_reported() -> None:
    m = f6.build(BASE)
    s = f6.init(m, 2)
    s1 = f6.step(m, s, np.array([[np.nan] * 6, [0] * 6]), None, 0.1)
    assert s1.alive.tolist() == [False, True] and "non-finite" in s1.events[0]
    assert np.all(np.isfinite(s1.nu))


def test_euler_singularity_is_reported() -> None:
    m = f6.build({**BASE, "attitude": "euler", "r_g": [0, 0, 0]})
    s = f6.init(m, 1, euler=[0, np.pi / 2, 0])
    s1 = f6.step(m, s, None, None, 0.01)
    assert not s1.alive[0] and "singularity" in s1.events[0]


def test_current_moves_a_neutral_body_with_the_water() -> None:
    """A body at rest in a uniform current is accelerated towards the water velocity."""
    m = f6.build({**BASE, "r_g": [0, 0, 0]})
    s = f6.init(m, 1)
    env = f6.Env(current=np.array([0.5, 0.0, 0.0]))
    for _ in range(2000):
        s = f6.step(m, s, None, env, 0.05)
    assert s.nu[0, 0] == pytest.approx(0.5, abs=1e-3)
    np.testing.assert_allclose(s.nu[0, 1:], 0.0, atol=1e-9)


def test_build_batch_equals_separate_builds() -> None:
    p2 = {**BASE, "mass": 20.0, "linear_damping": [3, 20, 25, 0.4, 8, 9]}
    mb = f6.build_batch([BASE, p2])
    sb = f6.init(mb, 2)
    tau = np.array([[10.0, 1, 2, 0.1, 0.2, 0.3], [5.0, -1, 0, 0, 0.1, -0.2]])
    for _ in range(50):
        sb = f6.step(mb, sb, tau, None, 0.02)
    for i, p in enumerate((BASE, p2)):
        m = f6.build(p)
        s = f6.init(m, 1)
        for _ in range(50):
            s = f6.step(m, s, tau[i], None, 0.02)
        np.testing.assert_allclose(sb.nu[i], s.nu[0], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(sb.pos[i], s.pos[0], rtol=1e-12, atol=1e-14)


def test_presets_build_and_float() -> None:
    for name in ("rexrov", "lauv", "bluerov2_heavy"):
        m = presets.build(name)
        s = f6.init(m, 2)
        for _ in range(20):
            s = f6.step(
                m,
                s,
                None,
                f6.Env(
                    density=m.params[0].reference_density, gravity=m.params[0].reference_gravity
                ),
                0.05,
            )
        assert s.alive.all() and np.all(np.isfinite(s.nu))


def test_contract_init_and_step_accept_params() -> None:
    """Architecture contract: init(params, n), step(params, state, cmd, env, dt)."""
    p = f6.Params(**BASE)
    s = f6.init(p, 2)
    s = f6.step(p, s, [5.0, 0, 0, 0, 0, 0], f6.Env(), 0.1)
    m = f6.build(p)
    s2 = f6.step(m, f6.init(m, 2), [5.0, 0, 0, 0, 0, 0], f6.Env(), 0.1)
    np.testing.assert_array_equal(s.nu, s2.nu)
    assert s.nu[0, 0] > 0 and s.t == pytest.approx(0.1)


def test_linear_hydrostatics_surface_craft_equilibrium() -> None:
    """g(η) = G η + g₀: a constant heave force F settles at z = F / G33 (Otter-like G)."""
    g = np.zeros((6, 6))
    g[2, 2], g[3, 3], g[4, 4] = 7541.4375, 967.27, 2743.37
    g[2, 4] = g[4, 2] = 1508.2875
    p = {
        "mass": 80.0,
        "inertia": [[16.7, 0, 0], [0, 21.5, 0], [0, 0, 15.1]],
        "added_mass": [5.5, 82.5, 55, 3.3, 17.2, 25.7],
        "linear_damping": [77.6, 162.5, 605.4, 62.1, 266.6, 42.7],
        "restoring_matrix": g.ravel().tolist(),
    }
    for att in ("quaternion", "euler"):
        m = f6.build({**p, "attitude": att})
        s = f6.init(m, 2)
        for _ in range(200):
            s = f6.step(m, s, [[0, 0, 300.0, 0, 0, 0], [0, 0, 0, 0, 0, 0]], None, 0.05)
        # equilibrium of the coupled heave/pitch block: G[2:5:2, 2:5:2] [z, θ] = [F, 0]
        z_eq, th_eq = np.linalg.solve(g[np.ix_([2, 4], [2, 4])], [300.0, 0.0])
        assert s.pos[0, 2] == pytest.approx(z_eq, rel=1e-6)
        assert f6.euler_angles(m, s)[0, 1] == pytest.approx(th_eq, rel=1e-5)
        np.testing.assert_allclose(s.pos[1], 0.0, atol=1e-15)
    mb = f6.build_batch([p, p])
    sb = f6.init(mb, 2)
    for _ in range(200):
        sb = f6.step(mb, sb, [[0, 0, 300.0, 0, 0, 0], [0, 0, 0, 0, 0, 0]], None, 0.05)
    assert sb.pos[0, 2] == pytest.approx(z_eq, rel=1e-6)


def test_density_mismatch_warns() -> None:
    m = presets.build("bluerov2_heavy")  # fresh water, 1000 kg/m³
    with pytest.warns(ConfigWarning, match="density"):
        assert f6.check_environment(m, f6.Env(density=1025.0))
    assert f6.check_environment(m, f6.Env(density=1002.0)) == []
