"""``event_script``: timed posts ``VAR=value at t`` (like MOOS-IvP uTimerScript).

Values are typed like MOOS: a quoted value is a string, a number is a double, anything else
a string.  Each event targets rows of the block (``all`` or given entity indices).  The
scenario's top-level ``script:`` list becomes one ``event_script`` instance per targeted block.
Events are posted in the autonomy phase of the first tick with t_k ≥ t (ties in file order),
so a command posted at t acts over [t_k, t_k + dt] (engine spec §4.3).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
from pydantic import field_validator

from marinesim.core.params import ParamsBase, field
from marinesim.engine.plugin import Plugin

__all__ = ["EventScript", "EventScriptParams", "ScriptEvent"]


class ScriptEvent(ParamsBase):
    """One timed post."""

    at: float = field(..., unit="s", ge=0, description="sim time of the post")
    var: str = field(..., description="variable (topic) name")
    value: float | str = field(..., description="double, or string (MOOS typing)")
    rows: list[int] | None = field(None, description="block rows to post for (None = all)")

    @field_validator("var")
    @classmethod
    def _var_name(cls, v: str) -> str:
        if not v or any(c.isspace() for c in v) or "=" in v:
            raise ValueError(f"invalid variable name {v!r}")
        return v

    @field_validator("value")
    @classmethod
    def _finite(cls, v: float | str) -> float | str:
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError(f"non-finite value {v!r}")
        return v


class EventScriptParams(ParamsBase):
    """The timed events of one block."""

    events: list[ScriptEvent] = field(default_factory=list, description="timed posts, any order")


class EventScript(Plugin):
    """Timed posts of MOOS variables (gusts DRIFT_VECTOR_ADD, USM_RESET, USM_SIM_PAUSED, ...)."""

    kind: ClassVar[str] = "autonomy"
    Params = EventScriptParams
    publishes: ClassVar[dict[str, str]] = {"*": "any"}
    example_params: ClassVar[dict[str, Any]] = {
        "events": [
            {"at": 1.0, "var": "DESIRED_SPEED", "value": 1.0},
            {"at": 2.0, "var": "NOTE", "value": "hi"},
        ]
    }

    def start(self, ctx: Any, rng: Any) -> None:
        """Sort the events by time (stable: file order for ties)."""
        p: Any = self.params
        order = sorted(range(len(p.events)), key=lambda i: p.events[i].at)
        ctx.state["order"] = order
        ctx.state["next"] = 0

    def compiled_laws(self, slot: Any, sim: Any) -> Any:
        """The compiled tick's declaration: it hands back the ticks its events are due."""
        from marinesim.engine.plugins.usm_laws import script_laws

        return script_laws(self, slot, sim)

    def autonomy(self, ctx: Any, rng: Any) -> None:
        """Post every event whose time has come."""
        p: Any = self.params
        order = ctx.state["order"]
        i = ctx.state["next"]
        tol = 1e-9 * max(1.0, abs(ctx.t))
        while i < len(order) and p.events[order[i]].at <= ctx.t + tol:
            ev = p.events[order[i]]
            rows = np.arange(ctx.n) if ev.rows is None else np.asarray(ev.rows, dtype=np.int64)
            ctx.publish(ev.var, ev.value, rows=rows)
            shown = f'"{ev.value}"' if isinstance(ev.value, str) else f"{ev.value:g}"
            ctx.events.emit("script", f"{ev.var}={shown} (scheduled at {ev.at:g} s)", rows=rows)
            i += 1
        ctx.state["next"] = i
