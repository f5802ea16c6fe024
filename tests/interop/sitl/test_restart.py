"""SITL restarts and stray datagrams, by SITL's own rules (``SIM_JSON.cpp``): one SITL sends
from one address; its frame count starts at 0 with the process and never goes back; it resends
an unanswered packet after ~1.1 s.  The recorded boot stream (shipped excerpt) is replayed
through the backend with synthesized restarts and strays on an explicit wall clock.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from marinesim.interop.sitl.lockstep import Lockstep
from marinesim.interop.sitl.plant import EnginePlant
from marinesim.interop.sitl.protocol import (
    PacketError,
    decode_servo,
    encode_servo,
    parse_reply_like_sitl,
)
from marinesim.scenario import load_simulation

_spec = importlib.util.spec_from_file_location(
    "_sitl_helpers", Path(__file__).with_name("_sitl_helpers.py")
)
H = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(H)  # type: ignore[union-attr]

SITL = ("127.0.0.1", 40001)
NEW_SITL = ("127.0.0.1", 40002)
OTHER = ("127.0.0.1", 5555)
PWM = [1500] * 8 + [1000] * 8
DOWN = [1500] * 4 + [1700] * 4 + [1000] * 8  # the Heavy's verticals push down


def _boot_packets() -> list[bytes]:
    rows = [r for r in H.read_capture(H.LOCAL / "capture_excerpt.jsonl.gz")
            if r["session"] == "a_manual_descent"]  # fmt: skip
    return [d for d, _ in H.pairs(rows)]


class _CountingPlant:
    """Replies with the frame number as position: shows which run the physics is in."""

    def __init__(self) -> None:
        self.resets = 0
        self.n = 0

    def reset(self) -> None:
        self.resets += 1
        self.n = 0

    def step(self, pwm):  # noqa: ANN001, ANN201
        from marinesim.interop.sitl.protocol import SensorReply

        self.n += 1
        return SensorReply(self.n / 1200, [0.0] * 3, [0.0, 0.0, -9.80665],
                           [0.0, 0.0, float(self.n)], [0.0] * 3, [0.0] * 3)  # fmt: skip


def _z(reply: bytes) -> float:
    return parse_reply_like_sitl(reply, first=False)["position"][2]


def test_stray_frame_zero_mid_flight_is_ignored():
    """One datagram with frame 0 from another local program: not answered, physics untouched."""
    pkts = _boot_packets()
    plant = _CountingPlant()
    lock = Lockstep(plant)
    t = 0.0
    for d in pkts[:100]:
        assert lock.handle(d, SITL, now=t) is not None
        t += 0.001
    assert lock.handle(pkts[0], OTHER, now=t) is None  # the stray (a copy of a frame-0 packet)
    # SITL waited 0.9 s (e.g. for its GCS); another frame-0 datagram is still a stray
    assert lock.handle(encode_servo(1200, 0, PWM), OTHER, now=t + 0.9) is None
    for d in pkts[100:]:
        t += 0.001
        assert lock.handle(d, SITL, now=t + 0.9) is not None
    assert plant.resets == 0 and lock.stats.restarts == 0
    assert lock.stats.strays == 2 and lock.stats.frames == len(pkts) == plant.n
    # a stray with any other count, and a frame-0 packet from SITL's own address mid-stream
    assert lock.handle(encode_servo(1200, 7, PWM), OTHER, now=t + 0.95) is None
    assert lock.handle(encode_servo(1200, 0, PWM), SITL, now=t + 0.95) is None
    assert lock.stats.strays == 3 and lock.stats.stale == 1 and plant.resets == 0


def test_new_sitl_is_followed_after_the_old_one_goes_quiet():
    """SITL restarted: frame 0 from a new address once the old SITL has been silent ≥ 1 s
    (immediately, or at its first ~1.1 s resend); the physics starts over."""
    pkts = _boot_packets()
    plant = _CountingPlant()
    lock = Lockstep(plant)
    for i, d in enumerate(pkts[:150]):
        lock.handle(d, SITL, now=i * 0.001)
    t_last = 149 * 0.001
    # the new SITL's first packet 0.2 s after the old one's last: not yet (could be a stray)
    assert lock.handle(pkts[0], NEW_SITL, now=t_last + 0.2) is None
    assert lock.stats.strays == 1 and plant.resets == 0
    # its resend 1.1 s later: the old one is gone -> restart, fresh physics, time from 1/rate
    r = lock.handle(pkts[0], NEW_SITL, now=t_last + 1.3)
    assert r is not None and _z(r) == 1.0
    assert parse_reply_like_sitl(r)["timestamp"] == pytest.approx(1 / 1200)
    assert plant.resets == 1 and lock.stats.restarts == 1 and lock.addr == NEW_SITL
    for i, d in enumerate(pkts[1:50]):
        assert _z(lock.handle(d, NEW_SITL, now=t_last + 1.31 + i * 0.001)) == i + 2
    # the old SITL's late packets are strays now
    assert lock.handle(pkts[150], SITL, now=t_last + 1.4) is None
    assert lock.stats.strays == 2
    # a restart reusing the same ephemeral port: frame 0 after ≥ 1 s of silence
    r = lock.handle(pkts[0], NEW_SITL, now=t_last + 3.0)
    assert _z(r) == 1.0 and lock.stats.restarts == 2


def test_frame_rate_zero_is_counted_not_accepted():
    bad = encode_servo(0, 0, PWM)
    with pytest.raises(PacketError, match="byte offset 2: frame rate 0"):
        decode_servo(bad)
    plant = _CountingPlant()
    lock = Lockstep(plant)
    assert lock.handle(bad, SITL, now=0.0) is None
    assert lock.stats.malformed == 1 and "frame rate 0" in lock.stats.last_error
    assert plant.n == 0 and lock.addr is None  # it did not make that sender "the SITL"
    assert lock.handle(encode_servo(1200, 0, PWM), SITL, now=0.1) is not None


def test_engine_plant_restarts_from_the_initial_state():
    """After a restart the new run starts at the spawn state, not at the old run's depth
    (the old runtime block must not be kept after ``Simulation.reset``)."""
    sim = load_simulation("ardusub_sawtooth", variables=["end=60"])
    plant = EnginePlant(sim)
    lock = Lockstep(plant)
    first = [lock.handle(encode_servo(1200, i, DOWN), SITL, now=i * 1e-4) for i in range(3)]
    for i in range(3, 2400):
        r = lock.handle(encode_servo(1200, i, DOWN), SITL, now=i * 1e-4)
    z_old = _z(r)
    assert z_old > 0.3  # it dived
    again = [lock.handle(encode_servo(1200, i, DOWN), NEW_SITL, now=10.0 + i * 1e-4)
             for i in range(3)]  # fmt: skip
    assert lock.stats.restarts == 1
    assert again == first  # bit for bit the first run's first replies
    assert plant.block is sim.blocks[0] and float(plant.block.truth.pos[0, 2]) < 0.01
    row = plant.truth_row(0, 2)
    assert np.isfinite(row).sum() >= 20 and row[5] == pytest.approx(_z(again[-1]))
