"""Compiled pieces of :meth:`EnginePlant.step_raw`'s direct frames (numba required).

A direct frame is three calls of compiled code, each with few arguments: :func:`motor_pulses`
(the datagram's pulses through the servo map into the servo law's array), the generated
tick's ``tick_loop`` over its tables (:meth:`CompiledRoute.direct`), and
:func:`engine_reply` (the reply's numbers from the motion law's state arrays, as the motion's ``commit`` and
:meth:`EnginePlant.reply` would compute them from the truth, and its bytes as
``encode_reply`` writes them: :mod:`~marinesim.interop.sitl.reprtext`).
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from marinesim.core.frames import euler_from_quat_c, rotation_quat_c
from marinesim.interop.sitl.plant import sent_range
from marinesim.interop.sitl.reprtext import write_reply
from marinesim.models.sixdof.motion import specific_force_c

__all__ = ["engine_reply", "motor_pulses", "reply_pieces"]


@numba.njit(cache=True)
def motor_pulses(data: Any, raw: Any, chan: Any, dirs: Any, apwm: Any, spwm: Any) -> None:
    """Pulses of a validated servo datagram (``bytes``) into ``raw`` [µs], then per motor
    (:meth:`ServoMap.motor_pwm`: no pulse or a channel beyond the packet → 1500 µs, a reversed
    motor mirrored about 1500 µs) into ``apwm`` and ``spwm``."""
    nch = (len(data) - 8) // 2
    for i in range(nch):
        raw[i] = float(data[8 + 2 * i] | (data[9 + 2 * i] << 8))
    for m in range(chan.shape[0]):
        c = chan[m]
        v = 1500.0
        if 0 <= c < nch and raw[c] > 0:
            v = 1500.0 + dirs[m] * (raw[c] - 1500.0)
        apwm[m] = v
        spwm[m] = v


#: The reply's text between its numbers (:func:`engine_reply`): without ``rng_1`` (16
#: numbers), then with it (17).
_PIECES_NORNG = ('\n{"timestamp":', ',"imu":{"gyro":[', ",", ",", '],"accel_body":[', ",", ",",
                 ']},"position":[', ",", ",", '],"attitude":[', ",", ",", '],"velocity":[', ",",
                 ",", "]}\n")  # fmt: skip
_PIECES_RNG = (*_PIECES_NORNG[:-1], '],"rng_1":', "}\n")


def reply_pieces() -> tuple[np.ndarray, np.ndarray]:
    """``(pieces, starts)`` of :func:`engine_reply`: the texts' bytes, and per layout (row 0
    without ``rng_1``, row 1 with) where each text starts (and the last one ends)."""
    texts = [*_PIECES_NORNG, *_PIECES_RNG]
    blob = "".join(texts).encode("ascii")
    ends = np.cumsum([0, *(len(t) for t in texts)])
    starts = np.zeros((2, 19), dtype=np.int64)
    starts[0, :18] = ends[: len(_PIECES_NORNG) + 1]
    starts[1, :19] = ends[len(_PIECES_NORNG) :]
    return np.frombuffer(blob, dtype=np.uint8).copy(), starts


@numba.njit(cache=True)
def engine_reply(
    x: Any, xq: Any, reading: Any, cnt: Any, cfg: Any, t: float, faults: Any, out: Any,
    pieces: Any, starts: Any, buf: Any,
) -> int:  # fmt: skip
    """``out`` = [t, gyro (3), accel_body (3), position (3), attitude (3), NED velocity (3),
    rng_1, have rng_1] of the first row, and the reply's bytes in ``buf``: their length, or
    −1 when a number needs Python's ``repr`` (:func:`~.reprtext.write_reply`).

    ``x`` / ``xq``: the Fossen motion law's state rows (position, quaternion, ν) at the end of
    the tick and at its last substep's start; the specific force is the motion's
    ``specific_force`` (v̇ + ω × v − g Rᵀ e_z over the step, :mod:`models.sixdof.motion`) on
    the same floats; ``reading`` / ``cnt``: the servo law's newest rangefinder reading and
    the readings seen; ``cfg``: [h (the substep) [s], g [m/s²], ``sq_min``,
    ``out_of_range``]; ``t``: the reply's time [s]."""
    h, g, sq_min, oor = cfg[0], cfg[1], cfg[2], cfg[3]
    q0, q1, q2, q3 = x[0, 3], x[0, 4], x[0, 5], x[0, 6]
    u, v, w = x[0, 7], x[0, 8], x[0, 9]
    p, q, r = x[0, 10], x[0, 11], x[0, 12]
    rot = rotation_quat_c(q0, q1, q2, q3)
    out[0] = t
    out[1], out[2], out[3] = p, q, r
    out[4], out[5], out[6] = specific_force_c(
        u, v, w, p, q, r, xq[0, 7], xq[0, 8], xq[0, 9], h, g, rot[6], rot[7], rot[8]
    )
    out[7], out[8], out[9] = x[0, 0], x[0, 1], x[0, 2]
    out[10], out[11], out[12] = euler_from_quat_c(q0, q1, q2, q3)
    out[13] = rot[0] * u + rot[1] * v + rot[2] * w
    out[14] = rot[3] * u + rot[4] * v + rot[5] * w
    out[15] = rot[6] * u + rot[7] * v + rot[8] * w
    if cnt[0] > 0:
        out[16] = sent_range(reading[0], reading[1], sq_min, t, faults, oor)
        out[17] = 1.0
        return write_reply(out, 17, pieces, starts[1], buf)
    out[16] = 0.0
    out[17] = 0.0
    return write_reply(out, 16, pieces, starts[0], buf)


def entry(fn: Any) -> Any:
    """The compiled entry point of a dispatcher with one overload (no type dispatch), or
    the dispatcher itself."""
    ovl = getattr(fn, "overloads", {})
    return next(iter(ovl.values())).entry_point if len(ovl) == 1 else fn
