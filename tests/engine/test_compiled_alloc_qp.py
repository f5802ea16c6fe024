"""The ``qp`` and ``redistributed_pinv`` thruster allocators through the generated tick
against the plugins' ticks.

``thruster_allocator`` with ``mode: qp`` declares its law
(:func:`marinesim.engine.plugins.alloc_laws.alloc_qp_tick`, calling the row law
:func:`marinesim.allocation.qp_rows.qp_one` that ``Allocator.qp`` walks too).  A one-block
BlueROV2 Heavy station keeping must give every recorded signal, the events, the bus/call
counts and the allocator's end state bit for bit as the plugins' ticks (``compiled: false``)
and as the row law interpreted (``MARINESIM_JIT=0``): plain, with a thruster failure posted
mid-run (``fault_aware``: the allocator re-solved without it), and with a force-rate limit;
``redistributed_pinv`` (:func:`~marinesim.allocation.redistributed_rows.redistributed_one`)
likewise, with a failure.
"""

from __future__ import annotations

import numpy as np
import pytest

from marinesim.scenario.build import load_simulation
from marinesim.testing import assert_runs_identical, assert_values_identical

numba = pytest.importorskip("numba")

ALLOC = "entities.0.controllers.1.params"
FAIL = {"script": ["thrusters/fail=2 at 3"]}
RATE = 10.0  # N/s: 0.5 N per 0.05 s tick, binding while the others take over a failure


def _run(compiled: bool | None, end: float, mode: str = "qp", **sets: object):  # noqa: ANN202
    sim = load_simulation(
        "bluerov2_station_keeping",
        variables={"allocator": mode},
        sets={"time.end": end, **sets},
    )
    sim.compiled = compiled
    res = sim.run()
    slot = next(s for s in sim.slots if s.plugin.name == "alloc")
    st = slot.ctx.state
    end_state = [st[k].copy() for k in ("force", "tau", "voltage", "enabled")] + [st["t_prev"]]
    return res, end_state


def _same(a, b) -> None:  # noqa: ANN001
    # the plugins' ticks against the compiled tick: bit for bit, or to rounding where numpy's
    # elementary functions are not libm's (marinesim.core.libm)
    assert_runs_identical(a[0], b[0], routes=True)
    assert_values_identical(a[1], b[1], routes=True, what="allocator end state")


def test_qp_station_keeping_compiled_equals_plugin_ticks() -> None:
    a, b = _run(False, 10.0), _run(True, 10.0)
    _same(a, b)
    rb = b[0]
    assert a[0].manifest["compiled_ticks"] == 0
    assert 200 - 3 <= rb.manifest["compiled_ticks"] < 200  # all but the first tick or two
    assert rb.manifest["compiled_why_not"] is None
    pwm = rb["alloc.pwm"][0, -1]
    assert np.all((1100.0 <= pwm) & (pwm <= 1900.0)) and np.any(pwm != 1500.0)
    assert np.all(rb["alloc.status"][0, 2:, 0] == 0)  # demand met (ok) every tick
    assert np.abs(rb["alloc.unmet"][0, 2:]).max() < 1e-6
    assert np.hypot(*rb["hold.error"][0, -1, :2]) < 1.0  # holds station in the current


def test_qp_thruster_failure_reallocates_compiled() -> None:
    a, b = _run(False, 8.0, **FAIL), _run(True, 8.0, **FAIL)
    _same(a, b)
    rb = b[0]
    assert (3.0, "thruster_fail") in [(e.t, e.kind) for e in rb.events]
    t = rb.t
    force = rb["alloc.force"][0]
    assert np.all(force[t > 3.1, 2] == 0.0)  # the failed thruster gets nothing from then on
    assert np.any(force[t < 3.0, 2] != 0.0)
    assert np.abs(rb["alloc.unmet"][0, t > 3.1]).max() < 1e-6  # the other seven meet τ
    assert 160 - 6 <= rb.manifest["compiled_ticks"] < 160  # the failure's ticks by the plugins


def test_qp_force_rate_limit_compiled() -> None:
    sets = {f"{ALLOC}.max_force_rate": RATE, **FAIL}
    a, b = _run(False, 6.0, **sets), _run(True, 6.0, **sets)
    _same(a, b)
    rb = b[0]
    assert rb.manifest["compiled_ticks"] >= 120 - 6
    force = rb["alloc.force"][0]
    force = force[np.all(np.isfinite(force), axis=1)]  # (the frames before the first call)
    assert force.shape[0] >= 118
    step = np.abs(np.diff(force, axis=0))
    lim = RATE * 0.05
    over = np.argwhere(step > lim * (1 + 1e-9))
    # the window holds every tick but one: the failed thruster's bounds become [0, 0] and
    # the envelope wins over the window (§6.1)
    assert over.tolist() == [[over[0, 0], 2]] and force[over[0, 0] + 1, 2] == 0.0
    assert np.sum(step >= lim * (1 - 1e-9)) > 20  # it binds: the others ramp up at Δ·dt


def test_qp_compiled_equals_interpreted_row_law(monkeypatch: pytest.MonkeyPatch) -> None:
    sets = {f"{ALLOC}.max_force_rate": RATE, **FAIL}
    b = _run(True, 4.0, **sets)
    monkeypatch.setenv("MARINESIM_JIT", "0")  # the plugins' ticks, the row law interpreted
    a = _run(None, 4.0, **sets)
    assert a[0].manifest["compiled_why_not"] == "MARINESIM_JIT=0"
    _same(a, b)


def test_redistributed_compiled_equals_plugin_ticks(monkeypatch: pytest.MonkeyPatch) -> None:
    mode = "redistributed_pinv"
    a, b = _run(False, 6.0, mode, **FAIL), _run(True, 6.0, mode, **FAIL)
    _same(a, b)
    rb = b[0]
    assert rb.manifest["compiled_why_not"] is None
    assert 120 - 6 <= rb.manifest["compiled_ticks"] < 120
    t = rb.t
    force = rb["alloc.force"][0]
    assert np.all(force[t > 3.1, 2] == 0.0) and np.any(force[t < 3.0, 2] != 0.0)
    assert np.abs(rb["alloc.unmet"][0, t > 3.1]).max() < 1e-6  # the other seven meet τ
    monkeypatch.setenv("MARINESIM_JIT", "0")  # the plugins' ticks, the row law interpreted
    _same(_run(None, 6.0, mode, **FAIL), b)
