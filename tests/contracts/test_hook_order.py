"""Hook order and counts with substeps (engine spec §4.2, §15) and the latency table (§4.3)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pytest

from marinesim.core.state import VehicleState
from marinesim.engine.entity import BlockSpec, PluginSpec, Spawn
from marinesim.engine.plugin import PHASES, Plugin
from marinesim.engine.simulation import Simulation

HOOK_PHASE = {
    "autonomy": "autonomy",
    "control": "control",
    "substep_control": "physics",
    "substep": "physics",
    "interact": "interact",
    "sense": "sense",
    "estimate": "estimate",
    "metric": "metric",
}


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, int, float]] = []


REC = Recorder()


def _rec(self: Any, hook: str, ctx: Any) -> None:
    REC.calls.append((self.name, hook, ctx.tick, ctx.t))


class RecMotion(Plugin):
    kind: ClassVar[str] = "motion"

    def start(self, ctx: Any, rng: Any) -> None:
        _rec(self, "start", ctx)

    def substep(self, ctx: Any, rng: Any) -> None:
        _rec(self, "substep", ctx)
        st = ctx.truth
        pos = st.pos.copy()
        pos[:, 0] += ctx.h
        ctx.set_truth(st.replace(pos=pos))

    def stop(self, ctx: Any, rng: Any) -> None:
        _rec(self, "stop", ctx)


class RecSensor(Plugin):
    kind: ClassVar[str] = "sensor"
    writes_belief: ClassVar[bool] = True

    def sense(self, ctx: Any, rng: Any) -> None:
        _rec(self, "sense", ctx)

    def estimate(self, ctx: Any, rng: Any) -> None:
        _rec(self, "estimate", ctx)
        ctx.set_belief(VehicleState.zeros(ctx.n, ctx.t))

    def stop(self, ctx: Any, rng: Any) -> None:
        _rec(self, "stop", ctx)


class RecController(Plugin):
    kind: ClassVar[str] = "controller"

    def control(self, ctx: Any, rng: Any) -> None:
        _rec(self, "control", ctx)

    def substep_control(self, ctx: Any, rng: Any) -> None:
        _rec(self, "substep_control", ctx)


class RecAutonomy(Plugin):
    kind: ClassVar[str] = "autonomy"

    def start(self, ctx: Any, rng: Any) -> None:
        _rec(self, "start", ctx)

    def autonomy(self, ctx: Any, rng: Any) -> None:
        _rec(self, "autonomy", ctx)


class RecInteraction(Plugin):
    kind: ClassVar[str] = "interaction"

    def interact(self, ctx: Any, rng: Any) -> None:
        _rec(self, "interact", ctx)


class RecMetric(Plugin):
    kind: ClassVar[str] = "metric"

    def metric(self, ctx: Any, rng: Any) -> None:
        _rec(self, "metric", ctx)

    def summary(self, ctx: Any, rng: Any) -> None:
        _rec(self, "summary", ctx)


def _build(substeps: int = 4, ticks: int = 10) -> Simulation:
    block = BlockSpec(
        "veh",
        2,
        PluginSpec(RecMotion("motion")),
        controllers=(
            PluginSpec(RecController("c1")),
            PluginSpec(RecController("c2"), rate_hz=2.0, offset_ticks=1),
        ),
        autonomy=(PluginSpec(RecAutonomy("auto"), rate_hz=5.0),),
        sensors=(PluginSpec(RecSensor("sens")),),
        spawn=Spawn(),
    )
    world = [PluginSpec(RecInteraction("inter")), PluginSpec(RecMetric("met"))]
    return Simulation([block], dt=0.1, substeps=substeps, end=ticks * 0.1, seed=3, world=world)


def test_hook_counts_follow_the_schedule() -> None:
    REC.calls.clear()
    sim = _build()
    res = sim.run()
    assert res.status == "completed"
    count: dict[tuple[str, str], int] = {}
    for name, hook, _k, _t in REC.calls:
        count[(name, hook)] = count.get((name, hook), 0) + 1
    ticks = 10
    assert count[("motion", "substep")] == ticks * 4
    assert count[("c1", "control")] == ticks
    assert count[("c1", "substep_control")] == ticks * 4
    # c2 at 2 Hz with dt 0.1 -> every 5 ticks from tick 1: ticks 1 and 6
    assert count[("c2", "control")] == 2
    assert [k for n, h, k, _ in REC.calls if n == "c2" and h == "control"] == [1, 6]
    assert count[("auto", "autonomy")] == 5  # 5 Hz: ticks 0, 2, 4, 6, 8
    assert count[("sens", "sense")] == ticks + 1  # t_0 and every t_{k+1}
    assert count[("sens", "estimate")] == ticks + 1
    assert count[("inter", "interact")] == ticks
    assert count[("met", "metric")] == ticks
    assert count[("met", "summary")] == 1
    assert count[("motion", "start")] == 1 and count[("motion", "stop")] == 1
    # the manifest's counters agree with the recorder
    calls = sim.hook_calls()
    assert calls["veh.motion"]["substep"] == ticks * 4
    assert calls["veh.c2"]["control"] == 2


def test_hooks_run_in_phase_order_within_each_tick() -> None:
    REC.calls.clear()
    _build().run()
    order = {p: PHASES.index(p) for p in PHASES}
    by_tick: dict[int, list[int]] = {}
    start_done = False
    for _name, hook, k, _t in REC.calls:
        if hook in ("start", "stop", "summary"):
            continue
        if not start_done and hook in ("sense", "estimate") and k == 0 and not by_tick:
            continue  # the t_0 sense/estimate before tick 0
        start_done = True
        by_tick.setdefault(k, []).append(order[HOOK_PHASE[hook]])
    assert len(by_tick) == 10
    for k, seq in by_tick.items():
        assert seq == sorted(seq), f"tick {k}: phases out of order {seq}"


def test_empty_hooks_are_never_called_and_not_scheduled() -> None:
    sim = _build()
    slots = {s.plugin.name: s for s in sim.slots}
    assert slots["auto"].hooks == frozenset({"start", "autonomy"})
    assert "stop" not in slots["c1"].hooks
    sim.run()
    assert "stop" not in sim.hook_calls()["veh.c1"]


def test_substep_times_cover_the_tick() -> None:
    REC.calls.clear()
    _build(substeps=4, ticks=2).run()
    ts = [t for n, h, k, t in REC.calls if n == "motion" and h == "substep" and k == 1]
    assert ts == pytest.approx([0.1, 0.125, 0.15, 0.175])


# --------------------------------------------------------------------------------------
# latency table (engine spec §4.3), with echo plugins
# --------------------------------------------------------------------------------------

SEEN: dict[str, list[tuple[float, float]]] = {}


def _seen(key: str, t: float, value: float) -> None:
    SEEN.setdefault(key, []).append((t, value))


class EchoSensor(Plugin):
    kind: ClassVar[str] = "sensor"
    publishes: ClassVar[dict[str, str]] = {"meas": "double"}
    subscribes: ClassVar[dict[str, str]] = {"meas": "double"}

    def sense(self, ctx: Any, rng: Any) -> None:
        ctx.publish("meas", ctx.t)

    def estimate(self, ctx: Any, rng: Any) -> None:
        v, got = ctx.inbox.latest("meas")
        if got.all():
            _seen("sensor->estimator", ctx.t, float(v[0]))


class EchoAutonomy(Plugin):
    kind: ClassVar[str] = "autonomy"
    publishes: ClassVar[dict[str, str]] = {"setpoint": "double", "hello": "double"}
    subscribes: ClassVar[dict[str, str]] = {"meas": "double", "hello": "double"}

    def autonomy(self, ctx: Any, rng: Any) -> None:
        v, got = ctx.inbox.latest("meas")
        if got.all():
            _seen("sensor->autonomy", ctx.t, float(v[0]))
        for m in ctx.inbox.topic("hello"):
            if m.block != ctx.block_name:
                _seen(f"autonomy {m.block}->autonomy {ctx.block_name}", ctx.t, float(m.value[0]))
        ctx.publish("setpoint", ctx.t)
        ctx.publish("hello", ctx.t, scope="global")


class EchoC1(Plugin):
    kind: ClassVar[str] = "controller"
    subscribes: ClassVar[dict[str, str]] = {"setpoint": "double"}
    publishes: ClassVar[dict[str, str]] = {"inner": "double"}

    def control(self, ctx: Any, rng: Any) -> None:
        v, got = ctx.inbox.latest("setpoint")
        if got.all():
            _seen("autonomy->controller", ctx.t, float(v[0]))
        ctx.publish("inner", ctx.t)


class EchoC2(Plugin):
    kind: ClassVar[str] = "controller"
    subscribes: ClassVar[dict[str, str]] = {"inner": "double"}
    publishes: ClassVar[dict[str, str]] = {"cmd": "double"}

    def control(self, ctx: Any, rng: Any) -> None:
        v, got = ctx.inbox.latest("inner")
        if got.all():
            _seen("controller->controller", ctx.t, float(v[0]))
        ctx.publish("cmd", ctx.t)


class EchoMotion(Plugin):
    kind: ClassVar[str] = "motion"
    subscribes: ClassVar[dict[str, str]] = {"cmd": "double"}

    def substep(self, ctx: Any, rng: Any) -> None:
        v, got = ctx.inbox.latest("cmd")
        if got.all():
            _seen("controller->motion", ctx.t, float(v[0]))


def _echo_block(name: str) -> BlockSpec:
    return BlockSpec(
        name,
        1,
        PluginSpec(EchoMotion("m")),
        controllers=(PluginSpec(EchoC1("c1")), PluginSpec(EchoC2("c2"))),
        autonomy=(PluginSpec(EchoAutonomy("a")),),
        sensors=(PluginSpec(EchoSensor("s")),),
    )


def test_latency_table() -> None:
    SEEN.clear()
    sim = Simulation([_echo_block("A"), _echo_block("B")], dt=0.1, end=1.0, seed=1)
    sim.run()
    zero = [
        "sensor->estimator",
        "sensor->autonomy",
        "autonomy->controller",
        "controller->controller",
        "controller->motion",
    ]
    for key in zero:
        pairs = SEEN[key]
        assert len(pairs) >= 10, key
        lat = np.array([t - v for t, v in pairs])
        assert np.all(lat == 0.0), f"{key}: latency {lat}"
    for key in ("autonomy A->autonomy B", "autonomy B->autonomy A"):
        pairs = SEEN[key]
        lat = np.array([t - v for t, v in pairs])
        assert len(pairs) == 9
        assert np.allclose(lat, 0.1, rtol=0, atol=1e-12), f"{key}: {lat}"
