"""Plugin slots and the hook call (engine spec §3.3): what the tick loop runs, built once.

A :class:`Slot` is one plugin instance in the schedule: its block, its period and offset in
ticks, its own state, random streams, subscription and :class:`~marinesim.engine.context.HookContext`,
and the bound hook methods it overrides (looked up once when the simulation is built, so the
tick does no ``getattr``). :func:`call` runs one hook of one slot.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from marinesim.core.rng import BlockRNG, entity_key, generator, world_key
from marinesim.engine.bus import Inbox, Subscription
from marinesim.engine.clock import Clock, period_ticks
from marinesim.engine.context import HookContext
from marinesim.engine.entity import EntityBlock, PluginSpec
from marinesim.engine.plugin import overridden_hooks

if TYPE_CHECKING:
    from marinesim.engine.simulation import Simulation

__all__ = ["Slot", "call", "due", "make_slot"]


class Slot:
    """One plugin instance in the schedule.

    Attributes
    ----------
    spec : PluginSpec
    plugin : Plugin
    block : EntityBlock or None
        None for world plugins.
    n : int
        Rows of the block (0 for world plugins).
    hooks : frozenset of str
        Hooks the plugin overrides (the others are never called).
    fns : dict of str to callable
        Bound hook methods, by hook name.
    period, offset : int
        Schedule in ticks (motion: every tick).
    state : dict
        The plugin's own state (snapshotted).
    calls : dict of str to int
        Calls per hook (manifest).
    done : ndarray of bool, shape (N,) or None
        Last ``done`` report of an autonomy that reports done.
    """

    def __init__(self, spec: PluginSpec, block: EntityBlock | None, clock: Clock) -> None:
        self.spec = spec
        self.plugin = spec.plugin
        self.block = block
        self.n = block.n if block is not None else 0
        self.hooks = frozenset(overridden_hooks(type(spec.plugin)))
        self.fns: dict[str, Callable[..., Any]] = {h: getattr(spec.plugin, h) for h in self.hooks}
        self.period = (
            1
            if spec.plugin.kind == "motion"
            else period_ticks(spec.rate_hz, clock.dt, name=spec.plugin.name)
        )
        self.offset = int(spec.offset_ticks)
        self.uses_truth = bool(spec.uses_truth)
        #: True for an autonomy whose ``done`` is read after each ``autonomy`` hook.
        self.reports_done = spec.plugin.kind == "autonomy" and bool(spec.plugin.reports_done)
        self.state: dict[str, Any] = {}
        self.calls: dict[str, int] = {}
        self.done: NDArray[np.bool_] | None = None
        self.phase = ""
        self.sub: Subscription | None = None
        self.world_subs: list[Subscription] = []  # world metric taps, one per entity block
        self.current_inbox = Inbox([], self.n)
        self.rng: BlockRNG | None = None
        self.ctx: HookContext | None = None


#: The private name the slot class had when it lived in ``simulation.py``.
_Slot = Slot


def make_slot(sim: Simulation, spec: PluginSpec, blk: EntityBlock | None) -> Slot:
    """Build the slot of one plugin: random streams, bus subscription, hook context."""
    slot = Slot(spec, blk, sim.clock)
    if blk is not None:
        slot.rng = BlockRNG.keyed(
            sim.seed, [entity_key(r, blk.name, m, spec.plugin.name) for r, m in blk.row_keys(sim.replica)]
        )
    else:
        slot.rng = BlockRNG([generator(sim.seed, world_key(sim.replica, spec.plugin.name))])
    topics = frozenset(spec.plugin.subscribes)
    if topics and blk is not None:
        slot.sub = sim.bus.subscribe(
            Subscription(f"{blk.name}.{spec.plugin.name}", blk.name, topics)
        )
    elif topics and spec.plugin.kind == "metric":  # world metric: tap every block's topics
        slot.world_subs = [
            sim.bus.subscribe(Subscription(f"world.{spec.plugin.name}@{b.name}", b.name, topics))
            for b in sim.blocks
        ]
    slot.ctx = HookContext(sim, slot)
    return slot


def due(period: int, offset: int, k: int) -> bool:
    """True when a plugin with ``period`` ticks and ``offset`` runs at tick ``k``."""
    return k >= offset and (k - offset) % period == 0


def call(slot: Slot, hook: str, t: float, k: int, t_next: float) -> None:
    """Run one hook of one slot at time ``t`` [s] of tick ``k`` (t_next = t_{k+1}).

    The caller has checked that the slot overrides ``hook`` and that its block is not empty.
    The plugin's inbox is swapped in (messages delivered since its previous hook).
    """
    ctx = slot.ctx
    ctx.t = t  # type: ignore[union-attr]
    ctx.tick = k  # type: ignore[union-attr]
    ctx.t_next = t_next  # type: ignore[union-attr]
    ctx.events.t = t  # type: ignore[union-attr]
    slot.phase = hook
    sub = slot.sub
    if sub is not None:
        slot.current_inbox = Inbox(sub.inbox, slot.n)
        sub.inbox = []
    elif slot.world_subs:  # messages of every block (Message.block names the sender block)
        msgs = [m for s in slot.world_subs for m in s.inbox]
        for s in slot.world_subs:
            s.inbox = []
        slot.current_inbox = Inbox(msgs, 0)
    calls = slot.calls
    calls[hook] = calls.get(hook, 0) + 1
    slot.fns[hook](ctx, slot.rng)
    if slot.reports_done and hook == "autonomy":
        d = slot.plugin.done(ctx)
        if d is not None:
            slot.done = np.asarray(d, dtype=bool).reshape(slot.n)


def call_if(slot: Slot, hook: str, t: float, k: int, t_next: float) -> None:
    """:func:`call` when the slot overrides ``hook`` and its block is not empty (start, stop)."""
    if hook not in slot.hooks or (slot.block is not None and slot.block.n == 0):
        return  # not overridden, or an empty block (count: 0): nothing to run over
    call(slot, hook, t, k, t_next)
