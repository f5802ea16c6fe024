"""Snapshots (engine spec §10): an immutable deep copy of everything that changes during a run."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from marinesim.engine.bus import Inbox

if TYPE_CHECKING:
    from marinesim.engine.simulation import Simulation

__all__ = ["Snapshot", "restore_snapshot", "take_snapshot"]


@dataclass(frozen=True)
class Snapshot:
    """Immutable copy of everything that changes during a run (restore with Simulation.restore)."""

    k: int
    data: Any = field(repr=False)


def take_snapshot(sim: Simulation) -> Snapshot:
    """Immutable copy of the run state of ``sim`` (between ticks; the run has begun)."""
    data = {
        "k": sim.clock.k,
        "blocks": [b.runtime_state() for b in sim.blocks],
        "slots": [
            (
                s.state,
                s.calls,
                s.done,
                s.sub.inbox if s.sub else None,
                s.current_inbox.messages,
                s.rng.state() if s.rng else None,
            )
            for s in sim.slots
        ],
        "bus": (sim.bus.pending, sim.bus._seq, sim.bus.published, sim.bus.delivered),
        "recorder": sim._recorder.state(),
        "events": list(sim._events),
        "metrics": dict(sim._metric_values),
        "metric_rows": list(sim._metric_rows),
        "world_subs": [[w.inbox for w in s.world_subs] for s in sim.slots],
        "last_finite": sim._last_finite,
        "status": (sim.status, sim.ended_by, sim.ended_tick),
        "worlds": {
            k: getattr(sim._worlds, k)
            for k in ("frozen", "ended_by", "ended_tick", "final_reason", "metric_rows", "_held")
        },
    }
    return Snapshot(sim.clock.k, copy.deepcopy(data))


def restore_snapshot(sim: Simulation, snap: Snapshot) -> None:
    """Return ``sim`` to ``snap``; the run continues bit-identically from there."""
    data = copy.deepcopy(snap.data)
    sim.clock.k = data["k"]
    for blk, st in zip(sim.blocks, data["blocks"], strict=True):
        blk.set_runtime_state(st)
    for slot, (state, calls, done, inbox, cur, rng) in zip(sim.slots, data["slots"], strict=True):
        slot.state.clear()
        slot.state.update(state)
        slot.calls = calls
        slot.done = done
        if slot.sub is not None:
            slot.sub.inbox = inbox
        slot.current_inbox = Inbox(cur, slot.current_inbox.n)
        if rng is not None and slot.rng is not None:
            slot.rng.set_state(rng)
    sim.bus.pending, sim.bus._seq, sim.bus.published, sim.bus.delivered = data["bus"]
    sim._recorder.set_state(data["recorder"])
    sim._events = data["events"]
    sim._metric_values = data["metrics"]
    sim._metric_rows = data["metric_rows"]
    for slot, inboxes in zip(sim.slots, data.get("world_subs", []), strict=False):
        for w, box in zip(slot.world_subs, inboxes, strict=False):
            w.inbox = box
    sim._last_finite = data["last_finite"]
    sim.status, sim.ended_by, sim.ended_tick = data["status"]
    for key, val in data.get("worlds", {}).items():
        setattr(sim._worlds, key, val)
    sim._finished = False
    sim._started = True
    sim.result = None
    sim.error = None
