"""``nav_ekf`` (the INS/EKF) in the generated tick: the block's belief from its sensors' wires.

The plugin's ``estimate`` (:class:`~marinesim.engine.plugins.sensors.NavEkfEstimator`) fuses
the messages its sensors published this tick, sorted by time stamp and then attitude, IMU,
aiding.  Here the sensors that feed it (``ahrs``, ``imu``, ``depth_sensor``, ``gps``, ``dvl``
of its block, compiled, :mod:`~marinesim.engine.plugins.sensor_laws`) leave each sample on
three wires instead of the bus — ``bus.<topic>`` (the values), ``bus.<topic>.ok`` (the rows
delivered) and ``bus.<topic>.new`` (a message was published this tick) — and the law
:func:`ekf_estimate` runs in the ``estimate`` hook, after every ``sense`` law of the tick, on
the same order of messages: AHRS, IMU, then depth, GPS and DVL (a fixed order, so that a
vehicle's estimate never depends on the other rows of its block or on stacked worlds).

Each step is the plugin's, per vehicle, with the filter's own per-row laws
(:func:`marinesim.sensors.ekf_rows.predict_row` and the update laws of
:func:`~marinesim.sensors.ekf_rows.update_law`, which the plugin runs too): the attitude of
the AHRS quaternion (:func:`~marinesim.core.frames.rotation_quat_c`), the prediction to the
IMU sample's time with the last specific force of each vehicle (the process noise's powers of
dt by ``pow``, as Python's ``dt**4``), the depth, GPS and DVL updates with their χ² gates,
each after a prediction to its time when no IMU sample came (the DVL's predicted velocity
R̂ᵀv + ω × r summed as ``einsum`` and ``np.cross`` do), the rejections counted, and at the
end the prediction to the tick's time when no IMU sample came.
The belief wires (:mod:`~marinesim.engine.plugins.belief_laws`) then hold the estimate: the
position, the AHRS attitude, the body velocity R̂ᵀv̂.  The logs (``cep``, ``pos_std``,
``cov_ne``, ``rejected``) and the frames' ``belief.*`` come from one component-major log
(CEP50 by :func:`marinesim.sensors.nav.cep50` over the logged covariances: a row's value
does not depend on the other rows).

It joins the tick when the filter runs every tick, each topic it reads has one publisher
in its block, a compiled navigation sensor without a delay (so no measurement is ever late
and the filter's replay buffer is never read: the plugin keeps its newest step), and nothing
else reads its ``nav/state`` and ``nav/cep``.
"""

from __future__ import annotations

import math
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

from marinesim.core.frames import rotation_quat_c
from marinesim.core.jitable import register_jitable
from marinesim.core.state import VehicleState
from marinesim.engine.compiled.generate import copy_into
from marinesim.engine.compiled.law import Law, Laws, Worlds, log_ticks
from marinesim.engine.plugins.belief_laws import belief_velocity, load_belief
from marinesim.engine.plugins.belief_laws import wires as belief_wires
from marinesim.engine.plugins.sensors import FUSION_ORDER
from marinesim.sensors import ekf_rows
from marinesim.sensors.dvl import BOTTOM
from marinesim.sensors.estimation import _H_DEPTH, _H_GPS, _Step

__all__ = ["TOPICS", "declare_ekf", "ekf_estimate"]

_SRC = Path(__file__).resolve().parents[2] / "sensors"

#: The topics the filter reads, by code: 0 AHRS, 1 IMU, 2 depth, 3 GPS, 4 DVL (the plugin's
#: order of fusion).
TOPICS = FUSION_ORDER
#: Their values' widths (the sensors' kept samples).
_WIDTH = (4, 6, 1, 2, 4)

# the update laws of the tick (names of their own: see ekf_rows.update_law)
_UPD_DEPTH = ekf_rows.update_law(1, 2, 3, tag="_tick")
_UPD_GPS = ekf_rows.update_law(2, 0, 2, tag="_tick")
_UPD_DVL = ekf_rows.update_law(3, 3, 6, tag="_tick")
_BOTTOM = float(BOTTOM)


@register_jitable
def _predict_all(t, prm, x, P, f, rot, tk, q, xo, Po):  # noqa: ANN001, ANN202
    """``NavEkf.predict(f, t)``: every row to ``t`` (nothing when t is not later)."""
    dt = t - tk[0]
    if dt <= 0:
        return
    s2 = prm[0] * prm[0]
    q[0] = s2 * math.pow(dt, 4.0) / 4
    q[1] = s2 * math.pow(dt, 3.0) / 2
    q[2] = s2 * dt * dt
    q[3] = prm[1] * prm[1] * dt
    for i in range(x.shape[0]):
        ekf_rows.predict_row(i, x, P, f, rot, dt, q, prm[2], xo, Po)
    copy_into(x, xo)
    copy_into(P, Po)
    tk[0] = t


@register_jitable
def _apply(kind, val, ok, prm, Rd, Rg, Rv, x, P, rot, w, rej, nis, nset, xo, Po, work, y, Hd, Hg, Hv, msk, acc, nisr):  # noqa: ANN001, ANN202, E501
    """One aiding update (``kind`` 2 depth, 3 GPS, 4 DVL): innovations, the update law of
    every row, the rejections and the NIS."""
    n = x.shape[0]
    for i in range(n):
        msk[i] = ok[i] != 0.0
        y[i, 0] = 0.0
        y[i, 1] = 0.0
        y[i, 2] = 0.0
    if kind == 2:
        for i in range(n):
            if msk[i]:
                y[i, 0] = val[i, 0] - x[i, 2]
            _UPD_DEPTH(i, x, P, y, Hd, Rd, msk, prm[3], xo, Po, acc, nisr, work)
    elif kind == 3:
        for i in range(n):
            if msk[i]:
                y[i, 0] = val[i, 0] - x[i, 0]
                y[i, 1] = val[i, 1] - x[i, 1]
            _UPD_GPS(i, x, P, y, Hg, Rg, msk, prm[4], xo, Po, acc, nisr, work)
    else:
        l0, l1, l2 = prm[6], prm[7], prm[8]
        for i in range(n):
            msk[i] = msk[i] and abs(val[i, 3] - _BOTTOM) < 0.5  # bottom lock only
            w0, w1, w2 = w[i, 0], w[i, 1], w[i, 2]
            cr = (w1 * l2 - w2 * l1, w2 * l0 - w0 * l2, w0 * l1 - w1 * l0)
            for a in range(3):
                s = 0.0
                s += rot[i, 0, a] * x[i, 3]
                s += rot[i, 1, a] * x[i, 4]
                s += rot[i, 2, a] * x[i, 5]
                for b in range(3):
                    Hv[i, a, 3 + b] = rot[i, b, a]
                if msk[i]:
                    y[i, a] = val[i, a] - (s + cr[a])
            _UPD_DVL(i, x, P, y, Hv, Rv, msk, prm[5], xo, Po, acc, nisr, work)
    copy_into(x, xo)
    copy_into(P, Po)
    c = kind - 2
    for i in range(n):
        if msk[i] and not acc[i]:
            rej[c, i] += 1
        nis[c, i] = nisr[i]
    nset[c] = 1


@register_jitable
def _message(code, v0, o0, n0, v1, o1, n1, v2, o2, n2, v3, o3, n3, v4, o4, n4):  # noqa: ANN001, ANN202
    """The wires (values, rows delivered, published flag) of the topic ``code``."""
    if code == 0:
        return v0, o0, n0
    if code == 1:
        return v1, o1, n1
    if code == 2:
        return v2, o2, n2
    if code == 3:
        return v3, o3, n3
    return v4, o4, n4


@register_jitable
def ekf_estimate(k, j, t, h, prm, Rd, Rg, Rv, x, P, rot, tk, quat, f, w, rej, nis, nset, q, xo, Po, work, y, Hd, Hg, Hv, msk, acc, nisr, v0, o0, n0, v1, o1, n1, v2, o2, n2, v3, o3, n3, v4, o4, n4, bpos, bquat, bspeed, bside, log):  # noqa: ANN001, ANN201, E501
    """``nav_ekf``'s ``estimate`` at ``t`` (t_{k+1}): this tick's messages (``v*`` values,
    ``o*`` rows delivered, ``n*`` published: AHRS, IMU, depth, GPS, DVL), then the belief
    wires and the frame's log row ``j``.

    The plugin's order: the AHRS, the IMU, then the depth, GPS and DVL messages (the codes'
    order: it does not depend on the other rows of the block, so neither does a row's estimate).
    ``prm``: σ_a, σ_ba, g, the χ² gates of 1, 2, 3 rows, the DVL lever arm (3)."""
    n = x.shape[0]
    for code in range(5):
        val, ok, new = _message(code, v0, o0, n0, v1, o1, n1, v2, o2, n2, v3, o3, n3, v4, o4, n4)
        if new[0] == 0:
            continue
        new[0] = 0
        if code == 0:  # the AHRS attitude: every row's rotation from its quaternion
            for i in range(n):
                if ok[i] != 0.0:
                    for c in range(4):
                        quat[i, c] = val[i, c]
                r = rotation_quat_c(quat[i, 0], quat[i, 1], quat[i, 2], quat[i, 3])
                for c in range(9):
                    rot[i, c // 3, c % 3] = r[c]
        elif code == 1:  # the IMU: the specific force and rate held per row, a prediction
            for i in range(n):
                if ok[i] != 0.0:
                    for c in range(3):
                        f[i, c] = val[i, c]
                        w[i, c] = val[i, 3 + c]
            _predict_all(t, prm, x, P, f, rot, tk, q, xo, Po)
        else:  # an aiding message: first to its time (no IMU sample at it), then the update
            _predict_all(t, prm, x, P, f, rot, tk, q, xo, Po)
            _apply(code, val, ok, prm, Rd, Rg, Rv, x, P, rot, w, rej, nis, nset, xo, Po, work,
                   y, Hd, Hg, Hv, msk, acc, nisr)  # fmt: skip
    if tk[0] < t - 1e-9:  # no IMU sample this tick: the last specific force held
        _predict_all(t, prm, x, P, f, rot, tk, q, xo, Po)
    for i in range(n):  # R̂ᵀv̂ (einsum "nji,nj->ni": each sum from 0.0 in order)
        s0 = 0.0
        s0 += rot[i, 0, 0] * x[i, 3]
        s0 += rot[i, 1, 0] * x[i, 4]
        s0 += rot[i, 2, 0] * x[i, 5]
        s1 = 0.0
        s1 += rot[i, 0, 1] * x[i, 3]
        s1 += rot[i, 1, 1] * x[i, 4]
        s1 += rot[i, 2, 1] * x[i, 5]
        s2 = 0.0
        s2 += rot[i, 0, 2] * x[i, 3]
        s2 += rot[i, 1, 2] * x[i, 4]
        s2 += rot[i, 2, 2] * x[i, 5]
        bspeed[i] = s0
        bside[i, 0] = s1
        bside[i, 1] = s2
        for c in range(3):
            bpos[i, c] = x[i, c]
            log[c, j, i] = x[i, c]
            log[7 + c, j, i] = P[i, c, c]
        for c in range(4):
            bquat[i, c] = quat[i, c]
            log[3 + c, j, i] = quat[i, c]
        log[10, j, i] = P[i, 0, 0]
        log[11, j, i] = P[i, 0, 1]
        log[12, j, i] = P[i, 1, 0]
        log[13, j, i] = P[i, 1, 1]
        log[14, j, i] = float((rej[0, i] + rej[1, i]) + rej[2, i])
    return 0


def declare_ekf(plugin: Any, slot: Any, sim: Any) -> Laws | str:
    """The declaration of ``nav_ekf``, or why it stays on the plugins here."""
    from marinesim.engine.plugins.sensor_laws import _sensor_kind
    from marinesim.engine.tick import heading_deg
    from marinesim.sensors.nav import cep50

    blk = slot.block
    n = blk.n
    p: Any = plugin.params
    if slot.period != 1:
        return "an INS/EKF at a rate of its own (rate_hz)"
    for topic in ("nav/state", "nav/cep"):
        if sim.bus.wanted(topic, blk.name, "local"):
            return f"its {topic!r} messages are read through the bus"
    mine = [s for s in sim.slots if s.block is blk]
    a: dict[str, np.ndarray] = {}
    args: list[str] = []
    for code, topic in enumerate(TOPICS):
        pubs = [s for s in mine if topic in getattr(s.plugin, "publishes", {})]
        if len(pubs) > 1:
            return f"{topic!r} has {len(pubs)} publishers in its block"
        if not pubs:
            z = f"none{code}"  # never a message
            a[z], a[z + "ok"], a[z + "new"] = (
                np.zeros((n, _WIDTH[code])), np.zeros(n), np.zeros(1, dtype=np.int64))
            args += [z, z + "ok", z + "new"]
            continue
        s = pubs[0]
        kind = _sensor_kind(s.plugin)
        if kind is None or kind == "noisy_state":
            return f"its {topic!r} comes from {s.plugin.name!r}, which has no compiled laws"
        if float(s.plugin.params.delay) > 0:
            return (f"{s.plugin.name!r} has a delay: its late samples need the filter's "
                    "replay, which runs on the plugins")  # fmt: skip
        wire = f"bus.{topic}"
        args += [wire, wire + ".ok", wire + ".new"]
    st = slot.ctx.state
    gate = [np.inf if p.gate_probability >= 1 else 0.0] * 3  # filled from the filter (load)
    prm = np.array([p.accel_noise_std, p.accel_bias_walk, p.gravity, *gate,
                    *np.asarray(p.dvl_lever_arm, dtype=float)])  # fmt: skip
    T = log_ticks(n, 15)
    Hd = np.ascontiguousarray(np.broadcast_to(_H_DEPTH, (n, 1, 9)))
    Hg = np.ascontiguousarray(np.broadcast_to(_H_GPS, (n, 2, 9)))
    a.update(
        prm=prm, Rd=np.array([[p.depth_std**2]]), Rg=p.gps_std**2 * np.eye(2),
        Rv=p.dvl_std**2 * np.eye(3), x=np.zeros((n, 9)), P=np.zeros((n, 9, 9)),
        rot=np.zeros((n, 3, 3)), tk=np.zeros(1), quat=np.zeros((n, 4)), f=np.zeros((n, 3)),
        w=np.zeros((n, 3)), rej=np.zeros((3, n), dtype=np.int64), nis=np.full((3, n), np.nan),
        nset=np.zeros(3, dtype=np.int64), q=np.zeros(4), xo=np.zeros((n, 9)),
        Po=np.zeros((n, 9, 9)), work=np.zeros((n, 9, 15)), y=np.zeros((n, 3)), Hd=Hd, Hg=Hg,
        Hv=np.zeros((n, 3, 9)), msk=np.zeros(n, dtype=np.bool_), acc=np.zeros(n, dtype=np.bool_),
        nisr=np.zeros(n), log=np.zeros((15, T, n)), **belief_wires(n),
    )  # fmt: skip
    kinds = ("depth", "gps", "dvl")
    name = plugin.name

    def ready() -> bool:
        return st.get("ekf") is not None and blk.belief is not None

    def load(k: int) -> None:
        ekf = st["ekf"]
        prm[3:6] = (ekf.gates[1], ekf.gates[2], ekf.gates[3])
        a["x"][...] = ekf.x
        a["P"][...] = ekf.P
        a["rot"][...] = ekf.rot
        a["tk"][0] = ekf.t
        a["quat"][...] = st["quat"]
        a["f"][...] = st["f"]
        a["w"][...] = st["w"]
        for c, kind in enumerate(kinds):
            a["rej"][c] = ekf.rejected[kind]
            got = ekf.nis.get(kind)
            a["nset"][c] = got is not None
            a["nis"][c] = np.nan if got is None else got
        load_belief(a, blk.belief)

    def commit(k: int, kstop: int, ticks: int) -> None:
        ekf = st["ekf"]
        ekf.x, ekf.P, ekf.rot = a["x"].copy(), a["P"].copy(), a["rot"].copy()
        ekf.t = float(a["tk"][0])
        ekf.rejected = {kind: a["rej"][c].copy() for c, kind in enumerate(kinds)}
        for c, kind in enumerate(kinds):
            if a["nset"][c]:
                ekf.nis[kind] = a["nis"][c].copy()
        # the newest step only: no measurement is late here, the replay never reads back
        ekf.history = deque([_Step(ekf.t, ekf.x, ekf.P, a["f"].copy(), ekf.rot.copy(), 0.0)])
        st["quat"], st["f"], st["w"] = a["quat"].copy(), a["f"].copy(), a["w"].copy()
        blk.set_belief(VehicleState(
            a["x"][:, 0:3].copy(), a["quat"].copy(), belief_velocity(a), a["w"].copy(),
            np.zeros((n, 3)),
            float(sim.clock.start + kstop * sim.clock.dt), a["P"].copy(),
        ))  # fmt: skip

    def finish(ticks: int) -> dict[str, np.ndarray]:
        lg = a["log"][:, :ticks].transpose(1, 2, 0)  # (ticks, n, 15) view
        quat = np.ascontiguousarray(lg[..., 3:7]).reshape(-1, 4)
        cov = np.ascontiguousarray(lg[..., 10:14]).reshape(-1, 2, 2)
        return {
            "belief.pos": lg[..., 0:3],
            "belief.heading": heading_deg(quat).reshape(ticks, n, 1),
            f"{name}.cep": cep50(cov).reshape(ticks, n, 1),
            f"{name}.pos_std": np.sqrt(lg[..., 7:10]),
            f"{name}.cov_ne": lg[..., 10:14],
            f"{name}.rejected": lg[..., 14:15],
        }

    state = ("x", "P", "rot", "tk", "quat", "f", "w", "rej", "nis", "nset", "belief.pos",
             "belief.quat", "belief.speed", "belief.side")  # fmt: skip
    law_args = ("prm", "Rd", "Rg", "Rv", "x", "P", "rot", "tk", "quat", "f", "w", "rej",
                "nis", "nset", "q", "xo", "Po", "work", "y", "Hd", "Hg", "Hv", "msk", "acc",
                "nisr", *args, "belief.pos", "belief.quat", "belief.speed", "belief.side", "log")  # fmt: skip
    # on CUDA a world fuses a topic when a row of its own delivered (a sensor's ``.new`` wire
    # is its world's there); the filter's time and noise scratch are every world's
    layout = Worlds(
        n, slot.ctx.n_worlds, shared=("prm", "Rd", "Rg", "Rv"),
        world=("tk", "q", "belief.hok", *(f"none{c}new" for c in range(5))), most=("nset",),
        axes=(("rej", 1), ("nis", 1)),
    )  # fmt: skip
    return Laws(
        [Law("estimate", ekf_estimate, law_args)], a, state=state, logs=("log",),
        publishes=(), unheard=("nav/state", "nav/cep"), max_ticks=T, sources=(_SRC,),
        ready=ready, load=load, commit=commit, finish=finish, gpu=layout,
    )  # fmt: skip
