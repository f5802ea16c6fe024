"""A fake SITL replays the recorded servo streams against the backend.

1. With the recording's own plant (README §4) behind :class:`Lockstep`, the replies of the
   unabridged windows are recomputed from the servo packets (1e-9 relative; the README
   expects ~1e-15): frame stepping, time base, thrust lookup, signs, specific force, sonar.
2. The probe's stream (repeats, a lost reply, a late reply, 72-byte packets, decimation gaps)
   keeps the lockstep counters the recording backend reported.
3. With marinesim's BlueROV2 Heavy (``ardusub_sawtooth``) behind the backend, the MANUAL
   descent of session a: the vehicle descends at the speed its thrust/drag balance predicts.
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest

from marinesim.interop.sitl.frame import ServoMap
from marinesim.interop.sitl.lockstep import Lockstep
from marinesim.interop.sitl.protocol import ReplyRejected, decode_servo, parse_reply_like_sitl

_spec = importlib.util.spec_from_file_location(
    "_sitl_helpers", Path(__file__).with_name("_sitl_helpers.py")
)
H = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(H)  # type: ignore[union-attr]

KEYS = ("timestamp", "gyro", "accel_body", "position", "velocity", "attitude")


def _close(got: dict, want: dict, rng: bool) -> None:
    for k in KEYS + (("rng_1",) if rng else ()):
        a = np.atleast_1d(np.asarray(got.get(k, np.nan), float))
        b = np.atleast_1d(np.asarray(want.get(k, np.nan), float))
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12, err_msg=k)


def _window(session: str, first: int, last: int) -> None:
    rows = H.read_capture(H.REF / session / "capture.jsonl.gz")
    cfg = H.session_json(session)["backend"]
    plant = H.RefPlant(cfg)
    lock = Lockstep(plant)
    prs = H.pairs(rows)
    start = next(i for i, (d, _) in enumerate(prs) if decode_servo(d).frame_count == first)
    rng_from = 0.0
    if first > 0:  # continue from the recorded reply before the window
        d0, r0 = prs[start - 1]
        rep0 = parse_reply_like_sitl(r0["text"], first=False)
        plant.set_state_from_reply(rep0)
        lock.last_count = decode_servo(d0).frame_count
        lock.last_reply = r0["text"].encode()
        lock._last_pwm = decode_servo(d0).pwm
        lock._fresh = False
        lock.addr = ("127.0.0.1", 1)
        rng_from = rep0["timestamp"] + cfg["rng_delay_s"] + cfg["rng_period_s"] + 0.01
    n = 0
    for data, reply in prs[start:]:
        pkt = decode_servo(data)
        if pkt.frame_count > last:
            break
        out = lock.handle(data, ("127.0.0.1", 1))
        assert out is not None
        got = parse_reply_like_sitl(out, first=False)
        want = parse_reply_like_sitl(reply["text"], first=False)
        _close(got, want, rng=got["timestamp"] >= rng_from)
        n += 1
    assert n == last - first + 1
    assert lock.stats.frames == n and lock.stats.repeats == 0


@H.needs_shared
@pytest.mark.parametrize(
    ("session", "first", "last"),
    [
        ("a_manual_descent", 0, 12000),  # boot: 0 µs pulses, placeholder 1500s, no sonar yet
        ("a_manual_descent", 26400, 38400),  # arming and the descent at 1580 µs
        ("b_althold", 72000, 84000),  # ALT_HOLD depth step
        ("c_surftrak_sawtooth", 150000, 162000),  # SURFTRAK over the 4 m cliff, surge 0.5 m/s
    ],
)
def test_recorded_plant_replays_the_unabridged_windows(session, first, last):
    _window(session, first, last)


def test_boot_excerpt_replays_offline():
    """The shipped excerpt (session a, frames 0–199) with the §4 plant's start state."""
    rows = [r for r in H.read_capture(H.LOCAL / "capture_excerpt.jsonl.gz")
            if r["session"] == "a_manual_descent"]  # fmt: skip
    lock = Lockstep(_StillPlant())
    for data, reply in H.pairs(rows):
        out = lock.handle(data, ("127.0.0.1", 1))
        want = parse_reply_like_sitl(reply["text"], first=False)
        assert parse_reply_like_sitl(out, first=False)["timestamp"] == want["timestamp"]
        assert parse_reply_like_sitl(out, first=False)["position"] == want["position"]
    assert lock.stats.frames == 200


class _StillPlant:
    """At rest at the surface equilibrium (the boot frames have no thrust)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.n = 0

    def step(self, pwm):  # noqa: ANN001, ANN201
        from marinesim.interop.sitl.protocol import SensorReply

        self.n += 1
        return SensorReply(self.n / 1200, [0.0] * 3, [0.0, 0.0, -9.80665],
                           [0.0, 0.0, 0.12257491289198608], [0.0] * 3, [0.0] * 3)  # fmt: skip


def test_probe_excerpt_lockstep_offline():
    rows = [r for r in H.read_capture(H.LOCAL / "capture_excerpt.jsonl.gz")
            if r["session"] == "p_protocol_probe"]  # fmt: skip
    lock = Lockstep(_StillPlant())
    prev_out = None
    for data, _reply in H.pairs(rows):
        pkt = decode_servo(data)
        repeat = pkt.frame_count == lock.last_count
        frames = lock.stats.frames
        out = lock.handle(data, ("127.0.0.1", 1))
        if repeat:
            assert out == prev_out and lock.stats.frames == frames  # no step, same bytes
        prev_out = out
    n_dup = sum(1 for r in rows if r["dir"] == "ap2be" and r.get("dup"))
    assert lock.stats.repeats == n_dup > 10 and lock.stats.packets_32 > 5
    assert lock.stats.missing > 0 and lock.stats.malformed == 0


@H.needs_shared
def test_probe_stream_keeps_the_recorded_backend_counters():
    """Frames out 31201, 370 repeats (backend_summary); decimation gaps stepped through with
    the held (constant, unarmed) outputs reproduce the surge-driven x before the faults."""
    rows = H.read_capture(H.REF / "p_protocol_probe" / "capture.jsonl.gz")
    cfg = H.session_json("p_protocol_probe")["backend"]
    lock = Lockstep(H.RefPlant(cfg), max_catchup=2000)
    checked = 0
    for data, reply in H.pairs(rows):
        out = lock.handle(data, ("127.0.0.1", 1))
        assert out is not None
        try:
            want = parse_reply_like_sitl(reply["text"], first=False)
        except ReplyRejected:
            want = None  # the probe's deliberate faults
        if want is not None and want["timestamp"] < 4.9 and "attitude" in want:
            got = parse_reply_like_sitl(out, first=False)
            assert got["timestamp"] == want["timestamp"]  # the gaps are stepped through
            assert got["position"][2] == pytest.approx(want["position"][2], rel=1e-12)
            checked += 1
    summary = H.session_json("p_protocol_probe")["backend_summary"]
    assert f"out {lock.stats.frames} " in summary and f"dup {lock.stats.repeats} " in summary
    assert lock.stats.packets_32 > 0 and checked > 1000


# --- marinesim's BlueROV2 Heavy behind the backend ---------------------------------------


def _engine_plant():  # noqa: ANN202
    from marinesim.interop.sitl.plant import EnginePlant
    from marinesim.scenario import load_simulation

    sim = load_simulation("ardusub_sawtooth", variables=["end=100"])
    # FRAME_CONFIG 1 (the recording's 6-thruster frame) on the 8-thruster Heavy: SERVO5
    # drives both starboard verticals (5, 7), SERVO6 both port ones (6, 8)
    vectored_on_heavy = ServoMap((0, 1, 2, 3, 4, 5, 4, 5), (1.0,) * 8)
    return EnginePlant(sim, vectored_on_heavy)


@H.needs_shared
def test_recorded_manual_descent_flies_the_heavy():
    from marinesim.actuators.t200 import T200Cubic, u_from_pwm
    from marinesim.models import presets

    rows = H.read_capture(H.REF / "a_manual_descent" / "capture.jsonl.gz")
    plant = _engine_plant()
    lock = Lockstep(plant)
    t, z, w = [], [], []
    for data, _ in H.pairs(rows):
        pkt = decode_servo(data)
        if not 26400 <= pkt.frame_count <= 38400:
            continue
        r = parse_reply_like_sitl(lock.handle(data, ("127.0.0.1", 1)), first=False)
        t.append(r["timestamp"])
        z.append(r["position"][2])
        w.append(r["velocity"][2])
    t, z, w = np.array(t), np.array(z), np.array(w)
    # stick z=300 from SITL 23.1 s = window start + 0.7 s: ch5/6 = 1580 µs, 4 thrusters push
    # down; steady speed where 4 T(1580 µs) + W − B = D_L w + D_Q w²
    p = presets.get("bluerov2_heavy").params
    wb = p["mass"] * 9.80665 - 1024.0 * p["volume"] * 9.80665
    speeds = []
    for v in (15.0, 16.8):  # the battery sags between these
        f = 4.0 * float(T200Cubic().u_to_force(u_from_pwm(np.array([1580.0])), np.array([v]))[0])
        dl, dq = p["linear_damping"][2], p["quadratic_damping"][2]
        speeds.append((-dl + math.sqrt(dl * dl + 4 * dq * (f + wb))) / (2 * dq))
    late = t > t[0] + 5.0
    assert min(speeds) * 0.97 <= np.mean(w[late]) <= max(speeds) * 1.03, (np.mean(w[late]), speeds)
    assert z[-1] > z[0] + 4 * min(speeds)  # dived
    assert lock.stats.frames == 12001
    assert json.dumps(lock.stats.summary())
