"""The ``thruster_allocator``'s compiled-capable laws and its declaration (every mode).

:func:`alloc_laws` declares the allocator of the thruster-driven 6-DOF block
(:mod:`marinesim.engine.plugins.sixdof_laws`, whose wires it shares) in the generated tick:
``pinv`` (:func:`alloc_tick`, :func:`marinesim.allocation.kernels.pinv_one`), ``qp`` /
``constrained`` with its force-rate window (:func:`alloc_qp_tick`,
:func:`marinesim.allocation.qp_rows.qp_one`) and ``redistributed_pinv`` (:func:`alloc_rd_tick`,
:func:`marinesim.allocation.redistributed_rows.redistributed_one`) — the row laws
``Allocator.pinv`` / ``qp`` / ``redistributed_pinv`` walk, one copy each.  Every row must have
the same failed thrusters (a failure heard on the bus switches the allocator at the next
load); the force bounds per rounded battery voltage come from ``Allocator.bounds``,
tabulated once per process.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
from numba.extending import register_jitable

from marinesim.actuators.t200 import V_MAX, V_MIN
from marinesim.actuators.t200_law import cubic_at_voltage
from marinesim.allocation.kernels import pinv_one
from marinesim.allocation.qp_rows import MAX_ITER as QP_MAX_ITER
from marinesim.allocation.qp_rows import qp_one
from marinesim.allocation.redistributed_rows import redistributed_one
from marinesim.engine.compiled.law import MAX_TICKS, Law, Laws, Worlds
from marinesim.engine.plugins.sixdof_laws import (
    _n_thrusters,
    _put_back,
    _split,
    _take,
    _unheard,
    _wires,
)

__all__ = ["alloc_laws", "alloc_qp_tick", "alloc_rd_tick", "alloc_tick"]

_SRC = Path(__file__).resolve().parents[2]


@register_jitable
def _round_half_even(x):  # noqa: ANN001, ANN202
    """``np.round(x)`` (half to even) of a finite float."""
    r = math.floor(x)
    d = x - r
    if d > 0.5 or (d == 0.5 and r % 2.0 == 1.0):
        r += 1.0
    return r


@register_jitable
def alloc_tick(k, j, t, h, fp, tprev, volt, vbus, wcmd, tau, vq, bpinv, bact, sig, gain, table, lo, hi, lo_e, hi_e,  # noqa: ANN001, ANN201
               craw, coef, force, u, pwm, cur, cur_tot, scale, achieved, unmet_k, sat,
               binding, status, tcmd, wunmet, log):  # fmt: skip
    """One ``thruster_allocator`` (``pinv``) control call of every vehicle at ``t``.

    ``fp`` = [voltage resolution, bus voltage (1) or fixed (0), output PWM (1) or force (0),
    F_unit, dead band, total current limit, k0 of the bound table]; ``table`` (R, 4, n): the
    allocator's bounds (lo, hi, lo_env, hi_env) per rounded voltage k0 + r.
    """
    n = wcmd.shape[0]
    kk = force.shape[1]
    for i in range(n):
        _alloc_inputs(i, fp, volt, vbus, wcmd, tau, vq, table, craw, coef, (lo, hi, lo_e, hi_e))
    ins = (tau, vq, bpinv, bact, sig, gain, lo, hi, lo_e, hi_e, craw, coef,
           fp[3], fp[4], fp[5])  # fmt: skip
    outs = (force, u, pwm, cur, cur_tot, scale, achieved, unmet_k, sat, binding, status)
    for i in range(n):
        pinv_one(i, ins, outs)
        _alloc_log(j, i, kk, fp, tau, vq, force, pwm, cur, sat, achieved, scale, status, tcmd,
                   wunmet, log)  # fmt: skip
    tprev[0] = t
    return 0


@register_jitable
def _alloc_inputs(i, fp, volt, vbus, wcmd, tau, vq, table, craw, coef, bounds):  # noqa: ANN001, ANN202
    """Row i's demand, voltage (rounded as the plugin rounds it), bounds and cubics."""
    if fp[1] != 0.0:
        volt[i] = vbus[i]  # the battery/voltage message of the last tick
    for c in range(6):
        tau[i, c] = wcmd[i, c]
    # rounded to voltage_resolution (the allocator's per-voltage bounds)
    res = fp[0]
    ri = _round_half_even(volt[i] / res)
    vq[i] = min(max(ri * res, V_MIN), V_MAX)
    row = int(min(max(ri - fp[6], 0.0), table.shape[0] - 1.0))
    for q in range(len(bounds)):
        out = bounds[q]
        for jj in range(out.shape[1]):
            out[i, jj] = table[row, q, jj]
    for m in range(2):
        for b in range(2):
            cubic_at_voltage(craw, m, b, vq[i], coef, i)


@register_jitable
def _alloc_log(j, i, kk, fp, tau, vq, force, pwm, cur, sat, achieved, scale, status, tcmd,  # noqa: ANN001, ANN202
               wunmet, log):  # fmt: skip
    """Row i's commands, unmet wrench and log row (the plugin's ``ctx.log`` signals)."""
    for jj in range(kk):
        tcmd[i, jj] = pwm[i, jj] if fp[2] != 0.0 else force[i, jj]
        log[j, i, jj] = pwm[i, jj]
        log[j, i, kk + jj] = force[i, jj]
        log[j, i, 2 * kk + jj] = cur[i, jj]
        log[j, i, 3 * kk + jj] = 1.0 if sat[i, jj] else 0.0
    for c in range(6):
        wunmet[i, c] = tau[i, c] - achieved[i, c]
        log[j, i, 4 * kk + c] = wunmet[i, c]
    log[j, i, 4 * kk + 6] = vq[i]
    log[j, i, 4 * kk + 7] = scale[i]
    log[j, i, 4 * kk + 8] = status[i]


@register_jitable
def alloc_qp_tick(k, j, t, h, fp, tprev, volt, vbus, wcmd, tau, vq, table, lo, hi, fprev, w, hq,  # noqa: ANN001, ANN201
                  wb, bact, sig, gain, craw, coef, force, lo_r, hi_r, cq, fixed, at_hi, mq, xq,
                  idx, yq, u, pwm, cur, cur_tot, scale, achieved, unmet_k, sat, binding, status,
                  tcmd, wunmet, log):  # fmt: skip
    """One ``thruster_allocator`` (``qp``) control call of every vehicle at ``t``: the row law
    :func:`marinesim.allocation.qp_rows.qp_one` (``fp`` as :func:`alloc_tick`'s, and fp[7] the
    force-rate limit Δ [N/s], < 0: none).  Hands the tick back when an active set did not
    converge (the plugin raises the error)."""
    n = wcmd.shape[0]
    kk = force.shape[1]
    dr = -1.0
    if fp[7] >= 0.0:
        dr = fp[7] * max(t - tprev[0], 1e-12)  # Δ·dt since the last call
    for i in range(n):
        _alloc_inputs(i, fp, volt, vbus, wcmd, tau, vq, table, craw, coef, (lo, hi))
        for jj in range(kk):
            fprev[i, jj] = force[i, jj]
    ins = (tau, w, hq, wb, bact, lo, hi, fprev, dr, QP_MAX_ITER, vq, sig, gain, craw, coef,
           fp[3], fp[4], fp[5])  # fmt: skip
    outs = (force, lo_r, hi_r, cq, fixed, at_hi, mq, xq, idx, yq, u, pwm, cur, cur_tot, scale,
            achieved, unmet_k, sat, binding, status)  # fmt: skip
    for i in range(n):
        qp_one(i, ins, outs)
        if status[i] < 0:
            return 1
        _alloc_log(j, i, kk, fp, tau, vq, force, pwm, cur, sat, achieved, scale, status, tcmd,
                   wunmet, log)  # fmt: skip
    tprev[0] = t
    return 0


@register_jitable
def alloc_rd_tick(k, j, t, h, fp, tprev, volt, vbus, wcmd, tau, vq, table, lo, hi, bact, tw, en,  # noqa: ANN001, ANN201
                  sig, gain, craw, coef, force, fixed, gm, vec, rr, zz, x0, u, pwm, cur, cur_tot,
                  scale, achieved, unmet_k, sat, binding, status, tcmd, wunmet, log):  # fmt: skip
    """One ``thruster_allocator`` (``redistributed_pinv``) control call of every vehicle at
    ``t``: the row law :func:`marinesim.allocation.redistributed_rows.redistributed_one`
    (``fp`` as :func:`alloc_tick`'s)."""
    n = wcmd.shape[0]
    kk = force.shape[1]
    for i in range(n):
        _alloc_inputs(i, fp, volt, vbus, wcmd, tau, vq, table, craw, coef, (lo, hi))
    ins = (tau, bact, tw, en, lo, hi, vq, sig, gain, craw, coef, fp[3], fp[4], fp[5])
    outs = (force, fixed, gm, vec, rr, zz, x0, u, pwm, cur, cur_tot, scale, achieved, unmet_k,
            sat, binding, status)  # fmt: skip
    for i in range(n):
        redistributed_one(i, ins, outs)
        _alloc_log(j, i, kk, fp, tau, vq, force, pwm, cur, sat, achieved, scale, status, tcmd,
                   wunmet, log)  # fmt: skip
    tprev[0] = t
    return 0


#: Bound tables by (layout, T200 sides, failed pattern, limits, resolution): built once per
#: process (a bundled scenario run again, a batch of them).
_TABLES: dict[tuple[Any, ...], tuple[np.ndarray, float]] = {}


def _bound_table(plugin: Any, alloc: Any, res: float) -> tuple[np.ndarray, float]:
    """The allocator's bounds (lo, hi, lo_env, hi_env) at every rounded voltage in the T200
    data (:meth:`~marinesim.allocation.solve.Allocator.bounds`, one vectorised call), built
    once per process for each allocator set-up and resolution.

    The plugin asks for one voltage at a time; the solve is element-wise, so both give the
    same bits (checked here on three voltages; a platform where they differ gets the table
    one voltage at a time, slower to build).
    """
    p: Any = plugin.params
    g = alloc.geometry
    key = (p.layout, p.bound_set, tuple(bool(x) for x in g.enabled), repr(alloc.limits), res)
    cache = _TABLES
    if len(cache) > 64:
        cache.clear()
    hit = cache.get(key)
    if hit is None:
        k0 = math.floor(V_MIN / res) - 1
        k1 = math.ceil(V_MAX / res) + 1
        volts = np.array([min(max(float(r) * res, V_MIN), V_MAX) for r in range(k0, k1 + 1)])

        def one(v: float) -> np.ndarray:
            return np.stack([np.asarray(x)[0] for x in alloc.bounds(np.array([v]))])

        table = np.ascontiguousarray(np.stack(alloc.bounds(volts), axis=1))
        picks = (0, len(volts) // 2, len(volts) - 3)
        if any(one(volts[i]).tobytes() != table[i].tobytes() for i in picks):
            table = np.ascontiguousarray(np.stack([one(v) for v in volts]))
        hit = cache[key] = (table, float(k0))
    return hit


def alloc_laws(plugin: Any, slot: Any, sim: Any) -> Laws | str:
    """The ``thruster_allocator`` declaration: mode ``pinv`` (:func:`alloc_tick`), ``qp`` /
    ``constrained`` (:func:`alloc_qp_tick`, with its force-rate limit) or
    ``redistributed_pinv`` (:func:`alloc_rd_tick`), every row with the same failed thrusters (a failure reported on the bus switches the allocator at the next
    load)."""
    from marinesim.allocation.limits import cubic_kernel_args
    from marinesim.allocation.pinv import _geometry_args
    from marinesim.allocation.qp import qp_geometry

    p: Any = plugin.params
    mode = "qp" if p.mode == "constrained" else p.mode
    blk = slot.block
    k = _n_thrusters(sim, blk)
    if k is None or k != len(plugin.layout.thrusters):
        return "its commands go to a plant without the same T200 thrusters"
    n = blk.n
    st = slot.ctx.state
    w = _wires(sim, blk, k)
    res = float(p.voltage_resolution)
    fp = np.zeros(8)
    a0: dict[str, Any] = {"bpinv": np.zeros((k, 6)), "bact": np.zeros((6, k)), "sig": np.zeros(k),
                          "gain": np.zeros(k), "craw": np.zeros((2, 2, 10)), "w": np.zeros(6),
                          "hq": np.zeros((k, k)), "wb": np.zeros((6, k)), "tw": np.ones(k),
                          "en": np.ones(k, dtype=np.bool_)}  # fmt: skip
    now: list[Any] = [None]

    def setup(pattern: tuple[bool, ...]) -> None:
        """Geometry, bound table and T200 model of the allocator of a failure pattern (in
        place: the compiled tick holds these arrays)."""
        alloc = plugin._allocator(pattern)
        craw, fscale, x_dead = cubic_kernel_args(alloc.model)
        for key, val in zip(("bpinv", "bact", "sig", "gain"), _geometry_args(alloc), strict=True):
            a0[key][...] = val
        a0["craw"][...] = craw
        for key, val in zip(("w", "hq", "wb"), qp_geometry(alloc, alloc.dof_weights), strict=False):
            a0[key][...] = val
        a0["en"][...] = alloc.geometry.enabled
        table, r0 = _bound_table(plugin, alloc, res)
        if "table" not in a0:
            a0["table"] = table.copy()
        a0["table"][...] = table
        imax = alloc.limits.max_current_total
        rate = -1.0 if p.max_force_rate is None else float(p.max_force_rate)
        fp[:] = (res, float(p.voltage is None), float(p.output == "pwm"), fscale, x_dead,
                 math.inf if imax is None else float(imax), r0, rate)  # fmt: skip
        now[0] = pattern

    setup(tuple(i not in p.failed for i in range(k)))
    a: dict[str, Any] = {
        "fp": fp, "tprev": np.zeros(1), "volt": np.zeros(n), "tau": np.zeros((n, 6)), "vq": np.zeros(n),
        **a0,
        **{x: np.zeros((n, k)) for x in ("lo", "hi", "lo_e", "hi_e")},
        "coef": np.zeros((n, 2, 2, 4)),
        "force": np.zeros((n, k)), "u": np.zeros((n, k)), "pwm": np.zeros((n, k)),
        "cur": np.zeros((n, k)), "cur_tot": np.zeros(n), "scale": np.zeros(n),
        "achieved": np.zeros((n, 6)), "unmet_k": np.zeros((n, 6)),
        "sat": np.zeros((n, k), dtype=np.bool_), "binding": np.zeros(n, dtype=np.int8),
        "status": np.zeros(n, dtype=np.int8), "log": np.zeros((MAX_TICKS, n, 4 * k + 9)), **w,
    }  # fmt: skip
    kq = max(k, 6)
    if mode == "qp":  # the row law's rate-windowed bounds and scratch
        a.update({x: np.zeros((n, k)) for x in ("fprev", "lo_r", "hi_r", "cq", "yq")})
        a.update({"fixed": np.zeros((n, k), dtype=np.bool_), "at_hi": np.zeros((n, k), dtype=np.bool_),
                  "mq": np.zeros((n, kq, kq)), "xq": np.zeros((n, kq)),
                  "idx": np.zeros((n, k), dtype=np.int64)})  # fmt: skip
    elif mode == "redistributed_pinv":  # the rounds' scratch
        a.update({"fixed": np.zeros((n, k), dtype=np.bool_), "gm": np.zeros((n, 6, 6)),
                  "vec": np.zeros((n, 6, 6)), "rr": np.zeros((n, 6)), "zz": np.zeros((n, 6)),
                  "x0": np.zeros((n, k))})  # fmt: skip
    name = plugin.name
    heard, unheard = _split(sim, slot, ("thrusters/cmd", "wrench/achieved", "wrench/unmet"))

    def ready() -> bool:
        if "enabled" not in st or not math.isfinite(st.get("t_prev", math.nan)):
            return False
        en = st["enabled"]
        if not np.all(en == en[:1]):
            return False  # rows with different failures: the plugin allocates per pattern
        return all(m.topic == "battery/voltage" for m in slot.sub.inbox)

    def load(k0: int) -> None:
        pattern = tuple(bool(x) for x in st["enabled"][0])
        if pattern != now[0]:  # a thruster failed (fault_aware): its allocator from now on
            setup(pattern)
        a["tprev"][0] = st["t_prev"]
        a["volt"][...] = st["voltage"]
        a["force"][...] = st["force"]  # qp's rate window starts from the last forces
        a["bus.battery_voltage"][...] = st["voltage"]
        if p.voltage is None:
            _take(slot, "battery/voltage", a["bus.battery_voltage"])

    def commit(k0: int, kstop: int, ticks: int) -> None:
        st["voltage"] = a["volt"].copy()
        st["tau"] = a["tau"].copy()
        st["force"] = a["force"].copy()
        st["t_prev"] = float(a["tprev"][0])
        _unheard(sim, slot, unheard, k0, kstop)
        if p.voltage is None:
            _put_back(sim, slot, "battery/voltage", a["bus.battery_voltage"], kstop)

    def finish(ticks: int) -> dict[str, np.ndarray]:
        lg = a["log"][:ticks]
        cur = lg[..., 2 * k : 3 * k]
        return {
            f"{name}.pwm": lg[..., 0:k], f"{name}.force": lg[..., k : 2 * k],
            f"{name}.current": cur, f"{name}.current_total": cur.sum(axis=-1)[..., None],
            f"{name}.voltage": lg[..., 4 * k + 6 : 4 * k + 7],
            f"{name}.scale": lg[..., 4 * k + 7 : 4 * k + 8],
            f"{name}.status": lg[..., 4 * k + 8 : 4 * k + 9],
            f"{name}.saturated": lg[..., 3 * k : 4 * k], f"{name}.unmet": lg[..., 4 * k : 4 * k + 6],
        }  # fmt: skip

    head = ("fp", "tprev", "volt", "bus.battery_voltage", "bus.wrench_cmd", "tau", "vq")
    tail = ("u", "pwm", "cur", "cur_tot", "scale", "achieved", "unmet_k", "sat", "binding",
            "status", "bus.thrusters_cmd", "bus.wrench_unmet", "log")  # fmt: skip
    if mode == "qp":
        law = Law("control", alloc_qp_tick, (*head, "table", "lo", "hi", "fprev", "w", "hq", "wb",
                  "bact", "sig", "gain", "craw", "coef", "force", "lo_r", "hi_r", "cq", "fixed",
                  "at_hi", "mq", "xq", "idx", "yq", *tail))  # fmt: skip
    elif mode == "redistributed_pinv":
        law = Law("control", alloc_rd_tick, (*head, "table", "lo", "hi", "bact", "tw", "en",
                  "sig", "gain", "craw", "coef", "force", "fixed", "gm", "vec", "rr", "zz", "x0",
                  *tail))  # fmt: skip
    else:
        law = Law("control", alloc_tick, (*head, "bpinv", "bact", "sig", "gain", "table", "lo",
                  "hi", "lo_e", "hi_e", "craw", "coef", "force", *tail))  # fmt: skip
    laws = Laws(
        laws=[law],
        arrays=a, state=("tprev", "volt", "tau", "force"), logs=("log",),
        publishes=heard, inboxes=(slot,),
        sources=(_SRC / "allocation", _SRC / "actuators" / "t200_law.py"),
        ready=ready, load=load, commit=commit, finish=finish,
        gpu=Worlds(n, slot.ctx.n_worlds, shared=(*a0, "fp"), world=("tprev",), log_axis=1),
    )  # fmt: skip
    return laws
