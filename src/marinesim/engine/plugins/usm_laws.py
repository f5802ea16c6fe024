"""The uSimMarine survey block's compiled-capable laws and their declarations.

``usm`` (motion), ``heading_speed_depth_pid`` (controller), ``waypoints`` (autonomy) and
``event_script`` join the generated tick (:mod:`marinesim.engine.compiled`) through these
declarations.  The laws call L1 row functions: :func:`marinesim.models.usm.rows.usm_mail_cmd`
and :func:`marinesim.models.usm.rows.usm_propagate` (the model's mail and its one
propagation law, which the plugin's ``iterate`` runs too),
:func:`marinesim.environment.current.force_row` (the current field),
:func:`marinesim.control.pid.pid_row` and :func:`marinesim.control.guidance.waypoint_row`
(the one copy of those laws: the plugins' ``pid_update`` and ``waypoint_update`` walk them).

Wires: the autonomy writes ``bus.desired`` (N, 3: heading, speed, depth — the
``DESIRED_*`` topics the PID holds, its ``desired`` state); the PID writes ``bus.usm_cmd``
(N, 3: rudder, thrust, elevator) and sets ``bus.usm_mail`` (the model applies the three
messages at its next iteration); the model writes ``truth.pos``, ``truth.quat``,
``truth.speed``.  A waypoint reached stays in the tick (its event is noted and emitted at the
commit); a vehicle's finish that leaves its world with every vehicle done ends the compiled
call after its tick (the ``all_done`` end condition is Python's).  What only Python does hands
the tick back: a script event due, a setpoint that is not finite; and while the model's state is one the rows do not take (paused, differential
or reverse thrust, buoyancy or trim requests, water depth), the declarations' ``ready`` keeps
the ticks the plugins'.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from marinesim.control.guidance import WaypointState, deg360, waypoint_row
from marinesim.control.pid import PidState, pid_row
from marinesim.core.frames import quat_from_half_trig_c
from marinesim.core.jitable import register_jitable
from marinesim.core.state import VehicleState
from marinesim.engine.compiled.frozen import FROZEN_SHARED, frozen_laws, load_held
from marinesim.engine.compiled.law import STOP_AFTER, Law, Laws, Worlds, copy_log_cm, log_ticks
from marinesim.environment.current import force_row
from marinesim.models.usm import rows as R
from marinesim.models.usm.state import _evolve

__all__ = ["pid_laws", "usm_laws", "waypoints_laws"]

_SRC = Path(__file__).resolve().parents[2]
_R2D = 180.0 / math.pi
_D2R = math.pi / 180.0


def _listeners(sim: Any, block: str, topic: str) -> set[str]:
    """Owners of the block's subscriptions that receive ``topic`` (ValueError on a pattern)."""
    out = set()
    for sub in sim.bus.subscriptions:
        if topic in sub.topics and sub.block in (block, None):
            out.add(sub.owner)
    if not out and sim.bus.wanted(topic, block, "local"):
        out.add("?")  # a pattern or a bridge wants it
    return out


def _wire_reason(sim: Any, slot: Any, topics: tuple[str, ...], reader: str | None) -> str | None:
    """Why ``topics`` cannot stay inside the tick (None: only ``reader`` reads them)."""
    blk = slot.block.name
    want = set() if reader is None else {f"{blk}.{reader}"}
    for topic in topics:
        got = _listeners(sim, blk, topic)
        if got and got != want:
            return f"{topic} is read by {', '.join(sorted(got))}"
    return None


def _find(sim: Any, slot: Any, cls_name: str) -> Any:
    return next(
        (s for s in sim.slots if s.block is slot.block and type(s.plugin).__name__ == cls_name),
        None,
    )


def _navigation(sim: Any, slot: Any, truth: tuple[str, ...]) -> tuple[str, ...]:
    """The wires a controller or autonomy reads its navigation from: ``truth``, or the belief
    wires (:mod:`~marinesim.engine.plugins.belief_laws`) of the same names when its block has
    a belief writer (``truth.pos`` → ``belief.pos``; the writer's declaration owns them)."""
    if not any(s.block is slot.block and s.plugin.writes_belief for s in sim.slots):
        return truth
    return tuple("belief." + w.partition(".")[2] if w.startswith("truth.") else w for w in truth)


# ------------------------------------------------------------------------------ laws
@register_jitable
def level_quat(pitch, yaw):  # noqa: ANN001, ANN201
    """:func:`~marinesim.core.frames.quat_from_euler_c` at roll 0, cos 0 = 1 and sin 0 = 0
    passed as they are (the same expressions, the same bits; numba calls the two C functions
    of a constant argument each time)."""
    p2, y2 = pitch / 2, yaw / 2
    return quat_from_half_trig_c(1.0, 0.0, math.cos(p2), math.sin(p2), math.cos(y2), math.sin(y2))


@register_jitable
def waypoints_tick(
    k, j, t, h, pts, npts, idx, loops, mind, done, prev, lasth, wp, out, evb, evn, pos, desired, cur,
    codes,
):  # noqa: ANN001, ANN201, E501
    """One ``waypoints`` autonomy call of every vehicle.

    Two passes: every row's waypoint law and setpoints, each row's outcome kept in ``codes``;
    then, only where a waypoint was reached, :func:`waypoint_notes` in row order.  (One pass
    with the notes inside ran twice as long, every row paying for the rare branch:
    ``marinesim bench laws demo_survey``.)
    """
    n = pos.shape[0]
    rep = int(wp[6])
    hits = 0
    for i in range(n):
        code = waypoint_row(
            i, pos[i, 0], pos[i, 1], pts, npts, idx, loops, mind, done, prev, wp[0], wp[1], wp[2],
            rep, out,
        )  # fmt: skip
        codes[i] = code
        hits += 1 if code != 0 else 0
        hd = out[i, 0]
        if hd != hd:
            hd = lasth[i]
        lasth[i] = hd
        desired[i, 0] = hd
        desired[i, 1] = 0.0 if (wp[5] != 0.0 and done[i]) else wp[3]
        desired[i, 2] = wp[4]
        cur[i, 0] = out[i, 1]
        cur[i, 1] = out[i, 2]
        cur[i, 2] = float(idx[i])
        cur[i, 3] = 1.0 if done[i] else 0.0
    if hits == 0:
        return 0
    return waypoint_notes(t, codes, idx, done, evb, evn, int(wp[7]))


@register_jitable
def waypoint_notes(t, codes, idx, done, evb, evn, per):  # noqa: ANN001, ANN201
    """The rows that reached a waypoint (``codes``: 1 the next one, 2 the last) noted in
    ``evb`` (t, row, next index or −1 when done; the plugin's events, emitted at the commit),
    in row order; 1 (the plugins run the tick) when the note buffer is full.  A world whose
    vehicles are all done after a finish this tick ends the compiled call after the tick
    (``STOP_AFTER``: the ``all_done`` end condition looks at the next tick's start); each such
    world is counted once, at its first finish (the rows run world by world), so a tick where
    a whole world finishes costs O(N), not O(N²); nothing allocated (the CUDA tick calls this
    law too).  A hand-back leaves the rows' state half done: the plugins' state is reloaded.
    """
    res = 0
    wdone = -1
    for i in range(codes.shape[0]):
        code = codes[i]
        if code == 0:
            continue
        if code == 2:
            w = i // per
            if w != wdone:  # every finish of this tick included: the world's count once
                wdone = w
                ndone = 0
                for r in range(w * per, w * per + per):
                    ndone += 1 if done[r] else 0
                if ndone == per:
                    res = STOP_AFTER
        e = evn[0]
        if e >= evb.shape[0]:
            return 1
        evb[e, 0] = t
        evb[e, 1] = i
        evb[e, 2] = idx[i] if code == 1 else -1
        evn[0] = e + 1
    return res


@register_jitable
def pid_tick(k, j, t, h, gains, pp, mem, tprev, desired, quat, pos, speed, hdgs, hok, cmd, mail, cur, side):  # noqa: ANN001, ANN201, E501
    """One ``heading_speed_depth_pid`` control call of every vehicle at ``t``.

    The navigation read (``quat``, ``pos``, the body velocity ``speed``, ``side``) is the
    truth's, or the block's belief wires with a belief writer.  The heading of each
    vehicle's quaternion is ``hdgs[i]`` when ``hok[0]`` is set: the ``usm`` law wrote it with
    the quaternion, by the same expression (the same bits); else (the first tick after a
    load, or a belief) it is computed here."""
    n = desired.shape[0]
    known = hok[0] != 0
    dt = max(t - tprev[0], 1e-12)
    for i in range(n):
        d0, d1, d2 = desired[i, 0], desired[i, 1], desired[i, 2]
        if not (math.isfinite(d0) and math.isfinite(d1) and math.isfinite(d2)):
            return 1  # a vehicle without a setpoint: the plugin publishes to some rows only
        w, x, y, z = quat[i, 0], quat[i, 1], quat[i, 2], quat[i, 3]
        if known:
            hdg = hdgs[i]
        else:
            hdg = deg360(math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z)) * _R2D)
        a0 = deg360(d0 - hdg)  # control.pid.heading_error: angle180_c, its wrap without the %
        e0 = a0 - 360.0 * (a0 > 180.0)
        e1 = d1 - speed[i]
        e2 = d2 - pos[i, 2]
        if not (math.isfinite(e0) and math.isfinite(e1) and math.isfinite(e2)):
            return 1
        m = mem[i]
        rudder = pid_row(
            gains[0, 0], gains[1, 0], gains[2, 0], gains[3, 0], gains[4, 0], m, 0, e0, dt
        )  # noqa: E501
        o1 = pid_row(gains[0, 1], gains[1, 1], gains[2, 1], gains[3, 1], gains[4, 1], m, 1, e1, dt)
        o2 = pid_row(gains[0, 2], gains[1, 2], gains[2, 2], gains[3, 2], gains[4, 2], m, 2, e2, dt)
        thrust = pp[0] * d1 + o1
        thrust = min(max(thrust, -pp[1]), pp[1]) if thrust == thrust else thrust
        elevator = o2
        if pp[2] > 0:
            # the down velocity of the body velocity (speed, side): the last rotation row,
            # summed in the order of the plugin's einsum (the first and last products first)
            r6 = 2 * (x * z - y * w)
            r7 = 2 * (y * z + x * w)
            r8 = 1 - 2 * (x * x + y * y)
            wd = (r6 * speed[i] + r8 * side[i, 1]) + r7 * side[i, 0]
            elevator = o2 - pp[2] * wd
            elevator = min(max(elevator, -pp[3]), pp[3]) if elevator == elevator else elevator
        cmd[i, 0], cmd[i, 1], cmd[i, 2] = rudder, thrust, elevator
        cur[i, 0], cur[i, 1], cur[i, 2] = rudder, thrust, elevator
        cur[i, 3], cur[i, 4], cur[i, 5] = d0, d1, d2
    mail[0] = 1
    tprev[0] = t
    return 0


@register_jitable
def usm_tick(
    k,
    j,
    s,
    t,
    h,
    nsub,
    clk,
    u,
    it,
    pc,
    cfx,
    cfy,
    cfvx,
    cfvy,
    cfr,
    cact,
    fx,
    fy,
    dxt,
    dyt,
    w,
    cmd,
    mail,
    pos,
    quat,
    speed,
    hdgs,
    hok,
    ulog,
):  # noqa: ANN001, ANN201, E501
    """The ``usm`` substep: at the last one, the actuator mail and one model iteration at
    t_{k+1}, then the truth and the plugin's logs (and the truth heading ``hdgs``, which the
    compiled PID reads instead of computing it from the quaternion again: ``hok``)."""
    if s != nsub[0] - 1:
        return 0
    n = u.shape[0]
    t1 = clk[0] + (k + 1) * clk[1]
    if mail[0] != 0:
        R.usm_mail_cmd(u, cmd, t1, pc[6])
        mail[0] = 0
    if cfr[1] != 0.0:
        px = u[:, R.X]
        py = u[:, R.Y]
        for i in range(n):
            force_row(i, px, py, cfx, cfy, cfvx, cfvy, cfr[0], fx, fy)
            cx = fx[i] if cact[i] != 0.0 else 0.0
            cy = fy[i] if cact[i] != 0.0 else 0.0
            u[i, R.CURX] = cx
            u[i, R.CURY] = cy
            dxt[i] = u[i, R.DRX] + cx
            dyt[i] = u[i, R.DRY] + cy
    else:
        for i in range(n):
            dxt[i] = u[i, R.DRX]
            dyt[i] = u[i, R.DRY]
    if R.usm_propagate(u, it, pc, t1, dxt, dyt, w) != 0:
        return 1
    for i in range(n):
        x, y, dep, hdg, spd = u[i, R.X], u[i, R.Y], u[i, R.DEP], u[i, R.HDG], u[i, R.SPD]
        pit = u[i, R.PIT]
        if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(dep)
                and math.isfinite(hdg) and math.isfinite(pit) and math.isfinite(spd)):  # fmt: skip
            return 1  # a non-finite pose: the plugins' tick (the engine's on_nonfinite)
        q0, q1, q2, q3 = level_quat(pit, hdg * _D2R)
        pos[i, 0], pos[i, 1], pos[i, 2] = y, x, dep
        quat[i, 0], quat[i, 1], quat[i, 2], quat[i, 3] = q0, q1, q2, q3
        speed[i] = spd
        yaw = math.atan2(2.0 * (q0 * q3 + q1 * q2), 1.0 - 2.0 * (q2 * q2 + q3 * q3))
        hq = deg360(yaw * _R2D)
        hdgs[i] = hq
        ulog[0, j, i], ulog[1, j, i], ulog[2, j, i] = y, x, dep
        ulog[3, j, i], ulog[4, j, i], ulog[5, j, i] = hq, spd, hdg
        ulog[6, j, i] = u[i, R.DRX] + u[i, R.CURX]
        ulog[7, j, i] = u[i, R.DRY] + u[i, R.CURY]
        ulog[8, j, i], ulog[9, j, i] = u[i, R.CURX], u[i, R.CURY]
        ulog[10, j, i], ulog[11, j, i], ulog[12, j, i] = u[i, R.THR], u[i, R.RUD], u[i, R.ELEV]
        ulog[13, j, i] = 0.0
    hok[0] = 1
    return 0


# ------------------------------------------------------------------------------ declarations
def waypoints_laws(plugin: Any, slot: Any, sim: Any) -> Laws | str | None:
    """``waypoints`` feeding a compiled ``heading_speed_depth_pid`` (a ``usm`` block) or
    ``depth_heading_autopilot`` (a REMUS 100 block, the position read from its ``truth.eta``)
    of its block (None: no such reader, the plugin is Python-only; a string: why not here).

    The REMUS 100 autopilot turns ``DESIRED_SPEED`` into its propeller rpm only with
    ``rpm_per_speed`` > 0, from each message as it comes: then the plugin stays Python-only
    (between the compiled ticks, on its own)."""
    reader = _find(sim, slot, "HeadingSpeedDepthPid")
    pos = "truth.pos"
    if reader is None:
        reader = _find(sim, slot, "DepthHeadingAutopilot")
        pos = "truth.eta"  # (north, east, down, φ, θ, ψ): the first two read
        if reader is not None and reader.plugin.params.rpm_per_speed > 0:
            return None
    if _navigation(sim, slot, ("truth.pos",)) == ("belief.pos",):
        pos = "belief.pos"  # the block's navigation estimate: its first two read
    if reader is None:  # another controller reads the setpoints: Python-only here
        return None
    why = _wire_reason(
        sim, slot, ("DESIRED_HEADING", "DESIRED_SPEED", "DESIRED_DEPTH"), reader.plugin.name
    )
    why = why or _wire_reason(sim, slot, ("WPT_INDEX",), None)
    if why:
        return why
    p: Any = plugin.params
    n = slot.block.n
    st = slot.ctx.state
    T = log_ticks(n, 4)
    pts0, npts0 = plugin._points(n, slot.ctx.n_worlds)
    per = n // max(int(slot.ctx.n_worlds), 1)
    a = {
        "pts": pts0, "npts": npts0, "idx": np.zeros(n, dtype=np.int64),
        "loops": np.zeros(n, dtype=np.int64), "mind": np.zeros(n),
        "done": np.zeros(n, dtype=np.bool_), "prev": np.zeros((n, 2)), "lasth": np.zeros(n),
        "wp": np.array([p.capture_radius, p.slip_radius, p.lead, p.speed, p.depth,
                        1.0 if p.end_action == "stop" else 0.0, p.repeat, max(per, 1)]),
        "out": np.zeros((n, 3)), "evb": np.zeros((max(64, 2 * n), 3)),
        "evn": np.zeros(1, dtype=np.int64), "cur": np.zeros((n, 4)), "log": np.zeros((4, T, n)),
        "codes": np.zeros(n, dtype=np.int64),  # (each call's scratch: every row written first)
    }  # fmt: skip
    name = plugin.name

    def ready() -> bool:
        return (
            "wpt" in st and slot.calls.get("autonomy", 0) > 0 and st["points"].shape == pts0.shape
        )

    def load(k: int) -> None:
        wpt = st["wpt"]
        a["pts"][...] = st["points"]
        a["npts"][...] = st["npoints"]
        a["idx"][...] = wpt.index
        a["loops"][...] = wpt.loops
        a["evn"][0] = 0
        a["mind"][...] = wpt.min_dist
        a["done"][...] = wpt.done
        a["prev"][...] = wpt.prev_point
        a["lasth"][...] = st["last_heading"]
        last, blk = sim._recorder.last, slot.block.name
        a["cur"][:, :2] = last(blk, f"{name}.target")
        a["cur"][:, 2] = last(blk, f"{name}.index")[:, 0]
        a["cur"][:, 3] = last(blk, f"{name}.done")[:, 0]

    def commit(k: int, kstop: int, ticks: int) -> None:
        done = a["done"].copy()
        st["wpt"] = WaypointState(
            a["idx"].copy(), a["loops"].copy(), a["mind"].copy(), done, a["prev"].copy()
        )
        st["last_heading"] = a["lasth"].copy()
        slot.done = done  # as the engine reads it after each autonomy call
        ev = slot.ctx.events
        for t, row, nxt in a["evb"][: a["evn"][0]]:  # the plugin's events, in tick/row order
            ev.t = float(t)
            msg = "all waypoints done" if nxt < 0 else f"waypoint reached, next index {int(nxt)}"
            ev.emit("waypoint", msg, rows=[int(row)])
        a["evn"][0] = 0  # emitted: a call that goes on from here (no load) notes afresh

    def finish(ticks: int) -> dict[str, np.ndarray]:
        lg = a["log"][:, :ticks].transpose(1, 2, 0)  # (ticks, n, c) view
        return {f"{name}.target": lg[..., 0:2], f"{name}.index": lg[..., 2:3],
                f"{name}.done": lg[..., 3:4]}  # fmt: skip

    return Laws(
        laws=[
            Law("autonomy", waypoints_tick, (
                "pts", "npts", "idx", "loops", "mind", "done", "prev", "lasth", "wp", "out",
                "evb", "evn", pos, "bus.desired", "cur", "codes")),
            Law("after_physics", copy_log_cm, ("cur", "log")),
        ],
        arrays=a, state=("idx", "loops", "mind", "done", "prev", "lasth", "evn", "cur"),
        logs=("log",),
        publishes=("DESIRED_HEADING", "DESIRED_SPEED", "DESIRED_DEPTH"), unheard=("WPT_INDEX",),
        sources=(_SRC / "control" / "guidance.py",), max_ticks=T, navigation=True,
        ready=ready, load=load, commit=commit, finish=finish,
        gpu=Worlds(n, slot.ctx.n_worlds, shared=("wp",), events=("evb", "evn", 1)),
    )  # fmt: skip


def pid_laws(plugin: Any, slot: Any, sim: Any) -> Laws | str | None:
    """``heading_speed_depth_pid`` commanding a ``usm`` of its block (None: no such motion,
    the plugin is Python-only; a string: why not here)."""
    usm = _find(sim, slot, "UsmMotion")
    if usm is None:  # another model reads the commands: Python-only here
        return None
    why = _wire_reason(
        sim, slot, ("DESIRED_RUDDER", "DESIRED_THRUST", "DESIRED_ELEVATOR"), usm.plugin.name
    )
    if why:
        return why
    p: Any = plugin.params
    g = plugin._gains()
    n = slot.block.n
    st = slot.ctx.state
    T = log_ticks(n, 6)
    a = {
        "gains": np.array([g.kp, g.ki, g.kd, g.integral_limit, g.output_limit], dtype=float),
        "pp": np.array([p.speed_factor, p.max_thrust, p.depth_rate_kd, p.max_elevator]),
        "mem": np.zeros((n, 2, 3)), "tprev": np.zeros(1), "bus.desired": np.zeros((n, 3)),
        "cur": np.zeros((n, 6)), "log": np.zeros((6, T, n)),
    }  # fmt: skip
    name = plugin.name
    signals = ("rudder", "thrust", "elevator", "desired_heading", "desired_speed", "desired_depth")
    nav = _navigation(sim, slot, ("truth.quat", "truth.pos", "truth.speed", "truth.heading",
                                  "truth.hok", "truth.side"))  # fmt: skip
    if nav[-1] == "truth.side":  # the truth's body velocity is (speed, 0, 0)
        nav = (*nav[:-1], "side")
        a["side"] = np.zeros((n, 2))

    def ready() -> bool:
        return math.isfinite(st.get("t_prev", math.nan)) and slot.calls.get("control", 0) > 0

    def load(k: int) -> None:
        a["mem"][:, 0] = st["pid"].integral
        a["mem"][:, 1] = st["pid"].prev_error
        a["tprev"][0] = st["t_prev"]
        a["bus.desired"][...] = st["desired"]
        last, blk = sim._recorder.last, slot.block.name
        for c, s in enumerate(signals):
            a["cur"][:, c] = last(blk, f"{name}.{s}")[:, 0]

    def commit(k: int, kstop: int, ticks: int) -> None:
        st["pid"] = PidState(a["mem"][:, 0].copy(), a["mem"][:, 1].copy())
        st["t_prev"] = float(a["tprev"][0])
        st["desired"] = a["bus.desired"].copy()

    def finish(ticks: int) -> dict[str, np.ndarray]:
        lg = a["log"][:, :ticks].transpose(1, 2, 0)  # (ticks, n, c) view
        return {f"{name}.{s}": lg[..., c : c + 1] for c, s in enumerate(signals)}

    return Laws(
        laws=[
            Law("control", pid_tick, (
                "gains", "pp", "mem", "tprev", "bus.desired", *nav[:5], "bus.usm_cmd",
                "bus.usm_mail", "cur", nav[5])),
            Law("after_physics", copy_log_cm, ("cur", "log")),
        ],
        arrays=a, state=("mem", "tprev", "bus.desired", "cur"), logs=("log",),
        publishes=("DESIRED_RUDDER", "DESIRED_THRUST", "DESIRED_ELEVATOR"),
        sources=(_SRC / "control" / "pid.py",), max_ticks=T, navigation=True,
        ready=ready, load=load, commit=commit, finish=finish,
        gpu=Worlds(n, slot.ctx.n_worlds, shared=("gains", "pp"), world=("tprev",)),
    )  # fmt: skip


def _state_reason(ust: Any) -> str | None:
    """Why the model's state is not the rows' (the plugins run those ticks)."""
    for name in ("diff_mode", "diff_flag", "reverse", "paused", "obstacle_hit", "buoy_req",
                 "trim_req", "drift_fresh"):  # fmt: skip
        if bool(getattr(ust, name).any()):
            return name
    if not bool(ust.enabled.all()) or bool(ust.pause_ticks.any()) or bool(ust.water_depth.any()):
        return "disabled, pause clock or water depth"
    return None


#: Columns of ``u`` the compiled tick writes (the others are read only).
_TICK_WRITTEN = (*R.WRITTEN, R.THR, R.RUD, R.RPREV, R.RTS, R.ELEV, R.CURX, R.CURY)


def usm_laws(plugin: Any, slot: Any, sim: Any) -> Laws | str:
    """``usm`` (one NAV record, documented mode): mail, current field, iteration, truth."""
    cfg0 = plugin.params.config  # type: ignore[attr-defined]
    why = R.why_not_rows(cfg0)
    if why:
        return why
    heard = sorted(t for t in plugin.publishes if _listeners(sim, slot.block.name, t))
    if heard:
        return f"its publications are read ({', '.join(heard[:3])})"
    n = slot.block.n
    st = slot.ctx.state
    blk = slot.block
    T = log_ticks(n, 14)
    cf = sim.env.current_field if cfg0.current_field is None else cfg0.current_field
    nv = 0 if cf is None else len(cf.x)
    a = {
        "nsub": np.array([int(sim.clock.substeps)], dtype=np.int64),
        "clk": np.array([sim.clock.start, sim.clock.dt]),
        "u": np.zeros((n, R.NU)), "it": np.zeros(n, dtype=np.int64), "pc": R.config_numbers(cfg0),
        "cfx": np.zeros(nv), "cfy": np.zeros(nv), "cfvx": np.zeros(nv), "cfvy": np.zeros(nv),
        "cfr": np.zeros(2), "cact": np.zeros(n), "fx": np.zeros(n), "fy": np.zeros(n),
        "dxt": np.zeros(n), "dyt": np.zeros(n), "w": np.zeros((n, R.NSCRATCH)),
        "bus.usm_cmd": np.zeros((n, 3)), "bus.usm_mail": np.zeros(1, dtype=np.int64),
        "truth.pos": np.zeros((n, 3)), "truth.quat": np.zeros((n, 4)), "truth.speed": np.zeros(n),
        "truth.heading": np.zeros(n), "truth.hok": np.zeros(1, dtype=np.int64),
        "ulog": np.zeros((14, T, n)),
    }  # fmt: skip
    # an ended world's truth stays where it ended (its model goes on, as the plugin's)
    hold = frozen_laws(a, ("truth.pos", "truth.quat", "truth.speed", "truth.heading"))
    name = plugin.name

    def field_of(cfg: Any) -> Any:
        return cfg.current_field

    def ready() -> bool:
        if "usm" not in st or "config" not in st:
            return False
        cfg = st["config"]
        fld = field_of(cfg)
        if R.why_not_rows(cfg) or (fld is not None and len(fld.x) != nv):
            return False
        return _state_reason(st["usm"]) is None and not st["mail"]

    def load(k: int) -> None:
        ust, cfg = st["usm"], st["config"]
        u = a["u"]
        for c, f in enumerate(R.FIELDS):
            u[:, c] = getattr(ust, f)
        a["it"][...] = ust.iteration
        a["pc"][...] = R.config_numbers(cfg)
        a["clk"][...] = (sim.clock.start, sim.clock.dt)
        fld = field_of(cfg)
        if fld is not None and nv:
            a["cfx"][...], a["cfy"][...] = fld.x, fld.y
            a["cfvx"][...], a["cfvy"][...] = fld.vx, fld.vy
            a["cfr"][0] = fld.radius
        # the model adds the field's force where a current is active (force_row gives 0
        # with no vector in range, a radius <= 0 or no vector at all, as CurrentField.force)
        a["cfr"][1] = 1.0 if fld is not None and bool(ust.current_active.any()) else 0.0
        a["cact"][...] = ust.current_active
        a["bus.usm_mail"][0] = 0
        tr = blk.truth
        a["truth.pos"][...] = tr.pos
        a["truth.quat"][...] = tr.quat
        a["truth.speed"][...] = tr.vel[:, 0]
        a["truth.hok"][0] = 0  # the heading of the loaded quaternion: not computed yet
        load_held(sim, blk, a, lambda tr: {"truth.pos": tr.pos, "truth.quat": tr.quat,
                                           "truth.speed": tr.vel[:, 0],
                                           "truth.heading": tr.heading_deg})  # fmt: skip

    def commit(k: int, kstop: int, ticks: int) -> None:
        u = a["u"]
        # the columns the tick writes (the mail, the current and the propagation)
        ch: dict[str, Any] = {R.FIELDS[c]: u[:, c].copy() for c in _TICK_WRITTEN}
        ch["geo_x"], ch["geo_y"] = ch["x"].copy(), ch["y"].copy()
        ch["iteration"] = a["it"].copy()
        ch["propagated"] = np.ones(n, dtype=bool)
        ch["diff_mode"] = np.zeros(n, dtype=bool)
        st["usm"] = _evolve(st["usm"], ch)
        clock = sim.clock
        vel = np.zeros((n, 3))
        vel[:, 0] = a["truth.speed"]
        blk.truth = VehicleState(
            a["truth.pos"].copy(),
            a["truth.quat"].copy(),
            vel,
            np.zeros((n, 3)),
            np.zeros((n, 3)),
            clock.start + kstop * clock.dt,
        )
        blk._truth_ro = None

    def finish(ticks: int) -> dict[str, np.ndarray]:
        lg = a["ulog"][:, :ticks].transpose(1, 2, 0)  # (ticks, n, c) view
        pre = st["config"].prefix
        return {
            "truth.pos": lg[..., 0:3], "truth.heading": lg[..., 3:4], "truth.speed": lg[..., 4:5],
            f"{name}.drift": lg[..., 6:8], f"{name}.current": lg[..., 8:10],
            f"{name}.actuators": lg[..., 10:13], f"{name}.paused": lg[..., 13:14],
            f"{name}.{pre}_X": lg[..., 1:2], f"{name}.{pre}_Y": lg[..., 0:1],
            f"{name}.{pre}_HEADING": lg[..., 5:6], f"{name}.{pre}_SPEED": lg[..., 4:5],
            f"{name}.{pre}_DEPTH": lg[..., 2:3],
        }  # fmt: skip

    return Laws(
        laws=[Law("substep", usm_tick, (
            "nsub", "clk", "u", "it", "pc", "cfx", "cfy", "cfvx", "cfvy", "cfr", "cact", "fx",
            "fy", "dxt", "dyt", "w", "bus.usm_cmd", "bus.usm_mail", "truth.pos", "truth.quat",
            "truth.speed", "truth.heading", "truth.hok", "ulog")), *hold],
        arrays=a,
        state=("u", "it", "bus.usm_cmd", "bus.usm_mail", "truth.pos", "truth.quat", "truth.speed",
               "truth.heading", "truth.hok"),
        logs=("ulog",), sources=(_SRC / "models" / "usm", _SRC / "environment" / "current.py"),
        max_ticks=T, ready=ready, load=load, commit=commit, finish=finish,
        gpu=Worlds(n, slot.ctx.n_worlds,
                   shared=("nsub", "clk", "pc", "cfx", "cfy", "cfvx", "cfvy", "cfr",
                           *FROZEN_SHARED),
                   world=("bus.usm_mail", "truth.hok")),
        holds=True,
    )  # fmt: skip
