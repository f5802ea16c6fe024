"""The navigation sensors (``gps``, ``depth_sensor``, ``imu``, ``ahrs``, ``dvl``) in the generated tick.

Each sensor's ``sense`` runs as a law of the ``sense`` hook at t_{k+1} on its due ticks (its
period and offset, as the plugins' ``sense`` phase calls it) over the wire ``truth.nav``
(N, 13: position, attitude quaternion, body velocity, body angular rate, the fields of the
block's truth), which the block's first compiled sensor fills from its motion's truth wires:
:func:`nav_of_usm` (``truth.pos``, ``truth.quat``, ``truth.speed``: velocity (speed, 0, 0), no
angular rate), :func:`nav_of_x6` (the thruster-driven Fossen block's ``truth.x6``) or
:func:`nav_of_rows` (a PythonVehicleSimulator block: ``truth.eta``, ``truth.nu`` and the
quaternion of the rows' Euler angles, ``truth.quat``, which ``pvs_after`` writes).  A law
is the plugin's numpy expressions written per row, in the same order of operations:

* the noise comes from the slot's own per-entity streams, read ahead in place in their
  pre-drawn blocks (:meth:`~marinesim.core.rng.BlockRNG.buffered`, a ``fresh`` array of the
  declaration: no copy) with the plugin's fixed consumption
  per sample (GPS 2 normals, depth 1, AHRS 3, DVL 3, IMU 12, and one uniform each for the
  dropout); a sample that would run past the block hands the tick back, the declaration's
  ``refill`` draws the next block (:meth:`~marinesim.core.rng.BlockRNG.reserve`: the same
  values) and the route goes on compiled from that tick;
* the delay line (``delay``: the sample of t − delay, interpolated between samples) and the
  buffer of the last ``buffer_size`` samples are ring arrays that ``load`` fills from the
  plugin's :class:`~marinesim.sensors.pipeline.DelayLine` and deque and ``commit`` writes back;
* the logged signals hold their last value between samples (the recorder's hold-last);
* ``np.einsum("nji,nj->ni", R, v)`` sums over j from 0.0 in order, ``np.linalg.norm`` of a
  row sums its squares in order (both checked against numpy on 2·10⁵ rows).

A sensor joins the tick when nothing subscribes to its topic (a subscriber, e.g. ``nav_ekf``,
reads the messages through the bus: that scenario stays on the plugins), on a ``usm`` block,
a thruster-driven Fossen block or a PythonVehicleSimulator block (REMUS 100 and the fleet),
with a flat seafloor (the environment's or the DVL's own ``seafloor_depth``).  Every
published value, logged signal and count is the plugins'
(``tests/engine/test_compiled_sensors.py``).
"""

from __future__ import annotations

import math
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

from marinesim.core.frames import rotation_quat_c
from marinesim.core.jitable import register_jitable
from marinesim.engine.compiled.law import Law, Laws, Worlds, log_ticks
from marinesim.engine.plugins.belief_laws import perturb_row
from marinesim.engine.plugins.surftrak_laws import scalar_law
from marinesim.environment.current import force_row

__all__ = ["declare", "load_streams", "refill_streams", "truth_nav_laws"]

_SRC = Path(__file__).resolve().parents[2] / "sensors"

# meta: [0] period (ticks), [1] offset (ticks), [2] period [s], [3] delay / period,
# [4] delay [s], [5] / [6] the lengths of the normal / uniform blocks, [7] dropout
# probability, [8 …] the sensor's own numbers.  cnt: [0] / [1] the read positions in the
# normal / uniform blocks, [2] samples in the delay line, [3] samples kept, [4] truth
# samples held (IMU: up to 3 positions; DVL: 1 once it has a previous position).  pub[j]: 1
# when the call's tick j published (a row delivered), one per tick of a call.
_M0 = 8

#: :func:`marinesim.sensors.pipeline.delay_position` (the delay line's read), compiled-capable.
delay_position = scalar_law("delay_position")


@register_jitable
def _due(k, meta):  # noqa: ANN001, ANN202
    """Due at t_{k+1}, as the plugins' ``sense`` phase decides (every tick at period 1)."""
    kk = k + 1
    p = int(meta[0])
    o = int(meta[1])
    return p == 1 or (kk >= o and (kk - o) % p == 0)


@register_jitable
def _delay(line, cnt, val, out, meta):  # noqa: ANN001, ANN202
    """``out`` = the sample of t − delay (:class:`DelayLine` ``push`` then ``read``), or
    ``val`` itself without a delay."""
    n, kd = val.shape[0], val.shape[1]
    if meta[4] <= 0.0:
        for i in range(n):
            for q in range(kd):
                out[i, q] = val[i, q]
        return
    size = line.shape[0]
    c = cnt[2]
    for i in range(n):
        for q in range(kd):
            line[c % size, i, q] = val[i, q]
    c += 1
    cnt[2] = c
    i0, frac, interp = delay_position(c, size, meta[3])
    for i in range(n):
        for q in range(kd):
            v0 = line[i0 % size, i, q]
            if interp:
                v0 = v0 + (line[(i0 + 1) % size, i, q] - v0) * frac
            out[i, q] = v0


@register_jitable
def _keep(bufv, bufok, buft, cnt, pub, j, val, ok, t_stamp):  # noqa: ANN001, ANN202
    """The plugin's ``_buffer`` and ``_deliver``: keep the sample; ``pub[j]`` = 1 when a row
    was delivered (a publication)."""
    c = cnt[3]
    r = c % bufv.shape[0]
    sent = False
    for i in range(val.shape[0]):
        for q in range(val.shape[1]):
            bufv[r, i, q] = val[i, q]
        bufok[r, i] = ok[i]
        sent = sent or ok[i] != 0.0
    buft[r] = t_stamp
    cnt[3] = c + 1
    pub[j] = 1 if sent else 0


@register_jitable
def _truth_in(nav, c0, smp, line, cnt, dly, meta):  # noqa: ANN001, ANN202
    """``dly`` = columns ``c0 …`` of the truth (``smp``'s width) through the delay line."""
    for i in range(smp.shape[0]):
        for q in range(smp.shape[1]):
            smp[i, q] = nav[i, c0 + q]
    _delay(line, cnt, smp, dly, meta)


@register_jitable
def _sampled(cnt, pub, j, normals, bufv, bufok, buft, val, ok, t_stamp):  # noqa: ANN001, ANN202
    """A sample is done: its draws are used (``normals`` and one uniform), it is kept."""
    cnt[0] += normals
    cnt[1] += 1
    _keep(bufv, bufok, buft, cnt, pub, j, val, ok, t_stamp)


@register_jitable
def _flagged(line, cnt, smp, dly, meta, val, ok, cur, c0, logged, flag):  # noqa: ANN001, ANN202
    """A sample whose column ``flag`` says delivered, through the delay line: ``val`` its
    first columns, ``ok`` the flag, ``cur[:, c0 …]`` its first ``logged`` columns where it
    was delivered (NaN where not)."""
    _delay(line, cnt, smp, dly, meta)
    for i in range(dly.shape[0]):
        got = dly[i, flag] > 0.5
        for q in range(val.shape[1]):
            val[i, q] = dly[i, q]
        for q in range(logged):
            cur[i, c0 + q] = dly[i, q] if got else math.nan
        ok[i] = 1.0 if got else 0.0


@register_jitable
def _short(cnt, meta, normals):  # noqa: ANN001, ANN202
    """True when one more sample would read past the usable noise blocks."""
    return cnt[0] + normals > meta[5] or cnt[1] + 1 > meta[6]


@register_jitable
def _log(j, cur, log):  # noqa: ANN001, ANN202
    for i in range(cur.shape[0]):
        for c in range(cur.shape[1]):
            log[j, i, c] = cur[i, c]


@register_jitable
def _body(nav, i, v0, v1, v2):  # noqa: ANN001, ANN202
    """``np.einsum("nji,nj->ni", R, v)`` of row ``i``: Rᵀ v, each sum from 0.0 in order (R of
    the truth's quaternion, ``nav[i, 3:7]``)."""
    r = rotation_quat_c(nav[i, 3], nav[i, 4], nav[i, 5], nav[i, 6])
    b0 = 0.0
    b0 += r[0] * v0
    b0 += r[3] * v1
    b0 += r[6] * v2
    b1 = 0.0
    b1 += r[1] * v0
    b1 += r[4] * v1
    b1 += r[7] * v2
    b2 = 0.0
    b2 += r[2] * v0
    b2 += r[5] * v1
    b2 += r[8] * v2
    return b0, b1, b2


@register_jitable
def nav_of_usm(k, j, t, h, pos, quat, speed, nav):  # noqa: ANN001, ANN201
    """The truth the sensors sample (``truth.nav``: position, quaternion, body velocity and
    angular rate) of a ``usm`` block: the velocity (speed, 0, 0), no angular rate."""
    for i in range(pos.shape[0]):
        for c in range(3):
            nav[i, c] = pos[i, c]
            nav[i, 10 + c] = 0.0
        for c in range(4):
            nav[i, 3 + c] = quat[i, c]
        nav[i, 7] = speed[i]
        nav[i, 8] = 0.0
        nav[i, 9] = 0.0
    return 0


@register_jitable
def nav_of_x6(k, j, t, h, x6, nav):  # noqa: ANN001, ANN201
    """``truth.nav`` of a Fossen block (quaternion attitude): its state row as it is."""
    for i in range(x6.shape[0]):
        for c in range(13):
            nav[i, c] = x6[i, c]
    return 0


@register_jitable
def nav_of_rows(k, j, t, h, eta, quat, nu, nav):  # noqa: ANN001, ANN201
    """``truth.nav`` of a PythonVehicleSimulator block: the position of ``truth.eta``, the
    quaternion of the rows' Euler angles (``truth.quat``, as the model's ``pose``) and ν."""
    for i in range(eta.shape[0]):
        for c in range(3):
            nav[i, c] = eta[i, c]
        for c in range(4):
            nav[i, 3 + c] = quat[i, c]
        for c in range(6):
            nav[i, 7 + c] = nu[i, c]
    return 0


@register_jitable
def gps_sense(k, j, t, h, meta, normals, uniforms, cnt, pub, line, bufv, bufok, buft, smp, dly, val, ok, cur, log, nav):  # noqa: ANN001, ANN201, E501
    """``gps``: (north, east) + σ·z, a fix at or above ``max_depth`` and not dropped."""
    pub[j] = 0
    if _due(k, meta):
        if _short(cnt, meta, 2):
            return 1
        n = nav.shape[0]
        _truth_in(nav, 0, smp, line, cnt, dly, meta)
        sd, dmax, drop = meta[_M0], meta[_M0 + 1], meta[7]
        npos, upos = cnt[0], cnt[1]
        for i in range(n):
            ne0 = dly[i, 0] + sd * (normals[i, npos] + 0.0)
            ne1 = dly[i, 1] + sd * (normals[i, npos + 1] + 0.0)
            fix = dly[i, 2] <= dmax and (uniforms[i, upos] + 0.0) >= drop
            val[i, 0] = ne0
            val[i, 1] = ne1
            ok[i] = 1.0 if fix else 0.0
            cur[i, 0] = ok[i]
            cur[i, 1] = ne0 if fix else math.nan
            cur[i, 2] = ne1 if fix else math.nan
        _sampled(cnt, pub, j, 2, bufv, bufok, buft, val, ok, t - meta[4])
    _log(j, cur, log)
    return 0


@register_jitable
def depth_sense(k, j, t, h, meta, normals, uniforms, cnt, pub, line, bufv, bufok, buft, smp, dly, val, ok, cur, log, nav):  # noqa: ANN001, ANN201, E501
    """``depth_sensor``: ρ g d / (ρ_assumed g) + bias + σ·z."""
    pub[j] = 0
    if _due(k, meta):
        if _short(cnt, meta, 1):
            return 1
        n = nav.shape[0]
        _truth_in(nav, 2, smp, line, cnt, dly, meta)
        sd, bias, dg, rg, drop = meta[_M0], meta[_M0 + 1], meta[_M0 + 2], meta[_M0 + 3], meta[7]
        npos, upos = cnt[0], cnt[1]
        for i in range(n):
            d = dg * dly[i, 0] / rg + bias + sd * (normals[i, npos] + 0.0)
            good = (uniforms[i, upos] + 0.0) >= drop
            val[i, 0] = d
            ok[i] = 1.0 if good else 0.0
            cur[i, 0] = d if good else math.nan
        _sampled(cnt, pub, j, 1, bufv, bufok, buft, val, ok, t - meta[4])
    _log(j, cur, log)
    return 0


@register_jitable
def ahrs_sense(k, j, t, h, meta, normals, uniforms, cnt, pub, line, bufv, bufok, buft, smp, dly, val, ok, cur, log, nav):  # noqa: ANN001, ANN201, E501
    """``ahrs``: the (normalised) attitude ⊗ a body rotation by N(0, σ²) roll, pitch, yaw."""
    pub[j] = 0
    if _due(k, meta):
        if _short(cnt, meta, 3):
            return 1
        n = nav.shape[0]
        _truth_in(nav, 3, smp, line, cnt, dly, meta)
        s0, s1, s2, yb, drop = meta[_M0], meta[_M0 + 1], meta[_M0 + 2], meta[_M0 + 3], meta[7]
        npos, upos = cnt[0], cnt[1]
        for i in range(n):
            a0, a1, a2, a3 = dly[i, 0], dly[i, 1], dly[i, 2], dly[i, 3]
            nq = math.sqrt(a0 * a0 + a1 * a1 + a2 * a2 + a3 * a3)
            a0, a1, a2, a3 = a0 / nq, a1 / nq, a2 / nq, a3 / nq
            r0 = (normals[i, npos] + 0.0) * s0
            r1 = (normals[i, npos + 1] + 0.0) * s1
            r2 = (normals[i, npos + 2] + 0.0) * s2 + yb
            m0, m1, m2, m3 = perturb_row(a0, a1, a2, a3, r0, r1, r2)
            val[i, 0] = m0
            val[i, 1] = m1
            val[i, 2] = m2
            val[i, 3] = m3
            ok[i] = 1.0 if (uniforms[i, upos] + 0.0) >= drop else 0.0
        _sampled(cnt, pub, j, 3, bufv, bufok, buft, val, ok, t - meta[4])
    _log(j, cur, log)
    return 0


@register_jitable
def imu_sense(k, j, t, h, meta, normals, uniforms, cnt, pub, line, bufv, bufok, buft, smp, dly, val, ok, cur, log, hist, bias, nav):  # noqa: ANN001, ANN201, E501
    """``imu``: f = Rᵀ(a − g e_z), a the second difference of the last three positions at
    the sensor period; noise, bias walks, dropout; the sample (f, ω, delivered) delayed."""
    pub[j] = 0
    if _due(k, meta):
        if _short(cnt, meta, 12):
            return 1
        n = nav.shape[0]
        held = cnt[4]
        if held == 3:  # the oldest goes (the plugin's list keeps three)
            for i in range(n):
                for q in range(3):
                    hist[0, i, q] = hist[1, i, q]
                    hist[1, i, q] = hist[2, i, q]
            held = 2
        for i in range(n):
            for q in range(3):
                hist[held, i, q] = nav[i, q]
        held += 1
        cnt[4] = held
        p = meta[2]
        an, gn, wa, wg, g, drop = (meta[_M0], meta[_M0 + 1], meta[_M0 + 2], meta[_M0 + 3],
                                   meta[_M0 + 4], meta[7])  # fmt: skip
        sq = math.sqrt(p)
        npos, upos = cnt[0], cnt[1]
        for i in range(n):
            if held == 3:
                c0 = (hist[2, i, 0] - 2.0 * hist[1, i, 0] + hist[0, i, 0]) / (p * p)
                c1 = (hist[2, i, 1] - 2.0 * hist[1, i, 1] + hist[0, i, 1]) / (p * p)
                c2 = (hist[2, i, 2] - 2.0 * hist[1, i, 2] + hist[0, i, 2]) / (p * p)
            else:
                c0, c1, c2 = 0.0, 0.0, 0.0
            f0, f1, f2 = _body(nav, i, c0, c1, c2 - g)
            z = normals[i, npos : npos + 12]
            smp[i, 0] = f0 + bias[i, 0] + an * (z[0] + 0.0)
            smp[i, 1] = f1 + bias[i, 1] + an * (z[1] + 0.0)
            smp[i, 2] = f2 + bias[i, 2] + an * (z[2] + 0.0)
            smp[i, 3] = nav[i, 10] + bias[i, 3] + gn * (z[3] + 0.0)
            smp[i, 4] = nav[i, 11] + bias[i, 4] + gn * (z[4] + 0.0)
            smp[i, 5] = nav[i, 12] + bias[i, 5] + gn * (z[5] + 0.0)
            for q in range(3):
                bias[i, q] = bias[i, q] + wa * sq * (z[6 + q] + 0.0)
                bias[i, 3 + q] = bias[i, 3 + q] + wg * sq * (z[9 + q] + 0.0)
                cur[i, q] = bias[i, q]
            smp[i, 6] = 1.0 if (uniforms[i, upos] + 0.0) >= drop else 0.0
        _flagged(line, cnt, smp, dly, meta, val, ok, cur, 3, 6, 6)
        _sampled(cnt, pub, j, 12, bufv, bufok, buft, val, ok, t - meta[4])
    _log(j, cur, log)
    return 0


@register_jitable
def dvl_sense(k, j, t, h, meta, normals, uniforms, cnt, pub, line, bufv, bufok, buft, smp, dly, val, ok, cur, log, prev, field, fxy, nav):  # noqa: ANN001, ANN201, E501
    """``dvl``: the velocity over ground from the truth track (the first sample: the truth
    velocity), bottom lock within the altitudes, else water track (− the current), dropout."""
    pub[j] = 0
    if _due(k, meta):
        if _short(cnt, meta, 3):
            return 1
        n = nav.shape[0]
        p = meta[2]
        (sd, wt, amin, amax, track, floor, cn, ce, has_field, radius, l0, l1, l2,
         drop) = (meta[_M0], meta[_M0 + 1], meta[_M0 + 2], meta[_M0 + 3], meta[_M0 + 4],
                  meta[_M0 + 5], meta[_M0 + 6], meta[_M0 + 7], meta[_M0 + 8], meta[_M0 + 9],
                  meta[_M0 + 10], meta[_M0 + 11], meta[_M0 + 12], meta[7])  # fmt: skip
        npos, upos = cnt[0], cnt[1]
        have_prev = cnt[4] != 0
        nf = field.shape[1]
        px, py, fx, fy = fxy[0], fxy[1], fxy[2], fxy[3]  # (the field's point and force, each row)
        for i in range(n):
            alt = floor - nav[i, 2]
            cur_n = cn
            cur_e = ce
            if has_field != 0.0:
                px[i] = nav[i, 1]
                py[i] = nav[i, 0]
                force_row(i, px, py, field[0, :nf], field[1, :nf], field[2, :nf],
                          field[3, :nf], radius, fx, fy)  # fmt: skip
                cur_n = cur_n + fy[i]
                cur_e = cur_e + fx[i]
            wb0, wb1, wb2 = _body(nav, i, cur_n, cur_e, 0.0)
            if have_prev:
                v0, v1, v2 = _body(nav, i, (nav[i, 0] - prev[i, 0]) / p,
                                   (nav[i, 1] - prev[i, 1]) / p, (nav[i, 2] - prev[i, 2]) / p)
            else:  # the first sample: the truth's body velocity
                v0, v1, v2 = nav[i, 7], nav[i, 8], nav[i, 9]
            for q in range(3):
                prev[i, q] = nav[i, q]
            # v + ω × r (np.cross's products and differences)
            w0, w1, w2 = nav[i, 10], nav[i, 11], nav[i, 12]
            s0 = v0 + (w1 * l2 - w2 * l1)
            s1 = v1 + (w2 * l0 - w0 * l2)
            s2 = v2 + (w0 * l1 - w1 * l0)
            lock = alt >= amin and alt <= amax
            good = (uniforms[i, upos] + 0.0) >= drop
            z0 = normals[i, npos] + 0.0
            z1 = normals[i, npos + 1] + 0.0
            z2 = normals[i, npos + 2] + 0.0
            if lock:
                smp[i, 0] = s0 + sd * z0
                smp[i, 1] = s1 + sd * z1
                smp[i, 2] = s2 + sd * z2
                mode = 1.0
            else:
                smp[i, 0] = s0 - wb0 + wt * z0
                smp[i, 1] = s1 - wb1 + wt * z1
                smp[i, 2] = s2 - wb2 + wt * z2
                mode = 2.0 if track != 0.0 else 0.0
            smp[i, 3] = mode if good else 0.0
            cur[i, 0] = smp[i, 3]
            cur[i, 1] = alt
        cnt[4] = 1
        _flagged(line, cnt, smp, dly, meta, val, ok, cur, 2, 3, 3)
        _sampled(cnt, pub, j, 3, bufv, bufok, buft, val, ok, t - meta[4])
    _log(j, cur, log)
    return 0


@register_jitable
def post_sample(k, j, t, h, meta, val, ok, bval, bok, bnew):  # noqa: ANN001, ANN201
    """A sample published for the block's INS/EKF: the values and rows delivered on the
    topic's wires, ``bnew[0]`` set when a row was delivered (a message; the filter clears it)."""
    if _due(k, meta):
        sent = False
        for i in range(val.shape[0]):
            for q in range(val.shape[1]):
                bval[i, q] = val[i, q]
            bok[i] = ok[i]
            sent = sent or ok[i] != 0.0
        bnew[0] = 1 if sent else 0
    return 0


# ------------------------------------------------------------------------------ declarations
#: Per sensor: (law, topic, delayed width, kept width, normals per sample, logged signals
#: (name, width) in the order of the law's ``cur`` columns).
_KINDS: dict[str, tuple[Any, str, int, int, int, tuple[tuple[str, int], ...]]] = {
    "gps": (gps_sense, "gps/fix", 3, 2, 2, (("fix", 1), ("ne", 2))),
    "depth": (depth_sense, "depth/depth", 1, 1, 1, (("depth", 1),)),
    "ahrs": (ahrs_sense, "ahrs/quat", 4, 4, 3, ()),
    "imu": (imu_sense, "imu/data", 7, 6, 12, (("accel_bias", 3), ("accel", 3), ("gyro", 3))),
    "dvl": (dvl_sense, "dvl/velocity", 4, 4, 3, (("mode", 1), ("altitude", 1), ("vel", 3))),
}


def _own(kind: str, plugin: Any, sim: Any) -> tuple[list[float], np.ndarray] | str:
    """The sensor's own numbers (``meta[8:]``) and, for the DVL, the current field's vectors
    (4, M); or why this setup stays on the plugins."""
    p: Any = plugin.params
    env = sim.env
    none = np.zeros((4, 1))
    if kind == "gps":
        return [p.noise_std, p.max_depth], none
    if kind == "depth":
        rho = env.density if p.assumed_density is None else p.assumed_density
        return [p.noise_std, p.bias, env.density * env.gravity, rho * env.gravity], none
    if kind == "ahrs":
        sig = np.deg2rad([p.roll_std_deg, p.pitch_std_deg, p.yaw_std_deg])
        return [*sig, np.deg2rad(p.yaw_bias_deg)], none
    if kind == "imu":
        return [p.accel_noise_std, p.gyro_noise_std, p.accel_bias_walk, p.gyro_bias_walk,
                env.gravity], none  # fmt: skip
    if p.seafloor_depth is not None:
        floor = float(p.seafloor_depth)
    elif isinstance(env.terrain, (int, float)):
        floor = float(env.terrain)
    else:
        return "a DVL over a bathymetry grid (only a flat seafloor is compiled)"
    fld = env.current_field
    vec = none if fld is None or len(fld) == 0 else np.array([fld.x, fld.y, fld.vx, fld.vy])
    wt = p.noise_std if p.water_track_noise_std is None else p.water_track_noise_std
    arm = [float(x) for x in p.lever_arm]
    return [p.noise_std, wt, p.min_altitude, p.max_altitude, float(p.water_track), floor,
            env.current_north, env.current_east, float(fld is not None),
            float(fld.radius) if fld is not None else 0.0, *arm], vec  # fmt: skip


def _ekf_reader(sim: Any, blk: Any, topic: str) -> bool | str:
    """Whether the block's ``nav_ekf`` alone reads ``topic`` (False: nobody does); or why
    the sensor stays on the plugins (its messages go to another reader through the bus)."""
    if not sim.bus.wanted(topic, blk.name, "local"):
        return False
    subs = sorted({s.owner for s in sim.bus.subscriptions
                   if topic in s.topics and s.block == blk.name})  # fmt: skip
    ekf = [s for s in sim.slots if s.block is blk and type(s.plugin).__name__ == "NavEkfEstimator"]
    if len(ekf) == 1 and subs == [f"{blk.name}.{ekf[0].plugin.name}"]:
        return True
    return f"its {topic!r} messages go to {', '.join(map(repr, subs))} through the bus"


def _sensor_kind(plugin: Any) -> str | None:
    """The sensor kind of a navigation sensor plugin (None for any other plugin)."""
    return getattr(getattr(type(plugin), "compiled_laws", None), "sensor_kind", None)


def _truth_view(sim: Any, blk: Any) -> tuple[Any, tuple[str, ...]] | str:
    """The law that fills ``truth.nav`` from the block's motion's truth wires, and those
    wires; or why the block's sensors stay on the plugins."""
    from marinesim.engine.plugins.usm import UsmMotion
    from marinesim.models.sixdof.motion import FleetMotion, PvsMotion

    motion = next((s.plugin for s in sim.slots if s.block is blk and s.plugin.kind == "motion"), None)
    if isinstance(motion, UsmMotion):
        return nav_of_usm, ("truth.pos", "truth.quat", "truth.speed")
    model = getattr(motion, "motion", None)
    params = getattr(motion, "params", None)
    thrusters = getattr(params, "thrusters", None)
    if thrusters is not None and getattr(getattr(model, "built", None), "attitude", None) == "quaternion":
        return nav_of_x6, ("truth.x6",)  # the thruster-driven Fossen block (sixdof_laws)
    if (isinstance(model, (PvsMotion, FleetMotion)) and thrusters is None
            and getattr(params, "actuators", None) is None):  # fmt: skip
        # remus_laws / fleet_laws: pvs_after writes the pose, its quaternion and ν
        return nav_of_rows, ("truth.eta", "truth.quat", "truth.nu")
    return (
        "a navigation sensor joins the compiled tick on a usm block, a thruster-driven "
        "Fossen block (quaternion attitude) or a PythonVehicleSimulator block only"
    )


def load_streams(
    rng: Any, arrays: dict[str, np.ndarray], meta: np.ndarray, at: int, cnt: np.ndarray,
    dists: tuple[str, ...] = ("normal", "uniform"),
) -> None:
    """Point a declaration's ``normals`` / ``uniforms`` at the slot's own pre-drawn blocks, read
    in place (a ``fresh`` array: no copy; beyond a block's end the law hands back and
    ``refill`` draws the next), their lengths into ``meta[at + c]`` and the read positions
    into ``cnt[c]``."""
    for c, dist in enumerate(dists):
        buf, pos = rng.buffered(dist)
        arrays[f"{dist}s"] = buf
        meta[at + c] = buf.shape[1]
        cnt[c] = pos


def refill_streams(rng: Any, normal: int, uniform: int = 0) -> bool:
    """A declaration's ``refill``: the next block of each stream :func:`load_streams` points
    at, drawn when fewer than the next sample's ``normal`` / ``uniform`` values are left
    (:meth:`~marinesim.core.rng.BlockRNG.reserve`); True when one was drawn."""
    if rng is None:
        return False
    drawn = rng.reserve("normal", normal)
    return (rng.reserve("uniform", uniform) if uniform else False) or drawn


def truth_nav_laws(sim: Any, slot: Any, arrays: dict[str, np.ndarray]) -> list[Law] | str:
    """The law that fills ``truth.nav`` when ``slot`` is its block's first compiled sensor
    (it fills the wire for them all: every navigation sensor and ``noisy_state``), with the
    motion's truth wires it reads added to ``arrays``; ``[]`` for the others; or why the
    block's sensors stay on the plugins."""
    blk = slot.block
    view = _truth_view(sim, blk)
    if isinstance(view, str):
        return view
    first = next(s for s in sim.slots if s.block is blk and _sensor_kind(s.plugin) is not None)
    if first is not slot:
        return []
    n = blk.n
    fn, wires = view
    shapes = {"truth.pos": (n, 3), "truth.quat": (n, 4), "truth.speed": (n,),
              "truth.x6": (n, 13), "truth.eta": (n, 6), "truth.nu": (n, 6)}  # fmt: skip
    for w in wires:  # (the motion's declaration owns them)
        arrays[w] = np.zeros(shapes[w])
    return [Law("sense", fn, (*wires, "truth.nav"))]


def declare(plugin: Any, slot: Any, sim: Any, kind: str) -> Laws | str:
    """The declaration of one navigation sensor (``kind``: gps, depth, ahrs, imu, dvl), or
    why it stays on the plugins here."""
    law, topic, kd, kv, nz, sigs = _KINDS[kind]
    blk = slot.block
    view = _truth_view(sim, blk)
    if isinstance(view, str):
        return view
    ekf = _ekf_reader(sim, blk, topic)
    if isinstance(ekf, str):
        return ekf
    own = _own(kind, plugin, sim)
    if isinstance(own, str):
        return own
    numbers, vec = own
    p: Any = plugin.params
    n = blk.n
    st = slot.ctx.state
    names = [f"{plugin.name}.{s}" for s, _w in sigs]
    ends = np.cumsum([0, *(w for _s, w in sigs)])
    cols = {nm: slice(int(c0), int(c1)) for nm, c0, c1 in zip(names, ends[:-1], ends[1:], strict=True)}
    width = int(ends[-1])
    delay = float(p.delay)
    period = float(slot.ctx.period)
    size = int(np.ceil(delay / period)) + 2 if delay > 0 else 1
    nbuf = int(p.buffer_size)
    mt = log_ticks(n, max(width, 1))
    meta = np.zeros(_M0 + len(numbers))
    meta[0:5] = (slot.period, slot.offset, period, delay / period, delay)
    meta[7] = p.dropout_probability
    meta[_M0:] = numbers
    a: dict[str, np.ndarray] = {
        "meta": meta, "normals": np.zeros((n, 1)), "uniforms": np.zeros((n, 1)),
        "cnt": np.zeros(5, dtype=np.int64), "pub": np.zeros(mt, dtype=np.int64),
        "line": np.zeros((size, n, kd)),
        "bufv": np.zeros((nbuf, n, kv)), "bufok": np.zeros((nbuf, n)), "buft": np.zeros(nbuf),
        "smp": np.zeros((n, kd)), "dly": np.zeros((n, kd)), "val": np.zeros((n, kv)),
        "ok": np.zeros(n), "cur": np.zeros((n, width)), "log": np.zeros((mt, n, width)),
    }  # fmt: skip
    args = ["meta", "normals", "uniforms", "cnt", "pub", "line", "bufv", "bufok", "buft", "smp",
            "dly", "val", "ok", "cur", "log"]  # fmt: skip
    state = ["cnt", "line", "bufv", "bufok", "buft", "cur"]
    if kind == "imu":
        a["hist"], a["bias"] = np.zeros((3, n, 3)), np.zeros((n, 6))
        args += ["hist", "bias"]
        state += ["hist", "bias"]
    elif kind == "dvl":
        a["prev"], a["field"] = np.zeros((n, 3)), np.ascontiguousarray(vec, dtype=float)
        a["fxy"] = np.zeros((4, n))
        args += ["prev", "field", "fxy"]
        state += ["prev"]
    args += ["truth.nav"]
    a["truth.nav"] = np.zeros((n, 13))
    fill = truth_nav_laws(sim, slot, a)
    if isinstance(fill, str):
        return fill
    laws = [*fill, Law("sense", law, tuple(args))]
    if ekf:  # the block's INS/EKF reads the samples from wires (ekf_laws), not the bus
        wire = f"bus.{topic}"
        a[wire], a[wire + ".ok"] = np.zeros((n, kv)), np.zeros(n)
        a[wire + ".new"] = np.zeros(1, dtype=np.int64)
        laws.append(Law("sense", post_sample, ("meta", "val", "ok", wire, wire + ".ok", wire + ".new")))
        state.append(wire + ".new")
    rec = sim._recorder

    def ready() -> bool:
        need = {"imu": ("bias_a", "p_hist"), "dvl": ("p_prev",)}.get(kind, ())
        return (
            slot.rng is not None
            and "buffer" in st
            and (delay <= 0 or "line" in st)
            and all(x in st and st[x] is not None for x in need)
            and all(rec.known(nm) for nm in names)
        )

    def load(k: int) -> None:
        cnt = a["cnt"]
        load_streams(slot.rng, a, meta, 5, cnt)
        if delay > 0:
            line = st["line"]
            a["line"][...] = line.buf
            cnt[2] = line.count
        kept = list(st["buffer"])
        for r, (ts, v, okm) in enumerate(kept):
            a["buft"][r] = ts
            a["bufv"][r] = v
            a["bufok"][r] = okm
        cnt[3] = len(kept)
        if ekf:
            a[f"bus.{topic}.new"][0] = 0  # (the filter took the last message)
        for nm, sl in cols.items():
            held = rec.last(blk.name, nm)
            a["cur"][:, sl] = np.nan if held is None else np.reshape(held, (n, -1))
        if kind == "imu":
            hist = st["p_hist"]
            for r, x in enumerate(hist):
                a["hist"][r] = x
            cnt[4] = len(hist)
            a["bias"][:, :3] = st["bias_a"]
            a["bias"][:, 3:] = st["bias_g"]
        elif kind == "dvl":
            a["prev"][...] = st["p_prev"]
            cnt[4] = 1

    def commit(k: int, kstop: int, ticks: int) -> None:
        cnt = a["cnt"]
        slot.rng.set_position("normal", int(cnt[0]))
        slot.rng.set_position("uniform", int(cnt[1]))
        if delay > 0:
            line = st["line"]
            line.buf[...] = a["line"]
            line.count = int(cnt[2])
        c = int(cnt[3])
        kept: deque[tuple[float, np.ndarray, np.ndarray]] = deque(maxlen=nbuf)
        for i in range(max(0, c - nbuf), c):
            r = i % nbuf
            kept.append((float(a["buft"][r]), a["bufv"][r].copy(), a["bufok"][r] > 0.5))
        st["buffer"] = kept
        if kind == "imu":
            st["p_hist"] = [a["hist"][r].copy() for r in range(int(cnt[4]))]
            st["bias_a"] = a["bias"][:, :3].copy()
            st["bias_g"] = a["bias"][:, 3:].copy()
        elif kind == "dvl":
            st["p_prev"] = a["prev"].copy()

    def counts(k: int, kstop: int) -> dict[str, int]:
        return {topic: int(a["pub"][: kstop - k].sum())}

    def refill() -> bool:  # the next sample's draws (nz normals, one uniform), if short
        return refill_streams(slot.rng, nz, 1)

    def finish(ticks: int) -> dict[str, np.ndarray]:
        return {nm: a["log"][:ticks, :, sl] for nm, sl in cols.items()}

    # on CUDA: the read positions and sample counts are every world's (the worlds draw and
    # sample in step); a tick published where any world's row delivered (pub: the maximum)
    layout = Worlds(
        n, slot.ctx.n_worlds, shared=("meta", "field"), world=("cnt", "buft", f"bus.{topic}.new"),
        most=("pub",), log_axis=1, axes=tuple((x, 1) for x in ("line", "bufv", "bufok", "hist", "fxy")),
    )  # fmt: skip
    return Laws(
        laws, a, state=tuple(state), logs=("log",),
        unheard=() if ekf else (topic,), counts=counts, max_ticks=mt, fresh=("normals", "uniforms"),
        sources=(_SRC,), ready=ready, refill=refill,
        load=load, commit=commit, finish=finish, gpu=layout,
    )  # fmt: skip
