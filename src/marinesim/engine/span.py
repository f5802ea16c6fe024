"""Compiled spans: many engine ticks of a whole block in one compiled call.

The compiled route is the tick generated from the plugins' declared laws
(:mod:`marinesim.engine.compiled`), tried first.
Plugin modules may still register a span factory here (a hand-written span: none is left in
marinesim); :meth:`Simulation.run <marinesim.engine.simulation.Simulation.run>` asks once,
then alternates compiled calls and plugin ticks.

``Simulation.compiled``: None (default) uses a span where one applies and numba is installed
(``MARINESIM_JIT=0`` turns spans off), True requires one (ConfigError saying why not), False
runs every tick through the plugins; ``Simulation.compiled_why_not`` (and the manifest) says
why the ticks go through the plugins.  Both routes give the same results (bit-identical for
the bundled laws).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Protocol

from marinesim.core.errors import ConfigError

__all__ = ["Span", "find_span", "register_span"]


class Span(Protocol):
    """A compiled span over a built simulation."""

    ticks: int

    def run(self, k: int, kend: int) -> int:
        """Run ticks k… (at most to ``kend``), leaving the engine at the tick returned."""


#: Factories ``f(sim, compiled) -> Span | None`` (raise ConfigError when ``compiled`` is True
#: and their span does not apply).
_FACTORIES: list[Callable[[Any, bool | None], Span | None]] = []


def register_span(factory: Callable[[Any, bool | None], Span | None]) -> None:
    """Register a span factory (a plugin module does it when imported)."""
    if factory not in _FACTORIES:
        _FACTORIES.append(factory)


def find_span(sim: Any, compiled: bool | None) -> Span | None:
    """The span for ``sim``, or None; ConfigError if ``compiled`` is True and none applies.

    When none applies, ``sim.compiled_why_not`` says why (the manifest reports it).
    """
    sim.compiled_why_not = None
    if compiled is False:
        sim.compiled_why_not = "compiled off (Simulation.compiled = False, --no-compiled)"
        return None
    from marinesim.engine.compiled.route import plan, route_for

    try:
        route = route_for(sim, compiled)  # the generated tick, from the plugins' declared laws
    except ConfigError:
        sim.compiled_why_not = plan(sim)[0]
        raise
    if route is not None:
        return route
    for f in _FACTORIES:
        span = f(sim, compiled)
        if span is not None:
            return span
    declares = any(hasattr(s.plugin, "compiled_laws") for s in sim.slots)
    if not declares:
        why = "no plugin of this scenario declares compiled laws"
    elif compiled is None and os.environ.get("MARINESIM_JIT", "1") == "0":
        why = "MARINESIM_JIT=0"
    else:
        why = plan(sim)[0] or "numba is not installed"
    sim.compiled_why_not = why
    if compiled:
        raise ConfigError(f"the compiled tick does not apply: {why}", param="compiled")
    return None
