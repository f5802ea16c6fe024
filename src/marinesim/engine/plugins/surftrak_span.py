"""The SURFTRAK block as one compiled span of engine ticks.

A block (any number of vehicles) whose plugins are exactly ``sitl_vertical`` (motion),
``rangefinder`` (sensor) and ``surftrak`` (controller) can run many ticks in one call of
the compiled tick of :mod:`~marinesim.engine.plugins.surftrak_kernel` — every vehicle its own
loop, on all cores from :data:`PARALLEL_MIN` vehicles: the
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
import warnings
from typing import Any

import numpy as np

from marinesim.control.surftrak import SURFTRAK, ArduSubVertical
from marinesim.core.errors import ConfigError, ConfigWarning
from marinesim.engine.plugins import surftrak_kernel as sk
from marinesim.engine.plugins.surftrak_kernel import _AP_STATE, _HARNESS, SIGNALS, TICK_US
from marinesim.engine.span import register_span

__all__ = ["SurftrakSpan", "span_for"]

#: Vehicles from which the span runs them on all cores (numba ``prange``).
PARALLEL_MIN = 16
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
            sk._CACHE["kernel"] = self.kernel = None
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
    kernel = sk.kernel_for(required=bool(compiled))
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


register_span(span_for)
