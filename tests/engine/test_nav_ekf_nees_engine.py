"""End-to-end consistency of ``nav_ekf`` in the engine: NEES over Monte Carlo runs (seeds).

The whole chain runs (IMU from the truth track with bias walks, AHRS, depth, DVL bottom lock,
GPS at the surface); the horizontal position NEES e_hᵀ P_h⁻¹ e_h averaged over all vehicles
of all seeds must lie in the two-sided 99.9 % χ² band of 2·M degrees of freedom / M.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import chi2

from marinesim.engine.entity import BlockSpec, PluginSpec, Spawn
from marinesim.engine.plugins import sensors as S
from marinesim.engine.simulation import Simulation
from marinesim.testing import HarnessMotion

N, SEEDS, DT, END = 40, (0, 1, 2), 0.1, 12.0


def _block(gps: bool) -> BlockSpec:
    imu = S.imu.ImuParams(
        accel_noise_std=0.02,
        gyro_noise_std=0.001,
        accel_bias_walk=1e-4,
        gyro_bias_walk=1e-5,
        accel_bias_init_std=0.005,
    )
    ekf = S.EkfParams(
        accel_noise_std=0.02,
        accel_bias_walk=1e-4,
        depth_std=0.05,
        gps_std=2.0,
        dvl_std=0.05,
        initial_pos_std=1.0,
        initial_vel_std=0.1,
        initial_bias_std=0.005,
    )
    ahrs = S.ahrs.AhrsParams(roll_std_deg=0.05, pitch_std_deg=0.05, yaw_std_deg=0.1)
    dvl = S.dvl.DvlParams(noise_std=0.05, min_altitude=0.5, max_altitude=50.0, seafloor_depth=40.0)
    sensors = [
        PluginSpec(S.ImuSensor("imu", imu), 10.0),
        PluginSpec(S.AhrsSensor("ahrs", ahrs), 10.0),
        PluginSpec(S.DepthSensor("depth", S.depth.DepthParams(noise_std=0.05)), 1.0),
        PluginSpec(S.DvlSensor("dvl", dvl), 5.0),
    ]
    if gps:
        sensors.append(PluginSpec(S.GpsSensor("gps", S.gps.GpsParams(noise_std=2.0)), 1.0))
    sensors.append(PluginSpec(S.NavEkfEstimator("nav", ekf)))
    return BlockSpec(
        "auv",
        N,
        PluginSpec(HarnessMotion("m")),
        sensors=tuple(sensors),
        spawn=Spawn(
            depth=0.0 if gps else 10.0,
            speed=1.5,
            spread={"north": 50.0, "east": 50.0, "heading_deg": 180.0},
        ),
    )


@pytest.mark.parametrize("gps", [False, True], ids=["dvl_aided", "gps_at_surface"])
def test_horizontal_nees_within_chi2_band_over_seeds(gps: bool) -> None:
    nees = []
    for seed in SEEDS:
        res = Simulation([_block(gps)], dt=DT, end=END, seed=seed).run()
        e = (res["belief.pos"] - res["truth.pos"])[..., :2]
        cov = res["nav.cov_ne"].reshape(e.shape[0], e.shape[1], 2, 2)
        nees.append(np.einsum("nti,ntij,ntj->nt", e[:, 1:], np.linalg.inv(cov[:, 1:]), e[:, 1:]))
    nees_all = np.concatenate(nees)  # (M, T - 1)
    m = nees_all.shape[0]
    lo, hi = chi2.ppf(0.0005, 2 * m) / m, chi2.ppf(0.9995, 2 * m) / m
    for t in (3.0, 6.0, 9.0, END):
        avg = nees_all[:, int(round(t / DT)) - 1].mean()
        assert lo <= avg <= hi, (t, avg, lo, hi)
