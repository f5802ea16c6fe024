"""The SURFTRAK block's compiled-capable laws and their declarations.

``surftrak`` (controller), ``sitl_vertical`` (motion) and ``rangefinder`` (sensor) join the
generated tick (:mod:`marinesim.engine.compiled`) through these declarations.  The laws call
the pure L1 functions the plugins' objects call — :mod:`marinesim.control.posz`,
:mod:`~marinesim.control.depth_hold`, :mod:`~marinesim.control.rangefinder_health`,
:mod:`~marinesim.control.surftrak` (ArduSub's vertical autopilot), :mod:`marinesim.models.heave`,
:mod:`marinesim.sensors.rangefinder` and :mod:`~marinesim.sensors.pipeline` — over
structure-of-arrays copies of the plugins' state.  Those functions are written for floats and
numpy arrays alike; here each is bound, once, to the scalar forms of its array helpers
(``any_true``, ``pick``, ``half_power``, ``trunc``) and registered with numba
(:func:`scalar_law`): the same code, interpreted or compiled, no second copy.

Wires: the controller writes ``bus.thrust`` (N,) — the ``thrust`` topic — and reads the
reading waiting in its inbox, ``bus.rangefinder`` (N, 3: waiting, distance cm, quality), which
the sensor writes at t_{k+1}; both read ``truth.zva`` (N, 3: z up, vz, az), which the motion
writes in its substep.

A law hands the tick back to the plugins (returns 1) when something only they do is due: the
mode switch, and in SURFTRAK setting a rangefinder target (first target, pilot release) —
they send GCS messages —, a non-finite heave step, the end of the rangefinder's noise block,
the first reading of a run (its signals are not logged yet).
"""

from __future__ import annotations

import math
import types
from pathlib import Path
from typing import Any

import numpy as np

from marinesim.engine.compiled.law import MAX_TICKS, Law, Laws, Worlds

__all__ = [
    "TICK_US", "controller_laws", "motion_laws", "rangefinder_declaration", "scalar_law",
    "sensor_laws",
]  # fmt: skip

TICK_US = 2500.0
_SRC = Path(__file__).resolve().parents[2]
#: The L1 functions the laws call, bound to scalar helpers (module, names).
_L1 = (
    ("marinesim.control.posz", (
        "where", "clamp", "sqrt_controller", "shape_accel", "shape_vel_accel",
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
#: Packed autopilot state (n, 44): (object, attribute, is_bool), ArduSubVertical's order.
AP_STATE = (
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
#: CTUN signals of the controller (its 10 Hz row), in the order of its log array.
CTUN = ("ThI", "ThO", "DAlt", "Alt", "DSAlt", "SAlt", "TAlt", "DCRt", "CRt", "healthy", "mode_state")
#: Signals of the sensor, in the order of its log array.
SENSED = ("terrain", "rf_cm", "signal_quality", "sub_cm", "terrain_cm")


# ------------------------------------------------------------------------------ L1, scalar
def _any_true_scalar(mask):  # noqa: ANN001, ANN202
    return mask


def _pick_scalar(cond, a, b):  # noqa: ANN001, ANN202
    return a if cond else b


def _half_power_scalar(x):  # noqa: ANN001, ANN202
    return math.sqrt(x)  # IEEE, as math.sqrt and numpy.sqrt: posz.half_power


def _trunc_scalar(x):  # noqa: ANN001, ANN202
    """``np.trunc`` of a float, bit for bit (−0.0 kept); numba's CUDA target has no
    ``np.trunc`` (rangefinder.trunc)."""
    if not abs(x) < 4503599627370496.0:  # NaN, ±inf, or an integer already (|x| ≥ 2⁵²)
        return x
    return math.copysign(float(int(x)), x)


def _jitable(fn: Any) -> Any:
    try:
        from numba.extending import register_jitable
    except ImportError:  # pragma: no cover - the compiled tick needs numba
        return fn
    return register_jitable(fn)


def _bind() -> tuple[dict[str, Any], dict[str, Any]]:
    import importlib

    helpers = {
        "any_true": _jitable(_any_true_scalar), "pick": _jitable(_pick_scalar),
        "half_power": _jitable(_half_power_scalar), "trunc": _jitable(_trunc_scalar),
    }  # fmt: skip
    bound: dict[str, Any] = {}
    scopes = []
    for modname, names in _L1:
        mod = importlib.import_module(modname)
        glb = dict(vars(mod))
        scopes.append(glb)
        for name in names:
            fn = getattr(mod, name)
            bound[name] = _jitable(
                types.FunctionType(fn.__code__, glb, fn.__name__, fn.__defaults__)
            )
    for glb in scopes:  # every copy calls the scalar copies of the others
        glb.update(bound)
        glb.update(helpers)
    return bound, helpers


_BOUND, _HELPERS = _bind()


def scalar_law(name: str) -> Any:
    """The L1 function ``name`` bound to the scalar helpers (what the laws call)."""
    return _BOUND[name]


trunc = _HELPERS["trunc"]
message_step = _BOUND["message_step"]
health_step = _BOUND["health_step"]
alt_ok_of = _BOUND["alt_ok_of"]
surface_bottom_step = _BOUND["surface_bottom_step"]
offset_target_step = _BOUND["offset_target_step"]
take_step = _BOUND["take_step"]
althold_target = _BOUND["althold_target"]
climb_rate_step = _BOUND["climb_rate_step"]
update_step = _BOUND["update_step"]
motors_step = _BOUND["motors_step"]
detector_step = _BOUND["detector_step"]
step_zv_raw = _BOUND["step_zv_raw"]
inject_values = _BOUND["inject_values"]
delay_position = _BOUND["delay_position"]


# ------------------------------------------------------------------------------ laws
@_jitable
def surftrak_control(k, j, t, h, cst, sh, lp, climbs, ap, rd, cur, ctun, zva, rfm, thrust):  # noqa: ANN001, ANN201, PLR0915
    """One 400 Hz loop of ArduSub's vertical autopilot, every vehicle (the plugin's control)."""
    surftrak_depth, surface_depth, msg_min_cm, msg_max_cm = cst[0], cst[1], cst[2], cst[3]
    param_min, param_max, sq_min = cst[4], cst[5], cst[6]
    enabled, motors_a, surface_m, switch_after = cst[7] != 0.0, cst[8], cst[9], cst[10]
    surftrak = cst[11] != 0.0
    shaping = (sh[0], sh[1], sh[2], sh[3], sh[4])
    loops = (lp[0], lp[1], lp[2], lp[3], lp[4], lp[5], lp[6], lp[7], lp[8], lp[9], lp[10],
             lp[11], lp[12])  # fmt: skip
    now_us = k * TICK_US
    climb = climbs[j]
    centred = abs(climb) < 0.05
    for i in range(ap.shape[0]):
        s = ap[i]
        z, v, a = zva[i, 0], zva[i, 1], zva[i, 2]
        zc = z * 100.0  # belief = truth: −(−z)·100
        vc = 0.0 - (-v) * 100.0
        ac = 0.0 - (-a) * 100.0
        target_cm, pic, pilot_start_z = s[3], s[4] != 0.0, s[5]
        # ---- the reading in the inbox, the 20 Hz rangefinder cycle, the switch
        switch = False
        if rfm[i, 0] != 0.0:
            rd[i] += 1.0
            switch = rd[i] == switch_after
            if rfm[i, 1] >= 0:
                s[29], s[30], s[31], s[32], s[33] = message_step(
                    True, now_us, rfm[i, 1], msg_min_cm, msg_max_cm, rfm[i, 2], param_min,
                    param_max, s[29], s[30], s[31], s[32], s[33],
                )  # fmt: skip
            rfm[i, 0] = 0.0
        if k % 20 == 0:
            s[0] = zc
            (
                s[34], s[35], s[36], s[37], alt_healthy, s[40], s[39], s[42], have_offset,
            ) = health_step(
                now_us, s[0], s[29], s[30], s[31], s[32], s[33], s[37], s[40], s[39], s[42],
                s[43] != 0.0, sq_min,
            )  # fmt: skip
            s[38] = 1.0 if alt_healthy else 0.0
            s[43] = 1.0 if have_offset else 0.0
            s[41] = s[0]
        if switch:
            return 1  # set_mode: GCS messages (the plugins' tick)
        at_surface, at_bottom = s[26] != 0.0, s[27] != 0.0
        alt_healthy, last_healthy_us = s[38] != 0.0, s[39]
        if surftrak:
            if centred and pic:
                return 1  # pilot release: a new target and its message
            ok = alt_ok_of(alt_healthy, last_healthy_us, now_us, enabled)
            if (
                centred and not at_surface and not at_bottom and ok and target_cm <= 0
                and s[41] < surftrak_depth
            ):  # fmt: skip
                return 1  # the first target and its message
        # ---- ArduSubVertical.run_climb, detect
        s[0], s[1], s[2] = zc, vc, ac
        sat = s[25] != 0
        s[13] = s[25]  # zctl.limit = motors.limit
        pos_target, off, off_target = s[6], s[9], s[12]
        if surftrak:
            other, pos_target, target_cm, off, off_target = surface_bottom_step(
                centred, at_surface, at_bottom, zc, pos_target, target_cm, off, off_target,
                surface_depth,
            )  # fmt: skip
            if other and alt_ok_of(alt_healthy, last_healthy_us, now_us, enabled):
                off_target = offset_target_step(True, target_cm, s[42], off_target, surftrak_depth)
            pic, pilot_start_z = take_step(centred, target_cm, pic, zc, pilot_start_z)
        else:
            pos_target = althold_target(climb, pos_target, zc, at_surface, at_bottom, surface_depth)
        pos_target, s[7], s[8], off, s[10], s[11] = climb_rate_step(
            climb, pos_target, s[7], s[8], off, s[10], s[11], off_target, s[13], s[14], s[15],
            shaping,
        )  # fmt: skip
        (
            pos_target, s[14], s[16], ev_f, s[17], s[20], s[18], s[22],
        ) = update_step(
            zc, vc, ac, sat, pos_target, s[7], s[8], s[19], s[20], s[18], s[21] != 0.0, loops,
        )  # fmt: skip
        s[19] = ev_f
        s[15] = ev_f
        s[21] = 0.0
        s[6], s[9], s[12] = pos_target, off, off_target
        s[3], s[4], s[5] = target_cm, 1.0 if pic else 0.0, pilot_start_z
        s[23], s[24], s[25] = motors_step(s[22], s[23], motors_a)
        at_surface, at_bottom, s[28] = detector_step(
            z, v, s[25], at_surface, at_bottom, s[28], surface_m
        )
        s[26], s[27] = 1.0 if at_surface else 0.0, 1.0 if at_bottom else 0.0
        thrust[i] = s[24]
        c = cur[i]
        if k % 40 == 0:  # the CTUN row
            healthy = alt_ok_of(s[38] != 0.0, s[39], now_us, enabled)
            c[0] = s[22]
            c[1] = s[23]
            c[2] = pos_target * 0.01
            c[3] = zc * 0.01
            c[4] = target_cm * 0.01
            c[5] = s[35] * 0.01
            c[6] = s[42] * 0.01
            c[7] = trunc(s[16])
            c[8] = trunc(vc)
            c[9] = 1.0 if healthy else 0.0
            c[10] = (1.0 + (target_cm > 0) + 1.0 * pic) if surftrak else 0.0
        for q in range(c.shape[0]):
            ctun[j, i, q] = c[q]
    return 0


@_jitable
def heave_substep(k, j, s, t, h, coef, heights, meta, thrust, zva, zlog):  # noqa: ANN001, ANN201
    """One heave step over the hard floor of the terrain schedule at t + h (``sitl_vertical``)."""
    interval, attrib0, contact_floor = meta[0], meta[1], meta[2]
    hc = (coef[0], coef[1], coef[2], coef[3], coef[4], coef[5], coef[6])
    nh = heights.shape[0]
    t1 = t + h
    jj = max(int(math.floor((t1 - attrib0) / interval + 1e-9)), 0)
    floor = heights[jj % nh]
    if not math.isnan(contact_floor):
        floor = max(floor, contact_floor)
    for i in range(zva.shape[0]):
        z1, v1, a1 = step_zv_raw(hc, zva[i, 0], zva[i, 1], thrust[i], floor, h)
        if not (math.isfinite(z1) and math.isfinite(v1) and math.isfinite(a1)):
            return 1  # the plugins' tick (its divergence handling)
        zva[i, 0], zva[i, 1], zva[i, 2] = z1, v1, a1
        zlog[j, i, 0] = z1
    return 0


@_jitable
def rangefinder_sense(k, j, t, h, rows, heights, meta, coef, normals, zbuf, cnt, zva, rfm, cur, slog):  # noqa: ANN001, ANN201
    """The delay line, the terrain under the vehicle and, on message ticks, one reading at t."""
    interval, attrib0, back, known = meta[0], meta[1], meta[2], meta[5]
    k0, iv = int(meta[3]), int(meta[4])
    rc = (coef[0], coef[1], coef[2], coef[3], coef[4], coef[5], coef[6], coef[7], coef[8])
    kk = k + 1
    due = kk >= k0 and (kk - k0) % iv == 0
    npos, zcount = cnt[0], cnt[1]
    if due and (npos >= normals.shape[1] or known == 0.0):
        return 1  # the noise block is used up (the plugin draws the next), or a first reading
    zsize = zbuf.shape[0]
    n = zva.shape[0]
    for i in range(n):
        zbuf[zcount % zsize, i] = zva[i, 0]
    zcount += 1
    cnt[1] = zcount
    jj = max(int(math.floor((t - attrib0) / interval + 1e-9)), 0)
    ground = heights[jj % heights.shape[0]]
    if due:
        rowv = rows[((kk - k0) // iv) % rows.shape[0]]
        i0, frac, interp = delay_position(zcount, zsize, back)
        for i in range(n):
            zd = zbuf[i0 % zsize, i]
            if interp:
                zd = zd + (zbuf[(i0 + 1) % zsize, i] - zd) * frac
            sent, cm, q = inject_values(rowv, zd, normals[i, npos], rc)
            rfm[i, 0] = 1.0
            rfm[i, 1] = cm if sent else -1.0
            rfm[i, 2] = q
            cur[i, 1] = rfm[i, 1]
            cur[i, 2] = q
            cur[i, 3] = zd * 100.0
            cur[i, 4] = rowv * 100.0
        cnt[0] = npos + 1
    for i in range(n):
        cur[i, 0] = ground
        for q in range(cur.shape[1]):
            slog[j, i, q] = cur[i, q]
    return 0


# ------------------------------------------------------------------------------ declarations
def _held(sim: Any, blk: Any, names: list[str], into: np.ndarray) -> None:
    """The recorder's hold-last values of ``names`` (NaN: not logged yet)."""
    for c, name in enumerate(names):
        val = sim._recorder.last(blk.name, name)
        into[:, c] = np.nan if val is None else val[:, 0]


def controller_laws(plugin: Any, slot: Any, sim: Any) -> Laws | str | None:
    """The ``surftrak`` declaration (every tick; the motion and the sensor own the wires)."""
    from marinesim.control.surftrak import SURFTRAK, ArduSubVertical

    cp: Any = plugin.params
    if plugin.events or plugin.scripts or cp.trace:
        return "Python hooks (events, scripts) or the 400 Hz trace"
    if sim.clock.substeps != 1:
        return "physics substeps"
    if slot.period != 1 or slot.offset != 0:
        return "a rate other than every tick"
    n = slot.block.n
    st = slot.ctx.state
    blk = slot.block
    names = [f"{plugin.name}.{s}" for s in CTUN]
    a = {
        "cst": np.zeros(12), "sh": np.zeros(5), "lp": np.zeros(13),
        "climbs": np.zeros(MAX_TICKS), "ap": np.zeros((n, len(AP_STATE))), "rd": np.zeros(n),
        "cur": np.zeros((n, len(CTUN))), "ctun": np.zeros((MAX_TICKS, n, len(CTUN))),
    }  # fmt: skip

    def owner(ap: ArduSubVertical, name: str) -> Any:
        return ap if name == "ap" else getattr(ap, name)

    def ready() -> bool:
        return "ap" in st and all(sim._recorder.known(nm) for nm in names)

    def load(k: int) -> None:
        ap: ArduSubVertical = st["ap"]
        h, p = ap.health, ap.p
        a["cst"][:] = (
            float(p.SURFTRAK_DEPTH), float(p.SURFACE_DEPTH), 50.0, 5000.0, h.param_min,
            h.param_max, h.sq_min, float(h.enabled), ap.motors.a, ap.detector.surface_m,
            float(cp.switch_after), float(ap.mode == SURFTRAK),
        )  # fmt: skip
        a["sh"][:] = ap.gains.shaping
        a["lp"][:] = ap.gains.loops
        for c, (ob, at, _) in enumerate(AP_STATE):
            a["ap"][:, c] = getattr(owner(ap, ob), at)
        a["rd"][:] = float(st["readings"])
        pilot = st["pilot"]
        if pilot is None:
            a["climbs"][:] = 0.0
        else:
            clock = sim.clock
            tk = clock.start + np.arange(k, k + MAX_TICKS) * clock.dt
            a["climbs"][:] = np.asarray(ap.climb_from_stick(pilot.sample(tk)), dtype=float)
        _held(sim, blk, names, a["cur"])

    def commit(k: int, kstop: int, ticks: int) -> None:
        ap: ArduSubVertical = st["ap"]
        one = n == 1  # the plugin keeps Python floats for one vehicle, arrays otherwise
        sv = a["ap"]
        for c, (ob, at, is_bool) in enumerate(AP_STATE):
            obj = owner(ap, ob)
            x = sv[:, c]
            if one or not isinstance(getattr(obj, at), np.ndarray):  # block-wide: a scalar
                val: Any = bool(x[0]) if is_bool else float(x[0])
            else:
                val = x != 0.0 if is_bool else x.copy()
            setattr(obj, at, val)
        ap.now_us = float((kstop - 1) * TICK_US)
        st["readings"] = int(a["rd"][0])

    def finish(ticks: int) -> dict[str, np.ndarray]:
        log = a["ctun"][:ticks]
        return {nm: log[..., c : c + 1] for c, nm in enumerate(names)}

    return Laws(
        laws=[Law("control", surftrak_control, (
            "cst", "sh", "lp", "climbs", "ap", "rd", "cur", "ctun", "truth.zva",
            "bus.rangefinder", "bus.thrust"))],
        arrays=a, state=("ap", "rd", "cur"), logs=("ctun",), publishes=("thrust",),
        sources=(_SRC / "control", _SRC / "models" / "heave.py", _SRC / "sensors"),
        ready=ready, load=load, commit=commit, finish=finish,
        gpu=Worlds(n, slot.ctx.n_worlds, shared=("cst", "sh", "lp", "climbs"), log_axis=1),
    )  # fmt: skip


def motion_laws(plugin: Any, slot: Any, sim: Any) -> Laws | str | None:
    """The ``sitl_vertical`` declaration (owns ``truth.zva`` and ``bus.thrust``)."""
    mp: Any = plugin.params
    if plugin.thrust_override is not None:
        return "Python hooks (thrust override)"
    if mp.terrain == "environment":
        return "terrain 'environment' (bathymetry under a track)"
    if mp.track_speed != 0.0:
        return "a horizontal track"
    if sim.clock.substeps != 1:
        return "physics substeps"
    n = slot.block.n
    st = slot.ctx.state
    blk = slot.block
    a = {
        "coef": np.asarray(mp.coefficients, dtype=float), "heights": np.zeros(1),
        "meta": np.zeros(3), "bus.thrust": np.zeros(n), "truth.zva": np.zeros((n, 3)),
        "zlog": np.zeros((MAX_TICKS, n, 1)),
    }  # fmt: skip
    fixed: dict[str, Any] = {}

    def ready() -> bool:
        return "zva" in st and st.get("profile") is not None

    def load(k: int) -> None:
        if "heights" not in fixed:  # the profile, fixed at start
            a["heights"] = fixed["heights"] = np.asarray(st["heights"], dtype=float)
        a["meta"][:] = (
            float(st["interval"]), float(st["attrib0"]),
            math.nan if mp.contact_floor is None else mp.contact_floor,
        )  # fmt: skip
        z, v, acc = st["zva"]
        a["truth.zva"][:, 0], a["truth.zva"][:, 1], a["truth.zva"][:, 2] = z, v, acc
        a["bus.thrust"][:] = st["thrust"]
        fixed["xy"] = blk.truth.pos[:, :2].copy()

    def commit(k: int, kstop: int, ticks: int) -> None:
        zva = a["truth.zva"]
        if n == 1:
            st["zva"] = (float(zva[0, 0]), float(zva[0, 1]), float(zva[0, 2]))
        else:
            st["zva"] = (zva[:, 0].copy(), zva[:, 1].copy(), zva[:, 2].copy())
        st["thrust"] = a["bus.thrust"].copy()
        clock = sim.clock
        old = blk.truth
        pos = old.pos.copy()
        pos[:, 2] = -zva[:, 0]
        vel = np.zeros((n, 3))
        vel[:, 2] = -zva[:, 1]
        acc = np.zeros((n, 3))
        acc[:, 2] = -zva[:, 2]
        blk.truth = old.replace(pos=pos, vel=vel, accel=acc, t=clock.start + kstop * clock.dt)
        blk._truth_ro = None

    def finish(ticks: int) -> dict[str, np.ndarray]:
        pos = np.empty((ticks, n, 3))
        pos[..., :2] = fixed["xy"]
        pos[..., 2] = -a["zlog"][:ticks, :, 0]
        return {"truth.pos": pos}

    return Laws(
        laws=[Law("substep", heave_substep, ("coef", "heights", "meta", "bus.thrust",
                                              "truth.zva", "zlog"))],
        arrays=a, state=("bus.thrust", "truth.zva"), logs=("zlog",),
        sources=(_SRC / "models" / "heave.py",),
        ready=ready, load=load, commit=commit, finish=finish,
        gpu=Worlds(n, slot.ctx.n_worlds, shared=("coef", "heights", "meta"), log_axis=1),
    )  # fmt: skip


def _sensor_unsupported(plugin: Any, slot: Any) -> str | None:
    """Why the ``rangefinder`` cannot join the generated tick, whatever the motion (or None)."""
    sp: Any = plugin.params
    if sp.terrain == "environment":
        return "terrain 'environment' (bathymetry under a track)"
    if sp.geometry_source != "truth":
        return "rangefinder geometry from the belief"
    if slot.period != 1 or slot.offset != 0:
        return "a rate other than every tick"
    return None


def sensor_laws(plugin: Any, slot: Any, sim: Any) -> Laws | str | None:
    """The ``rangefinder`` declaration on ``sitl_vertical`` (its geometry: ``truth.zva``)."""
    why = _sensor_unsupported(plugin, slot)
    if why is not None:
        return why
    motion = next((s for s in sim.slots if s.block is slot.block and s.plugin.kind == "motion"), None)
    if motion is None or type(motion.plugin).__name__ != "SitlVerticalMotion":
        return "its geometry comes from sitl_vertical only"
    sp: Any = plugin.params
    mp: Any = motion.plugin.params
    same = (
        (motion.plugin.profile is plugin.profile)
        if (motion.plugin.profile or plugin.profile) else mp.terrain == sp.terrain
    ) and mp.delay == sp.delay and mp.t_inject0 == sp.t_inject0
    if not same:
        return "motion and rangefinder over different terrain schedules"
    return rangefinder_declaration(plugin, slot, sim)


def rangefinder_declaration(
    plugin: Any, slot: Any, sim: Any, geometry: Law | None = None
) -> Laws | str | None:
    """The ``rangefinder`` declaration (owns ``bus.rangefinder``; hands the subscriber's inbox
    over), whatever the motion.

    Parameters
    ----------
    plugin, slot, sim
        The sensor plugin, its slot and the simulation.
    geometry : Law, optional
        How the height above the floor is read from the motion's truth: a ``sense`` law whose
        last argument is the sensor's own array ``zva`` (n, 3), column 0 z up [m], which it
        fills before :func:`rangefinder_sense` runs.  ``None``: the motion writes the wire
        ``truth.zva`` itself (``sitl_vertical``).
    """
    why = _sensor_unsupported(plugin, slot)
    if why is not None:
        return why
    blk = slot.block
    ctl = next((s for s in sim.slots if s.block is blk and "rangefinder/distance_cm"
                in getattr(s.plugin, "subscribes", {})), None)  # fmt: skip
    n = blk.n
    st = slot.ctx.state
    names = [f"{plugin.name}.{s}" for s in SENSED]
    normals0, _ = slot.rng.buffered("normal")
    a = {
        "rows": np.zeros(1), "heights": np.zeros(1), "meta": np.zeros(6), "coef": np.zeros(9),
        "normals": np.zeros_like(normals0), "zbuf": np.zeros((1, n)),
        "cnt": np.zeros(2, dtype=np.int64), "bus.rangefinder": np.zeros((n, 3)),
        "cur": np.zeros((n, len(SENSED))), "slog": np.zeros((MAX_TICKS, n, len(SENSED))),
    }  # fmt: skip
    laws: list[Law] = []
    zva = "truth.zva"
    if geometry is not None:
        zva = geometry.args[-1]
        a[zva] = np.zeros((n, 3))
        laws.append(geometry)
    laws.append(Law("sense", rangefinder_sense, (
        "rows", "heights", "meta", "coef", "normals", "zbuf", "cnt", zva, "bus.rangefinder",
        "cur", "slog")))  # fmt: skip
    first: dict[str, Any] = {}
    clock = sim.clock

    def ready() -> bool:
        return "line" in st and slot.rng is not None and sim._recorder.known(names[0])

    def load(k: int) -> None:
        if not first:  # fixed at start: the profile, the delay line's size, the coefficients
            prof = st["profile"]
            a["rows"] = np.asarray(prof.rows, dtype=float)
            a["heights"] = np.asarray(prof.heights, dtype=float)
            a["zbuf"] = np.zeros((st["line"].buf.shape[0], n))
            a["coef"][:] = st["rf"].coefficients
            first["interval"] = prof.interval
        known = float(all(sim._recorder.known(nm) for nm in names[1:]))
        a["meta"][:] = (first["interval"], st["attrib0"], st["rf"].delay / clock.dt, st["k0"],
                        st["iv"], known)  # fmt: skip
        normals, npos = slot.rng.buffered("normal")
        a["normals"][...] = normals
        line = st["line"]
        a["cnt"][:] = (npos, line.count)
        a["zbuf"][...] = line.buf[:, :, 0]
        _held(sim, blk, names, a["cur"])
        msg = a["bus.rangefinder"]  # the reading waiting in the subscriber's inbox
        msg[:] = (0.0, -1.0, -1.0)
        if ctl is not None:
            for m in ctl.sub.inbox:
                if m.topic == "rangefinder/distance_cm":
                    msg[:, 0] = 1.0
                    msg[m.rows, 1] = np.asarray(m.value, dtype=float)
                elif m.topic == "rangefinder/signal_quality":
                    msg[m.rows, 2] = np.asarray(m.value, dtype=float)

    def commit(k: int, kstop: int, ticks: int) -> None:
        npos, zcount = (int(x) for x in a["cnt"])
        slot.rng.set_position("normal", npos)
        line = st["line"]
        line.count = zcount
        line.buf[:, :, 0] = a["zbuf"]
        if ctl is None:
            return
        ctl.sub.inbox = []
        msg = a["bus.rangefinder"]
        if msg[0, 0] != 0.0:  # a reading waits for tick kstop: back into the inbox
            bus = sim.bus
            t_stop = clock.start + kstop * clock.dt
            rows_ = np.arange(n, dtype=np.int64)
            for topic, c in (("rangefinder/distance_cm", 1), ("rangefinder/signal_quality", 2)):
                bus.publish(topic, blk.name, rows_, blk.ids[rows_], msg[:, c].copy(),
                            t_pub=t_stop, source=plugin.name)  # fmt: skip
                bus.published[topic] -= 1  # counted with the compiled readings
                bus._seq[(topic, blk.name)] -= 1
            bus.deliver(t_stop)
            for topic in ("rangefinder/distance_cm", "rangefinder/signal_quality"):
                bus.delivered[topic] -= 1

    def counts(k: int, kstop: int) -> dict[str, int]:
        k0, iv = int(st["k0"]), int(st["iv"])

        def upto(x: int) -> int:  # message ticks k0, k0 + iv, … that are <= x
            return 0 if x < k0 else (x - k0) // iv + 1

        due = upto(kstop) - upto(k)  # readings at t_{k+1} … t_{kstop}
        return {"rangefinder/distance_cm": due, "rangefinder/signal_quality": due}

    def finish(ticks: int) -> dict[str, np.ndarray]:
        log = a["slog"][:ticks]
        return {nm: log[..., c : c + 1] for c, nm in enumerate(names)}

    return Laws(
        laws=laws, arrays=a, state=("zbuf", "cnt", "bus.rangefinder", "cur"), logs=("slog",),
        counts=counts, inboxes=() if ctl is None else (ctl,), sources=(_SRC / "sensors",),
        ready=ready, load=load, commit=commit, finish=finish,
        gpu=Worlds(n, slot.ctx.n_worlds, shared=("rows", "heights", "meta", "coef"),
                   world=("cnt",), log_axis=1, axes=(("zbuf", 1),)),
    )  # fmt: skip
