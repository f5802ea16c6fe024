"""Engine hooks the navigation plugins rely on: ctx.period, world truth for declared sensors,
build-time access declarations, world metric bus taps and the energy metric."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pytest

from marinesim.core.errors import ConfigError, EngineError
from marinesim.core.state import VehicleState
from marinesim.engine.entity import BlockSpec, PluginSpec, Spawn
from marinesim.engine.plugin import NoParams, Plugin
from marinesim.engine.plugins import metrics as M
from marinesim.engine.simulation import Simulation
from marinesim.testing import HarnessMotion


class _PowerLine(Plugin):
    """Straight line north; publishes a constant power per thruster (2 thrusters) each tick."""

    kind: ClassVar[str] = "motion"
    publishes: ClassVar[dict[str, str]] = {"thrusters/power": "array"}
    watts: ClassVar[tuple[float, float]] = (30.0, 20.0)

    def substep(self, ctx: Any, rng: Any) -> None:
        st = ctx.truth
        pos = st.pos.copy()
        pos[:, 0] += ctx.h
        ctx.set_truth(
            VehicleState.from_pose(pos[:, 0], pos[:, 1], pos[:, 2], np.zeros(ctx.n), np.ones(ctx.n))
        )
        scale = 1.0 + np.arange(ctx.n)  # vehicle i draws (i + 1) × the base power
        ctx.publish("thrusters/power", scale[:, None] * np.array(self.watts)[None, :])


class _VoltAmps(_PowerLine):
    """Reports battery voltage and per-thruster current instead of power (as ``sixdof``)."""

    publishes: ClassVar[dict[str, str]] = {
        "battery/voltage": "double",
        "thrusters/current": "array",
    }

    def substep(self, ctx: Any, rng: Any) -> None:
        ctx.set_truth(ctx.truth)
        ctx.publish("battery/voltage", np.full(ctx.n, 16.0))
        ctx.publish("thrusters/current", np.tile([1.0, 2.0, 0.5], (ctx.n, 1)))


def _energy(sim: Simulation) -> dict[str, float]:
    return {r["entity"]: r["value"] for r in M.collect_metrics(sim) if r["metric"] in ("energy",)}


def test_energy_integrates_reported_thruster_power() -> None:
    blk = BlockSpec("a", 2, PluginSpec(_PowerLine("m")))
    bare = BlockSpec("b", 1, PluginSpec(HarnessMotion("m")))  # reports nothing: no rows
    world = [PluginSpec(M.Energy("energy", NoParams()))]
    sim = Simulation([blk, bare], dt=0.1, substeps=2, end=10.0, seed=1, world=world)
    res = sim.run()
    e = _energy(sim)
    # 50 W and 100 W held over 10 s (substeps publish twice a tick: the latest is held)
    assert e == pytest.approx({"a[0]": 500.0, "a[1]": 1000.0}, rel=1e-12)
    wh = {r["entity"]: r["value"] for r in M.collect_metrics(sim) if r["metric"] == "energy_wh"}
    assert wh["a[1]"] == pytest.approx(1000.0 / 3600.0)
    assert [r["value"] for r in res.metrics if r["metric"] == "energy_sum"] == pytest.approx(
        [1500.0]
    )
    np.testing.assert_allclose(res["energy.energy"][0, -1, 0], 500.0)
    assert not any("no thruster reports" in ev.text for ev in res.events)


def test_energy_from_voltage_times_current() -> None:
    blk = BlockSpec("a", 1, PluginSpec(_VoltAmps("m")))
    world = [PluginSpec(M.Energy("energy", NoParams()))]
    sim = Simulation([blk], dt=0.5, end=4.0, seed=1, world=world)
    sim.run()
    assert _energy(sim)["a[0]"] == pytest.approx(16.0 * 3.5 * 4.0, rel=1e-12)


def test_energy_snapshot_restore_is_bit_identical() -> None:
    def build() -> Simulation:
        blk = BlockSpec("a", 2, PluginSpec(_PowerLine("m")))
        return Simulation(
            [blk], dt=0.1, end=3.0, seed=1, world=[PluginSpec(M.Energy("energy", NoParams()))]
        )

    ref = build()
    ref.run()
    sim = build()
    sim.step(10)
    snap = sim.snapshot()
    sim.step(5)
    sim.restore(snap)
    sim.run()
    assert M.collect_metrics(sim) == M.collect_metrics(ref)


class _Periodic(Plugin):
    kind: ClassVar[str] = "sensor"

    def sense(self, ctx: Any, rng: Any) -> None:
        ctx.log("period", np.full(ctx.n, ctx.period), "s")
        ctx.log("ticks", np.full(ctx.n, float(ctx.period_ticks)), "")


def test_ctx_period_follows_the_schedule() -> None:
    blk = BlockSpec(
        "a", 1, PluginSpec(HarnessMotion("m")), sensors=(PluginSpec(_Periodic("p"), 2.5),)
    )
    res = Simulation([blk], dt=0.1, end=1.0, seed=1).run()
    assert res["p.period"][0, -1, 0] == pytest.approx(0.4)
    assert res["p.ticks"][0, -1, 0] == 4.0


class _Watcher(Plugin):
    kind: ClassVar[str] = "sensor"
    reads_all_truth: ClassVar[bool] = True

    def sense(self, ctx: Any, rng: Any) -> None:
        views = ctx.world_truth
        ctx.log("others", np.full(ctx.n, float(sum(v.n for v in views))), "")
        with pytest.raises(ValueError):
            views[-1].truth.pos[0, 0] = 1.0  # read-only


class _Nosy(Plugin):
    kind: ClassVar[str] = "sensor"

    def sense(self, ctx: Any, rng: Any) -> None:
        ctx.world_truth  # noqa: B018 - must raise


def test_world_truth_only_for_declared_sensors() -> None:
    a = BlockSpec("a", 1, PluginSpec(HarnessMotion("m")), sensors=(PluginSpec(_Watcher("w")),))
    b = BlockSpec("b", 3, PluginSpec(HarnessMotion("m")), spawn=Spawn(north=10.0))
    res = Simulation([a, b], dt=0.1, end=0.5, seed=1).run()
    assert res["w.others"][0, -1, 0] == 4.0
    man = {p["name"]: p for p in res.manifest["plugins"]}
    assert man["w"]["reads_all_truth"] is True
    nosy = BlockSpec("a", 1, PluginSpec(HarnessMotion("m")), sensors=(PluginSpec(_Nosy("n")),))
    with pytest.raises(EngineError, match="reads_all_truth"):
        Simulation([nosy], dt=0.1, end=0.5, seed=1).run()


class _TruthWritingController(Plugin):
    kind: ClassVar[str] = "controller"
    writes_truth: ClassVar[bool] = True

    def control(self, ctx: Any, rng: Any) -> None:
        ctx.set_truth(ctx.belief)


class _BeliefWritingAutonomy(Plugin):
    kind: ClassVar[str] = "autonomy"
    writes_belief: ClassVar[bool] = True

    def autonomy(self, ctx: Any, rng: Any) -> None:
        ctx.set_belief(ctx.belief)


class _PeekingController(Plugin):
    kind: ClassVar[str] = "controller"
    reads_all_truth: ClassVar[bool] = True

    def control(self, ctx: Any, rng: Any) -> None:
        pass


class _WritingMetric(Plugin):
    kind: ClassVar[str] = "metric"
    writes_belief: ClassVar[bool] = True

    def metric(self, ctx: Any, rng: Any) -> None:
        pass


@pytest.mark.parametrize(
    ("spec", "msg"),
    [
        (dict(controllers=(PluginSpec(_TruthWritingController("c")),)), "declares writes_truth"),
        (dict(autonomy=(PluginSpec(_BeliefWritingAutonomy("au")),)), "declares writes_belief"),
        (dict(controllers=(PluginSpec(_PeekingController("c")),)), "declares reads_all_truth"),
    ],
)
def test_forbidden_writes_are_rejected_at_build_time(spec: dict[str, Any], msg: str) -> None:
    blk = BlockSpec("a", 1, PluginSpec(HarnessMotion("m")), **spec)
    with pytest.raises(ConfigError, match=msg) as exc:
        Simulation([blk], dt=0.1, end=1.0, seed=1)  # build only: no hook has run
    assert exc.value.param is not None and exc.value.param.startswith("entities.a.")


def test_metric_declaring_writes_rejected_at_build_time() -> None:
    blk = BlockSpec("a", 1, PluginSpec(HarnessMotion("m")))
    with pytest.raises(ConfigError, match="metrics only read"):
        Simulation(
            [blk], dt=0.1, end=1.0, seed=1, world=[PluginSpec(_WritingMetric("w", NoParams()))]
        )


def test_energy_with_the_sixdof_thruster_plugin(tmp_path: Any) -> None:
    """The 6-DOF motion plugin publishes battery/voltage and thrusters/current: ∫ V·ΣI dt."""
    from importlib import resources

    from marinesim.scenario import load_simulation

    text = (
        resources.files("marinesim.scenario")
        .joinpath("builtin/bluerov2_station_keeping.yaml")
        .read_text()
    )
    p = tmp_path / "s.yaml"
    p.write_text(text + "\nmetrics:\n  - {name: energy, plugin: energy}\n")
    sim = load_simulation(p, variables=["end=2"])
    res = sim.run()
    volt = next(k for k in res.signals if k.endswith(".voltage"))
    amps = next(k for k in res.signals if k.endswith(".current_total"))
    expect = np.sum(res[volt][0, 1:, 0] * res[amps][0, 1:, 0]) * sim.clock.dt
    got = [r["value"] for r in res.metrics if r["metric"] == "energy"]
    assert expect > 1.0
    assert got == pytest.approx([expect], rel=1e-9)
