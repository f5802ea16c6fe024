"""The ``contacts`` sensor in the generated tick: one scan of every other entity per due tick.

The plugin (:class:`~marinesim.engine.plugins.sensors.ContactSensor`) scans the truth of every
entity block (targets sorted by entity name) with
:func:`marinesim.sensors.contacts.detect_contacts`.  Here the law :func:`contacts_sense` does
the same per sensing vehicle, in the ``sense`` hook on the slot's due ticks: the targets'
positions come from every block's position wire (``truth.pos`` / ``truth.eta`` / ``truth.x6``
of its motion, gathered in block order by :func:`gather_targets`, then taken in name order),
the sensing vehicle's own pose from its block's ``truth.nav``.  Per (vehicle, target) pair
in the function's order: the sensor-frame vector, range, azimuth and elevation, the field
of view, P_d (constant or logistic), the draw slot of the in-view pair (its uniform for the
detection, its three normals for the noise), the overflow beyond ``max_contacts``, and the
NED position of a detection from the noisy (range, azimuth, elevation); the random draws are
the plugin's fixed consumption per scan, read in place in the slot's pre-drawn blocks.  The
sums run in ``einsum``'s orders (a reduction over an operand's last axis adds the first and
last products first) and the norms as ``np.linalg.norm``; the mount rotation is applied as
a product summed in order (bit for bit with the plugin's ``@`` for the identity mount, to
rounding otherwise).

The logs are the plugin's: ``detections`` and ``overflow`` per vehicle and ``contact_pos``
(the first real detection), held between scans.  The scan's message on ``contacts`` is
counted (a scan with a detection or a false alarm publishes one); its payload (covariances)
is not built, so the law joins the tick only when nothing reads the topic.  A scan with a
target beyond ``max_contacts`` hands the tick back (the plugin emits its warning).  Stacked
replicas scan their own replica's targets, in the target order and with the ids of that
replica's own run (the plugin's layout, :func:`~marinesim.engine.plugins.sensors._target_layout`).
Not in the tick: a velocity estimate (``vel_std``), more targets in a replica than
``spatial_index_threshold`` (the plugin's k-d tree).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from marinesim.core.frames import rotation_from_euler, rotation_quat_c
from marinesim.core.jitable import register_jitable
from marinesim.engine.compiled.law import Law, Laws, log_ticks
from marinesim.engine.plugins.metric_laws import gather_position, gathered_layout

__all__ = ["contacts_sense", "declare_contacts", "gather_targets"]

_SRC = Path(__file__).resolve().parents[2] / "sensors"


@register_jitable
def gather_targets(k, j, t, h, meta, src, off, tall):  # noqa: ANN001, ANN201
    """On the scan's due ticks: rows ``off[0]`` … of ``tall`` (M, 3), one block's positions
    (the first three columns of its position wire)."""
    kk = k + 1
    p = int(meta[0])
    o = int(meta[1])
    if p == 1 or (kk >= o and (kk - o) % p == 0):
        gather_position(k, j, t, h, src, off, tall)
    return 0


@register_jitable
def contacts_sense(k, j, t, h, meta, normals, uniforms, cnt, pub, tall, order, tid, tok, tgrp, sid, sgrp, mount, moff, cdf, nav, rs, org, cur, log):  # noqa: ANN001, ANN201, E501
    """``contacts``: one scan per due tick (see the module docstring); every tick the frame
    logs ``cur`` (N, 5: detections, contact_pos, overflow) into row ``j`` of ``log``.

    ``meta``: [0] period, [1] offset, [2] / [3] the normal / uniform block lengths,
    [4] max_contacts C, [5] max_false_alarms K, [6] normals per scan, [7] uniforms per scan,
    [8] / [9] min / max range, [10] / [11] half fields of view (+ 1e-12) [rad], [12] P_d,
    [13] logistic P_d (1: on), [14] its slope, [15] its range at 0.5, [16:19] σ (range,
    azimuth, elevation [rad]).  ``cnt``: [0] / [1] read positions in the normal / uniform
    blocks; ``pub[j]`` 1 when the scan of the call's tick j published.  ``rs`` (N, 3, 3) and
    ``org`` (N, 3): each vehicle's sensor frame → NED (R · mount) and origin.  ``tid``,
    ``tok``, ``tgrp`` per target (block order), ``order`` the scan's target order; ``sid``,
    ``sgrp`` per sensing vehicle: ids as in their replica's own run, and the replica groups
    (a vehicle sees its own replica's targets)."""
    n = nav.shape[0]
    pub[j] = 0
    kk = k + 1
    p = int(meta[0])
    o = int(meta[1])
    if p == 1 or (kk >= o and (kk - o) % p == 0):
        nn, nu = int(meta[6]), int(meta[7])
        npos, upos = cnt[0], cnt[1]
        if npos + nn > meta[2] or upos + nu > meta[3]:
            return 1  # past the pre-drawn blocks: the plugin draws the next
        c_max = int(meta[4])
        kfa = int(meta[5])
        m = order.shape[0]
        sent = False
        for i in range(n):
            r = rotation_quat_c(nav[i, 3], nav[i, 4], nav[i, 5], nav[i, 6])
            for a in range(3):
                for b in range(3):
                    s = 0.0
                    s += r[3 * a] * mount[0, b]
                    s += r[3 * a + 1] * mount[1, b]
                    s += r[3 * a + 2] * mount[2, b]
                    rs[i, a, b] = s
            for a in range(3):
                org[i, a] = nav[i, a] + ((r[3 * a] * moff[0] + r[3 * a + 2] * moff[2]) + r[3 * a + 1] * moff[1])
            slot = 0
            over = 0
            found = 0
            first = False
            fx = math.nan
            fy = math.nan
            fz = math.nan
            for q in range(m):
                jj = order[q]
                if tok[jj] == 0 or tgrp[jj] != sgrp[i] or sid[i] == tid[jj]:
                    continue  # (another replica's, or itself)
                d0 = tall[jj, 0] - org[i, 0]
                d1 = tall[jj, 1] - org[i, 1]
                d2 = tall[jj, 2] - org[i, 2]
                s0 = 0.0  # einsum "dji,dj->di": each sum from 0.0 in order
                s0 += rs[i, 0, 0] * d0
                s0 += rs[i, 1, 0] * d1
                s0 += rs[i, 2, 0] * d2
                s1 = 0.0
                s1 += rs[i, 0, 1] * d0
                s1 += rs[i, 1, 1] * d1
                s1 += rs[i, 2, 1] * d2
                s2 = 0.0
                s2 += rs[i, 0, 2] * d0
                s2 += rs[i, 1, 2] * d1
                s2 += rs[i, 2, 2] * d2
                rng = math.sqrt((s0 * s0 + s1 * s1) + s2 * s2)
                az = math.atan2(s1, s0)
                el = math.atan2(-s2, math.hypot(s0, s1))
                if not (rng >= meta[8] and rng <= meta[9] and abs(az) <= meta[10]
                        and abs(el) <= meta[11]):  # fmt: skip
                    continue
                if slot >= c_max:
                    over += 1
                    continue
                if meta[13] != 0.0:
                    pd = 1.0 / (1.0 + math.exp(meta[14] * (rng - meta[15])))
                else:
                    pd = meta[12]
                u = uniforms[i, upos + slot] + 0.0
                if u < pd:
                    found += 1
                    if not first:  # the first real detection of the vehicle
                        z0 = normals[i, npos + 3 * slot] + 0.0
                        z1 = normals[i, npos + 3 * slot + 1] + 0.0
                        z2 = normals[i, npos + 3 * slot + 2] + 0.0
                        rr = rng + meta[16] * z0
                        aa = az + meta[17] * z1
                        ee = el + meta[18] * z2
                        ce = math.cos(ee)
                        x0 = rr * ce * math.cos(aa)
                        x1 = rr * ce * math.sin(aa)
                        x2 = -rr * math.sin(ee)
                        # origin + einsum("dij,dj->di", rs, xyz): first and last products first
                        fx = org[i, 0] + ((rs[i, 0, 0] * x0 + rs[i, 0, 2] * x2) + rs[i, 0, 1] * x1)
                        fy = org[i, 1] + ((rs[i, 1, 0] * x0 + rs[i, 1, 2] * x2) + rs[i, 1, 1] * x1)
                        fz = org[i, 2] + ((rs[i, 2, 0] * x0 + rs[i, 2, 2] * x2) + rs[i, 2, 1] * x1)
                        first = True
                slot += 1
            if over > 0:
                return 1  # the plugin warns of the targets not reported: its tick
            fa = 0
            if kfa > 0:  # the Poisson count of false alarms (inverse CDF of one uniform)
                u0 = uniforms[i, upos + c_max] + 0.0
                for c in range(kfa + 1):
                    if cdf[c] <= u0:
                        fa += 1
                fa = min(fa, kfa)
            if found + fa > 0:
                sent = True
            cur[i, 0] = float(found)
            cur[i, 1] = fx
            cur[i, 2] = fy
            cur[i, 3] = fz
            cur[i, 4] = 0.0
        cnt[0] = npos + nn
        cnt[1] = upos + nu
        pub[j] = 1 if sent else 0
    for i in range(n):
        for c in range(5):
            log[c, j, i] = cur[i, c]
    return 0


def _position_wire(sim: Any, blk: Any) -> str | None:
    """The block's truth wire whose first three columns are its position (its motion's)."""
    from marinesim.engine.plugins.sensor_laws import _truth_view

    view = _truth_view(sim, blk)
    return None if isinstance(view, str) else view[1][0]


def declare_contacts(plugin: Any, slot: Any, sim: Any) -> Laws | str:
    """The declaration of ``contacts``, or why it stays on the plugins here."""
    from marinesim.engine.plugins.sensor_laws import load_streams, refill_streams, truth_nav_laws
    from marinesim.sensors import contacts

    p: Any = plugin.params
    blk = slot.block
    n = blk.n
    if p.vel_std is not None:
        return "a velocity estimate (vel_std)"
    if sim.bus.wanted("contacts", blk.name, "local"):
        return "its 'contacts' messages are read through the bus"
    from marinesim.engine.context import TruthView
    from marinesim.engine.plugins.sensors import _target_layout

    views = [TruthView(b, slot.ctx.replica) for b in sim.blocks]
    order, tids, sids, (sgrp, tgrp) = _target_layout(views, blk.name)
    m_all = sum(b.n for b in sim.blocks)
    group = m_all if tgrp is None else int(np.max(np.unique(tgrp, return_counts=True)[1]))
    if group > p.spatial_index_threshold:
        return f"{group} targets: beyond spatial_index_threshold, the plugin's k-d tree"
    a: dict[str, np.ndarray] = {"truth.nav": np.zeros((n, 13))}
    fill = truth_nav_laws(sim, slot, a)
    if isinstance(fill, str):
        return fill
    many = len(sim.blocks) > 1
    gather: list[Law] = []
    off = 0
    for b, other in enumerate(sim.blocks):
        wire = _position_wire(sim, other)
        if wire is None:
            return f"block {other.name!r} has no compiled position for its targets"
        key = f"{wire}@{other.name}" if many else wire
        a[f"off{b}"] = np.array([off], dtype=np.int64)
        gather.append(Law("sense", gather_targets, ("meta", key, f"off{b}", "tall")))
        off += other.n
    # per target in block order (the law takes them in ``order``): ids and replica groups
    order = np.asarray(order, dtype=np.int64)
    tid = np.empty(off, dtype=np.int64)
    tid[order] = tids
    tg = np.zeros(off, dtype=np.int64)
    if tgrp is not None:
        tg[order] = tgrp
    sg = np.zeros(n, dtype=np.int64) if sgrp is None else np.asarray(sgrp, dtype=np.int64)
    tok = np.ones(off)
    if p.teams is not None:
        team = np.concatenate([b.team for b in sim.blocks])
        tok = np.isin(team, p.teams).astype(float)
    nu, nn = contacts.draws_per_scan(p, off)
    meta = np.zeros(19)
    meta[0:2] = (slot.period, slot.offset)
    meta[4:8] = (p.max_contacts, p.max_false_alarms, nn, nu)
    meta[8:10] = (p.min_range, p.max_range)
    meta[10] = np.deg2rad(p.fov_az_deg) / 2 + 1e-12
    meta[11] = np.deg2rad(p.fov_el_deg) / 2 + 1e-12
    meta[12] = p.detection_probability
    if p.p_d_range_50 is not None:
        meta[13:16] = (1.0, p.p_d_slope, p.p_d_range_50)
    meta[16:19] = (p.range_std, np.deg2rad(p.az_std_deg), np.deg2rad(p.el_std_deg))
    cdf = np.zeros(1)
    if p.max_false_alarms > 0:
        from scipy.special import pdtr

        cdf = pdtr(np.arange(p.max_false_alarms + 1), p.false_alarm_rate).astype(float)
    mount = rotation_from_euler(*np.deg2rad(np.asarray(p.mount_rpy_deg, dtype=float))[:, None])[0]
    T = log_ticks(n, 5)
    a.update(
        meta=meta, normals=np.zeros((n, 1)), uniforms=np.zeros((n, 1)),
        cnt=np.zeros(2, dtype=np.int64), pub=np.zeros(T, dtype=np.int64), rs=np.zeros((n, 3, 3)),
        org=np.zeros((n, 3)), tall=np.zeros((off, 3)), order=order, tid=tid,
        tok=tok, tgrp=tg, sid=np.asarray(sids, dtype=np.int64), sgrp=sg,
        mount=np.ascontiguousarray(mount),
        moff=np.asarray(p.mount_offset, dtype=float), cdf=cdf, cur=np.zeros((n, 5)),
        log=np.zeros((5, T, n)),
    )  # fmt: skip
    st = slot.ctx.state
    rec = sim._recorder
    name = plugin.name
    signals = (("detections", 0, 1), ("contact_pos", 1, 4), ("overflow", 4, 5))

    def ready() -> bool:
        return slot.rng is not None and all(
            rec.last(blk.name, f"{name}.{s}") is not None for s, _c0, _c1 in signals
        )

    def load(k: int) -> None:
        cnt = a["cnt"]
        load_streams(slot.rng, a, meta, 2, cnt)
        for s, c0, c1 in signals:
            a["cur"][:, c0:c1] = np.reshape(rec.last(blk.name, f"{name}.{s}"), (n, -1))

    def commit(k: int, kstop: int, ticks: int) -> None:
        slot.rng.set_position("normal", int(a["cnt"][0]))
        slot.rng.set_position("uniform", int(a["cnt"][1]))
        st["last"] = None  # (the plugin's last scan: not built by the law)

    def counts(k: int, kstop: int) -> dict[str, int]:
        return {"contacts": int(a["pub"][: kstop - k].sum())}

    def refill() -> bool:  # the next scan's draws, if short
        return refill_streams(slot.rng, nn, nu)

    def finish(ticks: int) -> dict[str, np.ndarray]:
        lg = a["log"][:, :ticks].transpose(1, 2, 0)
        return {f"{name}.{s}": lg[..., c0:c1] for s, c0, c1 in signals}

    law = Law("sense", contacts_sense, (
        "meta", "normals", "uniforms", "cnt", "pub", "tall", "order", "tid", "tok", "tgrp",
        "sid", "sgrp", "mount", "moff", "cdf", "truth.nav", "rs", "org", "cur", "log"))  # fmt: skip
    # on CUDA a world scans its own targets: every block's rows of that world (``gathered``,
    # laid out world by world), ``order`` made its own rows' numbers; a scan published where
    # a vehicle of any world detected (pub: the maximum)
    layout = gathered_layout(
        sim, n, ("tall", "tid", "tok", "tgrp"), shared=("meta", "mount", "moff", "cdf"),
        world=("cnt",), most=("pub",), indices=("order",),
    )  # fmt: skip
    return Laws(
        [*fill, *gather, law], a, state=("cnt", "cur"), logs=("log",), unheard=("contacts",),
        counts=counts, max_ticks=T, fresh=("normals", "uniforms"), sources=(_SRC,),
        ready=ready, refill=refill, load=load, commit=commit, finish=finish, gpu=layout,
    )  # fmt: skip
