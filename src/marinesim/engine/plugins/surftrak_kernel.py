"""The compiled tick of the SURFTRAK block: :func:`_span` and its compilation.

:func:`_span_row` runs the engine's tick for one vehicle of the block over floats — the
controller's 400 Hz loop, the heave step, the rangefinder at t_{k+1}, the recorded frame —
calling the pure control-law functions the plugins' objects call; :func:`_span` runs it for
every vehicle (``prange`` in the all-core build).  :func:`kernel_for` compiles both from their
own source with numba (disk-cached); :mod:`marinesim.engine.plugins.surftrak_span` drives them.
"""

from __future__ import annotations

import hashlib
import math
import types
from pathlib import Path
from typing import Any

import numpy as np

from marinesim.control.depth_hold import althold_target, detector_step, motors_step
from marinesim.control.posz import climb_rate_step, update_step
from marinesim.control.rangefinder_health import alt_ok_of, health_step, message_step
from marinesim.control.surftrak import offset_target_step, surface_bottom_step, take_step
from marinesim.models.heave import step_zv_raw
from marinesim.sensors.pipeline import delay_position
from marinesim.sensors.rangefinder import inject_values

__all__ = ["SIGNALS", "TICK_US", "kernel_for"]

TICK_US = 2500.0
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
    tbuf, bufs, comps, known, every, stops, sources="",
):  # noqa: ANN001, ANN202 (numba-compiled; floats, ints and float arrays)
    """Run engine ticks k… of every vehicle of the block until ``kend`` or its hand-back.

    ``stops[i]`` is the tick vehicle i reached.  Vehicles are independent (one row each of
    ``sv``, ``counters``, ``cur``, ``zbuf``'s columns, ``normals``); the caller replays the
    span up to the smallest stop when they differ, so the block stops at one tick.
    ``sources`` is left to its default, the digest of the compiled laws' files (unused: it
    keys numba's disk cache, see :func:`kernel_for`).
    """
    for i in prange(sv.shape[0]):  # noqa: F821 (numba.prange when compiled parallel)
        stops[i] = _span_row(  # i is unsigned in a prange: cast, one _span_row for both builds
            np.int64(i), k, kend, dt, start, k0, iv, switch_after, surftrak, rows, heights,
            interval, attrib0, climbs, normals[i], zbuf[:, i], consts, hcoef, rfcoef, shaping,
            loops, sv[i], counters[i], cur[i], tbuf, bufs, comps, known, every,
        )  # fmt: skip


def _span_row(
    i, k, kend, dt, start, k0, iv, switch_after, surftrak, rows, heights, interval, attrib0,
    climbs, normals, zbuf, consts, hcoef, rfcoef, shaping, loops, sv, counters, cur,
    tbuf, bufs, comps, known, every, sources="",
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


def _half_power_scalar(x):  # noqa: ANN001, ANN202
    return math.sqrt(x)  # IEEE, as math.sqrt and numpy.sqrt: posz.half_power


def _sources_digest(functions: list[Any]) -> str:
    """Digest (16 hex digits) of the files ``functions`` and this module are written in."""
    files = {Path(__file__).resolve()}
    files.update(Path(fn.__code__.co_filename).resolve() for fn in functions)
    h = hashlib.sha256()
    for f in sorted(files):
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


class _PythonCallable(dict):
    """The compiled law functions, callable from Python (a check on them against the laws).

    The span's own compilations have no Python entry point (numba's ``no_cpython_wrapper``:
    they are only called from compiled code); each item here compiles, on first use, the
    same function object (same code, same bound helpers) with one.
    """

    def __init__(self, internal: dict[str, Any]) -> None:
        super().__init__()
        self._internal = internal

    def __missing__(self, name: str) -> Any:
        import numba

        fn = self[name] = numba.njit(self._internal[name].py_func)
        return fn


def kernel_for(required: bool = False) -> Any:
    """The compiled :func:`_span`, or None without numba (``required``: DependencyNotInstalled).

    The pure functions of :data:`_JIT_FUNCTIONS`, :func:`_span_row` and :func:`_span` are
    compiled from their own source (their code objects); inside compiled code ``any_true`` and
    ``pick`` (numpy-array helpers) are bound to scalar versions.  Compiled lazily at the first
    call (``kern.parallel``, the ``prange`` build, at its own first call).

    Cold-compile cost (numba spends it per compiled function): the functions called only from
    compiled code get no Python or C entry point, and only :func:`_span_row` and :func:`_span`
    go to numba's disk cache (each holds the machine code of everything it calls).  numba
    checks only the cached function's own file, so the digest of every compiled law's file is
    bound as their ``sources`` default, part of the cache key: editing a law recompiles (and
    the ``prange`` build has a key of its own).
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
    import importlib

    internal = {"no_cpython_wrapper": True, "no_cfunc_wrapper": True}

    def same_source(fn: Any, env: dict[str, Any], bound: dict[str, Any], **options: Any) -> Any:
        glb = dict(env)
        glb.update(bound)
        defaults = options.pop("defaults", fn.__defaults__)
        copy = types.FunctionType(fn.__code__, glb, fn.__name__, defaults)
        return numba.njit(**options)(copy)

    laws = [(importlib.import_module(m), name) for m, names in _JIT_FUNCTIONS for name in names]
    stamp = _sources_digest([getattr(mod, name) for mod, name in laws])
    bound: dict[str, Any] = {
        "any_true": same_source(_any_true_scalar, globals(), {}, **internal),
        "pick": same_source(_pick_scalar, globals(), {}, **internal),
    }
    for mod, name in laws:
        if name == "half_power":  # its float/array dispatch, compiled: the scalar square root
            bound[name] = same_source(_half_power_scalar, globals(), {}, **internal)
        else:
            bound[name] = same_source(getattr(mod, name), vars(mod), bound, **internal)
    _CACHE["functions"] = _PythonCallable(bound)
    keyed = {"cache": True, "defaults": (stamp,)}
    bound["_span_row"] = same_source(_span_row, globals(), bound, **internal, **keyed)
    bound["prange"] = numba.prange
    kern = same_source(_span, globals(), bound, no_cfunc_wrapper=True, **keyed)
    # numba's cache key holds no compiler flags: without its own key the prange build would
    # load the serial one's machine code (or the serial one the prange build's)
    kern.parallel = same_source(  # type: ignore[attr-defined]
        _span, globals(), bound, no_cfunc_wrapper=True, parallel=True, cache=True,
        defaults=(f"{stamp}-parallel",),
    )  # fmt: skip
    _CACHE["kernel"] = kern
    return kern
