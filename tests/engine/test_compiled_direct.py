"""Direct ticks of the compiled route (``CompiledRoute.direct``: the generated tick's
compiled ``tick_loop``, its arrays passed as tables of data addresses and shapes) against
``Simulation.step(1)``.

After one ``step(1)`` leaves a deferred run, ticks made through :meth:`CompiledRoute.direct`
(the plugins' commits waiting for :meth:`CompiledRoute.sync`) must give the same run, bit for
bit, as one ``step(1)`` per tick — over more ticks than one compiled call's log arrays, with
the plugins' state read in between (a snapshot syncs and flushes).
"""

from __future__ import annotations

import numpy as np
import pytest

from marinesim.engine.compiled.generate import arena_tables
from marinesim.engine.compiled.law import MAX_TICKS
from marinesim.scenario.build import load_simulation
from marinesim.testing import assert_runs_identical

pytest.importorskip("numba")

NAME = "bluerov2_station_keeping"
TICKS = MAX_TICKS + 300


def _direct(sim, ticks: int) -> int:  # noqa: ANN001
    """Up to ``ticks`` ticks as a direct caller makes them (a step where none may go)."""
    done = direct = 0
    route = sim._span
    while done < ticks:
        clock = sim.clock
        wend = route.direct_window(sim._end_tick()) if route._dn else clock.k
        if clock.k < wend:
            fn, args = route.direct()
            k = clock.k
            if fn(k, k + 1, *args, route._dn) == k + 1:
                route._dn += 1
                route._dc += 1
                clock.k = k + 1
                done += 1
                direct += 1
                continue
        route.sync()
        assert sim.step(1) == 1
        done += 1
    return direct


def test_direct_ticks_equal_steps() -> None:
    dt = load_simulation(NAME).clock.dt
    end = (TICKS + 60) * dt  # the run ends a little after the direct ticks
    a = load_simulation(NAME, sets={"time.end": end})
    b = load_simulation(NAME, sets={"time.end": end})
    for _ in range(TICKS):
        assert a.step(1) == 1
    assert b.step(1) == 1
    assert _direct(b, TICKS - 1) > TICKS - 20  # nearly every tick went direct
    assert b._span._dc > 0  # commits waited
    b.snapshot()  # reads the plugins' state: syncs and flushes
    assert b._span._dc == 0
    for sim in (a, b):
        assert sim.step(5) == 5
    ra, rb = a.run(), b.run()
    assert_runs_identical(ra, rb)
    assert np.all(np.isfinite(rb["truth.pos"]))


def test_arena_tables_refuse_non_contiguous_arrays() -> None:
    x = np.zeros((4, 3))
    y = np.zeros(5, dtype=np.int64)
    addr, dims = arena_tables([x, y])
    assert addr.tolist() == [x.ctypes.data, y.ctypes.data]
    assert dims.tolist() == [4, 3, 5]
    assert arena_tables([x[:, 1:], y]) is None  # a view with gaps: not the same elements
