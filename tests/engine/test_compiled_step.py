"""``Simulation.step`` on the compiled route (an externally clocked run, e.g. ArduSub SITL).

The ticks of ``step(n)`` go through the generated tick; between consecutive calls the
engine's bookkeeping (recorder frames, bus and hook-call counts, hook contexts) waits and is
brought in as one chunk (:meth:`Simulation.flush`, or any plugin tick, the end of the run,
a snapshot, ``hook_calls``).  The run must be the same, bit for bit, as the plugins' ticks
— stepped one tick at a time, in uneven chunks, with a snapshot and a restore in between.
"""

from __future__ import annotations

import numpy as np
import pytest

from marinesim.scenario.build import load_simulation
from marinesim.testing import assert_runs_identical

pytest.importorskip("numba")

NAME = "bluerov2_station_keeping"


def _sim(compiled: bool, end: float = 20.0):  # noqa: ANN202
    sim = load_simulation(NAME, sets={"time.end": end})
    sim.compiled = compiled
    return sim


def test_step_one_tick_at_a_time_equals_plugin_ticks() -> None:
    a, b = _sim(False), _sim(True)
    for _ in range(150):
        assert a.step(1) == 1 and b.step(1) == 1
    assert b._span._dn > 100  # the compiled ticks' bookkeeping waited (one chunk)
    assert b.hook_calls() == a.hook_calls()  # hook_calls brings the deferred counts in
    assert b._span._dn == 0
    assert b.bus.published == a.bus.published
    for n in (7, 1, 13, 2, 40):  # uneven chunks, then the rest through run()
        assert b.step(n) == a.step(n) == n
    saving = b._span._kernel
    assert saving[3]  # the steps' loop saves the state at each tick (tick_loop)
    ra, rb = a.run(), b.run()
    assert not b._span._kernel[3]  # run() went on with the loop that saves nothing (tick_run)
    # the saving loop is kept with its arrays (the SITL direct frames hold their addresses)
    assert b._span._kernels == {True: saving, False: b._span._kernel}
    assert_runs_identical(ra, rb)
    assert ra.manifest["compiled_ticks"] == 0
    assert rb.manifest["compiled_ticks"] >= 400 - 4  # all but the first tick or so
    assert np.all(np.isfinite(rb["truth.pos"]))


def test_step_snapshot_restore_with_deferred_bookkeeping() -> None:
    a, b = _sim(False, 10.0), _sim(True, 10.0)
    for _ in range(60):
        a.step(1)
        b.step(1)
    sa, sb = a.snapshot(), b.snapshot()  # a snapshot flushes what the steps deferred
    for _ in range(30):
        a.step(1)
        b.step(1)
    a.restore(sa)
    b.restore(sb)
    for _ in range(25):
        a.step(1)
        b.step(1)
    b.flush()
    assert b.bus.published == a.bus.published
    ra, rb = a.run(), b.run()
    assert_runs_identical(ra, rb)
    assert rb.manifest["compiled_ticks"] > 100

