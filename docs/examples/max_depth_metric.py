"""A plugin of your own that joins the compiled tick, on the CPU and on CUDA: ``max_depth``.

A world metric: each vehicle's greatest depth so far [m] (logged as ``<name>.max_depth``, one
summary row per vehicle).  Its Python hooks are the readable reference; ``compiled_laws``
declares the same work as a law function over its own arrays, so a scenario with it keeps
running in the generated tick (``docs/guide/engine.md``, "Your plugin in the compiled tick").

The law function must be importable by module name (the tick is compiled from a generated
module, in other processes too): keep it in an installed package, or in a module on
``PYTHONPATH``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from numba.extending import register_jitable

from marinesim.core import registry
from marinesim.engine import Plugin
from marinesim.engine.compiled.law import Law, Laws, Worlds, log_ticks
from marinesim.engine.plugin import NoParams


@register_jitable
def max_depth_tick(k, j, t, h, pos, deepest, log):  # noqa: ANN001, ANN201
    """At t_{k+1}: each row's greatest depth (``pos[:, 2]``, NED), into row ``j`` of the log.
    Returns 0 (the tick goes on); anything else would hand the tick back to the plugins."""
    for i in range(pos.shape[0]):
        if pos[i, 2] > deepest[i]:  # (np.maximum's value for finite depths)
            deepest[i] = pos[i, 2]
        log[0, j, i] = deepest[i]
    return 0


class MaxDepth(Plugin):
    """Each vehicle's greatest depth so far [m] (one entity block)."""

    kind: ClassVar[str] = "metric"
    Params = NoParams
    world_aware: ClassVar[bool] = True  # per vehicle: stacked worlds stay apart

    # ---- the plugin route: the readable reference
    def start(self, ctx: Any, rng: Any) -> None:
        """The depths at the start."""
        (blk,) = ctx.blocks
        ctx.state["deepest"] = np.array(blk.truth.pos)[:, 2].copy()

    def metric(self, ctx: Any, rng: Any) -> None:
        """After every tick: the greatest depth so far, logged."""
        (blk,) = ctx.blocks
        deepest = np.maximum(ctx.state["deepest"], np.asarray(blk.truth.pos)[:, 2])
        ctx.state["deepest"] = deepest
        ctx.log_block(blk.name, "max_depth", deepest, "m")

    def summary(self, ctx: Any, rng: Any) -> None:
        """One row per vehicle."""
        (blk,) = ctx.blocks
        for i, name in enumerate(blk.names):
            ctx.add_summary(name, "max_depth", float(ctx.state["deepest"][i]), "m", int(blk.team[i]))

    # ---- the compiled tick: the same work, declared
    def compiled_laws(self, slot: Any, sim: Any) -> Laws | str:
        """The declaration: the law, its arrays, and how they meet the plugin's state."""
        if len(sim.blocks) != 1:
            return "one entity block only"  # (the reason a run reports; it stays on the plugins)
        blk = sim.blocks[0]
        n = blk.n
        st = slot.ctx.state
        a = {"deepest": np.zeros(n), "log": np.zeros((1, log_ticks(n, 1), n))}
        signal = f"{self.name}.max_depth"

        def load(k: int) -> None:  # the plugin's state → the arrays, before a compiled call
            a["deepest"][:] = st["deepest"]

        def commit(k: int, kstop: int, ticks: int) -> None:  # and back, after it
            st["deepest"] = a["deepest"].copy()

        def finish(ticks: int) -> dict:  # the call's log rows → the recorder's signal
            return {(blk.name, signal): a["log"][:, :ticks].transpose(1, 2, 0)}

        return Laws(
            # "truth.position": the block's position wire (the motion's), at t_{k+1}
            laws=[Law("metric", max_depth_tick, ("truth.position", "deepest", "log"))],
            arrays=a, state=("deepest",), logs=("log",), max_ticks=a["log"].shape[1],
            ready=lambda: "deepest" in st, load=load, commit=commit, finish=finish,
            # on CUDA, one thread per stacked world: every array here is a row array
            gpu=Worlds(n, sim.n_worlds),
        )


registry.register("metric", "max_depth", MaxDepth)
