"""Navigation sensors (L1): GPS, depth, IMU, AHRS, DVL, noisy_state, simple_ins, CEP50."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, optimize
from scipy.stats import chi2

from marinesim.core.errors import ConfigError
from marinesim.core.frames import euler_from_quat, quat_from_euler
from marinesim.core.params import validate
from marinesim.core.rng import BlockRNG, generator
from marinesim.sensors import ahrs, depth, dvl, gps, imu, nav


def _rng(n: int, seed: int = 0) -> BlockRNG:
    return BlockRNG([generator(seed, (9, i)) for i in range(n)])


def test_gps_only_at_surface_and_noise_level() -> None:
    n = 2000
    rng = _rng(n)
    pos = np.zeros((n, 3))
    pos[n // 2 :, 2] = 3.0
    p = gps.GpsParams(noise_std=2.0)
    ne, fix = gps.gps_measure(pos, rng.normal(size=2), rng.uniform(size=1)[:, 0], p)
    assert fix[: n // 2].all() and not fix[n // 2 :].any()
    s = ne[: n // 2].std(axis=0)
    # sample std of 1000 normals: relative SE ≈ 1/sqrt(2·1000) ≈ 2.2 %; allow 5 SE
    np.testing.assert_allclose(s, 2.0, rtol=0.11)


def test_depth_sensor_density_mismatch_and_noise() -> None:
    n = 3
    d = np.array([0.0, 10.0, 100.0])
    p = depth.DepthParams(noise_std=0.0, assumed_density=1000.0)
    out, ok = depth.depth_measure(d, np.zeros(n), np.ones(n), p, density=1025.0, gravity=9.81)
    np.testing.assert_allclose(out, d * 1.025)
    assert ok.all()


def test_imu_bias_walk_is_dt_correct() -> None:
    """The bias variance after T seconds is σ_b²·T whatever the sample rate."""
    n, T = 1000, 10.0
    p = imu.ImuParams(
        accel_noise_std=0.0, gyro_noise_std=0.0, accel_bias_walk=0.01, gyro_bias_walk=0.001
    )
    for rate, seed in ((5.0, 1), (40.0, 2)):
        rng = _rng(n, seed)
        dt = 1.0 / rate
        ba = np.zeros((n, 3))
        bg = np.zeros((n, 3))
        z = np.zeros((n, 3))
        for _ in range(int(round(T * rate))):
            _, _, ba, bg = imu.imu_measure(z, z, ba, bg, rng.normal(size=12), dt, p)
        var = ba.var(axis=0).mean()
        # variance of 3·n samples: relative SE sqrt(2/(3n)) ≈ 2.6 %; allow 5 SE
        assert abs(var / (0.01**2 * T) - 1) < 0.13


def test_specific_force_at_rest_is_minus_g() -> None:
    rot = np.broadcast_to(np.eye(3), (2, 3, 3))
    f = imu.specific_force(np.zeros((2, 3)), rot, 9.81)
    np.testing.assert_allclose(f, [[0, 0, -9.81]] * 2)


def test_ahrs_noise_in_body_frame() -> None:
    n = 2000
    rng = _rng(n, 3)
    q = quat_from_euler(np.zeros(n), np.zeros(n), np.full(n, 1.0))
    p = ahrs.AhrsParams(roll_std_deg=0.5, pitch_std_deg=0.5, yaw_std_deg=2.0)
    qm, ok = ahrs.ahrs_measure(q, rng.normal(size=3), rng.uniform(size=1)[:, 0], p)
    e = euler_from_quat(qm)
    assert ok.all()
    np.testing.assert_allclose(np.rad2deg(e.std(axis=0)), [0.5, 0.5, 2.0], rtol=0.08)  # 5 SE
    assert abs(e[:, 2].mean() - 1.0) < 5 * np.deg2rad(2.0) / np.sqrt(n)


def test_dvl_bottom_lock_window_and_water_track() -> None:
    p = dvl.DvlParams(noise_std=0.0, min_altitude=1.0, max_altitude=30.0)
    v = np.tile([1.0, 0.0, 0.0], (4, 1))
    cur = np.tile([0.2, 0.0, 0.0], (4, 1))
    alt = np.array([0.5, 10.0, 35.0, np.nan])
    out, mode = dvl.dvl_measure(v, np.zeros((4, 3)), cur, alt, np.zeros((4, 3)), np.ones(4), p)
    assert mode.tolist() == [dvl.WATER, dvl.BOTTOM, dvl.WATER, dvl.WATER]
    np.testing.assert_allclose(out[1], [1.0, 0, 0])
    np.testing.assert_allclose(out[2], [0.8, 0, 0])
    p2 = dvl.DvlParams(
        noise_std=0.0,
        min_altitude=1.0,
        max_altitude=30.0,
        water_track=False,
        dropout_probability=0.5,
    )
    _, mode2 = dvl.dvl_measure(
        v, np.zeros((4, 3)), cur, alt, np.zeros((4, 3)), np.array([0.9, 0.9, 0.9, 0.1]), p2
    )
    assert mode2.tolist() == [dvl.NONE, dvl.BOTTOM, dvl.NONE, dvl.NONE]
    with pytest.raises(ConfigError, match="min_altitude"):
        dvl.DvlParams(noise_std=0.1, min_altitude=5.0, max_altitude=2.0)


def test_noisy_state_covariance_matches_draws() -> None:
    n = 2000
    rng = _rng(n, 4)
    p = nav.NoisyStateParams(
        pos_std=(1.0, 2.0, 0.5),
        pos_mean=(0.0, 0.0, 0.0),
        vel_std=(0.1, 0.1, 0.1),
        vel_mean=(0.0, 0.0, 0.0),
        att_std_deg=(1.0, 1.0, 3.0),
        att_mean_deg=(0.0, 0.0, 0.0),
    )
    pos = np.zeros((n, 3))
    q = quat_from_euler(np.zeros(n), np.zeros(n), np.zeros(n))
    bp, bq, bv, cov = nav.noisy_state(pos, q, np.zeros((n, 3)), rng.normal(size=9), p)
    e = np.concatenate([bp, bv, euler_from_quat(bq)], axis=1)
    d2 = np.einsum("ni,ij,nj->n", e, np.linalg.inv(cov[0]), e).sum()
    lo, hi = chi2.ppf([0.0005, 0.9995], 9 * n)
    assert lo <= d2 <= hi


def test_noisy_state_requires_every_sigma() -> None:
    data = {
        "pos_std": [1, 1, 1],
        "pos_mean": [0, 0, 0],
        "vel_std": [1, 1, 1],
        "vel_mean": [0, 0, 0],
        "att_std_deg": [1, 1, 1],
    }
    with pytest.raises(ConfigError) as exc:
        validate(nav.NoisyStateParams, data)
    assert "att_mean_deg" in str(exc.value) and "required" in str(exc.value).lower()
    data["att_mean_deg"] = [0, 0, 0]
    data["pos_sdt"] = [1, 1, 1]
    with pytest.raises(ConfigError, match="did you mean 'pos_std'"):
        validate(nav.NoisyStateParams, data)
    data.pop("pos_sdt")
    data["vel_std"] = [1, -1, 1]
    with pytest.raises(ConfigError, match="vel_std: every sigma must be >= 0"):
        validate(nav.NoisyStateParams, data)


def _ins(rate: float, seed: int, n: int = 1000, T: float = 60.0) -> np.ndarray:
    p = nav.SimpleInsParams(
        q_distance=0.02,
        q_time=0.01,
        vel_std=0.0,
        roll_std_deg=0.0,
        pitch_std_deg=0.0,
        yaw_std_deg=0.0,
        gps_std=2.0,
    )
    rng = _rng(n, seed)
    stt = nav.simple_ins_init(rng.normal(size=3), p)
    depth_ = np.full(n, 10.0)
    speed = np.full(n, 1.5)
    for _ in range(int(round(T * rate))):
        stt, _, _ = nav.simple_ins_step(
            stt, speed, depth_, 1.0 / rate, rng.normal(size=6), rng.uniform(size=1)[:, 0], p
        )
    return stt.err, stt.var


def test_simple_ins_drift_statistics_independent_of_rate() -> None:
    expected = (0.02 * 1.5 + 0.01) * 60.0
    for rate, seed in ((1.0, 1), (10.0, 2)):
        err, var = _ins(rate, seed)
        np.testing.assert_allclose(var, expected)
        emp = err.var(axis=0).mean()
        assert abs(emp / expected - 1) < 0.13  # 3n samples: 2.6 % SE, 5 SE


def test_simple_ins_gps_reset_after_seeded_surface_time() -> None:
    p = nav.SimpleInsParams(
        q_distance=0.0,
        q_time=1.0,
        vel_std=0.0,
        roll_std_deg=0.0,
        pitch_std_deg=0.0,
        yaw_std_deg=0.0,
        gps_std=2.0,
        surface_time_choices_s=(15.0, 30.0),
    )
    n = 200
    rng = _rng(n, 6)
    stt = nav.simple_ins_init(np.zeros((n, 3)), p)
    t_reset = np.full(n, np.nan)
    for k in range(1, 200):
        d = np.full(n, 10.0 if k < 100 else 0.0)
        stt, fix, reset = nav.simple_ins_step(
            stt, np.zeros(n), d, 1.0, rng.normal(size=6), rng.uniform(size=1)[:, 0], p
        )
        t_reset = np.where(np.isnan(t_reset) & reset, k, t_reset)
    # surfaced at k = 100 (fix time 0), reset when the fix has been held 15 or 30 s
    assert set(np.unique(t_reset)) == {115.0, 130.0}
    np.testing.assert_allclose(stt.var, 4.0)


def _cep_ref(s1: float, s2: float) -> float:
    def prob(r: float) -> float:
        def f(t: float) -> float:
            q = np.cos(t) ** 2 / s1**2 + np.sin(t) ** 2 / s2**2
            return (1 - np.exp(-0.5 * r * r * q)) / q

        return integrate.quad(f, 0, 2 * np.pi, limit=400)[0] / (2 * np.pi * s1 * s2) - 0.5

    return optimize.brentq(prob, 0.1 * s1, 2 * s1, xtol=1e-13)


@pytest.mark.parametrize("s2", [1.0, 0.7, 0.2, 0.1, 0.03])
def test_cep50_exact(s2: float) -> None:
    np.testing.assert_allclose(
        nav.cep50(np.diag([4.0, 4.0 * s2 * s2])), _cep_ref(2.0, 2.0 * s2), rtol=1e-9
    )


def test_cep50_not_the_shortcut() -> None:
    c = nav.cep50(np.diag([1.0, 0.01]))
    assert abs(0.5887 * 1.1 / c - 1) > 0.04  # the shortcut errs by about −5 % at σ₂/σ₁ = 0.1


@settings(max_examples=40, deadline=None)
@given(
    st.floats(0.01, 100.0),
    st.floats(0.0, 1.0),
    st.floats(0.0, np.pi),
)
def test_cep50_bounds_and_rotation_invariance(s1: float, ratio: float, ang: float) -> None:
    s2 = s1 * ratio
    c, s = np.cos(ang), np.sin(ang)
    R = np.array([[c, -s], [s, c]])
    cov = R @ np.diag([s1 * s1, s2 * s2]) @ R.T
    r = float(nav.cep50(cov))
    assert 0.67448 * s1 * (1 - 1e-9) <= r <= 1.17742 * s1 * (1 + 1e-9)
    # the rotated matrix loses ~eps·cond in its small axis: equal to 1e-7 relative
    np.testing.assert_allclose(r, nav.cep50(np.diag([s1 * s1, s2 * s2])), rtol=1e-7)


def test_cep50_of_a_row_does_not_depend_on_the_batch() -> None:
    """Vehicle i of a batch equals the same vehicle alone (issue 19): a row's node count and
    Newton iterations are its own, bit for bit, whatever else is in the batch."""
    rng = np.random.default_rng(7)
    ratios = np.array([1.0, 0.5, 0.05, 0.003, 1e-5, 0.9])
    covs = np.zeros((len(ratios), 2, 2))
    for i, r in enumerate(ratios):
        ang = rng.uniform(0, np.pi)
        rot = np.array([[np.cos(ang), -np.sin(ang)], [np.sin(ang), np.cos(ang)]])
        covs[i] = rot @ np.diag([4.0, 4.0 * r * r]) @ rot.T
    batch = nav.cep50(covs)
    alone = np.array([nav.cep50(covs[i : i + 1])[0] for i in range(len(ratios))])
    assert np.array_equal(batch, alone)
    assert np.array_equal(nav.cep50(covs[::-1])[::-1], batch)
