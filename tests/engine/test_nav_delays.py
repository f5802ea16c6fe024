"""Delays of the IMU (delay line, stamp t − delay) and of contact reports (bus delivery)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from marinesim.engine.entity import BlockSpec, PluginSpec, Spawn
from marinesim.engine.plugin import Plugin
from marinesim.engine.plugins import sensors as S
from marinesim.engine.simulation import Simulation
from marinesim.testing import HarnessMotion


class _Tap(Plugin):
    """Records every message of the subscribed topics (stamp, publish, arrival, value)."""

    kind: ClassVar[str] = "sensor"
    subscribes: ClassVar[dict[str, str]] = {"imu/data": "array", "contacts": "array"}

    def estimate(self, ctx: Any, rng: Any) -> None:
        for m in ctx.inbox:
            ctx.state.setdefault(m.topic, []).append(
                (m.t_stamp, m.t_pub, ctx.t, np.array(m.rows), np.array(m.value))
            )


def _imu(delay: float) -> PluginSpec:
    p = S.imu.ImuParams(
        accel_noise_std=0.01,
        gyro_noise_std=0.001,
        accel_bias_walk=0.0,
        gyro_bias_walk=0.0,
        delay=delay,
    )
    return PluginSpec(S.ImuSensor("imu", p), 5.0)


def _sonar(delay: float) -> PluginSpec:
    p = S.contacts.ContactParams(
        max_range=500.0,
        fov_az_deg=360.0,
        fov_el_deg=180.0,
        range_std=1.0,
        az_std_deg=1.0,
        el_std_deg=1.0,
        delay=delay,
    )
    return PluginSpec(S.ContactSensor("sonar", p), 1.0)


def _run(delay: float) -> dict[str, list[Any]]:
    a = BlockSpec(
        "a",
        2,
        PluginSpec(HarnessMotion("m")),
        sensors=(_imu(delay), _sonar(delay), PluginSpec(_Tap("tap"))),
        spawn=Spawn(depth=5.0, speed=1.5, spread={"north": 30.0, "east": 30.0}),
    )
    sim = Simulation([a], dt=0.1, end=6.0, seed=4)
    sim.run()
    slot = next(s for s in sim.slots if s.plugin.name == "tap")
    return slot.state


def test_imu_delay_shifts_samples_and_stamps() -> None:
    now, late = _run(0.0)["imu/data"], _run(0.4)["imu/data"]
    for t_stamp, t_pub, _, _, _ in late:
        assert abs((t_pub - t_stamp) - 0.4) < 1e-9
    by_stamp = {round(m[0], 6): m[4] for m in now}
    matched = 0
    for t_stamp, *_, val in late:
        if t_stamp > 0.45:  # after the delay line has filled: the same sample, 0.4 s later
            np.testing.assert_array_equal(val, by_stamp[round(t_stamp, 6)])
            matched += 1
    assert matched > 20


def test_contact_reports_arrive_delay_later() -> None:
    now, late = _run(0.0)["contacts"], _run(0.3)["contacts"]
    assert len(now) > 3 and len(late) > 3
    for t_stamp, t_pub, t_arrive, _, _ in now:
        assert t_arrive == t_pub == t_stamp
    for t_stamp, t_pub, t_arrive, _, _ in late:
        assert t_stamp == t_pub and abs(t_arrive - t_pub - 0.3) < 1e-9
    # the delay changes arrival only, never the measurements
    np.testing.assert_array_equal(now[0][4], late[0][4])
