"""The engine's per-tick work is fixed at build time (issue 10 §3: engine fixed cost per tick).

No timing is asserted here (speed lives in ``benchmarks/bench_engine.py``). What is asserted is
the structure that keeps the tick cheap, counted exactly with ``sys.setprofile``: how many
Python-level calls one tick makes, that it grows by one call per extra plugin, and that nothing
of the build (validation, hook discovery, ``getattr``, deep copies) is repeated per tick.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from typing import Any, ClassVar

from marinesim.engine.entity import BlockSpec, PluginSpec
from marinesim.engine.plugin import Plugin
from marinesim.engine.simulation import Simulation
from marinesim.engine.speed import build_null, measure_tick_cost


class _Ctl(Plugin):
    kind: ClassVar[str] = "controller"

    def control(self, ctx: Any, rng: Any) -> None:
        """Nothing."""


def _count(sim: Simulation, ticks: int = 10) -> tuple[Counter[str], Counter[str]]:
    """(Python function calls, builtin calls) made by ``ticks`` ticks, by name."""
    sim.step(3)  # past the first frame and any lazy first-use work
    py: Counter[str] = Counter()
    c: Counter[str] = Counter()

    def prof(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            py[frame.f_code.co_name] += 1
        elif event == "c_call":
            c[getattr(arg, "__qualname__", getattr(arg, "__name__", "?"))] += 1

    sys.setprofile(prof)
    try:
        sim.step(ticks)
    finally:
        sys.setprofile(None)
    return py, c


def test_a_tick_makes_a_small_fixed_number_of_python_calls() -> None:
    py, _c = _count(build_null(), 10)
    per_tick = sum(py.values()) / 10
    # 3 hooks, 4 deliveries, truth frame (4 signals), finite check, end conditions: 41 today
    assert per_tick <= 60, py.most_common(15)


def test_nothing_of_the_build_is_repeated_per_tick() -> None:
    py, c = _count(build_null(), 10)
    for name in (
        "validate_build",
        "period_ticks",
        "overridden_hooks",
        "make_slot",
        "_compile",
        "deepcopy",
        "fnmatchcase",
    ):
        assert py[name] == 0, name
    assert c["getattr"] == 0 and c["hasattr"] == 0
    assert c["deepcopy"] == 0


def test_each_extra_plugin_costs_one_call_per_tick() -> None:
    def sim(n_ctl: int) -> Simulation:
        base = build_null()
        spec = base.block_specs[0]
        ctl = tuple(PluginSpec(_Ctl(f"c{i}")) for i in range(n_ctl))
        block = BlockSpec(spec.name, 1, spec.motion, controllers=ctl, autonomy=spec.autonomy)
        return Simulation([block], dt=0.1, end=1e9, seed=1)

    one, _ = _count(sim(1), 10)
    eleven, _ = _count(sim(11), 10)
    extra = (sum(eleven.values()) - sum(one.values())) / 10 / 10
    # per extra controller: its hook, the engine's call(), one delivery after its chain position
    assert extra <= 3.0, (extra, (eleven - one).most_common(8))


def test_measure_tick_cost_reports_every_figure() -> None:
    res = measure_tick_cost(ticks=10, rounds=1)
    for key in (
        "engine_us_per_tick",
        "usm_us_per_tick",
        "usm_hooks_us_per_tick",
        "model_step_us",
        "usm_tick_over_model_step",
    ):
        assert math.isfinite(res[key]) and res[key] > 0, key
    # the split adds up: tick = hooks + engine around them
    assert math.isclose(
        res["usm_hooks_us_per_tick"] + res["usm_engine_us_per_tick"],
        res["usm_us_per_tick"],
        rel_tol=1e-9,
    )
    assert res["usm_hooks_us_per_tick"] < res["usm_us_per_tick"]
