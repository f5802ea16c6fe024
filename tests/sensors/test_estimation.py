"""nav_ekf (L1): NEES consistency over Monte-Carlo vehicles, GPS reset, gate, delayed replay."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import chi2

from marinesim.core.rng import BlockRNG, generator
from marinesim.sensors.estimation import EkfParams, NavEkf, ekf_update

G = 9.81


def _params(**kw: object) -> EkfParams:
    base = dict(
        accel_noise_std=0.05,
        accel_bias_walk=2e-4,
        depth_std=0.05,
        gps_std=2.0,
        dvl_std=0.02,
        initial_pos_std=2.0,
        initial_vel_std=0.2,
        initial_bias_std=0.01,
        gate_probability=1.0,
    )
    base.update(kw)
    return EkfParams(**base)  # type: ignore[arg-type]


def _run(
    n: int,
    seed: int,
    t_end: float,
    p: EkfParams,
    gps_until: float = -1.0,
    dvl: bool = True,
    delay_ticks: int = 0,
    dvl_until: float = np.inf,
):
    """Monte Carlo over n vehicles of the exact discrete truth model; returns NEES (T, n) and times."""
    rng = BlockRNG([generator(seed, (0, i)) for i in range(n)])
    dt = 0.1
    yaw = rng.uniform(0, 2 * np.pi, size=1)[:, 0]
    c, s = np.cos(yaw), np.sin(yaw)
    rot = np.zeros((n, 3, 3))
    rot[:, 0, 0], rot[:, 0, 1], rot[:, 1, 0], rot[:, 1, 1], rot[:, 2, 2] = c, -s, s, c, 1.0
    pos = np.zeros((n, 3))
    pos[:, 2] = 10.0
    vel = np.stack([1.5 * c, 1.5 * s, np.zeros(n)], axis=1)
    bias = p.initial_bias_std * rng.normal(size=3)
    sig0 = np.repeat([p.initial_pos_std, p.initial_vel_std, p.initial_bias_std], 3)
    x_true = np.concatenate([pos, vel, bias], axis=1)
    x0 = x_true + sig0 * rng.normal(size=9)
    ekf = NavEkf(p, x0, np.broadcast_to(np.diag(sig0**2), (n, 9, 9)).copy(), rot, 0.0)
    f_true = np.einsum("nji,nj->ni", rot, np.tile([0.0, 0.0, -G], (n, 1)))
    nees, times = [], []
    pending: list[tuple[int, float, np.ndarray]] = []
    steps = int(round(t_end / dt))
    for k in range(1, steps + 1):
        f_meas = f_true + bias + p.accel_noise_std * rng.normal(size=3)
        pos = pos + vel * dt
        bias = bias + p.accel_bias_walk * np.sqrt(dt) * rng.normal(size=3)
        t = k * dt
        ekf.predict(f_meas, t)
        ones = np.ones(n, dtype=bool)
        zn = rng.normal(size=6)
        if k % 10 == 0:
            ekf.update("depth", pos[:, 2:3] + p.depth_std * zn[:, 0:1], ones, t)
            if t <= gps_until:
                ekf.update("gps", pos[:, 0:2] + p.gps_std * zn[:, 1:3], ones, t)
        if dvl and k % 2 == 0 and t <= dvl_until:
            z = np.einsum("nji,nj->ni", rot, vel) + p.dvl_std * zn[:, 3:6]
            if delay_ticks:
                pending.append((k + delay_ticks, t, z))
            else:
                ekf.update("dvl", z, ones, t)
        for item in [q for q in pending if q[0] == k]:
            ekf.update("dvl", item[2], ones, item[1])
            pending.remove(item)
        x_true = np.concatenate([pos, vel, bias], axis=1)
        e = ekf.x - x_true
        nees.append(np.einsum("ni,nij,nj->n", e, np.linalg.inv(ekf.P), e))
        times.append(t)
    return np.array(nees), np.array(times), ekf


def test_nees_within_chi2_bounds_over_monte_carlo() -> None:
    n = 200
    nees, _, _ = _run(n, 11, 30.0, _params(), gps_until=10.0)
    lo = chi2.ppf(0.0005, 9 * n) / n
    hi = chi2.ppf(0.9995, 9 * n) / n
    avg = nees.mean(axis=1)
    frac_in = np.mean((avg >= lo) & (avg <= hi))
    # averaged NEES of 9·n dof at every check time; allow the two-sided 99.9 % band to be missed
    # at no more than 1 % of the times (they are correlated, so no stricter claim)
    assert frac_in >= 0.99, (avg.min(), avg.max(), lo, hi)
    assert abs(avg.mean() - 9.0) < 0.5


def test_gps_collapses_covariance_and_dead_reckoning_grows() -> None:
    p = _params(dvl_std=0.05)
    _, t, ekf_dr = _run(20, 5, 60.0, p, gps_until=-1.0, dvl=False)
    var_dr = ekf_dr.P[:, 0, 0].mean()
    _, _, ekf_gps = _run(20, 5, 60.0, p, gps_until=60.0, dvl=False)
    var_gps = ekf_gps.P[:, 0, 0].mean()
    assert var_dr > p.initial_pos_std**2  # grows without aiding
    assert var_gps < p.gps_std**2  # a fix bounds it below the GPS variance
    assert var_gps < 0.05 * var_dr


def test_gate_rejects_outlier_and_counts_it() -> None:
    p = _params(gate_probability=0.999)
    x = np.zeros((2, 9))
    P = np.broadcast_to(np.eye(9), (2, 9, 9)).copy()
    ekf = NavEkf(p, x, P, np.broadcast_to(np.eye(3), (2, 3, 3)).copy(), 0.0)
    ekf.update("gps", np.array([[1.0, 0.0], [500.0, 0.0]]), np.array([True, True]), 0.0)
    assert ekf.rejected["gps"].tolist() == [0, 1]
    assert ekf.x[1, 0] == 0.0 and ekf.x[0, 0] > 0.0
    np.testing.assert_array_equal(ekf.P[1], np.eye(9))


def test_masked_rows_keep_state_and_joseph_keeps_symmetry() -> None:
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 9, 9))
    P = a @ np.swapaxes(a, 1, 2) + np.eye(9)
    x = rng.normal(size=(3, 9))
    H = np.zeros((2, 9))
    H[0, 0] = H[1, 1] = 1.0
    mask = np.array([True, False, True])
    xn, Pn, acc, nis = ekf_update(
        x, P, rng.normal(size=(3, 2)), x[:, :2], H, 4.0 * np.eye(2), mask, np.inf
    )
    np.testing.assert_array_equal(xn[1], x[1])
    np.testing.assert_array_equal(Pn[1], P[1])
    assert np.isnan(nis[1]) and acc.tolist() == [True, False, True]
    np.testing.assert_allclose(Pn, np.swapaxes(Pn, 1, 2), atol=1e-12)
    assert np.all(np.linalg.eigvalsh(Pn) > 0)


def test_replay_of_delayed_dvl_matches_undelayed_filter() -> None:
    p = _params(max_delay=1.0)
    kw = dict(gps_until=-1.0, dvl_until=7.0)
    _, _, ref = _run(8, 9, 8.0, p, **kw)
    _, _, rep = _run(8, 9, 8.0, p, delay_ticks=3, **kw)
    none = _params(max_delay=1.0, delay_compensation="none")
    _, _, late = _run(8, 9, 8.0, none, delay_ticks=3, **kw)
    # every delayed sample has arrived by the end: replay reproduces the undelayed filter
    np.testing.assert_allclose(rep.x, ref.x, rtol=0, atol=1e-9)
    np.testing.assert_allclose(rep.P, ref.P, rtol=0, atol=1e-9)
    assert np.abs(late.x - ref.x).max() > 1e-4  # applying at arrival is measurably different


@pytest.mark.parametrize("bad", ["depth_std", "gps_std"])
def test_required_sigma_missing(bad: str) -> None:
    from marinesim.core.errors import ConfigError
    from marinesim.core.params import validate

    data = _params().model_dump()
    del data[bad]
    with pytest.raises(ConfigError, match=f"{bad}"):
        validate(EkfParams, data)
