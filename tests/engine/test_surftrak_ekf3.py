"""The ``baro`` belief through EKF3's height model (``estimator: ekf3``) in the SURFTRAK harness.

An open-loop heave (the thrust held to a 0.2 Hz sine, so every run has the same truth) seen by
the autopilot: with EK3_HGT_DELAY = 60 ms and a barometer that has no real delay (SITL's), the
reported height runs ahead of the truth and swings 1.10 times as far (what the recorded
firmware shows, docs/guide/surftrak.md); with EK3_HGT_DELAY = 0 it follows the truth.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from marinesim.core.errors import ConfigError
from marinesim.interop.surftrak_runner import run_surftrak
from marinesim.sensors.ekf3_height import Ekf3HeightParams

DT = 0.0025


def _heave(t: float, thrust: float) -> float:
    return -0.038 + 0.15 * math.sin(2 * math.pi * 0.2 * t)


def _seen_z(ekf3: Ekf3HeightParams | None) -> np.ndarray:
    res = run_surftrak(
        "zeros", delay=0.3, noise=0.0, duration=25.0, seed=1, ekf3=ekf3, trace=True,
        thrust_override=_heave, switch_after=0, jit=False,
    )  # fmt: skip
    assert res.trace is not None
    return res.trace["z"][0] / 100.0  # the autopilot's height [m, up], 400 Hz


def _amp_lag(x: np.ndarray, ref: np.ndarray) -> tuple[float, float]:
    """Amplitude ratio and lag [s] (> 0: x later than ref) over 10-25 s."""
    w = np.arange(x.size) * DT > 10.0
    a, b = x[w] - x[w].mean(), ref[w] - ref[w].mean()
    shifts = range(-80, 81)
    best = max(shifts, key=lambda s: float(np.dot(a[80:-80], np.roll(b, s)[80:-80])))
    return float(np.ptp(a) / np.ptp(b)), best * DT


@pytest.fixture(scope="module")
def runs() -> dict[str, np.ndarray]:
    return {
        "truth": _seen_z(None),
        "d0": _seen_z(Ekf3HeightParams(EK3_HGT_DELAY=0.0)),
        "d60": _seen_z(Ekf3HeightParams()),
    }


def test_ekf3_with_the_assumed_delay_leads_and_overshoots(runs: dict[str, np.ndarray]) -> None:
    amp, lag = _amp_lag(runs["d60"], runs["truth"])
    assert 1.05 < amp < 1.15, amp
    assert lag <= -0.005, lag  # ahead of the truth


def test_ekf3_without_assumed_delay_follows_the_truth(runs: dict[str, np.ndarray]) -> None:
    amp, lag = _amp_lag(runs["d0"], runs["truth"])
    assert 0.95 < amp < 1.02, amp
    assert 0.0 <= lag <= 0.05, lag  # at most the 10 Hz reading's age behind
    assert not np.array_equal(runs["d0"], runs["d60"])


def test_ekf3_needs_its_loop_as_the_tick() -> None:
    with pytest.raises(ConfigError) as exc:
        run_surftrak("zeros", duration=1.0, ekf3=Ekf3HeightParams(loop_dt=0.005), jit=False)
    assert exc.value.param == "ekf3.loop_dt"
    assert "0.005" in str(exc.value)
