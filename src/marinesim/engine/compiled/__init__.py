"""One compiled tick generated from the plugins' own laws.

* :mod:`.law` — the declaration a plugin implements (``compiled_laws(slot, sim)``): its
  law functions per hook, the structure-of-arrays state they work on, the wires it shares,
  what it publishes and logs.
* :mod:`.generate` — composes a plugin set's declarations, in ``PHASES`` order, into the
  source of one loop over many ticks, written to a cache file keyed by the plugin set and the
  law sources, compiled with ``numba.njit(cache=True)``.
* :mod:`.route` — runs it inside :meth:`Simulation.run
  <marinesim.engine.simulation.Simulation.run>` between the ticks only Python can run.
* :mod:`.notice` — the "compiling the tick…" notice; :mod:`.warmup` — ``marinesim bench
  warmup``.
"""

from marinesim.engine.compiled.law import HOOKS, MAX_TICKS, Law, Laws

__all__ = ["HOOKS", "MAX_TICKS", "Law", "Laws"]
