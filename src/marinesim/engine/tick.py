"""The tick t_k → t_{k+1} (engine spec §4.2), compiled from :data:`~marinesim.engine.plugin.PHASES`.

When a simulation is built, :class:`TickLoop` walks ``PHASES`` once and turns each phase into
one step function over a precomputed list of the slots that run in it (only plugins that
override the phase's hook, only non-empty blocks, in block order). A tick is then a loop over
those steps: no per-tick dict lookups, ``getattr`` or validation. Phases with nothing to run
are left out; ``boundary`` delivers the bus at t_k before ``physics`` and at t_{k+1} after it.
The ``check`` phase may end the tick early (non-finite truth with ``on_nonfinite: stop``): the
``log`` phase still runs, so the diverged state is recorded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from marinesim.core.errors import EngineError
from marinesim.core.frames import angle360
from marinesim.core.state import VehicleState
from marinesim.engine.plugin import PHASES
from marinesim.engine.results import Event
from marinesim.engine.schedule import Slot, call

if TYPE_CHECKING:
    from marinesim.engine.simulation import Simulation

__all__ = ["TickLoop", "heading_deg"]

#: ``ndarray.sum`` without its Python wrapper (the same reduction).
_sum = np.add.reduce

#: A compiled phase: ``step(k, t_k, t_{k+1})``; True ends the tick early (then ``log`` runs).
Step = Callable[[int, float, float], Any]


def heading_deg(q: NDArray[np.float64]) -> NDArray[np.float64]:
    """(N,) marine heading [deg, 0..360) of quaternions (N, 4), scalar first (yaw of ZYX Euler)."""
    w, x, y, z = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
    yaw = np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return angle360(np.degrees(yaw))


class TickLoop:
    """One simulation's tick, compiled from ``phases`` at build time.

    Parameters
    ----------
    sim : Simulation
        Built runtime (blocks, slots grouped by block and kind, bus, clock, recorder).
    groups : dict
        Block name → kind → slots, in scenario order.
    phases : sequence of str
        Phase order (default :data:`PHASES`); an unknown phase name is an EngineError.

    Attributes
    ----------
    steps : tuple of (str, callable)
        The compiled phases that do something, in order.
    """

    def __init__(
        self,
        sim: Simulation,
        groups: dict[str, dict[str, list[Slot]]],
        phases: Sequence[str] = PHASES,
    ) -> None:
        self.sim = sim
        self.clock = sim.clock
        self.bus = sim.bus
        live = [b for b in sim.blocks if b.n > 0]

        def having(kind: str, hook: str) -> list[Slot]:
            return [s for b in live for s in groups[b.name][kind] if hook in s.hooks]

        self.autonomy = having("autonomy", "autonomy")
        self.sense = having("sensor", "sense")
        self.estimate = having("sensor", "estimate")
        depth = max((len(g["controller"]) for g in groups.values()), default=0)
        self.chain = [
            [
                groups[b.name]["controller"][pos]
                for b in live
                if pos < len(groups[b.name]["controller"])
                and "control" in groups[b.name]["controller"][pos].hooks
            ]
            for pos in range(depth)
        ]
        self.subctrl = having("controller", "substep_control")
        self.motion = having("motion", "substep")
        self.interact = [
            s for s in sim.world_slots if s.plugin.kind == "interaction" and "interact" in s.hooks
        ]
        self.metric = [
            s for s in sim.world_slots if s.plugin.kind == "metric" and "metric" in s.hooks
        ]
        self.phases = tuple(phases)
        self.steps = self._compile(self.phases)
        self._fns = tuple(fn for _name, fn in self.steps)
        self._log = self.log_step

    # compile ------------------------------------------------------------------------------
    def _compile(self, phases: tuple[str, ...]) -> tuple[tuple[str, Step], ...]:
        if "log" not in phases or phases[-1] != "log":
            raise EngineError(f"the phase order must end with 'log', got {phases!r}")
        after_physics = False
        steps: list[tuple[str, Step]] = []
        for name in phases:
            if name == "boundary":
                fn: Step | None = self._boundary(after_physics)
            elif name == "physics":
                after_physics = True
                fn = self._physics()
            else:
                make = getattr(self, f"_phase_{name}", None)
                if make is None:
                    raise EngineError(f"no step for phase {name!r} (phases: {', '.join(phases)})")
                fn = make()
            if fn is None:
                continue
            if name == "boundary" and steps and steps[-1][0] == "boundary":
                continue  # nothing ran since the previous delivery at the same time
            steps.append((name, fn))
        return tuple(steps)

    def _boundary(self, at_t1: bool) -> Step:
        deliver = self.bus.deliver
        if at_t1:
            return lambda k, t, t1: deliver(t1) and None
        return lambda k, t, t1: deliver(t) and None

    def _entity(self, slots: list[Slot], hook: str, *, at_t1: bool) -> Step | None:
        """Entity plugins of one hook; due at tick k (k+1 for phases after physics)."""
        if not slots:
            return None
        entries = tuple((s, s.period, s.offset) for s in slots)

        def step(k: int, t: float, t1: float) -> None:
            kk = k + 1 if at_t1 else k
            tt = t1 if at_t1 else t
            for slot, period, offset in entries:
                if period == 1 or (kk >= offset and (kk - offset) % period == 0):
                    call(slot, hook, tt, k, t1)

        return step

    def _world(self, slots: list[Slot], hook: str, *, next_tick: bool) -> Step | None:
        """World plugins of one hook at t_{k+1}; due at tick k (interact) or k+1 (metric)."""
        if not slots:
            return None
        entries = tuple((s, s.period, s.offset) for s in slots)
        d = 1 if next_tick else 0

        def step(k: int, t: float, t1: float) -> None:
            kk = k + d
            for slot, period, offset in entries:
                if kk >= offset and (kk - offset) % period == 0:
                    call(slot, hook, t1, k, t1)

        return step

    def _phase_spawn(self) -> Step | None:
        return None  # runtime generation of entities: not supported yet

    def _phase_autonomy(self) -> Step | None:
        return self._entity(self.autonomy, "autonomy", at_t1=False)

    def _phase_control(self) -> Step | None:
        """Controller chain positions, with a delivery after each (engine spec §4.2)."""
        chain = tuple(tuple((s, s.period, s.offset) for s in pos) for pos in self.chain)
        if not chain:
            return None
        deliver = self.bus.deliver

        def step(k: int, t: float, t1: float) -> None:
            for entries in chain:
                for slot, period, offset in entries:
                    if period == 1 or (k >= offset and (k - offset) % period == 0):
                        call(slot, "control", t, k, t1)
                deliver(t)

        return step

    def _physics(self) -> Step:
        clock = self.clock
        substeps = int(clock.substeps)
        h = clock.h
        sub = tuple((s, s.period, s.offset, s.ctx) for s in self.subctrl)
        motion = tuple((s, s.ctx) for s in self.motion)
        blocks = tuple(self.sim.blocks)
        deliver = self.bus.deliver
        worlds = self.sim._worlds

        def step(k: int, t: float, t1: float) -> None:
            for s in range(substeps):
                ts = t + s * h
                for slot, period, offset, ctx in sub:
                    if period == 1 or (k >= offset and (k - offset) % period == 0):
                        ctx.substep = s
                        call(slot, "substep_control", ts, k, t1)
                if s > 0:
                    deliver(t)
                for slot, ctx in motion:
                    ctx.substep = s
                    call(slot, "substep", ts, k, t1)
            if worlds.frozen.any():  # ended worlds skip physics: their truth is held
                worlds.hold()
            for blk in blocks:  # truth describes t_{k+1} now
                st = blk.truth
                blk.truth = VehicleState(st.pos, st.quat, st.vel, st.ang_vel, st.accel, t1, st.cov)
                blk._truth_ro = None

        return step

    def _phase_check(self) -> Step:
        return lambda k, t, t1: self.check_finite(t1)

    def _phase_interact(self) -> Step | None:
        return self._world(self.interact, "interact", next_tick=False)

    def _phase_sense(self) -> Step | None:
        return self._entity(self.sense, "sense", at_t1=True)

    def _phase_estimate(self) -> Step | None:
        return self._entity(self.estimate, "estimate", at_t1=True)

    def _phase_metric(self) -> Step | None:
        return self._world(self.metric, "metric", next_tick=True)

    def _phase_log(self) -> Step:
        return self.log_step

    # running ------------------------------------------------------------------------------
    def tick(self) -> None:
        """Run one tick t_k → t_{k+1} (the clock advances in the ``log`` phase)."""
        clock = self.clock
        k = clock.k
        t = clock.start + k * clock.dt
        t1 = clock.start + (k + 1) * clock.dt
        for fn in self._fns:
            if fn(k, t, t1):  # check ended the tick: record the diverged state
                self._log(k, t, t1)
                return

    def log_step(self, k: int, t: float, t1: float) -> None:
        """The ``log`` phase: advance the clock to k+1 and record the frame at t_{k+1}."""
        self.clock.k = k + 1
        self.log_frame(t1)

    def begin(self) -> None:
        """Tick 0 before the first tick: start hooks, first frame, sense and estimate at t_0."""
        clock = self.clock
        t0 = clock.t
        t1 = clock.time_of(1)
        for slot in self.sim.slots:
            if "start" in slot.hooks and (slot.block is None or slot.block.n > 0):
                call(slot, "start", t0, clock.k, t1)
        deliver = self.bus.deliver
        deliver(t0)
        self.log_frame(t0)
        for slot in self.sense:
            if slot.period == 1 or (slot.offset <= 0 and -slot.offset % slot.period == 0):
                call(slot, "sense", t0, clock.k, t1)
        deliver(t0)
        for slot in self.estimate:
            if slot.period == 1 or (slot.offset <= 0 and -slot.offset % slot.period == 0):
                call(slot, "estimate", t0, clock.k, t1)
        deliver(t0)

    def log_frame(self, t: float) -> None:
        """Record truth (and belief) of every block, then the frame at ``t``."""
        sim = self.sim
        rec = sim._recorder
        last_finite = sim._last_finite
        for blk in sim.blocks:
            st = blk.truth
            rec.log(blk.name, "truth.pos", st.pos, "m", ("north", "east", "down"))
            rec.log(blk.name, "truth.heading", heading_deg(st.quat), "deg")
            rec.log(blk.name, "truth.speed", st.vel[:, 0], "m/s")
            rec.log(blk.name, "active", blk.active.astype(float), "")
            if blk.belief is not None:
                rec.log(blk.name, "belief.pos", blk.belief.pos, "m", ("north", "east", "down"))
                rec.log(blk.name, "belief.heading", heading_deg(blk.belief.quat), "deg")
            prev = last_finite.get(blk.name)
            if prev is None or np.isfinite(_sum(st.pos, None)):
                last_finite[blk.name] = st.pos.copy()
            else:
                fin = np.all(np.isfinite(st.pos), axis=1)
                last_finite[blk.name] = np.where(fin[:, None], st.pos, prev)
        rec.frame(t)

    def check_finite(self, t1: float) -> bool:
        """Apply the non-finite policy (engine spec §4.5); True when the run must stop."""
        sim = self.sim
        stop = False
        for blk in sim.blocks:
            st = blk.truth
            if blk.n == 0 or np.isfinite(
                _sum(st.pos, None)
                + _sum(st.quat, None)
                + _sum(st.vel, None)
                + _sum(st.ang_vel, None)
            ):
                continue  # fast path: everything finite (a sum overflowing to inf is re-checked below)
            bad_fields = {
                "pos": ~np.all(np.isfinite(st.pos), axis=1),
                "quat": ~np.all(np.isfinite(st.quat), axis=1),
                "vel": ~np.all(np.isfinite(st.vel), axis=1),
                "ang_vel": ~np.all(np.isfinite(st.ang_vel), axis=1),
            }
            bad = np.zeros(blk.n, dtype=bool)
            for v in bad_fields.values():
                bad |= v
            bad &= blk.active
            if not np.any(bad):
                continue
            last = sim._last_finite.get(blk.name)
            for i in np.flatnonzero(bad):
                fields = ", ".join(f for f, v in bad_fields.items() if v[i])
                prev = (
                    "unknown"
                    if last is None
                    else (
                        f"north={last[i, 0]:.6g} m, east={last[i, 1]:.6g} m, depth={last[i, 2]:.6g} m"
                    )
                )
                text = (
                    f"NumericalError: {blk.names[i]}: t={t1:.6g} s: non-finite truth {fields}; "
                    f"last finite state: {prev}"
                )
                sim._events.append(Event(t1, blk.names[i], "error", "NumericalError", text))
            if sim.on_nonfinite == "deactivate":
                blk.active = blk.active & ~bad
                if last is not None:
                    pos = np.where(bad[:, None], last, blk.truth.pos)
                    blk.truth = blk.truth.replace(pos=pos)
                    blk._truth_ro = None
            else:
                stop = True
        if stop:
            sim.status = "diverged"
            sim.ended_by = "nonfinite"
            sim.ended_tick = self.clock.k + 1
        return stop
