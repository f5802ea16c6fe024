"""nav_ekf initialisation from the first GPS fix (engine spec §7) and the sensors' buffer_size."""

from __future__ import annotations

import numpy as np
import pytest

from marinesim.core.errors import ConfigError
from marinesim.engine.entity import BlockSpec, PluginSpec, Spawn
from marinesim.engine.plugins import sensors as S
from marinesim.engine.simulation import Simulation
from marinesim.testing import HarnessMotion

GPS_STD = 2.0


def _block(name: str, n: int, depth: float, init: str, gps_offset: int = 0) -> BlockSpec:
    imu = S.imu.ImuParams(
        accel_noise_std=0.02, gyro_noise_std=0.001, accel_bias_walk=1e-4, gyro_bias_walk=1e-5
    )
    ekf = S.EkfParams(
        accel_noise_std=0.02,
        accel_bias_walk=1e-4,
        depth_std=0.05,
        gps_std=GPS_STD,
        dvl_std=0.05,
        initial_pos_std=1.0,
        initial_vel_std=0.1,
        initial_bias_std=0.01,
        initialisation=init,  # type: ignore[arg-type]
    )
    sensors = (
        PluginSpec(S.ImuSensor("imu", imu), 10.0),
        PluginSpec(
            S.AhrsSensor(
                "ahrs", S.ahrs.AhrsParams(roll_std_deg=0.1, pitch_std_deg=0.1, yaw_std_deg=0.3)
            ),
            10.0,
        ),
        PluginSpec(S.DepthSensor("depth", S.depth.DepthParams(noise_std=0.05, buffer_size=3)), 1.0),
        PluginSpec(
            S.GpsSensor("gps", S.gps.GpsParams(noise_std=GPS_STD)), 1.0, offset_ticks=gps_offset
        ),
        PluginSpec(S.NavEkfEstimator("nav", ekf)),
    )
    return BlockSpec(
        name,
        n,
        PluginSpec(HarnessMotion("motion")),
        sensors=sensors,
        spawn=Spawn(depth=depth, speed=0.0, spread={"north": 50.0, "east": 50.0}),
    )


def test_first_gps_fix_initialises_the_position() -> None:
    n = 400
    sim = Simulation([_block("a", n, 0.0, "first_gps")], dt=0.1, end=0.2, seed=5)
    res = sim.run()
    # frame 1 (t = 0.1 s; frame 0 is logged before the first estimate): one 0.1 s prediction
    # with σ_v = 0.1 m/s adds (0.01 m)² to the variances
    err = res["belief.pos"][:, 1, :] - res["truth.pos"][:, 1, :]
    std = res["nav.pos_std"][:, 1, :]
    np.testing.assert_allclose(std[:, 0:2], np.hypot(GPS_STD, 0.01), rtol=1e-4)  # σ_gps at fix
    np.testing.assert_allclose(std[:, 2], np.hypot(0.05, 0.01), rtol=1e-4)  # + accel noise
    # the spawn spread (σ 50 m) is gone: errors are the GPS noise, N(0, σ²) per axis
    z = err[:, 0:2] / GPS_STD
    assert abs(z.mean()) < 4.0 / np.sqrt(2 * n)
    assert abs(z.var() - 1.0) < 4.0 * np.sqrt(2.0 / (2 * n))
    assert any("initialised from the first GPS fix" in e.text for e in res.events)


def test_first_gps_without_a_fix_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="first_gps") as exc:
        Simulation([_block("a", 2, 10.0, "first_gps")], dt=0.1, end=1.0, seed=5).run()
    assert exc.value.param == "initialisation"
    assert "a[0], a[1]" in str(exc.value)
    with pytest.raises(ConfigError, match="had none"):  # the GPS samples only from tick 3
        Simulation([_block("a", 2, 0.0, "first_gps", gps_offset=3)], dt=0.1, end=1.0, seed=5).run()


def test_launch_fix_mode_is_unchanged_by_the_new_option() -> None:
    a = Simulation([_block("a", 3, 5.0, "launch_fix")], dt=0.1, end=2.0, seed=9).run()
    err0 = a["belief.pos"][:, 1, :] - a["truth.pos"][:, 1, :]
    assert np.all(np.abs(err0) < 5.0)  # launch fix σ 1 m
    np.testing.assert_allclose(a["nav.pos_std"][:, 1, 0], np.hypot(1.0, 0.01), rtol=1e-4)


def test_buffer_size_keeps_the_last_delivered_samples() -> None:
    sim = Simulation([_block("a", 2, 5.0, "launch_fix")], dt=0.1, end=5.0, seed=2)
    sim.run()
    slot = next(s for s in sim.slots if s.plugin.name == "depth")
    buf = slot.state["buffer"]
    assert len(buf) == 3  # buffer_size
    stamps = [b[0] for b in buf]
    np.testing.assert_allclose(stamps, [3.0, 4.0, 5.0], atol=1e-9)
    t, val, ok = buf[-1]
    assert val.shape == (2, 1) and ok.shape == (2,)
    assert np.all(np.abs(val[ok, 0] - 5.0) < 0.5)  # depth 5 m, σ 0.05 m
