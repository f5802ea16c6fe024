"""The thruster-driven 6-DOF block's compiled-capable laws and their declarations.

``station_keeping_pid`` → ``thruster_allocator`` (any mode) → ``fossen6dof`` with a T200
thruster plant and battery (e.g. ``bluerov2_station_keeping``) join the generated tick
(:mod:`marinesim.engine.compiled`) through these declarations.  The laws call the L1 laws the
plugins' Python hooks call, one copy each:
:func:`marinesim.control.station_keeping.station_keeping_row`,
the allocator's row law of its mode (declared in :mod:`marinesim.engine.plugins.alloc_laws`),
:func:`marinesim.actuators.plant.chain_row`
(with :func:`~marinesim.actuators.plant.pwm_demand`),
:func:`marinesim.models.battery.battery_row` and
:func:`marinesim.models.sixdof.generic.step_one` (the Fossen model with its guard).

Wires (shared by the three declarations, the allocator's included; one set of arrays per
block):

* ``bus.wrench_cmd`` (N, 6) — ``wrench/cmd``, controller → allocator, same tick;
* ``bus.wrench_unmet`` (N, 6) — ``wrench/unmet``, allocator → controller, read next tick
  (the message waits in the controller's inbox between ticks: ``load`` / ``commit`` take it
  over);
* ``bus.thrusters_cmd`` (N, k) — ``thrusters/cmd``, allocator → plant, held over the tick;
* ``bus.battery_voltage`` (N,) — ``battery/voltage``, plant (last substep) → allocator, read
  next tick (waits in the allocator's inbox);
* ``truth.x6`` (N, 13) — position, attitude quaternion and ν of the truth at t_k (the
  controller's belief: the block has no navigation estimate).

What stays tick by tick (the declaration says why, ``compiled: true`` reports it): a failed
thruster's message (an event), an empty or out-of-range battery (events), DESIRED_* set-point
messages, a current field, the UUV Simulator actuator bank.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
from numba.extending import register_jitable

from marinesim.actuators.plant import chain_row, pwm_demand
from marinesim.actuators.plant import row_params as plant_row_params
from marinesim.actuators.t200 import V_MAX, V_MIN
from marinesim.control.station_keeping import dot3_einsum, gain_row, station_keeping_row
from marinesim.core.frames import euler_from_quat_c, rotation_quat_c
from marinesim.core.state import VehicleState
from marinesim.engine.compiled.frozen import FROZEN_SHARED, frozen_laws, load_held
from marinesim.engine.compiled.law import MAX_TICKS, Law, Laws, Worlds
from marinesim.models import battery as battery_model
from marinesim.models.battery import battery_row
from marinesim.models.sixdof.generic import step_one

__all__ = ["hold_laws", "motion_laws"]

_SRC = Path(__file__).resolve().parents[2]
_W = "_sixdof_wires"


# ------------------------------------------------------------------------------ laws
@register_jitable
def hold_tick(k, j, t, h, g, tgt, integ, iy, tprev, unmet, active, x6, eul, veln, quat, angv,  # noqa: ANN001, ANN201
              wcmd, wunmet, e_ned, e_yaw, log):  # fmt: skip
    """One ``station_keeping_pid`` control call of every vehicle at ``t`` (belief = truth).

    The attitude and the body rates are copied into arrays of their own (``quat``, ``angv``),
    as the plugin passes them: the row law then has the argument types of the plugin's kernel
    and is compiled once for both."""
    n = x6.shape[0]
    hc = max(t - tprev[0], 1e-12)
    for i in range(n):
        q0, q1, q2, q3 = x6[i, 3], x6[i, 4], x6[i, 5], x6[i, 6]
        quat[i, 0], quat[i, 1], quat[i, 2], quat[i, 3] = q0, q1, q2, q3
        angv[i, 0], angv[i, 1], angv[i, 2] = x6[i, 10], x6[i, 11], x6[i, 12]
        r = rotation_quat_c(q0, q1, q2, q3)
        roll, pitch, yaw = euler_from_quat_c(q0, q1, q2, q3)
        eul[i, 0], eul[i, 1], eul[i, 2] = roll, pitch, yaw
        for a in range(3):  # the belief's vel_ned (R·v, in einsum's order)
            veln[i, a] = dot3_einsum(r[3 * a], r[3 * a + 1], r[3 * a + 2], x6[i, 7], x6[i, 8], x6[i, 9])
        for c in range(6):  # the unmet wrench waiting in the inbox (last tick's allocation)
            unmet[i, c] = wunmet[i, c]
    for i in range(n):
        station_keeping_row(i, g, tgt, x6, quat, eul, veln, angv, unmet, active, hc,
                            integ, iy, wcmd, e_ned, e_yaw)  # fmt: skip
        for c in range(6):
            log[j, i, c] = wcmd[i, c]
        for c in range(3):
            log[j, i, 6 + c] = e_ned[i, c]
        log[j, i, 9] = e_yaw[i] * (180.0 / math.pi)
    tprev[0] = t
    return 0


@register_jitable
def _np_sum(a, i, k):  # noqa: ANN001, ANN202
    """``a[i, :k].sum()`` in numpy's order (pairwise: 8 partial sums from 8 elements on)."""
    if k < 8:
        s = 0.0
        for j in range(k):
            s += a[i, j]
        return s
    r0, r1, r2, r3 = a[i, 0], a[i, 1], a[i, 2], a[i, 3]
    r4, r5, r6, r7 = a[i, 4], a[i, 5], a[i, 6], a[i, 7]
    j = 8
    while j < k - k % 8:
        r0 += a[i, j]
        r1 += a[i, j + 1]
        r2 += a[i, j + 2]
        r3 += a[i, j + 3]
        r4 += a[i, j + 4]
        r5 += a[i, j + 5]
        r6 += a[i, j + 6]
        r7 += a[i, j + 7]
        j += 8
    s = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while j < k:
        s += a[i, j]
        j += 1
    return s


@register_jitable
def motion_substep(k, j, s, t, h, nsub, prow, bp, fp, inv, enabled, tcmd, cmd, ucmd, vclip,  # noqa: ANN001, ANN201
                   rotor, thrust, cur, wrench, total, soc, volt, vbus, par, zero, x, xb, xq,
                   cw, work, alive, status, size, tmodel):  # fmt: skip
    """One substep of every vehicle: T200 plant at the battery voltage, battery, Fossen step.

    ``fp`` = [density, gravity, quaternion (1/0), rk4 (1/0), max speed, max rate].  Hands the
    tick back (events the plugin reports) when a battery is empty or its voltage leaves the
    T200 data, or when the model's guard stops a vehicle.
    """
    n = x.shape[0]
    kk = cmd.shape[1]
    m = x.shape[1]
    if s == 0:
        for i in range(n):
            for jj in range(kk):
                cmd[i, jj] = tcmd[i, jj]  # thrusters/cmd, held over the tick
    if s == nsub[0] - 1:  # the rows before the last substep (the truth's specific force)
        for i in range(n):
            for c in range(m):
                xq[i, c] = x[i, c]
    for i in range(n):
        if soc[i] <= 0.0 or not V_MIN <= volt[i] <= V_MAX:
            return 1  # battery events: the plugins run this tick
        vclip[i] = volt[i]
        for jj in range(kk):
            ucmd[i, jj] = pwm_demand(cmd[i, jj], inv[jj], enabled[i, jj])
        chain_row(i, prow, ucmd, vclip, rotor, thrust, cur, wrench)
        total[i] = _np_sum(cur, i, kk)
        battery_row(i, bp, soc, total, h, volt)
    for i in range(n):
        step_one(i, par, zero, x, wrench, cw, fp[0], fp[1], h, fp[2] != 0.0, fp[3] != 0.0,
                 fp[4], fp[5], alive, work, xb, status, size)  # fmt: skip
        if status[i] != 0:
            return 1  # the guard stopped it: the plugins run this tick (event, non-finite)
    for i in range(n):
        for c in range(m):
            x[i, c] = xb[i, c]
    if s == nsub[0] - 1:
        for i in range(n):
            vbus[i] = volt[i]  # battery/voltage, published at the last substep
    tmodel[0] = tmodel[0] + h
    return 0


@register_jitable
def motion_after(k, j, t, h, x, x6, thrust, rotor, cur, volt, soc, wrench, xlog, alog):  # noqa: ANN001, ANN201
    """The truth at t_{k+1} (the controller's belief next tick) and the frame's signals."""
    n = x.shape[0]
    kk = thrust.shape[1]
    for i in range(n):
        for c in range(13):
            x6[i, c] = x[i, c]
            xlog[j, i, c] = x[i, c]
        roll, pitch, yaw = euler_from_quat_c(x[i, 3], x[i, 4], x[i, 5], x[i, 6])
        xlog[j, i, 13], xlog[j, i, 14], xlog[j, i, 15] = roll, pitch, yaw
        for jj in range(kk):
            alog[j, i, jj] = thrust[i, jj]
            alog[j, i, kk + jj] = rotor[i, jj]
            alog[j, i, 2 * kk + jj] = cur[i, jj]
        for c in range(6):
            alog[j, i, 3 * kk + c] = wrench[i, c]
        alog[j, i, 3 * kk + 6] = volt[i]
        alog[j, i, 3 * kk + 7] = soc[i]
    return 0


# ------------------------------------------------------------------------------ declarations
def _wires(sim: Any, blk: Any, k: int) -> dict[str, np.ndarray]:
    """The block's wire arrays, one set shared by the three declarations."""
    store = sim.__dict__.setdefault(_W, {})
    n = blk.n
    w = store.get(blk.name)
    if w is None or w["bus.thrusters_cmd"].shape != (n, k):
        w = store[blk.name] = {
            "bus.wrench_cmd": np.zeros((n, 6)), "bus.wrench_unmet": np.zeros((n, 6)),
            "bus.thrusters_cmd": np.zeros((n, k)), "bus.battery_voltage": np.zeros(n),
            "truth.x6": np.zeros((n, 13)),
        }  # fmt: skip
    return w


def _n_thrusters(sim: Any, blk: Any) -> int | None:
    motion = next((s for s in sim.slots if s.block is blk and s.plugin.kind == "motion"), None)
    plant = getattr(motion.plugin, "plant", None) if motion is not None else None
    return None if plant is None else plant.k


def _take(slot: Any, topic: str, out: np.ndarray) -> None:
    """``out`` updated by the rows of the messages on ``topic`` waiting in ``slot``'s inbox."""
    for msg in slot.sub.inbox:
        if msg.topic == topic:
            out[msg.rows] = np.asarray(msg.value, dtype=float).reshape((len(msg.rows), *out.shape[1:]))


def _put_back(sim: Any, slot: Any, topic: str, value: np.ndarray, kstop: int) -> None:
    """The message published in the last compiled tick, waiting in ``slot``'s inbox again."""
    bus = sim.bus
    blk = slot.block
    source = next((s.plugin.name for s in sim.slots if s.block is blk
                   and topic in getattr(s.plugin, "publishes", {})), "")  # fmt: skip
    slot.sub.inbox = [m for m in slot.sub.inbox if m.topic != topic]
    t_stop = sim.clock.start + kstop * sim.clock.dt
    rows = np.arange(blk.n, dtype=np.int64)
    bus.publish(topic, blk.name, rows, blk.ids[rows], value.copy(), t_pub=t_stop, source=source)
    bus.published[topic] -= 1  # counted with the compiled calls
    bus._seq[(topic, blk.name)] -= 1
    bus.deliver(t_stop)
    bus.delivered[topic] -= 1


def _due(slot: Any, k0: int, kstop: int) -> int:
    """How many of ticks k0 … kstop − 1 the slot's control hook was due at."""
    p, o = slot.period, slot.offset
    if p == 1:
        return kstop - k0

    def upto(x: int) -> int:  # due ticks o, o + p, … below x
        return 0 if x <= o else (x - o - 1) // p + 1

    return upto(kstop) - upto(k0)


def _split(sim: Any, slot: Any, topics: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``topics`` that reach a subscriber, and those that do not (the bus counts them as
    published without a subscriber: the plugin's ``ctx.publish`` sends nothing then)."""
    heard = tuple(t for t in topics if sim.bus.wanted(t, slot.block.name, "local"))
    return heard, tuple(t for t in topics if t not in heard)


def _unheard(sim: Any, slot: Any, topics: tuple[str, ...], k0: int, kstop: int) -> None:
    calls = _due(slot, k0, kstop)
    for t in topics:
        sim.bus.unheard[t] = sim.bus.unheard.get(t, 0) + calls


def hold_laws(plugin: Any, slot: Any, sim: Any) -> Laws | str:
    """The ``station_keeping_pid`` declaration (set-points from its parameters)."""
    blk = slot.block
    k = _n_thrusters(sim, blk)
    if k is None:
        return "its wrench goes to a plant without T200 thrusters"
    n = blk.n
    st = slot.ctx.state
    w = _wires(sim, blk, k)
    a = {
        "g": gain_row(plugin.params), "tgt": np.zeros((n, 4)), "integ": np.zeros((n, 3)),
        "iy": np.zeros(n), "tprev": np.zeros(1), "unmet": np.zeros((n, 6)),
        "active": np.ones(n, dtype=np.bool_), "eul": np.zeros((n, 3)), "veln": np.zeros((n, 3)),
        "quat": np.zeros((n, 4)), "angv": np.zeros((n, 3)), "e_ned": np.zeros((n, 3)),
        "e_yaw": np.zeros(n), "log": np.zeros((MAX_TICKS, n, 10)),
        **w,
    }  # fmt: skip
    name = plugin.name
    heard, unheard = _split(sim, slot, ("wrench/cmd",))

    def ready() -> bool:
        if "target" not in st or not math.isfinite(st.get("t_prev", math.nan)):
            return False
        return all(m.topic == "wrench/unmet" for m in slot.sub.inbox)

    def load(k0: int) -> None:
        a["tgt"][...] = st["target"]
        a["integ"][...] = st["int_ned"]
        a["iy"][...] = st["int_yaw"]
        a["tprev"][0] = st["t_prev"]
        a["bus.wrench_unmet"][...] = st["unmet"]
        _take(slot, "wrench/unmet", a["bus.wrench_unmet"])

    def commit(k0: int, kstop: int, ticks: int) -> None:
        st["int_ned"] = a["integ"].copy()
        st["int_yaw"] = a["iy"].copy()
        st["t_prev"] = float(a["tprev"][0])
        st["unmet"] = a["unmet"].copy()
        _unheard(sim, slot, unheard, k0, kstop)
        _put_back(sim, slot, "wrench/unmet", a["bus.wrench_unmet"], kstop)

    def finish(ticks: int) -> dict[str, np.ndarray]:
        lg = a["log"][:ticks]
        return {
            f"{name}.wrench": lg[..., 0:6], f"{name}.error": lg[..., 6:9],
            f"{name}.heading_error": lg[..., 9:10],
            f"{name}.target": np.broadcast_to(a["tgt"], (ticks, n, 4)),
        }  # fmt: skip

    return Laws(
        laws=[Law("control", hold_tick, (
            "g", "tgt", "integ", "iy", "tprev", "unmet", "active", "truth.x6", "eul", "veln",
            "quat", "angv", "bus.wrench_cmd", "bus.wrench_unmet", "e_ned", "e_yaw", "log"))],
        arrays=a, state=("integ", "iy", "tprev", "unmet"), logs=("log",),
        publishes=heard, inboxes=(slot,),
        sources=(_SRC / "control" / "station_keeping.py", _SRC / "core" / "frames.py"),
        ready=ready, load=load, commit=commit, finish=finish,
        gpu=Worlds(n, slot.ctx.n_worlds, shared=("g",), world=("tprev",), log_axis=1),
    )  # fmt: skip


def motion_laws(plugin: Any, slot: Any, sim: Any) -> Laws | str | None:
    """The ``fossen6dof`` declaration for a Fossen model driven by a T200 plant (PWM input)."""
    from marinesim.models.sixdof import fossen6dof
    from marinesim.models.sixdof.motion import FossenMotion

    p: Any = plugin.params
    if not isinstance(plugin.motion, FossenMotion):
        return None
    if p.thrusters is None or plugin.plant is None:
        return "a Fossen model without a T200 thruster plant"
    if p.thrusters.input != "pwm":
        return "thruster input 'force' (the force → ESC inversion runs in numpy)"
    if sim.env.current_field is not None:
        return "a current field (sampled along the track in Python)"
    plant = plugin.plant
    tp = p.thrusters
    blk = slot.block
    n, k = blk.n, plant.k
    st = slot.ctx.state
    env = sim.env
    w = _wires(sim, blk, k)
    built = plugin.motion.built
    par, zero = fossen6dof._kernel_params(built)
    quat = built.attitude == "quaternion"
    if not quat:
        return "Euler-angle attitude (the compiled motion holds a quaternion)"
    h = sim.clock.h
    cw = np.zeros((n, 3))
    cw[:, 0], cw[:, 1] = env.current_north, env.current_east
    a: dict[str, Any] = {
        "nsub": np.array([int(sim.clock.substeps)], dtype=np.int64),
        "prow": plant_row_params(plant, h), "bp": battery_model.row_params(tp.battery),
        "fp": np.array([env.density, env.gravity, 1.0, float(built.integrator == "rk4"),
                        built.max_speed, built.max_rate]),
        "inv": np.ascontiguousarray(plant.signal_inverted, dtype=np.bool_),
        "enabled": np.ones((n, k), dtype=np.bool_),
        **{x: np.zeros((n, k)) for x in ("cmd", "ucmd", "rotor", "thrust", "cur")},
        "vclip": np.zeros(n), "wrench": np.zeros((n, 6)), "total": np.zeros(n),
        "soc": np.zeros(n), "volt": np.zeros(n), "par": par, "zero": zero,
        "x": np.zeros((n, 13)), "xb": np.zeros((n, 13)), "xq": np.zeros((n, 13)), "cw": cw,
        "work": np.zeros((n, 5, 13)), "alive": np.ones(n, dtype=np.bool_),
        "status": np.zeros(n, dtype=np.int8), "size": np.zeros(n), "tmodel": np.zeros(1),
        "xlog": np.zeros((MAX_TICKS, n, 16)), "alog": np.zeros((MAX_TICKS, n, 3 * k + 8)), **w,
    }  # fmt: skip
    hold = frozen_laws(a, ("truth.x6",))  # an ended world's truth stays where it ended
    mname = plugin.name
    pubs = tuple(t for t in ("battery/voltage", "thrusters/current", "thrusters/thrust")
                 if slot.ctx.wants(t))  # fmt: skip

    def ready() -> bool:
        if "x" not in st or "battery" not in st or st["bad"].any() or not st["x"].alive.all():
            return False
        if st["v_clamped"].any() or st.get("b_cut", np.zeros(1, bool)).any():
            return False  # the plugin reported a battery event: it goes on tick by tick
        return not slot.sub.inbox

    def load(k0: int) -> None:
        x = st["x"]
        a["x"][:, 0:3] = x.pos
        a["x"][:, 3:7] = x.att
        a["x"][:, 7:13] = x.nu
        a["truth.x6"][...] = a["x"]
        load_held(sim, blk, a, lambda tr: {"truth.x6": np.concatenate(
            [tr.pos, tr.quat, tr.vel, tr.ang_vel], axis=1)})  # fmt: skip
        a["tmodel"][0] = x.t
        a["enabled"][...] = st["enabled"]
        a["cmd"][...] = st["cmd"]
        a["bus.thrusters_cmd"][...] = st["cmd"]
        a["rotor"][...] = st["rotor"]
        a["thrust"][...] = st["thrust"]
        a["cur"][...] = st["current"]
        a["soc"][...] = st["battery"].soc
        a["volt"][...] = st["voltage"]
        a["wrench"][...] = st["wrench"]

    def commit(k0: int, kstop: int, ticks: int) -> None:
        clock = sim.clock
        motion = st["motion"]
        xa = a["x"].copy()
        x1 = fossen6dof.State(pos=xa[:, 0:3], att=xa[:, 3:7], nu=xa[:, 7:13],
                              alive=np.ones(n, dtype=bool), t=float(a["tmodel"][0]))  # fmt: skip
        st["x"] = x1
        for key, arr in (("cmd", "cmd"), ("rotor", "rotor"), ("thrust", "thrust"),
                         ("current", "cur"), ("voltage", "volt"), ("wrench", "wrench")):
            st[key] = a[arr].copy()
        st["battery"] = battery_model.State(a["soc"].copy())
        st["b_cut"] = np.zeros(n, dtype=bool)
        pos, q, vel, ang = motion.pose(x1)
        st["accel"] = motion.specific_force(a["xq"][:, 7:13].copy(), x1, clock.h, env.gravity, q)
        t_stop = clock.start + kstop * clock.dt
        blk.truth = VehicleState(pos.copy(), q.copy(), vel.copy(), ang.copy(),
                                 st["accel"].copy(), t_stop)  # fmt: skip
        blk._truth_ro = None

    def finish(ticks: int) -> dict[str, np.ndarray]:
        from marinesim.core.frames import angle360

        xl, al = a["xlog"][:ticks], a["alog"][:ticks]
        cur = al[..., 2 * k : 3 * k]
        en = np.broadcast_to(a["enabled"].astype(float), (ticks, n, k))
        return {
            "truth.pos": xl[..., 0:3],
            "truth.heading": angle360(np.degrees(xl[..., 15]))[..., None],
            "truth.speed": xl[..., 7:8],
            f"{mname}.euler": np.degrees(xl[..., 13:16]),
            f"{mname}.nu": xl[..., 7:13],
            f"{mname}.thrust": al[..., 0:k], f"{mname}.rotor": al[..., k : 2 * k],
            f"{mname}.current": cur, f"{mname}.current_total": cur.sum(axis=-1)[..., None],
            f"{mname}.voltage": al[..., 3 * k + 6 : 3 * k + 7],
            f"{mname}.soc": al[..., 3 * k + 7 : 3 * k + 8],
            f"{mname}.enabled": en, f"{mname}.wrench": al[..., 3 * k : 3 * k + 6],
        }  # fmt: skip

    return Laws(
        laws=[
            Law("substep", motion_substep, (
                "nsub", "prow", "bp", "fp", "inv", "enabled", "bus.thrusters_cmd", "cmd",
                "ucmd", "vclip", "rotor", "thrust", "cur", "wrench", "total", "soc", "volt",
                "bus.battery_voltage", "par", "zero", "x", "xb", "xq", "cw", "work", "alive",
                "status", "size", "tmodel")),
            Law("after_physics", motion_after, (
                "x", "truth.x6", "thrust", "rotor", "cur", "volt", "soc", "wrench", "xlog",
                "alog")),
            *hold,
        ],
        arrays=a,
        state=("cmd", "rotor", "thrust", "cur", "wrench", "soc", "volt", "x", "xq", "alive",
               "status", "size", "tmodel", "bus.thrusters_cmd", "bus.battery_voltage",
               "bus.wrench_cmd", "bus.wrench_unmet", "truth.x6"),
        logs=("xlog", "alog"), publishes=pubs,
        sources=(_SRC / "models" / "sixdof", _SRC / "models" / "battery.py",
                 _SRC / "actuators" / "plant.py", _SRC / "actuators" / "t200_law.py",
                 _SRC / "core" / "frames.py"),
        ready=ready, load=load, commit=commit, finish=finish,
        gpu=Worlds(n, slot.ctx.n_worlds, shared=("nsub", "prow", "bp", "fp", "inv", "par", "zero",
                                                 *FROZEN_SHARED),
                   world=("tmodel",), log_axis=1),
        holds=True,
    )  # fmt: skip
