"""contacts (L1): FOV and range honoured, P_d frequency, covariance consistency, k-d tree."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom, chi2, poisson

from marinesim.core.errors import ConfigError
from marinesim.sensors.contacts import ContactParams, detect_contacts, draws_per_scan


def _p(**kw: object) -> ContactParams:
    base = dict(
        max_range=100.0,
        fov_az_deg=90.0,
        fov_el_deg=30.0,
        range_std=0.5,
        az_std_deg=0.5,
        el_std_deg=0.5,
    )
    base.update(kw)
    return ContactParams(**base)  # type: ignore[arg-type]


def _scan(
    p: ContactParams,
    targets: np.ndarray,
    rng: np.random.Generator,
    n_scans: int = 1,
    yaw: float = 0.0,
):
    m = len(targets)
    c, s = np.cos(yaw), np.sin(yaw)
    rot = np.array([[[c, -s, 0], [s, c, 0], [0, 0, 1.0]]]).repeat(n_scans, 0)
    nu, nn = draws_per_scan(p, m)
    return detect_contacts(
        np.zeros((n_scans, 3)),
        rot,
        np.full(n_scans, 99),
        targets,
        np.arange(m),
        np.ones(m, bool),
        rng.random((n_scans, nu)),
        rng.standard_normal((n_scans, nn)),
        p,
    )


def test_outside_fov_or_range_never_reported() -> None:
    rng = np.random.default_rng(1)
    # grid of targets all around, some beyond range, some high above
    g = rng.uniform(-150, 150, size=(3000, 3))
    g[:, 2] = rng.uniform(-60, 60, size=3000)
    p = _p(detection_probability=1.0, max_contacts=3000)
    det = _scan(p, g, rng, n_scans=3, yaw=np.deg2rad(30.0))
    assert not det.overflow.any()
    rel = g[det.target]
    yaw = np.deg2rad(30.0)
    az = np.arctan2(rel[:, 1], rel[:, 0]) - yaw
    az = (az + np.pi) % (2 * np.pi) - np.pi
    el = np.arctan2(-rel[:, 2], np.hypot(rel[:, 0], rel[:, 1]))
    rng_ = np.linalg.norm(rel, axis=1)
    assert len(det.row) > 100
    assert np.all(rng_ <= 100.0 + 1e-9)
    assert np.all(np.abs(az) <= np.deg2rad(45.0) + 1e-9)
    assert np.all(np.abs(el) <= np.deg2rad(15.0) + 1e-9)
    # and every target in view was reported (P_d = 1) on each scan
    inview = (rng_ <= 100) & (np.abs(az) <= np.deg2rad(45)) & (np.abs(el) <= np.deg2rad(15))
    assert inview.all()
    rel_all = g
    az_all = (np.arctan2(rel_all[:, 1], rel_all[:, 0]) - yaw + np.pi) % (2 * np.pi) - np.pi
    el_all = np.arctan2(-rel_all[:, 2], np.hypot(rel_all[:, 0], rel_all[:, 1]))
    view_all = (
        (np.linalg.norm(rel_all, axis=1) <= 100)
        & (np.abs(az_all) <= np.deg2rad(45))
        & (np.abs(el_all) <= np.deg2rad(15))
    )
    assert len(det.row) == 3 * view_all.sum()


def test_never_reports_itself_nor_inactive() -> None:
    p = _p()
    tg = np.array([[10.0, 0, 0], [20.0, 0, 0], [30.0, 0, 0]])
    nu, nn = draws_per_scan(p, 3)
    det = detect_contacts(
        np.zeros((1, 3)),
        np.eye(3)[None],
        np.array([0]),
        tg,
        np.array([0, 1, 2]),
        np.array([True, False, True]),
        np.zeros((1, nu)),
        np.zeros((1, nn)),
        p,
    )
    assert det.contact_id.tolist() == [2]


def test_detection_frequency_within_binomial_bounds() -> None:
    rng = np.random.default_rng(7)
    pd = 0.7
    p = _p(detection_probability=pd)
    n = 4000
    det = _scan(p, np.array([[50.0, 0.0, 0.0]]), rng, n_scans=n)
    k = len(det.row)
    lo, hi = binom.ppf([0.0005, 0.9995], n, pd)
    assert lo <= k <= hi


def test_logistic_detection_probability() -> None:
    rng = np.random.default_rng(8)
    p = _p(p_d_range_50=60.0, p_d_slope=0.1)
    n = 4000
    det = _scan(p, np.array([[60.0, 0.0, 0.0], [90.0, 0.0, 0.0]]), rng, n_scans=n)
    for j, pd in ((0, 0.5), (1, 1 / (1 + np.exp(3.0)))):
        k = int(np.sum(det.target == j))
        lo, hi = binom.ppf([0.0005, 0.9995], n, pd)
        assert lo <= k <= hi


def test_covariance_consistency_chi2() -> None:
    rng = np.random.default_rng(3)
    p = _p(range_std=1.0, az_std_deg=1.0, el_std_deg=1.0)
    truth = np.array([[60.0, 20.0, -5.0]])
    n = 3000
    det = _scan(p, truth, rng, n_scans=n)
    e = det.pos - truth
    d2 = np.einsum("ni,nij,nj->n", e, np.linalg.inv(det.cov), e)
    lo, hi = chi2.ppf([0.0005, 0.9995], 3 * n)
    assert lo <= d2.sum() <= hi
    # and the covariance is not a constant: it scales with range (SCRIMMAGE used 5.0)
    assert not np.allclose(det.cov[0], 5.0 * np.eye(3))


def test_kdtree_matches_brute_force() -> None:
    rng = np.random.default_rng(4)
    g = rng.uniform(-300, 300, size=(400, 3))
    sp = rng.uniform(-100, 100, size=(5, 3))
    rot = np.broadcast_to(np.eye(3), (5, 3, 3))
    out = []
    for thr in (10, 10_000):
        p = _p(
            max_range=120.0,
            fov_az_deg=360.0,
            fov_el_deg=180.0,
            spatial_index_threshold=thr,
            max_contacts=400,
        )
        nu, nn = draws_per_scan(p, 400)
        r2 = np.random.default_rng(9)
        out.append(
            detect_contacts(
                sp,
                rot,
                np.arange(1000, 1005),
                g,
                np.arange(400),
                np.ones(400, bool),
                r2.random((5, nu)),
                r2.standard_normal((5, nn)),
                p,
            )
        )
    a, b = out
    ka = np.lexsort((a.target, a.row))
    kb = np.lexsort((b.target, b.row))
    np.testing.assert_array_equal(a.target[ka], b.target[kb])
    np.testing.assert_allclose(a.pos[ka], b.pos[kb])


def test_false_alarms_inside_fov_and_capped() -> None:
    rng = np.random.default_rng(5)
    p = _p(false_alarm_rate=2.0, max_false_alarms=4)
    det = _scan(p, np.zeros((0, 3)), rng, n_scans=2000)
    assert det.false_alarm.all() and (det.contact_id == -1).all()
    counts = np.bincount(det.row, minlength=2000)
    assert counts.max() <= 4
    pk = poisson.pmf(np.arange(4), 2.0)
    mean = float(np.sum(np.arange(4) * pk) + 4 * (1 - pk.sum()))  # E[min(X, 4)], X ~ Poisson(2)
    assert abs(counts.mean() - mean) < 4 * 1.2 / np.sqrt(2000)
    r = det.rae
    assert np.all(
        (r[:, 0] <= 100) & (np.abs(r[:, 1]) <= np.deg2rad(45)) & (np.abs(r[:, 2]) <= np.deg2rad(15))
    )


def test_params_errors() -> None:
    with pytest.raises(ConfigError, match="max_false_alarms"):
        _p(false_alarm_rate=1.0)
    with pytest.raises(ConfigError, match="min_range"):
        _p(min_range=200.0)


def test_targets_beyond_max_contacts_are_counted_not_reported() -> None:
    rng = np.random.default_rng(6)
    p = _p(max_contacts=1)
    det = _scan(
        p, np.array([[30.0, 0.0, 0.0], [20.0, 0.0, 0.0], [-20.0, 0.0, 0.0]]), rng, n_scans=2
    )
    # both targets ahead are in view: the first in target order takes the only slot
    assert det.target.tolist() == [0, 0]
    assert det.overflow.tolist() == [1, 1]
    assert draws_per_scan(p) == (2, 3)


def test_velocity_estimate_noise_and_absence() -> None:
    rng = np.random.default_rng(10)
    tg = np.array([[50.0, 0.0, 0.0]])
    tv = np.array([[1.0, -2.0, 0.5]])
    p = _p(vel_std=0.3)
    n = 2000
    nu, nn = draws_per_scan(p)
    assert nn == 6 * p.max_contacts
    det = detect_contacts(
        np.zeros((n, 3)),
        np.broadcast_to(np.eye(3), (n, 3, 3)),
        np.full(n, 99),
        tg,
        np.array([0]),
        np.ones(1, bool),
        rng.random((n, nu)),
        rng.standard_normal((n, nn)),
        p,
        target_vel=tv,
    )
    e = det.vel - tv
    d2 = np.sum(e**2) / 0.3**2
    lo, hi = chi2.ppf([0.0005, 0.9995], 3 * len(e))
    assert len(e) == n and lo <= d2 <= hi
    plain = _scan(_p(), tg, rng, n_scans=3)
    assert np.isnan(plain.vel).all() and plain.vel.shape == (3, 3)
    with pytest.raises(ConfigError, match="vel_std"):
        detect_contacts(
            np.zeros((1, 3)),
            np.eye(3)[None],
            np.array([99]),
            tg,
            np.array([0]),
            np.ones(1, bool),
            np.zeros((1, nu)),
            np.zeros((1, nn)),
            p,
        )
