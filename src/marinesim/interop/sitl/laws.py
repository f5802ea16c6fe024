"""``sitl_servo`` in the generated tick (:mod:`marinesim.engine.compiled`).

The SIM_JSON backend (:class:`~marinesim.interop.sitl.plant.EnginePlant`) writes the motor
pulses of each servo packet into :attr:`SitlServo.pwm`; the declaration's ``load`` copies them
into its ``pwm`` array before every call (``inputs``), and :func:`servo_control` hands them to the thruster
plant through the ``bus.thrusters_cmd`` wire (the ``thrusters/cmd`` message of the plugin
route; counted on the bus, never built) and logs them, every tick.  It also keeps the newest
rangefinder reading the ``rangefinder`` sensor left on the ``bus.rangefinder`` wire (distance
→ m, NaN for a dropout; signal quality), as the plugin's ``control`` does from its inbox: the
reading of tick k's sense phase is taken at tick k + 1.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
from numba.extending import register_jitable

from marinesim.engine.compiled.law import MAX_TICKS, Law, Laws

__all__ = ["servo_control", "servo_laws"]


@register_jitable
def servo_control(k, j, t, h, pwm, cmd, rfm, reading, cnt, plog):  # noqa: ANN001, ANN201
    """The held pulses to every row's thrusters (and the log); the newest rangefinder reading."""
    n, m = cmd.shape[0], pwm.shape[0]
    for i in range(n):
        for c in range(m):
            cmd[i, c] = pwm[c]
            plog[j, i, c] = pwm[c]
    if rfm[0, 0] != 0.0:  # a reading for the first row (the backend's vehicle)
        d = rfm[0, 1]
        reading[0] = d / 100.0 if d >= 0 else math.nan
        reading[1] = rfm[0, 2]
        cnt[0] += 1
        for i in range(n):
            rfm[i, 0] = 0.0
    return 0


def servo_laws(plugin: Any, slot: Any, sim: Any) -> Laws | str:
    """The ``sitl_servo`` declaration (the motion owns ``bus.thrusters_cmd``, the
    ``rangefinder`` sensor ``bus.rangefinder``)."""
    blk = slot.block
    if slot.period != 1 or slot.offset != 0:
        return "a rate other than every tick"
    motion = next((s for s in sim.slots if s.block is blk and s.plugin.kind == "motion"), None)
    plant = getattr(motion.plugin, "plant", None) if motion is not None else None
    m = int(plugin.params.motors)
    if plant is None or plant.k != m:
        return "its pulses go to a plant without the same number of thrusters"
    pubs = [s for s in sim.slots if s.block is blk
            and "rangefinder/distance_cm" in getattr(s.plugin, "publishes", {})]  # fmt: skip
    if any(type(s.plugin).__name__ != "RangefinderSensor" for s in pubs):
        return "rangefinder readings from a plugin other than 'rangefinder'"
    n = blk.n
    name = f"{plugin.name}.pwm"
    rf = "bus.rangefinder" if pubs else "norf"
    a: dict[str, Any] = {
        "pwm": np.full(m, 1500.0), "reading": np.full(2, np.nan),
        "cnt": np.zeros(1, dtype=np.int64), "plog": np.zeros((MAX_TICKS, n, m)),
    }  # fmt: skip
    if not pubs:
        a["norf"] = np.zeros((n, 3))

    def ready() -> bool:
        return sim._recorder.known(name)

    def inputs(k: int) -> None:
        a["pwm"][:] = plugin.pwm

    def load(k: int) -> None:
        r = plugin.reading
        if r is not None:
            a["reading"][0], a["reading"][1] = r
        a["cnt"][0] = plugin.readings

    def commit(k: int, kstop: int, ticks: int) -> None:
        c = int(a["cnt"][0])
        if c != plugin.readings:
            plugin.readings = c
            plugin.reading = (float(a["reading"][0]), float(a["reading"][1]))

    def finish(ticks: int) -> dict[str, np.ndarray]:
        return {name: a["plog"][:ticks]}

    return Laws(
        laws=[Law("control", servo_control, (
            "pwm", "bus.thrusters_cmd", rf, "reading", "cnt", "plog"))],
        arrays=a, state=("reading", "cnt", *(("norf",) if not pubs else ())), logs=("plog",),
        publishes=("thrusters/cmd",), sources=(Path(__file__),),
        ready=ready, load=load, inputs=inputs, commit=commit, finish=finish,
    )  # fmt: skip
