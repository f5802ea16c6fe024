"""A block's navigation estimate (belief) in the generated tick: ``noisy_state``.

A belief writer owns the block's *belief wires*, which the controllers and the autonomy of a
block with a belief writer read instead of the truth (the plugins' ``ctx.belief``):

``belief.pos`` (N, 3)
    NED position [m];
``belief.quat`` (N, 4)
    attitude quaternion (scalar first, body → NED);
``belief.speed`` (N,) and ``belief.side`` (N, 2)
    body velocity [m/s], forward and (starboard, down);
``belief.heading`` (N,) and ``belief.hok`` (1,)
    the readers' heading wire pair of the truth (``hok`` 0: no heading precomputed, the reader
    computes it from the quaternion, as ``heading_deg`` of the belief).

``noisy_state`` samples the truth (``truth.nav``, filled by the block's first compiled
sensor, :mod:`~marinesim.engine.plugins.sensor_laws`) on its due ticks with its 9 normals per
vehicle (read ahead in place in the slot's pre-drawn block, as the navigation sensors do) and
writes the belief as :func:`marinesim.sensors.nav.noisy_state` computes it: the same
expressions per row, the body perturbation of the attitude by :func:`perturb_row`.  Its
``estimate`` (the plugin writes the belief it sampled and publishes ``nav/state``) is due on
the same ticks: the law does both, the wires hold the belief between samples, every frame
logs it (``belief.pos``, ``belief.heading``) and the ``nav/state`` messages are counted.

The tick joins a block with a belief writer only when every controller and autonomy law of
the block reads these wires (:attr:`~marinesim.engine.compiled.law.Laws.navigation`); a law
that reads the truth as its navigation keeps the block on the plugins
(:func:`~marinesim.engine.compiled.route.plan`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from marinesim.core.jitable import register_jitable
from marinesim.core.state import VehicleState
from marinesim.engine.compiled.law import Law, Laws, Worlds, log_ticks

__all__ = [
    "BELIEF_WIRES", "belief_velocity", "declare_noisy_state", "load_belief", "noisy_state_sense",
    "perturb_row", "wires",
]

_SRC = Path(__file__).resolve().parents[2] / "sensors"
_D2R = math.pi / 180.0

#: The belief wires and their shapes after N (see the module docstring).
BELIEF_WIRES: dict[str, tuple[int, ...]] = {
    "belief.pos": (3,), "belief.quat": (4,), "belief.speed": (), "belief.side": (2,),
    "belief.heading": (), "belief.hok": (),
}  # fmt: skip


def wires(n: int) -> dict[str, np.ndarray]:
    """Fresh belief wires of ``n`` vehicles (``belief.hok`` holds one 0)."""
    out = {k: np.zeros((n, *s)) for k, s in BELIEF_WIRES.items() if k != "belief.hok"}
    out["belief.hok"] = np.zeros(1, dtype=np.int64)
    return out


def load_belief(arrays: dict[str, np.ndarray], b: VehicleState) -> None:
    """Fill a writer's belief wires from the block's belief ``b`` (a ``load``)."""
    arrays["belief.pos"][...] = b.pos
    arrays["belief.quat"][...] = b.quat
    arrays["belief.speed"][...] = b.vel[:, 0]
    arrays["belief.side"][...] = b.vel[:, 1:3]
    arrays["belief.hok"][0] = 0


def belief_velocity(arrays: dict[str, np.ndarray]) -> np.ndarray:
    """The body velocity (N, 3) the belief wires hold (a ``commit``'s new array)."""
    speed = arrays["belief.speed"]
    vel = np.empty((speed.shape[0], 3))
    vel[:, 0] = speed
    vel[:, 1:3] = arrays["belief.side"]
    return vel


@register_jitable
def perturb_row(a0, a1, a2, a3, r0, r1, r2):  # noqa: ANN001, ANN201
    """:func:`~marinesim.sensors.attitude.perturb_body` of one row: q ⊗ δq(r), normalised
    (δq of the rotation vector (r0, r1, r2) [rad]; the norms sum their squares in order)."""
    ang = math.sqrt(r0 * r0 + r1 * r1 + r2 * r2)
    half = 0.5 * ang
    kk = math.sin(half) / ang if ang > 1e-12 else 0.5
    b0, b1, b2, b3 = math.cos(half), r0 * kk, r1 * kk, r2 * kk
    m0 = a0 * b0 - a1 * b1 - a2 * b2 - a3 * b3
    m1 = a0 * b1 + a1 * b0 + a2 * b3 - a3 * b2
    m2 = a0 * b2 - a1 * b3 + a2 * b0 + a3 * b1
    m3 = a0 * b3 + a1 * b2 - a2 * b1 + a3 * b0
    nm = math.sqrt(m0 * m0 + m1 * m1 + m2 * m2 + m3 * m3)
    return m0 / nm, m1 / nm, m2 / nm, m3 / nm


@register_jitable
def noisy_state_sense(k, j, t, h, meta, normals, cnt, tb, nav, bpos, bquat, bspeed, bside, log):  # noqa: ANN001, ANN201, E501
    """``noisy_state``: on its due ticks, belief = truth + mean + σ·z (position, body
    velocity) and the attitude perturbed by (mean + σ·z)° on the body side; every tick the
    frame logs the belief held (``log`` (7, ticks, N): position, quaternion).

    ``meta``: [0] period, [1] offset (ticks), [2] the normal block's length, [3:6] / [6:9]
    position mean / σ, [9:12] / [12:15] velocity mean / σ, [15:18] / [18:21] attitude
    mean / σ [deg]."""
    n = nav.shape[0]
    kk = k + 1
    p = int(meta[0])
    o = int(meta[1])
    if p == 1 or (kk >= o and (kk - o) % p == 0):
        c = cnt[0]
        if c + 9 > meta[2]:
            return 1  # past the pre-drawn block: the plugin draws the next
        for i in range(n):
            z = normals[i, c : c + 9]
            for q in range(3):
                bpos[i, q] = nav[i, q] + meta[3 + q] + meta[6 + q] * (z[q] + 0.0)
            v0 = nav[i, 7] + meta[9] + meta[12] * (z[3] + 0.0)
            v1 = nav[i, 8] + meta[10] + meta[13] * (z[4] + 0.0)
            v2 = nav[i, 9] + meta[11] + meta[14] * (z[5] + 0.0)
            bspeed[i] = v0
            bside[i, 0] = v1
            bside[i, 1] = v2
            r0 = (meta[15] + meta[18] * (z[6] + 0.0)) * _D2R
            r1 = (meta[16] + meta[19] * (z[7] + 0.0)) * _D2R
            r2 = (meta[17] + meta[20] * (z[8] + 0.0)) * _D2R
            q0, q1, q2, q3 = perturb_row(nav[i, 3], nav[i, 4], nav[i, 5], nav[i, 6], r0, r1, r2)
            bquat[i, 0] = q0
            bquat[i, 1] = q1
            bquat[i, 2] = q2
            bquat[i, 3] = q3
        cnt[0] = c + 9
        cnt[1] += 1  # an estimate: the belief written, nav/state published
        tb[0] = t
    for i in range(n):
        for q in range(3):
            log[q, j, i] = bpos[i, q]
        for q in range(4):
            log[3 + q, j, i] = bquat[i, q]
    return 0


def declare_noisy_state(plugin: Any, slot: Any, sim: Any) -> Laws | str:
    """The declaration of ``noisy_state``, or why it stays on the plugins here."""
    from marinesim.engine.plugins.sensor_laws import load_streams, refill_streams, truth_nav_laws
    from marinesim.engine.tick import heading_deg

    blk = slot.block
    n = blk.n
    if sim.bus.wanted("nav/state", blk.name, "local"):
        return "its 'nav/state' messages are read through the bus"
    a: dict[str, np.ndarray] = {"truth.nav": np.zeros((n, 13)), **wires(n)}
    fill = truth_nav_laws(sim, slot, a)
    if isinstance(fill, str):
        return fill
    p: Any = plugin.params
    meta = np.zeros(21)
    meta[0:2] = (slot.period, slot.offset)
    for c0, vals in ((3, p.pos_mean), (6, p.pos_std), (9, p.vel_mean), (12, p.vel_std),
                     (15, p.att_mean_deg), (18, p.att_std_deg)):  # fmt: skip
        meta[c0 : c0 + 3] = np.asarray(vals, dtype=float)
    T = log_ticks(n, 7)
    a.update(meta=meta, normals=np.zeros((n, 1)), cnt=np.zeros(2, dtype=np.int64), tb=np.zeros(1),
             log=np.zeros((7, T, n)))  # fmt: skip
    st = slot.ctx.state
    rec = sim._recorder
    cov = np.broadcast_to(p.covariance(), (n, 9, 9))

    def ready() -> bool:
        return (
            slot.rng is not None
            and st.get("belief") is not None
            and blk.belief is not None
            and rec.last(blk.name, "belief.pos") is not None
        )

    def load(k: int) -> None:
        load_streams(slot.rng, a, meta, 2, a["cnt"], ("normal",))
        a["cnt"][1] = 0
        b: VehicleState = st["belief"]
        load_belief(a, b)
        a["tb"][0] = b.t

    def commit(k: int, kstop: int, ticks: int) -> None:
        slot.rng.set_position("normal", int(a["cnt"][0]))
        tr = blk.truth
        b = VehicleState(
            a["belief.pos"].copy(), a["belief.quat"].copy(), belief_velocity(a), np.array(tr.ang_vel),
            np.array(tr.accel), float(a["tb"][0]), cov.copy(),
        )  # fmt: skip
        st["belief"] = b
        blk.set_belief(b)

    def counts(k: int, kstop: int) -> dict[str, int]:
        return {"nav/state": int(a["cnt"][1])}

    def refill() -> bool:  # the next sample's 9 normals, if short
        return refill_streams(slot.rng, 9)

    def finish(ticks: int) -> dict[str, np.ndarray]:
        lg = a["log"][:, :ticks].transpose(1, 2, 0)  # (ticks, n, 7) view
        quat = np.ascontiguousarray(lg[..., 3:7]).reshape(-1, 4)
        return {"belief.pos": lg[..., 0:3],
                "belief.heading": heading_deg(quat).reshape(ticks, n, 1)}  # fmt: skip

    args = ("meta", "normals", "cnt", "tb", "truth.nav", "belief.pos", "belief.quat", "belief.speed",
            "belief.side", "log")  # fmt: skip
    return Laws(
        [*fill, Law("sense", noisy_state_sense, args)], a,
        state=("cnt", "tb", "belief.pos", "belief.quat", "belief.speed", "belief.side"),
        logs=("log",), unheard=("nav/state",), counts=counts, max_ticks=T, fresh=("normals",),
        also_calls=("estimate",), sources=(_SRC,), ready=ready, refill=refill, load=load,
        commit=commit, finish=finish,
        gpu=Worlds(n, slot.ctx.n_worlds, shared=("meta",), world=("cnt", "tb", "belief.hok")),
    )  # fmt: skip
