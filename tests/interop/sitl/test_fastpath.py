"""The lockstep's fast path (a ``step_raw`` plant, hooks every 0.05 s) against the generic one."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from marinesim.interop.sitl.lockstep import Lockstep
from marinesim.interop.sitl.protocol import encode_servo, parse_reply_like_sitl
from marinesim.interop.sitl.refplant import ReferencePlant
from marinesim.interop.sitl.truthlog import TruthLog

SITL = ("127.0.0.1", 40000)
NEW_SITL = ("127.0.0.1", 40001)


def _t200(tmp_path: Path) -> Path:
    p = tmp_path / "t200.csv"
    p.write_text("voltage_V,pwm_us,force_N\n16,1100,-40\n16,1500,0\n16,1900,51\n")
    return p


def _stream() -> list[tuple[bytes, tuple[str, int], float]]:
    """1 s of frames with a dive command, one repeat, a gap of 3 frames, a stale packet, a
    32-channel packet, then a restarted SITL (new address, frame 0, after 2 s of silence)."""
    out = []
    pwm = [1500] * 16
    pwm[4] = pwm[5] = 1700
    for n in range(1200):
        if n in (500, 501, 502):
            continue  # lost
        p32 = pwm + [1000] * 16 if n == 900 else pwm
        out.append((encode_servo(1200, n, p32), SITL, n / 1200))
        if n == 300:
            out.append((encode_servo(1200, n, pwm), SITL, n / 1200))  # repeat
        if n == 700:
            out.append((encode_servo(1200, 650, pwm), SITL, n / 1200))  # stale
    for n in range(100):
        out.append((encode_servo(1200, n, [1500] * 16), NEW_SITL, 3.0 + n / 1200))
    return out


def test_raw_path_answers_like_the_generic_path(tmp_path):
    csv = _t200(tmp_path)
    fast = Lockstep(ReferencePlant(csv, "sawtooth"))
    slow = Lockstep(ReferencePlant(csv, "sawtooth"))
    slow._raw = slow._fast = None
    assert fast._raw is not None
    for data, addr, now in _stream():
        a = fast.handle(data, addr, now)
        b = slow.handle(data, addr, now)
        assert (a is None) == (b is None)
        if a is not None:
            assert parse_reply_like_sitl(a, first=False) == parse_reply_like_sitl(b, first=False)
    assert fast.stats == slow.stats
    s = fast.stats
    assert (s.repeats, s.missing, s.stale, s.restarts, s.packets_32) == (1, 3, 1, 1, 1)
    assert s.frames == 1200 + 100  # the 3 lost frames are stepped with the previous pulses
    assert math.isclose(fast.plant.t, 100 / 1200)  # the restarted SITL's time


def test_hooks_run_every_period_and_the_truth_log_keeps_every_row(tmp_path):
    csv = _t200(tmp_path)
    calls: list[float] = []
    lock = Lockstep(
        ReferencePlant(csv, "sawtooth"),
        on_frame=lambda pkt, reply, t_us: calls.append(reply.timestamp),
        hook_period=0.05,
    )
    for data, addr, now in _stream():
        lock.handle(data, addr, now)
    first = [t for t in calls if t <= 1.0 + 1e-9 and t >= 0]
    # frames at 1/1200 .. 1.0: the first one, then the first frame at or after each 0.05 s
    assert len(calls) == 21 + 2  # + the restarted run's first frame and 0.05 s
    assert np.allclose(first[1:21], np.arange(1, 21) * 0.05, atol=1e-9)

    rows = {}
    for period in (0.0, 0.05):
        plant = ReferencePlant(csv, "sawtooth")
        log = TruthLog(plant, tmp_path / f"p{period}", period=0.05)
        lk = Lockstep(plant, on_frame=log, hook_period=period)
        for data, addr, now in _stream():
            lk.handle(data, addr, now)
        log.close()
        rows[period] = [f.read_text() for f in log.files]
    assert len(rows[0.05]) == 2 and rows[0.05] == rows[0.0]
    assert len(rows[0.0][0].splitlines()) == 1 + 21
