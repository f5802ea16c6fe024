"""The world axis: R stacked replicas ("worlds") of one scenario in one simulation.

A simulation holds R worlds of V vehicles each (N = R·V rows per block, world-major: row
j of a block is member j % V of world j // V; ``EntityBlock.world`` gives every row's world).
One world is the same code with R = 1.  Everything that couples vehicles acts within a world:
the end conditions are evaluated per world, and world-aware plugins (``world_aware``) reduce
per world.  A world whose end condition holds is **frozen** while the others go on:

* its truth rows are held at their values at its end (its vehicles skip physics: the rows are
  written back after every physics phase, so nothing it does is seen);
* its metric summary is taken at its end (the metric plugins' ``summary`` hooks run on a copy
  of their state; their rows of that world are kept) — so metrics that count ticks or time
  stop for it exactly where its own run would stop;
* its log stops: the frame of its end is recorded even when decimation would skip it, every
  later frame repeats its rows of that frame (``Recorder.freeze``), and the frames of the
  world are those of its own run (:func:`world_frames`); its events after its end are dropped
  from the result.

On the compiled route (:mod:`marinesim.engine.compiled`) a frozen world's rows run on with the
others inside the generated tick, as on the plugins: each motion declaration writes their
truth wires back after the physics (:mod:`marinesim.engine.compiled.frozen`), the route
writes the committed truth back (:meth:`Worlds.hold`), and the frames and events are cut as
above.

The run ends when every world has ended; ``RunResult.manifest["worlds"]`` lists each world's
replica, ending condition and end tick.  See docs/guide/worlds.md.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from marinesim.core.state import VehicleState
from marinesim.engine.validate import OPS, MetricCondition

if TYPE_CHECKING:
    from marinesim.engine.results import Event
    from marinesim.engine.simulation import Simulation

__all__ = ["Worlds", "world_frames"]

_AT = re.compile(r"@(\d+)$")

#: An end check: a bool for every world at once, or an (R,) bool array (one per world).
Check = Callable[[], "bool | NDArray[np.bool_]"]


def _replica_of(name: str) -> int | None:
    m = _AT.search(name)
    return int(m.group(1)) if m else None


class Worlds:
    """Per-world end conditions, freezing and end-of-world summaries of one simulation.

    Parameters
    ----------
    sim : Simulation
        Built runtime (blocks, slots, clock, recorder).

    Attributes
    ----------
    n : int
        Worlds R (1 unless replicas are stacked).
    replicas : tuple of int
        Replica index of every world.
    frozen : ndarray of bool, shape (R,)
        Worlds that have ended.
    ended_by : list of str or None
        Ending condition of every world.
    ended_tick : ndarray of int, shape (R,)
        Tick at which every world ended (-1 while it runs).
    """

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        reps: tuple[int, ...] = ()
        for b in sim.blocks:
            if b.spec.replicas:
                reps = tuple(int(r) for r in b.spec.replicas)
                break
        self.stacked = bool(reps)
        self.replicas = reps if reps else (int(sim.replica),)
        self.n = len(self.replicas)
        self.frozen = np.zeros(self.n, dtype=bool)
        self.ended_by: list[str | None] = [None] * self.n
        self.ended_tick = np.full(self.n, -1, dtype=np.int64)
        self.final_reason: str | None = None
        #: replica → its metric rows, taken at its end (worlds that ended before the run)
        self.metric_rows: dict[int, list[dict[str, Any]]] = {}
        self._held: dict[str, tuple[NDArray[np.bool_], VehicleState]] = {}
        self.checks = self._compile()

    # end conditions ---------------------------------------------------------------------
    def _compile(self) -> tuple[tuple[str | None, Check], ...]:
        sim = self.sim
        clock = sim.clock
        out: list[tuple[str | None, Check]] = []
        for c in sim.end_conditions:
            if isinstance(c, MetricCondition):
                out.append((None, self._metric(c)))
            elif c == "time":
                if clock.end is not None:
                    end = clock.end - 1e-9 * clock.dt
                    out.append(("time", lambda end=end: clock.t >= end))
            elif c == "all_inactive":
                out.append(("all_inactive", self._all_inactive))
            elif c == "one_team":
                out.append(("one_team", self._one_team))
            elif c == "all_done":
                out.append(("all_done", self._all_done))
        return tuple(out)

    def _metric(self, c: MetricCondition) -> Check:
        op = OPS[c.op]
        sim = self.sim

        def check() -> bool:
            v = sim._metric_values.get(c.metric)  # restore() replaces the dict
            return bool(v is not None and op(v, c.value))

        check.text = f"metric {c.metric} {c.op} {c.value:g}"  # type: ignore[attr-defined]
        return check

    def _count(self, rows: Sequence[NDArray[np.int64]]) -> NDArray[np.int64]:
        """Rows per world of the given world indices."""
        out = np.zeros(self.n, dtype=np.int64)
        for w in rows:
            if w.size:
                out += np.bincount(w, minlength=self.n)
        return out

    def _all_inactive(self) -> NDArray[np.bool_]:
        return self._count([b.world[b.active] for b in self.sim.blocks]) == 0

    def _one_team(self) -> NDArray[np.bool_]:
        pairs = [
            b.world[b.active] * (1 << 32) + (b.team[b.active] & 0xFFFFFFFF) for b in self.sim.blocks
        ]
        uniq = np.unique(np.concatenate(pairs)) if pairs else np.zeros(0, np.int64)
        return self._count([uniq >> 32]) <= 1

    def _all_done(self) -> NDArray[np.bool_]:
        pending = []
        for slot in self.sim.slots:
            if slot.plugin.reports_done and slot.block is not None:
                blk = slot.block
                d = slot.done
                waiting = blk.active if d is None else blk.active & ~d
                pending.append(blk.world[waiting])
        return self._count(pending) == 0

    def update(self) -> str | None:
        """Evaluate the end conditions of the running worlds at the current tick.

        Worlds whose condition holds end here (first condition in list order); when others
        go on they are frozen.  Returns the ending reason once every world has ended (the
        reason of the first world, in stack order, among the last to end), else None.
        """
        if self.final_reason is not None:
            return self.final_reason
        live = ~self.frozen
        hit_any = np.zeros(self.n, dtype=bool)
        reasons: list[str | None] = [None] * self.n
        for text, check in self.checks:
            hit = check()
            if hit is False or not np.any(hit):
                continue
            new = live & ~hit_any & hit
            if not new.any():
                continue
            label = text if text is not None else check.text  # type: ignore[attr-defined]
            for w in np.flatnonzero(new):
                reasons[w] = label
            hit_any |= new
            if (hit_any | self.frozen).all():
                break
        if not hit_any.any():
            return None
        k = self.sim.clock.k
        for w in np.flatnonzero(hit_any):
            self.ended_by[w] = reasons[w]
            self.ended_tick[w] = k
        if (hit_any | self.frozen).all():
            self.frozen |= hit_any
            self.final_reason = reasons[int(np.flatnonzero(hit_any)[0])]
            return self.final_reason
        self._freeze(hit_any)
        self.frozen |= hit_any
        return None

    # freezing ---------------------------------------------------------------------------
    def _freeze(self, new: NDArray[np.bool_]) -> None:
        """End the worlds ``new`` while others go on: last frame, summaries, held truth."""
        sim = self.sim
        rec = sim._recorder
        rec.keep_pending()  # the world's last frame, even off the decimation grid
        rec.freeze(
            np.concatenate(
                [rec.offsets[b.name] + np.flatnonzero(new[b.world]) for b in sim.blocks]
                or [np.zeros(0, dtype=np.int64)]
            )
        )  # its log stops: later frames repeat that one
        self._harvest(new)
        for blk in sim.blocks:
            rows = new[blk.world]
            if not rows.any():
                continue
            st = blk.truth
            held = self._held.get(blk.name)
            if held is None:
                mask = rows
                keep = VehicleState(
                    st.pos.copy(),
                    st.quat.copy(),
                    st.vel.copy(),
                    st.ang_vel.copy(),
                    None if st.accel is None else st.accel.copy(),
                    st.t,
                    st.cov,
                )
            else:
                mask = held[0] | rows
                old = held[1]

                def pick(a: Any, b: Any, rows: NDArray[np.bool_] = rows) -> Any:
                    if a is None or b is None:
                        return a
                    r = rows.reshape((-1,) + (1,) * (np.ndim(a) - 1))
                    return np.where(r, b, a)

                keep = VehicleState(
                    pick(old.pos, st.pos),
                    pick(old.quat, st.quat),
                    pick(old.vel, st.vel),
                    pick(old.ang_vel, st.ang_vel),
                    pick(old.accel, st.accel),
                    st.t,
                    st.cov,
                )
            self._held[blk.name] = (mask, keep)

    def hold(self) -> None:
        """Write the held truth of frozen worlds back (after every physics phase)."""
        if not self._held:
            return
        for blk in self.sim.blocks:
            held = self._held.get(blk.name)
            if held is None:
                continue
            mask, keep = held
            st = blk.truth
            m1 = mask[:, None]
            accel = st.accel
            if accel is not None and keep.accel is not None:
                accel = np.where(m1, keep.accel, accel)
            blk.truth = VehicleState(
                np.where(m1, keep.pos, st.pos),
                np.where(m1, keep.quat, st.quat),
                np.where(m1, keep.vel, st.vel),
                np.where(m1, keep.ang_vel, st.ang_vel),
                accel,
                st.t,
                st.cov,
            )
            blk._truth_ro = None

    def _harvest(self, new: NDArray[np.bool_]) -> None:
        """Metric summaries of the worlds ``new`` now, on copies of the plugins' states."""
        sim = self.sim
        slots = [s for s in sim.world_slots if s.plugin.kind == "metric" and "summary" in s.hooks]
        if not slots:
            return
        reps = {self.replicas[w] for w in np.flatnonzero(new)}
        n_rows, n_events = len(sim._metric_rows), len(sim._events)
        state_rows: list[dict[str, Any]] = []
        k = sim.clock.k
        t = sim.clock.t
        for slot in slots:
            # the hook runs on the live state dict, then gets its copy back; no inbox is
            # consumed, no call counted, the streams are put back
            saved = copy.deepcopy(dict(slot.state))
            rng = slot.rng.state() if slot.rng is not None else None
            ctx = slot.ctx
            ctx.t, ctx.tick, ctx.t_next = t, k, sim.clock.time_of(k + 1)  # type: ignore[union-attr]
            ctx.events.t = t  # type: ignore[union-attr]
            try:
                slot.fns["summary"](ctx, slot.rng)
                for r in slot.state.get("summary", []) or []:
                    if isinstance(r, dict):
                        state_rows.append({"plugin": slot.plugin.name, **r})
            finally:
                slot.state.clear()
                slot.state.update(saved)
                if rng is not None:
                    slot.rng.set_state(rng)
        added = sim._metric_rows[n_rows:]
        del sim._metric_rows[n_rows:]
        # keep the summary events of the ended worlds only
        evs = sim._events[n_events:]
        del sim._events[n_events:]
        sim._events.extend(e for e in evs if _replica_of(e.entity) in reps)
        for r in reps:
            self.metric_rows[r] = [
                row
                for row in (*added, *state_rows)
                if _replica_of(str(row.get("entity") or "")) == r
            ]

    # results ----------------------------------------------------------------------------
    def metrics(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Final metric rows with each early-ended world's rows replaced by those of its end."""
        if not self.metric_rows:
            return rows
        done = set(self.metric_rows)
        out = [r for r in rows if _replica_of(str(r.get("entity") or "")) not in done]
        for r in sorted(done):
            out.extend(self.metric_rows[r])
        return out

    def events(self, events: list[Event]) -> list[Event]:
        """Events without those of a world's entities after the world ended."""
        if not self.stacked or not (self.ended_tick >= 0).any():
            return events
        sim = self.sim
        t_end = {
            r: sim.clock.time_of(int(k))
            for r, k in zip(self.replicas, self.ended_tick, strict=True)
            if k >= 0
        }
        out = []
        for e in events:
            r = _replica_of(e.entity)
            if r is not None and r in t_end and e.t > t_end[r]:
                continue
            out.append(e)
        return out

    def manifest(self) -> dict[str, Any]:
        """The ``worlds`` manifest entry (stacked runs only)."""
        return {
            "replicas": list(self.replicas),
            "ended_by": list(self.ended_by),
            "ended_tick": [int(k) if k >= 0 else None for k in self.ended_tick],
        }


def world_frames(
    t: NDArray[np.float64], ended_tick: int | None, every: int, dt: float
) -> NDArray[np.int64]:
    """Indices of the recorded frames ``t`` that a world ended at ``ended_tick`` logs alone.

    Its own run records ticks 0, every, 2·every, … before its end and the tick of its end;
    a stacked run records those (and other worlds' end frames).

    Parameters
    ----------
    t : ndarray
        Frame times of the stacked run [s].
    ended_tick : int or None
        Tick the world ended (None: it ran to the end of the stacked run).
    every : int
        Log decimation (``manifest["log_every_ticks"]``).
    dt : float
        Control tick [s].
    """
    t = np.asarray(t, dtype=float)
    if len(t) == 0:
        return np.zeros(0, dtype=np.int64)
    ticks = np.rint((t - t[0]) / dt).astype(np.int64)
    last = int(ticks[-1]) if ended_tick is None else int(ended_tick)
    keep = (ticks <= last) & ((ticks % max(int(every), 1) == 0) | (ticks == last))
    return np.flatnonzero(keep)
