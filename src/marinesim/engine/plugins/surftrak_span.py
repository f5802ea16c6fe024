"""The SURFTRAK block as one compiled span of engine ticks.

A block (any number of vehicles) whose plugins are exactly ``sitl_vertical`` (motion),
``rangefinder`` (sensor) and ``surftrak`` (controller) can run many ticks in one call of
:func:`_span` — every vehicle its own loop, on all cores from :data:`PARALLEL_MIN` vehicles: the
same engine tick — the controller's 400 Hz loop (message handling, 20 Hz rangefinder cycle,
ArduSub's vertical autopilot, detector, CTUN log), the heave step, the rangefinder's delay
line and injection at t_{k+1}, the frame the recorder keeps — over floats, calling the pure
control-law functions the plugins' objects call (posz, depth_hold, rangefinder_health,
surftrak, heave, rangefinder, pipeline), compiled from their own source with numba.

The span hands the tick back to the plugins (it returns before the tick, nothing of it
done) whenever something only they do is due: the mode switch and, in SURFTRAK, setting a
rangefinder target (first target, pilot release), which send GCS messages; a non-finite
state; the end of the noise block; a full recorder chunk.  The block stops at the first such
tick of any vehicle (the others are replayed up to it).  The engine then runs that tick
through the plugins and tries the span again.  Both routes give bit-identical logs, and
vehicle i of a block of N is bit-identical to a block of one.

``Simulation.compiled`` chooses: None (default) uses the span where it applies and numba is
installed (``MARINESIM_JIT=0`` turns it off), True requires it (ConfigError saying why not),
False never uses it.
"""

from __future__ import annotations

import math
import os
import types
import warnings
from typing import Any

import numpy as np

from marinesim.control.depth_hold import althold_target, detector_step, motors_step
from marinesim.control.posz import climb_rate_step, update_step
from marinesim.control.rangefinder_health import alt_ok_of, health_step, message_step
from marinesim.control.surftrak import (
    SURFTRAK,
    ArduSubVertical,
    offset_target_step,
    surface_bottom_step,
    take_step,
)
from marinesim.core.errors import ConfigError, ConfigWarning
from marinesim.engine.span import register_span
from marinesim.models.heave import step_zv_raw
from marinesim.sensors.pipeline import delay_position
from marinesim.sensors.rangefinder import inject_values

__all__ = ["SurftrakSpan", "span_for"]

TICK_US = 2500.0
#: Vehicles from which the span runs them on all cores (numba ``prange``).
PARALLEL_MIN = 16
#: Packed autopilot state: (object, attribute, is_bool).
_AP_STATE = (
    [("ap", name, name == "pilot_in_control") for name in (
        "z", "vz", "az", "target_cm", "pilot_in_control", "pilot_start_z")]
    + [("zctl", name, name == "reset_filters") for name in (
        "pos_target", "vel_desired", "accel_desired", "off", "v_off", "a_off", "off_target",
        "limit", "e_p", "e_v", "vel_target", "accel_target", "i_acc", "ev_f", "ea_f",
        "reset_filters", "throttle")]
    + [("motors", name, False) for name in ("throttle", "thrust", "limit")]
    + [("detector", name, name != "count") for name in ("at_surface", "at_bottom", "count")]
    + [("health", name, name in ("alt_healthy", "have_offset")) for name in (
        "msg_dist", "msg_min", "msg_max", "msg_sq", "last_msg_us", "status", "distance_cm",
        "sq", "valid_count", "alt_healthy", "last_healthy_us", "filt_cm", "inertial_alt_cm",
        "terrain_offset_cm", "have_offset")]
)  # fmt: skip
#: Harness part of the packed state, before the autopilot's: heave (z, v, a), the reading
#: waiting in the controller's inbox (flag, distance cm, quality) and the readings so far.
_HARNESS = ("z", "v", "a", "has_msg", "msg_cm", "msg_q", "readings")
#: Recorded signals of the span, in the order of its hold-last vector ``cur``:
#: (signal, component, plugin or None for the engine's own).
SIGNALS = (
    ("truth.pos", 0), ("truth.pos", 1), ("truth.pos", 2), ("truth.heading", 0),
    ("truth.speed", 0), ("active", 0), ("rangefinder.terrain", 0),
    ("surftrak.ThI", 0), ("surftrak.ThO", 0), ("surftrak.DAlt", 0), ("surftrak.Alt", 0),
    ("surftrak.DSAlt", 0), ("surftrak.SAlt", 0), ("surftrak.TAlt", 0), ("surftrak.DCRt", 0),
    ("surftrak.CRt", 0), ("surftrak.healthy", 0), ("surftrak.mode_state", 0),
    ("rangefinder.rf_cm", 0), ("rangefinder.signal_quality", 0), ("rangefinder.sub_cm", 0),
    ("rangefinder.terrain_cm", 0),
)  # fmt: skip


def _span(
    k, kend, dt, start, k0, iv, switch_after, surftrak, rows, heights, interval, attrib0,
    climbs, normals, zbuf, consts, hcoef, rfcoef, shaping, loops, sv, counters, cur,
    tbuf, bufs, comps, known, every, stops,
):  # noqa: ANN001, ANN202 (numba-compiled; floats, ints and float arrays)
    """Run engine ticks k… of every vehicle of the block until ``kend`` or its hand-back.

    ``stops[i]`` is the tick vehicle i reached.  Vehicles are independent (one row each of
    ``sv``, ``counters``, ``cur``, ``zbuf``'s columns, ``normals``); the caller replays the
    span up to the smallest stop when they differ, so the block stops at one tick.
    """
    for i in prange(sv.shape[0]):  # noqa: F821 (numba.prange when compiled parallel)
        stops[i] = _span_row(
            i, k, kend, dt, start, k0, iv, switch_after, surftrak, rows, heights, interval,
            attrib0, climbs, normals[i], zbuf[:, i], consts, hcoef, rfcoef, shaping, loops,
            sv[i], counters[i], cur[i], tbuf, bufs, comps, known, every,
        )  # fmt: skip


def _span_row(
    i, k, kend, dt, start, k0, iv, switch_after, surftrak, rows, heights, interval, attrib0,
    climbs, normals, zbuf, consts, hcoef, rfcoef, shaping, loops, sv, counters, cur,
    tbuf, bufs, comps, known, every,
):  # noqa: ANN001, ANN202 (numba-compiled; floats, ints and float arrays)
    """Run engine ticks k… of vehicle ``i`` (row ``i`` of the recorder's buffers) until
    ``kend`` or a hand-back; returns the tick reached.

    ``sv``, ``counters`` (normal position, delay-line count, recorder row, recorder frames,
    readings made, last frame skipped, non-finite), ``cur`` and the recorder buffers then
    hold the state at the start of that tick — except after a non-finite step
    (``counters[6]`` = 1): then the state is mixed and the caller replays the span with
    ``kend`` = the tick returned.
    """
    surftrak_depth, surface_depth, msg_min_cm, msg_max_cm, back = (
        consts[0], consts[1], consts[2], consts[3], consts[4]
    )  # fmt: skip
    param_min, param_max, sq_min = consts[6], consts[7], consts[8]
    enabled, motors_a, surface_m, contact_floor = consts[9] != 0.0, consts[10], consts[11], consts[12]
    has_contact = not math.isnan(contact_floor)
    z, v, a = sv[0], sv[1], sv[2]
    has_msg, msg_cm, msg_q, readings = sv[3] != 0.0, sv[4], sv[5], sv[6]
    o = 7
    ap_z, ap_vz, ap_az, target_cm = sv[o], sv[o + 1], sv[o + 2], sv[o + 3]
    pic, pilot_start_z = sv[o + 4] != 0.0, sv[o + 5]
    pos_target, vel_desired, accel_desired, off, v_off, a_off, off_target = (
        sv[o + 6], sv[o + 7], sv[o + 8], sv[o + 9], sv[o + 10], sv[o + 11], sv[o + 12]
    )  # fmt: skip
    z_limit, e_p, e_v, vel_target, accel_target, i_acc, ev_f, ea_f = (
        sv[o + 13], sv[o + 14], sv[o + 15], sv[o + 16], sv[o + 17], sv[o + 18], sv[o + 19],
        sv[o + 20],
    )  # fmt: skip
    reset_filters, z_throttle = sv[o + 21] != 0.0, sv[o + 22]
    m_throttle, m_thrust, m_limit = sv[o + 23], sv[o + 24], sv[o + 25]
    at_surface, at_bottom, d_count = sv[o + 26] != 0.0, sv[o + 27] != 0.0, sv[o + 28]
    msg_dist, msg_min, msg_max, msg_sq, last_msg_us = (
        sv[o + 29], sv[o + 30], sv[o + 31], sv[o + 32], sv[o + 33]
    )  # fmt: skip
    status, distance_cm, sq, valid_count = sv[o + 34], sv[o + 35], sv[o + 36], sv[o + 37]
    alt_healthy, last_healthy_us, filt_cm = sv[o + 38] != 0.0, sv[o + 39], sv[o + 40]
    inertial_alt_cm, terrain_offset_cm, have_offset = (
        sv[o + 41], sv[o + 42], sv[o + 43] != 0.0
    )  # fmt: skip
    npos, zcount, row, frames, made, skipped = (
        counters[0], counters[1], counters[2], counters[3], counters[4], counters[5]
    )  # fmt: skip
    zsize = zbuf.shape[0]
    nrow = rows.shape[0]
    nh = len(heights)
    nnorm = normals.shape[0]
    cap = tbuf.shape[0]
    nsig = len(comps)
    k_first = k
    nonfinite = False
    # the next reading's tick and the recorder's decimation phase (no division per tick)
    next_due = k0 if k + 1 <= k0 else k0 + ((k + 1 - k0 + iv - 1) // iv) * iv
    phase = frames % every
    while True:
        if k >= kend or row >= cap:
            break
        # what the control part changes before it may hand back (restored if it does)
        saved = (
            readings, has_msg, msg_dist, msg_min, msg_max, msg_sq, last_msg_us, status,
            distance_cm, sq, valid_count, alt_healthy, filt_cm, last_healthy_us,
            terrain_offset_cm, have_offset, inertial_alt_cm, ap_z,
        )  # fmt: skip
        due = k + 1 == next_due  # a reading at t_{k+1}
        if due and (npos >= nnorm or not known[18]):
            break  # the noise block is used up (the plugin draws the next), or a first reading
        if k % 40 == 0 and not known[7]:
            break  # the controller's first CTUN row
        now_us = k * TICK_US
        zc = z * 100.0  # belief = truth: −(−z)·100
        vc = 0.0 - (-v) * 100.0
        ac = 0.0 - (-a) * 100.0
        # ---- control: the reading in the inbox, 20 Hz cycle, switch
        switch = False
        if has_msg:
            readings += 1.0
            switch = readings == switch_after
            if msg_cm >= 0:
                msg_dist, msg_min, msg_max, msg_sq, last_msg_us = message_step(
                    True, now_us, msg_cm, msg_min_cm, msg_max_cm, msg_q, param_min, param_max,
                    msg_dist, msg_min, msg_max, msg_sq, last_msg_us,
                )  # fmt: skip
            has_msg = False
        if k % 20 == 0:
            ap_z = zc
            (
                status, distance_cm, sq, valid_count, alt_healthy, filt_cm, last_healthy_us,
                terrain_offset_cm, have_offset,
            ) = health_step(
                now_us, ap_z, msg_dist, msg_min, msg_max, msg_sq, last_msg_us, valid_count,
                filt_cm, last_healthy_us, terrain_offset_cm, have_offset, sq_min,
            )  # fmt: skip
            inertial_alt_cm = ap_z
        if switch:
            (
                readings, has_msg, msg_dist, msg_min, msg_max, msg_sq, last_msg_us, status,
                distance_cm, sq, valid_count, alt_healthy, filt_cm, last_healthy_us,
                terrain_offset_cm, have_offset, inertial_alt_cm, ap_z,
            ) = saved  # fmt: skip
            break
        climb = climbs[k - k_first] if climbs.shape[0] > 0 else 0.0
        centred = abs(climb) < 0.05
        if surftrak:
            if centred and pic:
                (
                    readings, has_msg, msg_dist, msg_min, msg_max, msg_sq, last_msg_us, status,
                    distance_cm, sq, valid_count, alt_healthy, filt_cm, last_healthy_us,
                    terrain_offset_cm, have_offset, inertial_alt_cm, ap_z,
                ) = saved  # fmt: skip
                break
            ok = alt_ok_of(alt_healthy, last_healthy_us, now_us, enabled)
            if (
                centred and not at_surface and not at_bottom and ok and target_cm <= 0
                and inertial_alt_cm < surftrak_depth
            ):  # fmt: skip
                (
                    readings, has_msg, msg_dist, msg_min, msg_max, msg_sq, last_msg_us, status,
                    distance_cm, sq, valid_count, alt_healthy, filt_cm, last_healthy_us,
                    terrain_offset_cm, have_offset, inertial_alt_cm, ap_z,
                ) = saved  # fmt: skip
                break
        # ---- ArduSubVertical.run_climb, detect
        ap_z, ap_vz, ap_az = zc, vc, ac
        sat = m_limit != 0
        z_limit = m_limit
        if surftrak:
            other, pos_target, target_cm, off, off_target = surface_bottom_step(
                centred, at_surface, at_bottom, zc, pos_target, target_cm, off, off_target,
                surface_depth,
            )  # fmt: skip
            if other and alt_ok_of(alt_healthy, last_healthy_us, now_us, enabled):
                off_target = offset_target_step(
                    True, target_cm, terrain_offset_cm, off_target, surftrak_depth
                )
            pic, pilot_start_z = take_step(centred, target_cm, pic, zc, pilot_start_z)
        else:
            pos_target = althold_target(climb, pos_target, zc, at_surface, at_bottom, surface_depth)
        pos_target, vel_desired, accel_desired, off, v_off, a_off = climb_rate_step(
            climb, pos_target, vel_desired, accel_desired, off, v_off, a_off, off_target,
            z_limit, e_p, e_v, shaping,
        )  # fmt: skip
        (
            pos_target, e_p, vel_target, ev_f, accel_target, ea_f, i_acc, z_throttle,
        ) = update_step(
            zc, vc, ac, sat, pos_target, vel_desired, accel_desired, ev_f, ea_f, i_acc,
            reset_filters, loops,
        )  # fmt: skip
        e_v = ev_f
        reset_filters = False
        m_throttle, m_thrust, m_limit = motors_step(z_throttle, m_throttle, motors_a)
        at_surface, at_bottom, d_count = detector_step(
            z, v, m_limit, at_surface, at_bottom, d_count, surface_m
        )
        if k % 40 == 0:  # the CTUN row
            healthy = alt_ok_of(alt_healthy, last_healthy_us, now_us, enabled)
            cur[7] = z_throttle
            cur[8] = m_throttle
            cur[9] = pos_target * 0.01
            cur[10] = zc * 0.01
            cur[11] = target_cm * 0.01
            cur[12] = distance_cm * 0.01
            cur[13] = terrain_offset_cm * 0.01
            cur[14] = np.trunc(vel_target)
            cur[15] = np.trunc(vc)
            cur[16] = 1.0 if healthy else 0.0
            if surftrak:
                cur[17] = 1.0 + (target_cm > 0) + 1.0 * pic
            else:
                cur[17] = 0.0
        # ---- physics: the heave step over the hard floor at t_k + h
        t1m = (start + k * dt) + dt
        j = max(int(math.floor((t1m - attrib0) / interval + 1e-9)), 0)
        floor = heights[j % nh]
        if has_contact:
            floor = max(floor, contact_floor)
        z1, v1, a1 = step_zv_raw(hcoef, z, v, m_thrust, floor, dt)
        if not (math.isfinite(z1) and math.isfinite(v1) and math.isfinite(a1)):
            nonfinite = True  # the caller replays up to tick k; the plugins run it
            break
        z, v, a = z1, v1, a1
        # ---- sense at t_{k+1}: delay line, terrain, reading
        t1 = start + (k + 1) * dt
        zbuf[zcount % zsize] = z
        zcount += 1
        if t1 != t1m:  # (k+1)·dt and k·dt + dt differ in the last bit: the sensor's own time
            j = max(int(math.floor((t1 - attrib0) / interval + 1e-9)), 0)
        cur[6] = heights[j % nh]
        if due:
            next_due += iv
            rowv = rows[((k + 1 - k0) // iv) % nrow]
            i0, frac, interp = delay_position(zcount, zsize, back)
            zd = zbuf[i0 % zsize]
            if interp:
                zd = zd + (zbuf[(i0 + 1) % zsize] - zd) * frac
            sent, cm, q = inject_values(rowv, zd, normals[npos], rfcoef)
            npos += 1
            made += 1
            msg_cm = cm if sent else -1.0
            msg_q = q
            has_msg = True
            cur[18] = msg_cm
            cur[19] = q
            cur[20] = zd * 100.0
            cur[21] = rowv * 100.0
        # ---- log: the frame at t_{k+1}
        cur[2] = -z
        if phase == 0:
            for s in range(nsig):
                bufs[s][comps[s], row, i] = cur[s]
            if i == 0:
                tbuf[row] = t1
            row += 1
            skipped = 0
        else:
            skipped = 1
        frames += 1
        phase = 0 if phase + 1 == every else phase + 1
        k += 1
    # ---- commit: the state at the start of tick k
    sv[0], sv[1], sv[2] = z, v, a
    sv[3], sv[4], sv[5], sv[6] = 1.0 if has_msg else 0.0, msg_cm, msg_q, readings
    sv[o], sv[o + 1], sv[o + 2], sv[o + 3] = ap_z, ap_vz, ap_az, target_cm
    sv[o + 4], sv[o + 5] = 1.0 if pic else 0.0, pilot_start_z
    sv[o + 6], sv[o + 7], sv[o + 8], sv[o + 9] = pos_target, vel_desired, accel_desired, off
    sv[o + 10], sv[o + 11], sv[o + 12], sv[o + 13] = v_off, a_off, off_target, z_limit
    sv[o + 14], sv[o + 15], sv[o + 16], sv[o + 17] = e_p, e_v, vel_target, accel_target
    sv[o + 18], sv[o + 19], sv[o + 20] = i_acc, ev_f, ea_f
    sv[o + 21], sv[o + 22] = 1.0 if reset_filters else 0.0, z_throttle
    sv[o + 23], sv[o + 24], sv[o + 25] = m_throttle, m_thrust, m_limit
    sv[o + 26], sv[o + 27] = 1.0 if at_surface else 0.0, 1.0 if at_bottom else 0.0
    sv[o + 28] = d_count
    sv[o + 29], sv[o + 30], sv[o + 31], sv[o + 32] = msg_dist, msg_min, msg_max, msg_sq
    sv[o + 33], sv[o + 34], sv[o + 35], sv[o + 36] = last_msg_us, status, distance_cm, sq
    sv[o + 37], sv[o + 38] = valid_count, 1.0 if alt_healthy else 0.0
    sv[o + 39], sv[o + 40], sv[o + 41] = last_healthy_us, filt_cm, inertial_alt_cm
    sv[o + 42], sv[o + 43] = terrain_offset_cm, 1.0 if have_offset else 0.0
    counters[0], counters[1], counters[2] = npos, zcount, row
    counters[3], counters[4], counters[5] = frames, made, skipped
    counters[6] = 1 if nonfinite else 0
    return k


class SurftrakSpan:
    """Drives :func:`_span` for one SURFTRAK block of a built simulation.

    Parameters
    ----------
    sim : Simulation
        Built (not started) simulation whose single block is the SURFTRAK vehicle.
    slots : dict of str to Slot
        The block's ``motion``, ``rangefinder`` and ``controller`` slots.
    kernel : callable
        The compiled :func:`_span`.
    """

    def __init__(
        self, sim: Any, slots: dict[str, Any], kernel: Any, required: bool = False
    ) -> None:
        self.sim = sim
        self.motion, self.sensor, self.ctl = slots["motion"], slots["sensor"], slots["controller"]
        self.kernel = kernel
        self.required = required
        self.ticks = 0  # ticks run compiled (the manifest reports them)

    # ------------------------------------------------------------------------------ state
    def _ready(self) -> bool:
        """The plugins have started and the recorder holds the engine's own signals."""
        rec = self.sim._recorder
        if rec._cap == 0 or self.sensor.rng is None or "ap" not in self.ctl.ctx.state:
            return False
        if not self.motion.block.active.all():
            return False  # a deactivated vehicle (on_nonfinite: deactivate): plugin ticks
        return all(n in rec.units for n, _ in SIGNALS[:7])

    def run(self, k: int, kend: int) -> int:
        """Run ticks k… compiled (at most to ``kend``); returns the tick reached."""
        if self.kernel is None or not self._ready():
            return k
        sim = self.sim
        rec = sim._recorder
        blk = self.motion.block
        n = blk.n
        mst, sst, cst = self.motion.ctx.state, self.sensor.ctx.state, self.ctl.ctx.state
        ap: ArduSubVertical = cst["ap"]
        cp: Any = self.ctl.plugin.params
        mp: Any = self.motion.plugin.params
        clock = sim.clock
        dt = clock.dt
        kend = min(kend, k + 65_536)
        # the reading waiting in the controller's inbox (published at t_k by the sensor)
        has, cm, q = 0.0, np.full(n, -1.0), np.full(n, -1.0)
        for m in self.ctl.sub.inbox:
            if m.topic == "rangefinder/distance_cm":
                has = 1.0
                cm[m.rows] = np.asarray(m.value, dtype=float)
            elif m.topic == "rangefinder/signal_quality":
                q[m.rows] = np.asarray(m.value, dtype=float)
        z, v, a = mst["zva"]
        cols = [z, v, a, has, cm, q, float(cst["readings"])]
        cols += [getattr(_owner(ap, ob), at) for ob, at, _ in _AP_STATE]
        sv = np.empty((n, len(cols)))
        for j, c in enumerate(cols):
            sv[:, j] = np.asarray(c, dtype=float)
        rng = self.sensor.rng
        normals, npos = rng.buffered("normal")
        line = sst["line"]
        counters = np.zeros((n, 7), dtype=np.int64)
        counters[:, :4] = (npos, line.count, rec._row, rec._ticks)
        cur = np.full((n, len(SIGNALS)), math.nan)
        for j, (name, c) in enumerate(SIGNALS):
            val = rec.current.get((blk.name, name))
            if val is not None:
                cur[:, j] = val[:, c]
        pilot = cst["pilot"]
        if pilot is None:
            climbs = np.zeros(0)
        else:
            tk = clock.start + np.arange(k, kend) * dt
            climbs = np.asarray(ap.climb_from_stick(pilot.sample(tk)), dtype=float)
        prof = sst["profile"]
        rf = sst["rf"]
        h = ap.health
        p = ap.p
        consts = np.array([
            float(p.SURFTRAK_DEPTH), float(p.SURFACE_DEPTH), 50.0, 5000.0, rf.delay / dt, 0.0,
            h.param_min, h.param_max, h.sq_min, float(h.enabled), ap.motors.a,
            ap.detector.surface_m, math.nan if mp.contact_floor is None else mp.contact_floor,
        ])  # fmt: skip
        # a signal the plugins have not logged yet: the span stops before its first value
        known = np.array([name in rec.units for name, _ in SIGNALS], dtype=np.bool_)
        for name, _ in SIGNALS:  # logged since the last recorded frame: its buffer now
            if name in rec.units and name not in rec._buf:
                rec._buf[name] = np.full((len(rec.labels[name]), rec._cap, rec.n_rows), np.nan)
        spare = np.empty((1, rec._cap, n))
        bufs = tuple(rec._buf[name] if name in rec._buf else spare for name, _ in SIGNALS)
        comps = np.array([c for _, c in SIGNALS], dtype=np.int64)
        zbuf = line.buf[:, :, 0]
        inputs = (sv.copy(), counters.copy(), cur.copy(), zbuf.copy())
        stops = np.zeros(n, dtype=np.int64)

        # vehicles on all cores from PARALLEL_MIN on (the serial loop below that)
        kernel = getattr(self.kernel, "parallel", self.kernel) if n >= PARALLEL_MIN else self.kernel

        def span(kmax: int) -> None:
            kernel(
                k, kmax, dt, clock.start, sst["k0"], sst["iv"], float(cp.switch_after),
                ap.mode == SURFTRAK, np.asarray(prof.rows, float),
                np.asarray(mst["heights"], float), float(mst["interval"]),
                float(mst["attrib0"]), climbs, normals, zbuf, consts, mp.coefficients,
                rf.coefficients, ap.gains.shaping, ap.gains.loops, sv, counters, cur,
                rec._tbuf, bufs, comps, known, rec.every, stops,
            )  # fmt: skip

        try:
            span(kend)
        except Exception as exc:
            if self.required or getattr(self.kernel, "signatures", None):
                raise  # required, or it failed after compiling: report it
            # numba could not compile it (nothing ran): the plugins' ticks from here on
            warnings.warn(
                ConfigWarning(f"SURFTRAK compiled span unavailable ({exc}); plugin ticks"),
                stacklevel=2,
            )
            _CACHE["kernel"] = self.kernel = None
            return k
        kstop = int(stops.min())
        if (stops != kstop).any() or counters[:, 6].any():
            # vehicles stopped at different ticks, or one went non-finite (its state is
            # mixed): replay every vehicle up to the first stop; the plugins run that tick
            for dst, src in zip((sv, counters, cur, zbuf), inputs, strict=True):
                dst[...] = src
            span(kstop)
        if kstop == k:
            return k
        self._write_back(k, kstop, sv, counters, cur, ap)
        return kstop

    def _write_back(
        self, k: int, kstop: int, sv: np.ndarray, counters: np.ndarray, cur: np.ndarray,
        ap: ArduSubVertical,
    ) -> None:
        """Hand the state at the start of tick ``kstop`` back to the plugins and the engine."""
        sim = self.sim
        rec = sim._recorder
        clock = sim.clock
        blk = self.motion.block
        n = blk.n
        one = n == 1  # the plugins keep Python floats for one vehicle, arrays otherwise

        def col(j: int, is_bool: bool = False, like: Any = None) -> Any:
            x = sv[:, j]
            if one or not isinstance(like, np.ndarray):  # a block-wide scalar stays one
                return bool(x[0]) if is_bool else float(x[0])
            return x != 0.0 if is_bool else x.copy()

        n0 = len(_HARNESS)
        for j, (ob, at, is_bool) in enumerate(_AP_STATE):
            owner = _owner(ap, ob)
            setattr(owner, at, col(n0 + j, is_bool, getattr(owner, at)))
        ap.now_us = float((kstop - 1) * TICK_US)
        mst, sst, cst = self.motion.ctx.state, self.sensor.ctx.state, self.ctl.ctx.state
        arr = None if one else sv[:, 0]
        z, v, a = col(0, like=arr), col(1, like=arr), col(2, like=arr)
        mst["zva"] = (z, v, a)
        mst["thrust"] = np.array(sv[:, n0 + 24])  # motors.thrust
        cst["readings"] = int(sv[0, 6])
        npos, zcount, row, frames, made, skipped, _ = (int(x) for x in counters[0])
        self.sensor.rng.set_position("normal", npos)
        sst["line"].count = zcount
        ticks = kstop - k
        t_stop = clock.start + kstop * clock.dt
        old = blk.truth
        pos = old.pos.copy()
        pos[:, 2] = -sv[:, 0]
        vel = np.zeros((n, 3))
        vel[:, 2] = -sv[:, 1]
        acc = np.zeros((n, 3))
        acc[:, 2] = -sv[:, 2]
        blk.truth = old.replace(pos=pos, vel=vel, accel=acc, t=t_stop)
        blk._truth_ro = None
        sim._last_finite[blk.name] = pos.copy()
        # recorder: rows, frames, the hold-last values
        rec._row = row
        rec._ticks = frames
        rec._pending = t_stop if skipped else None
        for j, (name, c) in enumerate(SIGNALS):
            val = rec.current.get((blk.name, name))
            if val is not None:
                val[:, c] = cur[:, j]
        if rec._row >= rec._cap:
            rec.flush()
        # bus and call counts as if the plugins had run every tick
        bus = sim.bus
        for topic, m in (("thrust", ticks), ("rangefinder/distance_cm", made),
                         ("rangefinder/signal_quality", made)):  # fmt: skip
            bus.published[topic] = bus.published.get(topic, 0) + m
            bus.delivered[topic] = bus.delivered.get(topic, 0) + m
        for slot, hook in ((self.ctl, "control"), (self.motion, "substep"), (self.sensor, "sense")):
            slot.calls[hook] = slot.calls.get(hook, 0) + ticks
        self.ctl.sub.inbox = []
        if sv[0, 3] != 0.0:  # a reading waits for tick kstop: back into the controller's inbox
            rows_ = np.arange(n, dtype=np.int64)
            for topic, j in (("rangefinder/distance_cm", 4), ("rangefinder/signal_quality", 5)):
                bus.publish(topic, blk.name, rows_, blk.ids[rows_], sv[:, j].copy(),
                            t_pub=t_stop, source=self.sensor.plugin.name)  # fmt: skip
                bus.published[topic] -= 1  # counted with the span's readings
            bus.deliver(t_stop)
            for topic in ("rangefinder/distance_cm", "rangefinder/signal_quality"):
                bus.delivered[topic] -= 1
        clock.k = kstop
        self.ticks += ticks


def _owner(ap: ArduSubVertical, name: str) -> Any:
    return ap if name == "ap" else getattr(ap, name)


# ------------------------------------------------------------------------------ eligibility
def span_for(sim: Any, compiled: bool | None) -> SurftrakSpan | None:  # noqa: D417
    """The compiled span of ``sim``, or None (the plugins run every tick).

    Raises
    ------
    ConfigError
        ``compiled`` is True and the span does not apply (the message says why) or numba
        is missing.
    """
    if compiled is False or (compiled is None and os.environ.get("MARINESIM_JIT", "1") == "0"):
        return None
    from marinesim.engine.plugins.surftrak import SurftrakController

    if not any(isinstance(s.plugin, SurftrakController) for s in sim.slots):
        return None  # not a SURFTRAK scenario: another span, or none
    why, slots = _why_not(sim)
    if why is not None:
        if compiled:
            raise ConfigError(f"the compiled SURFTRAK span does not apply: {why}", param="compiled")
        return None
    kernel = kernel_for(required=bool(compiled))
    return None if kernel is None else SurftrakSpan(sim, slots, kernel, bool(compiled))


def _why_not(sim: Any) -> tuple[str | None, dict[str, Any]]:
    from marinesim.engine.plugins.rangefinder import RangefinderSensor
    from marinesim.engine.plugins.surftrak import SitlVerticalMotion, SurftrakController

    live = [b for b in sim.blocks if b.n > 0]
    if len(live) != 1:
        return "it runs one block", {}
    if sim.world_slots:
        return "the scenario has world plugins", {}
    if sim.clock.substeps != 1:
        return "physics substeps", {}
    if list(sim.end_conditions) != ["time"] or sim.clock.end is None:
        return "end conditions other than time", {}
    if sim.clock.time_warp:
        return "time_warp (paced runs)", {}
    if sim._recorder.select is not None:
        return "log_columns (signal selection)", {}
    slots = [s for s in sim.slots if s.block is live[0]]
    kinds: dict[str, Any] = {}
    for s in slots:
        pl = s.plugin
        if isinstance(pl, SitlVerticalMotion):
            kinds["motion"] = s
        elif isinstance(pl, RangefinderSensor):
            kinds["sensor"] = s
        elif isinstance(pl, SurftrakController):
            kinds["controller"] = s
        else:
            return f"plugin {pl.name!r} runs only tick by tick", {}
    if set(kinds) != {"motion", "sensor", "controller"} or len(slots) != 3:
        return "it needs exactly sitl_vertical, rangefinder and surftrak", {}
    m, se, c = kinds["motion"].plugin, kinds["sensor"].plugin, kinds["controller"].plugin
    mp, sp, cp = m.params, se.params, c.params
    if mp.terrain == "environment" or sp.terrain == "environment":
        return "terrain 'environment' (bathymetry under a track)", {}
    if mp.track_speed != 0.0:
        return "a horizontal track", {}
    if m.thrust_override is not None or c.events or c.scripts or cp.trace:
        return "Python hooks (thrust override, events, scripts) or the 400 Hz trace", {}
    if sp.geometry_source != "truth":
        return "rangefinder geometry from the belief", {}
    if any(s.period != 1 or s.offset != 0 for s in kinds.values()):
        return "plugin rates other than every tick", {}
    same = (
        (m.profile is se.profile) if (m.profile or se.profile) else mp.terrain == sp.terrain
    ) and mp.delay == sp.delay and mp.t_inject0 == sp.t_inject0
    if not same:
        return "motion and rangefinder over different terrain schedules", {}
    return None, kinds


# ------------------------------------------------------------------------------ compiling
#: Pure functions compiled for the span, in dependency order (module, names).
_JIT_FUNCTIONS = (
    ("marinesim.control.posz", (
        "where", "clamp", "half_power", "sqrt_controller", "shape_accel", "shape_vel_accel",
        "shape_pos_vel_accel", "update_pos_vel_accel", "climb_rate_step", "update_step")),
    ("marinesim.control.depth_hold", ("motors_step", "detector_step", "althold_target")),
    ("marinesim.control.rangefinder_health", (
        "map_signal_quality", "message_step", "health_step", "alt_ok_of")),
    ("marinesim.control.surftrak", (
        "reset_target", "surface_bottom_step", "offset_target_step", "take_step")),
    ("marinesim.models.heave", ("accel_raw", "step_zv_raw")),
    ("marinesim.sensors.rangefinder", ("inject_values",)),
    ("marinesim.sensors.pipeline", ("delay_position",)),
)  # fmt: skip
_CACHE: dict[str, Any] = {}


def _any_true_scalar(mask):  # noqa: ANN001, ANN202
    return mask


def _pick_scalar(cond, a, b):  # noqa: ANN001, ANN202
    return a if cond else b


def _libm_pow() -> Any:
    """The C library's ``pow`` (the one CPython's float ``**`` calls) for compiled code, or None.

    Registered with LLVM under its own symbol name, so that the compiler cannot recognise it
    as ``pow`` and rewrite ``pow(x, 0.5)`` as ``sqrt(x)`` (different in the last bit).
    """
    import ctypes
    import ctypes.util

    from llvmlite import binding
    from numba import types as nbtypes

    name = ctypes.util.find_library("m")
    if name is None:
        return None
    fn = ctypes.CDLL(name).pow
    binding.add_symbol("marinesim_libm_pow", ctypes.cast(fn, ctypes.c_void_p).value)
    return nbtypes.ExternalFunction(
        "marinesim_libm_pow", nbtypes.float64(nbtypes.float64, nbtypes.float64)
    )


def _half_power_libm(x):  # noqa: ANN001, ANN202
    return _cpow(x, 0.5)  # noqa: F821 (bound at compile time)


def kernel_for(required: bool = False) -> Any:
    """The compiled :func:`_span`, or None without numba (``required``: DependencyNotInstalled).

    The pure functions of :data:`_JIT_FUNCTIONS` and :func:`_span` are compiled from their own
    source (their code objects); inside compiled code ``any_true`` and ``pick`` (numpy-array
    helpers) are bound to scalar versions.  Compiled lazily at the first call, disk-cached.
    """
    if "kernel" in _CACHE:
        return _CACHE["kernel"]
    try:
        import numba
    except ImportError:
        if required:
            from marinesim.core.errors import DependencyNotInstalled

            raise DependencyNotInstalled("numba", "fast") from None
        return None

    def same_source(fn: Any, env: dict[str, Any], bound: dict[str, Any]) -> Any:
        glb = dict(env)
        glb.update(bound)
        copy = types.FunctionType(fn.__code__, glb, fn.__name__, fn.__defaults__)
        return numba.njit(cache=True)(copy)

    import importlib

    bound: dict[str, Any] = {
        "any_true": same_source(_any_true_scalar, globals(), {}),
        "pick": same_source(_pick_scalar, globals(), {}),
    }
    cpow = _libm_pow()
    for mod_name, names in _JIT_FUNCTIONS:
        mod = importlib.import_module(mod_name)
        for name in names:
            if name == "half_power" and cpow is not None:
                bound[name] = same_source(_half_power_libm, globals(), {"_cpow": cpow})
                continue
            bound[name] = same_source(getattr(mod, name), vars(mod), bound)
    _CACHE["functions"] = bound
    bound["_span_row"] = same_source(_span_row, globals(), bound)
    bound["prange"] = numba.prange
    kern = same_source(_span, globals(), bound)
    glb = {**globals(), **bound}
    copy = types.FunctionType(_span.__code__, glb, "_span", _span.__defaults__)
    kern.parallel = numba.njit(cache=True, parallel=True)(copy)  # type: ignore[attr-defined]
    _CACHE["kernel"] = kern
    return kern


register_span(span_for)
