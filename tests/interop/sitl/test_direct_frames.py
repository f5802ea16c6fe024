"""Direct frames of the SITL engine plant (:meth:`EnginePlant.step_raw`) against plain steps.

The same recorded servo stream (the shipped excerpt of session a, renumbered; a repeated
packet, a gap of missing frames and a scripted sonar fault on the way) through
:class:`~marinesim.interop.sitl.lockstep.Lockstep` with the truth log as ``marinesim sitl -o``
keeps it, once with direct frames (the pulses, one tick of the generated tick and the reply
numbers in compiled code, the plugins' commits waiting until read) and once with
``Simulation.step(1)`` and :meth:`EnginePlant.reply` per frame: every reply (bytes), every
truth-log row and the whole engine run (every recorded signal, events, bus and hook-call
counts) must be the same.  The stream is longer than one compiled call's log arrays
(``MAX_TICKS``), so direct frames stop and start again on the way.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from marinesim.engine.compiled.law import MAX_TICKS
from marinesim.interop.sitl.lockstep import Lockstep
from marinesim.interop.sitl.plant import EnginePlant
from marinesim.interop.sitl.protocol import decode_servo, encode_servo
from marinesim.interop.sitl.refplant import SonarFault
from marinesim.interop.sitl.session import HOOK_PERIOD
from marinesim.interop.sitl.truthlog import TruthLog
from marinesim.scenario import load_simulation
from marinesim.testing import assert_runs_identical

pytest.importorskip("numba")

_spec = importlib.util.spec_from_file_location(
    "_sitl_helpers", Path(__file__).with_name("_sitl_helpers.py")
)
H = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(H)  # type: ignore[union-attr]

FRAMES = MAX_TICKS + 700


def _stream() -> list[bytes]:
    rows = H.read_capture(H.LOCAL / "capture_excerpt.jsonl.gz")
    pwm = [decode_servo(bytes.fromhex(r["hex"])).pwm for r in rows
           if r.get("dir") == "ap2be" and not r.get("dup")]  # fmt: skip
    out = [encode_servo(1200, i, pwm[i % len(pwm)]) for i in range(FRAMES)]
    out.insert(900, out[899])  # a repeat: the cached reply, no step
    del out[1500:1503]  # missing frames: stepped with the previous pulses
    return out


def _serve(direct: bool, log_rate: str, tmp: Path) -> tuple[list, object, EnginePlant, str]:
    sim = load_simulation("ardusub_sawtooth", variables=[f"log_rate={log_rate}"])
    plant = EnginePlant(sim, faults=[SonarFault("zero", 1.0, 1.2), SonarFault("nan", 1.9, 2.0)])
    plant.direct = direct
    log = TruthLog(plant, tmp, period=HOOK_PERIOD)
    lock = Lockstep(plant, on_frame=log, hook_period=HOOK_PERIOD)
    replies = [lock.handle(d, ("127.0.0.1", 1), 0.0) for d in _stream()]
    log.close()
    return replies, plant.finish("replay ended"), plant, (tmp / "truth.csv").read_text()


@pytest.mark.parametrize("log_rate", ["20", "1200"])
def test_direct_frames_equal_plain_steps(log_rate: str, tmp_path: Path) -> None:
    ra, a, pa, ta = _serve(False, log_rate, tmp_path / "plain")
    rb, b, pb, tb = _serve(True, log_rate, tmp_path / "direct")
    assert pa.direct_frames == 0
    assert pb.direct_frames > FRAMES - 100  # all but a few frames went direct
    assert len(ra) == len(_stream()) and all(r is not None for r in ra)
    assert ra == rb  # every reply to SITL, byte for byte
    assert ta == tb  # the truth log, row for row
    assert len(ta.splitlines()) > 40
    assert_runs_identical(a, b)
    assert pa.steps == pb.steps == FRAMES
    assert pa.servo.readings == pb.servo.readings >= 10
    assert pa.servo.reading == pb.servo.reading
    texts = [r.decode() for r in rb]
    assert any('"rng_1":0.0}' in t for t in texts)  # the "zero" fault was sent ...
    assert any('"rng_1":NaN}' in t for t in texts)  # ... and the "nan" one, as JSON's NaN
