"""The REMUS 100 block as a compiled span of engine ticks.

A block (any number of vehicles) whose plugins are exactly ``fossen6dof`` with a
PythonVehicleSimulator REMUS 100 preset (motion), ``depth_heading_autopilot`` (controller,
every tick) and optionally ``waypoints`` (autonomy) runs its ticks through the compiled tick
of :mod:`~marinesim.engine.plugins.remus_kernel` — the autopilot law, the model's substeps
with its divergence guard — one call per tick, the Euler angles of each new pose finished
with numpy (the autopilot reads them at the next tick: numpy's ``arctan2``/``arcsin`` are not
the compiled ones to the last bit).  The recorded frames (hold-last), the truth, the plugins'
states and the bus and call counts are then written as the plugins would have left them,
the angle-derived signals (``truth.heading``, ``fossen6dof.euler``, degrees) computed with
numpy over the span's ticks at once.

The span hands the tick back to the plugins (returns before it, nothing of it done) whenever
something only they do is due: the autonomy (1 Hz in ``remus100_survey``: DESIRED_* messages,
waypoint events), a message waiting on the bus, a step the model's guard stops (event,
non-finite truth), a full recorder chunk.  Both routes give bit-identical logs.

``Simulation.compiled`` chooses: None (default) uses the span where it applies and numba is
installed (``MARINESIM_JIT=0`` turns it off), True requires it (ConfigError saying why not),
False never uses it.
"""

from __future__ import annotations

import math
import os
import time as _time
from typing import Any

import numpy as np

from marinesim.control.autopilots import RemusDepthHeadingState
from marinesim.control.pvs_fleet import remus_row
from marinesim.core.errors import ConfigError
from marinesim.core.frames import angle360, euler_from_quat
from marinesim.core.state import VehicleState
from marinesim.engine.plugins import remus_kernel as rk
from marinesim.engine.span import register_span
from marinesim.models.sixdof.motion import RowsState
from marinesim.models.sixdof.pvs import _kernel_params

__all__ = ["RemusSpan", "span_for"]

#: Ticks of one span at most (its scratch arrays).
MAX_TICKS = 4096
#: Topics the autopilot publishes every tick (delivered to the motion plugin).
_TOPICS = ("fins/cmd", "propeller/cmd")


class RemusSpan:
    """Drives :func:`~marinesim.engine.plugins.remus_kernel._tick` for one REMUS 100 block.

    Parameters
    ----------
    sim : Simulation
        Built simulation whose single live block is the REMUS 100 block.
    slots : dict of str to Slot
        The block's ``motion``, ``controller`` and (optional) ``autonomy`` slots.
    kernel : callable
        The compiled tick.
    """

    def __init__(self, sim: Any, slots: dict[str, Any], kernel: Any) -> None:
        self.sim = sim
        self.motion, self.ctl = slots["motion"], slots["controller"]
        self.auto = slots.get("autonomy")
        self.kernel = kernel
        self.ticks = 0  # ticks run compiled (the manifest reports them)
        mname, cname = self.motion.plugin.name, self.ctl.plugin.name
        self.names = {
            key: f"{pre}.{s}"
            for key, pre, s in (
                ("euler", mname, "euler"), ("nu", mname, "nu"), ("act", mname, "actuators"),
                ("command", cname, "command"),
            )
        }  # fmt: skip
        self.produced = (
            "truth.pos", "truth.heading", "truth.speed", *self.names.values(),
        )  # fmt: skip
        self._scratch: dict[str, np.ndarray] = {}
        self._row: np.ndarray | None = None

    # ------------------------------------------------------------------------------ state
    def _ready(self) -> bool:
        """The plugins have run a tick: their states, the recorder's signals, nothing pending."""
        sim = self.sim
        rec = sim._recorder
        mst, cst = self.motion.ctx.state, self.ctl.ctx.state
        if rec._cap == 0 or "x" not in mst or "ap" not in cst:
            return False
        if not math.isfinite(cst.get("t_prev", math.nan)) or "still_water" not in mst:
            return False
        blk = self.motion.block
        if not blk.active.all() or mst["bad"].any() or not mst["x"].alive.all():
            return False
        if sim.bus.pending or self.ctl.sub.inbox or self.motion.sub.inbox:
            return False  # a message to deliver: the plugins read it
        return all(n in rec.units for n in self.produced)

    def _next_autonomy(self, k: int) -> int | None:
        a = self.auto
        if a is None:
            return None
        if k <= a.offset:
            return a.offset
        return a.offset + -(-(k - a.offset) // a.period) * a.period

    def _buffers(self, n: int) -> dict[str, np.ndarray]:
        s = self._scratch
        if s.get("x") is None or s["x"].shape[0] != n:
            m = 15
            s.update(
                x=np.empty((n, m)), xb=np.empty((n, m)), x0=np.empty((n, m)),
                xq=np.empty((n, m)), xp=np.empty((n, m)), cmd=np.empty((n, 3)), ap=np.empty((n, 8)),
                aps=np.empty((n, 8)), eta=np.empty((n, 6)), u5=np.empty((n, 5)),
                alive=np.ones(n, dtype=np.bool_), status=np.zeros(n, dtype=np.int8),
                size=np.zeros(n), ea=np.empty((2, n)), ep=np.empty(n), yy=np.empty((2, n)),
                xx=np.empty((2, n)), ss=np.empty(n), tf=np.empty(2),
                xlog=np.empty((MAX_TICKS, n, m)), ulog=np.empty((MAX_TICKS, n, 3)),
                elog=np.empty((MAX_TICKS, 3, n)),
            )  # fmt: skip
        return s

    def run(self, k: int, kend: int) -> int:
        """Run ticks k… compiled (at most to ``kend``); returns the tick reached."""
        if not self._ready():
            return k
        sim = self.sim
        rec = sim._recorder
        clock = sim.clock
        nxt = self._next_autonomy(k)
        if nxt is not None:
            kend = min(kend, nxt)
        # the recorder's chunk: the span ends at the tick that fills it
        every, ticks0 = rec.every, rec._ticks
        first = -(-ticks0 // every) * every
        kend = min(kend, k + first + (rec._cap - rec._row - 1) * every - ticks0 + 1, k + MAX_TICKS)
        if kend <= k:
            return k
        blk = self.motion.block
        n = blk.n
        mst, cst = self.motion.ctx.state, self.ctl.ctx.state
        motion = mst["motion"]
        cp: Any = self.ctl.plugin.params
        b = self._buffers(n)
        x, cmd, ap, tf, ea, ep = b["x"], b["cmd"], b["ap"], b["tf"], b["ea"], b["ep"]
        x[...] = mst["x"].x
        cmd[...] = mst["cmd"]
        st_ap: RemusDepthHeadingState = cst["ap"]
        for j, name in enumerate(RemusDepthHeadingState.__dataclass_fields__):
            ap[:, j] = getattr(st_ap, name)
        tf[0], tf[1] = cst["t_prev"], mst["x"].t
        eul = euler_from_quat(blk.truth.quat)  # the autopilot's belief (truth) at t_k
        ea[0], ep[...], ea[1] = eul[:, 0], eul[:, 1], eul[:, 2]
        if self._row is None:  # the law's row at dt; the kernel sets its h-dependent entries
            from marinesim.engine.plugins.wrench import autopilot_gains

            self._row = remus_row(autopilot_gains(cp, 0.0, 0.0, 0.0), clock.dt)
        prow = np.repeat(self._row, n, axis=0)
        prow[:, 2] = cst["depth"]  # ref_z
        prow[:, 9] = cst["rpm"]  # ref_n
        hrad = np.ascontiguousarray(np.radians(cst["heading"]), dtype=float)
        kind, par, zero = _kernel_params(motion.built)
        h = clock.h
        start, dt, nsub = clock.start, clock.dt, int(clock.substeps)
        wnz, d2r, r2d = float(cp.wn_d_z), math.pi / 180, 180.0 / math.pi
        tick = self.kernel
        args_a = (start, dt, h, nsub, kind, par, zero, prow, wnz, d2r, r2d, hrad, tf, x, b["xb"],
                  b["x0"], b["xq"], b["xp"], cmd, ap, b["aps"], b["eta"], b["u5"], b["alive"],
                  b["status"], b["size"], ea, ep, b["yy"], b["xx"], b["ss"], b["xlog"],
                  b["ulog"], b["elog"])  # fmt: skip
        yy, xx, ss = b["yy"], b["xx"], b["ss"]
        arctan2, arcsin = np.arctan2, np.arcsin
        done = 0
        with np.errstate(all="ignore"):
            for kk in range(k, kend):
                if not tick(kk, kk - k, *args_a):
                    break
                arctan2(yy, xx, out=ea)  # roll, yaw of the new pose (numpy's, as the plugins)
                arcsin(ss, out=ep)  # pitch
                done += 1
        if done == 0:
            return k
        elog = b["elog"]
        elog[done - 1, 0], elog[done - 1, 1], elog[done - 1, 2] = ea[0], ep, ea[1]
        self._write_back(k, k + done, b, motion)
        return k + done

    def _write_back(self, k: int, kstop: int, b: dict[str, np.ndarray], motion: Any) -> None:
        """Hand the state at the start of tick ``kstop`` back to the plugins and the engine."""
        sim = self.sim
        clock = sim.clock
        blk = self.motion.block
        n = blk.n
        ticks = kstop - k
        mst, cst = self.motion.ctx.state, self.ctl.ctx.state
        # plugin states
        cst["ap"] = RemusDepthHeadingState(*b["ap"].T.copy())
        cst["t_prev"] = float(b["tf"][0])
        x1 = RowsState(x=b["x"].copy(), alive=np.ones(n, dtype=bool), t=float(b["tf"][1]))
        mst["x"] = x1
        mst["cmd"] = b["ulog"][ticks - 1].copy()  # the last tick's (not an undone one's)
        mst["commanded"] = mst["commanded"] | True
        pos, quat, vel, ang = motion.pose(x1)
        xp = RowsState(x=b["xp"].copy(), alive=np.ones(n, dtype=bool))
        mst["accel"] = motion.specific_force(motion.nu(xp), x1, clock.h, sim.env.gravity, quat)
        t_stop = clock.start + kstop * clock.dt
        blk.truth = VehicleState(
            pos.copy(), quat.copy(), vel.copy(), ang.copy(), mst["accel"].copy(), t_stop
        )
        blk._truth_ro = None
        sim._last_finite[blk.name] = blk.truth.pos.copy()
        self._record(k, ticks, b)
        # bus and call counts as if the plugins had run every tick
        bus = sim.bus
        for topic in _TOPICS:
            bus.published[topic] = bus.published.get(topic, 0) + ticks
            bus.delivered[topic] = bus.delivered.get(topic, 0) + ticks
            key = (topic, blk.name)
            bus._seq[key] = bus._seq.get(key, 0) + ticks
        self.ctl.calls["control"] = self.ctl.calls.get("control", 0) + ticks
        nsub = int(clock.substeps)
        self.motion.calls["substep"] = self.motion.calls.get("substep", 0) + ticks * nsub
        # the hook contexts as the last plugin calls left them
        t_last = clock.start + (kstop - 1) * clock.dt
        for slot, t_hook, hook in (
            (self.ctl, t_last, "control"),
            (self.motion, t_last + (nsub - 1) * clock.h, "substep"),
        ):
            ctx = slot.ctx
            ctx.t, ctx.tick, ctx.t_next = t_hook, kstop - 1, t_stop
            ctx.events.t = t_hook
            slot.phase = hook
        self.motion.ctx.substep = nsub - 1
        self.ctl.current_inbox = type(self.ctl.current_inbox)([], n)
        clock.k = kstop
        self.ticks += ticks

    def _record(self, k: int, ticks: int, b: dict[str, np.ndarray]) -> None:
        """The frames of ticks k … k + ticks − 1 (at t_{k+1} …), hold-last, decimated."""
        sim = self.sim
        rec = sim._recorder
        clock = sim.clock
        blk = self.motion.block
        n = blk.n
        xl, ul, el = b["xlog"][:ticks], b["ulog"][:ticks], b["elog"][:ticks]
        act = np.empty((ticks, n, 3))
        act[..., :2] = np.degrees(xl[..., 12:14])
        act[..., 2] = xl[..., 14]
        com = np.empty((ticks, n, 3))
        com[..., :2] = np.degrees(ul[..., :2])
        com[..., 2] = ul[..., 2]
        nm = self.names
        vals = {
            "truth.pos": xl[..., 0:3],
            "truth.heading": angle360(np.degrees(el[:, 2, :]))[..., None],
            "truth.speed": xl[..., 6:7],
            nm["euler"]: np.degrees(el).transpose(0, 2, 1),
            nm["nu"]: xl[..., 6:12],
            nm["act"]: act,
            nm["command"]: com,
        }
        every, ticks0 = rec.every, rec._ticks
        frames = ticks0 + np.arange(ticks)
        sel = np.flatnonzero(frames % every == 0)
        r = sel.size
        row = rec._row
        o = rec.offsets[blk.name]
        if r:
            tt = clock.start + np.arange(k + 1, k + ticks + 1) * clock.dt
            rec._tbuf[row : row + r] = tt[sel]
            buf = rec._buf
            for (bname, name), cur in rec.current.items():
                dst = buf.get(name)
                if dst is None:  # a signal that appeared during this chunk: NaN before
                    dst = buf[name] = np.full((cur.shape[1], rec._cap, rec.n_rows), np.nan)
                ob = rec.offsets[bname]
                v = vals.get(name) if bname == blk.name else None
                if v is None:  # held (hold-last)
                    dst[:, row : row + r, ob : ob + cur.shape[0]] = cur.T[:, None, :]
                else:
                    dst[:, row : row + r, o : o + n] = v[sel].transpose(2, 0, 1)
        for name, v in vals.items():
            rec.current[(blk.name, name)] = np.array(v[-1], dtype=float)
        rec._ticks = ticks0 + ticks
        rec._row = row + r
        last_skipped = (ticks0 + ticks - 1) % every != 0
        rec._pending = float(clock.start + (k + ticks) * clock.dt) if last_skipped else None
        if rec._row >= rec._cap or (
            r and rec.sink is not None and _time.perf_counter() - rec._last_flush >= rec.flush_s
        ):
            rec.flush()


# ------------------------------------------------------------------------------ eligibility
def span_for(sim: Any, compiled: bool | None) -> RemusSpan | None:  # noqa: D417
    """The compiled REMUS 100 span of ``sim``, or None (the plugins run every tick).

    Raises
    ------
    ConfigError
        ``compiled`` is True, the scenario has a ``depth_heading_autopilot`` and the span
        does not apply (the message says why).
    """
    if compiled is False or (compiled is None and os.environ.get("MARINESIM_JIT", "1") == "0"):
        return None
    from marinesim.engine.plugins.wrench import DepthHeadingAutopilot

    if not any(isinstance(s.plugin, DepthHeadingAutopilot) for s in sim.slots):
        return None  # not a REMUS autopilot scenario: another span, or none
    why, slots = _why_not(sim)
    if why is not None:
        if compiled:
            raise ConfigError(
                f"the compiled REMUS 100 span does not apply: {why}", param="compiled"
            )
        return None
    return RemusSpan(sim, slots, rk.kernel_for())


def _why_not(sim: Any) -> tuple[str | None, dict[str, Any]]:
    from marinesim.engine.plugins.sixdof import SixDofMotion
    from marinesim.engine.plugins.waypoints import Waypoints
    from marinesim.engine.plugins.wrench import DepthHeadingAutopilot
    from marinesim.models.sixdof.motion import PvsMotion

    live = [b for b in sim.blocks if b.n > 0]
    if len(live) != 1 or len(sim.blocks) != 1:
        return "it runs one block", {}
    if sim.world_slots:
        return "the scenario has world plugins", {}
    if sim.clock.time_warp:
        return "time_warp (paced runs)", {}
    if sim._recorder.select is not None:
        return "log_columns (signal selection)", {}
    if live[0].belief is not None:
        return "a navigation estimate (belief)", {}
    kinds: dict[str, Any] = {}
    for s in sim.slots:
        pl = s.plugin
        key = (
            "motion" if isinstance(pl, SixDofMotion)
            else "controller" if isinstance(pl, DepthHeadingAutopilot)
            else "autonomy" if isinstance(pl, Waypoints)
            else None
        )  # fmt: skip
        if key is None:
            return f"plugin {pl.name!r} runs only tick by tick", {}
        if key in kinds:
            return f"more than one {key} plugin", {}
        kinds[key] = s
    if "motion" not in kinds or "controller" not in kinds:
        return "it needs fossen6dof and depth_heading_autopilot", {}
    m = kinds["motion"].plugin
    if not isinstance(m.motion, PvsMotion) or m.motion.name != "remus100":
        return "the motion is not the PythonVehicleSimulator REMUS 100 (preset remus100)", {}
    if sim.env.current_field is not None:
        return "a current field (the REMUS 100 takes a uniform current)", {}
    c = kinds["controller"]
    if c.period != 1 or c.offset != 0:
        return "an autopilot rate other than every tick", {}
    return None, kinds


register_span(span_for)
