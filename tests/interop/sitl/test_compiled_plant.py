"""The SITL engine plant through the generated tick against the plugins' ticks.

``ardusub_sawtooth`` (``fossen6dof`` with the T200 plant, ``sitl_servo``, the ``rangefinder``
over the sawtooth profile) driven frame by frame by a recorded servo stream (the shipped
excerpt of session a, repeated and renumbered as consecutive frames) through
:class:`~marinesim.interop.sitl.lockstep.Lockstep`: with ``Simulation.step(1)`` taking the
compiled route, every reply sent to SITL (bytes) and the whole engine run (every recorded
signal, events, bus and hook-call counts) must be the same as the plugins' ticks give.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from marinesim.interop.sitl.lockstep import Lockstep
from marinesim.interop.sitl.plant import EnginePlant
from marinesim.interop.sitl.protocol import decode_servo, encode_servo
from marinesim.scenario import load_simulation
from marinesim.testing import assert_runs_identical

pytest.importorskip("numba")

_spec = importlib.util.spec_from_file_location(
    "_sitl_helpers", Path(__file__).with_name("_sitl_helpers.py")
)
H = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(H)  # type: ignore[union-attr]

FRAMES = 1800  # 1.5 s at 1200 Hz: rangefinder readings every 0.1 s after its 0.3 s delay


def _stream() -> list[bytes]:
    rows = H.read_capture(H.LOCAL / "capture_excerpt.jsonl.gz")
    pwm = [decode_servo(bytes.fromhex(r["hex"])).pwm for r in rows
           if r.get("dir") == "ap2be" and not r.get("dup")]  # fmt: skip
    return [encode_servo(1200, i, pwm[i % len(pwm)]) for i in range(FRAMES)]


def _serve(compiled: bool, log_rate: str) -> tuple[list[bytes], object, EnginePlant]:
    sim = load_simulation("ardusub_sawtooth", variables=[f"log_rate={log_rate}"])
    sim.compiled = compiled
    plant = EnginePlant(sim)
    lock = Lockstep(plant)
    replies = [lock.handle(d, ("127.0.0.1", 1), 0.0) for d in _stream()]
    return replies, plant.finish("replay ended"), plant


@pytest.mark.parametrize("log_rate", ["20", "1200"])
def test_compiled_plant_replies_and_log_equal_plugin_ticks(log_rate: str) -> None:
    ra, a, pa = _serve(False, log_rate)
    rb, b, pb = _serve(True, log_rate)
    assert len(ra) == FRAMES and all(r is not None for r in ra)
    assert ra == rb  # every reply to SITL, byte for byte
    assert_runs_identical(a, b)
    assert a.manifest["compiled_ticks"] == 0
    assert FRAMES - 5 <= b.manifest["compiled_ticks"] < FRAMES  # all but the first tick or so
    assert pa.servo.readings == pb.servo.readings >= 10
    assert pa.servo.reading == pb.servo.reading
    last = json.loads(rb[-1])
    assert "rng_1" in last  # the rangefinder's reading reached the reply
    assert last["position"][2] != 0.0  # the thrusters moved the vehicle
    pwm = b["servo.pwm"][0]
    assert np.any(pwm != 1500.0)  # the recorded pulses went through the servo law
