"""PHASES drives the tick (engine spec §4.2): the tick loop is compiled from the phase tuple."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pytest

from marinesim.core.errors import EngineError
from marinesim.core.state import VehicleState
from marinesim.engine.entity import BlockSpec, PluginSpec
from marinesim.engine.plugin import PHASES, Plugin
from marinesim.engine.simulation import Simulation
from marinesim.engine.tick import TickLoop, heading_deg

CALLS: list[tuple[str, int]] = []


class _Motion(Plugin):
    kind: ClassVar[str] = "motion"

    def substep(self, ctx: Any, rng: Any) -> None:
        CALLS.append(("substep", ctx.tick))


class _Sensor(Plugin):
    kind: ClassVar[str] = "sensor"
    writes_belief: ClassVar[bool] = True

    def sense(self, ctx: Any, rng: Any) -> None:
        CALLS.append(("sense", ctx.tick))

    def estimate(self, ctx: Any, rng: Any) -> None:
        CALLS.append(("estimate", ctx.tick))
        ctx.set_belief(VehicleState.zeros(ctx.n, ctx.t))


class _Controller(Plugin):
    kind: ClassVar[str] = "controller"

    def control(self, ctx: Any, rng: Any) -> None:
        CALLS.append(("control", ctx.tick))


class _Autonomy(Plugin):
    kind: ClassVar[str] = "autonomy"

    def autonomy(self, ctx: Any, rng: Any) -> None:
        CALLS.append(("autonomy", ctx.tick))


class _Interaction(Plugin):
    kind: ClassVar[str] = "interaction"

    def interact(self, ctx: Any, rng: Any) -> None:
        CALLS.append(("interact", ctx.tick))


class _Metric(Plugin):
    kind: ClassVar[str] = "metric"

    def metric(self, ctx: Any, rng: Any) -> None:
        CALLS.append(("metric", ctx.tick))


def _sim(*, world: bool = True, sensors: bool = True) -> Simulation:
    block = BlockSpec(
        "veh",
        2,
        PluginSpec(_Motion("motion")),
        controllers=(PluginSpec(_Controller("ctl")),),
        autonomy=(PluginSpec(_Autonomy("auto")),),
        sensors=(PluginSpec(_Sensor("sens")),) if sensors else (),
    )
    wp = [PluginSpec(_Interaction("inter")), PluginSpec(_Metric("met"))] if world else []
    return Simulation([block], dt=0.5, end=2.0, seed=1, world=wp)


def test_compiled_steps_are_phases_in_order() -> None:
    sim = _sim()
    steps = sim.phase_steps
    # every phase that has something to run, in PHASES order (spawn has nothing yet)
    work = [p for p in PHASES if p not in ("spawn", "boundary")]
    assert [s for s in steps if s != "boundary"] == work
    it = iter(PHASES)
    assert all(any(s == p for p in it) for s in steps)  # a subsequence of PHASES


def test_phases_without_plugins_are_left_out() -> None:
    steps = _sim(world=False, sensors=False).phase_steps
    assert "interact" not in steps and "metric" not in steps and "sense" not in steps
    assert steps[-1] == "log" and "check" in steps and "physics" in steps
    # no two deliveries in a row at the same time (nothing can publish between them)
    assert all(not (a == b == "boundary") for a, b in zip(steps, steps[1:], strict=False))


def test_tick_runs_hooks_in_phase_order() -> None:
    CALLS.clear()
    sim = _sim()
    sim.step(1)  # t_0 sense/estimate, then tick 0
    tick0 = [h for h, k in CALLS if k == 0][2:]  # drop the t_0 sense and estimate
    assert tick0 == ["autonomy", "control", "substep", "interact", "sense", "estimate", "metric"]


def test_the_phase_tuple_drives_the_tick() -> None:
    """A different phase order gives a different tick: the loop reads the tuple."""
    CALLS.clear()
    sim = _sim()
    order = tuple(p for p in PHASES if p != "metric")
    order = (*order[: order.index("sense")], "metric", *order[order.index("sense") :])
    sim._loop = TickLoop(sim, sim._by_block, order)
    sim.step(2)
    tick1 = [h for h, k in CALLS if k == 1]
    assert tick1.index("metric") < tick1.index("sense") < tick1.index("estimate")


def test_a_bad_phase_tuple_is_refused_at_build() -> None:
    sim = _sim()
    with pytest.raises(EngineError, match="no step for phase 'teleport'"):
        TickLoop(sim, sim._by_block, (*PHASES[:-1], "teleport", "log"))
    with pytest.raises(EngineError, match="must end with 'log'"):
        TickLoop(sim, sim._by_block, PHASES[:-1])


def test_truth_heading_is_wrapped_below_360() -> None:
    # yaw a hair below 0: np.mod(-tiny, 360) rounds to exactly 360.0
    yaw = np.array([-1e-20, 0.0, np.pi / 2, -np.pi / 2])
    q = np.stack([np.cos(yaw / 2), 0 * yaw, 0 * yaw, np.sin(yaw / 2)], axis=1)
    h = heading_deg(q)
    assert np.all((h >= 0.0) & (h < 360.0))
    np.testing.assert_allclose(h[2:], [90.0, 270.0], rtol=0, atol=1e-12)
