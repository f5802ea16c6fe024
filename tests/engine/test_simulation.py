"""Engine: access rules, determinism, warp, snapshots, end conditions, non-finite policy."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pytest

from marinesim.core.errors import ConfigError, EngineError
from marinesim.engine.entity import BlockSpec, PluginSpec, Spawn
from marinesim.engine.plugin import Plugin
from marinesim.engine.simulation import MetricCondition, Simulation
from marinesim.testing import HarnessMotion


class NoisyMotion(Plugin):
    """Random walk in north/east from the plugin's per-entity streams."""

    kind: ClassVar[str] = "motion"

    def substep(self, ctx: Any, rng: Any) -> None:
        st = ctx.truth
        pos = st.pos.copy()
        pos[:, :2] += rng.normal(0.0, 0.1, size=2)
        ctx.set_truth(st.replace(pos=pos))
        ctx.log("step", pos[:, 0] - st.pos[:, 0], "m")


class BlowUp(Plugin):
    """Motion whose entity 1 becomes NaN at t >= 0.5 s."""

    kind: ClassVar[str] = "motion"

    def substep(self, ctx: Any, rng: Any) -> None:
        st = ctx.truth
        pos = st.pos.copy()
        pos[:, 0] += 1.0 * ctx.h
        if ctx.t >= 0.5 - 1e-12 and ctx.n > 1:
            pos[1, 0] = np.nan
        ctx.set_truth(st.replace(pos=pos))


class Crash(Plugin):
    kind: ClassVar[str] = "autonomy"

    def autonomy(self, ctx: Any, rng: Any) -> None:
        if ctx.t >= 0.3 - 1e-12:
            raise ValueError("plugin bug")


class TruthPeeker(Plugin):
    kind: ClassVar[str] = "controller"

    def control(self, ctx: Any, rng: Any) -> None:
        ctx.log("north", ctx.truth.pos[:, 0], "m")


class DeclaredOracle(TruthPeeker):
    reads_truth: ClassVar[bool] = True


class Writer(Plugin):
    kind: ClassVar[str] = "controller"

    def control(self, ctx: Any, rng: Any) -> None:
        ctx.belief.pos[0, 0] = 5.0


class Done(Plugin):
    kind: ClassVar[str] = "autonomy"
    reports_done: ClassVar[bool] = True

    def autonomy(self, ctx: Any, rng: Any) -> None:
        ctx.state["done"] = np.full(ctx.n, ctx.t >= 0.45)

    def done(self, ctx: Any) -> Any:
        return ctx.state.get("done")


class BeliefA(Plugin):
    kind: ClassVar[str] = "sensor"
    writes_belief: ClassVar[bool] = True

    def estimate(self, ctx: Any, rng: Any) -> None:
        pass


class BeliefB(BeliefA):
    pass


def _sim(
    motion: Plugin | None = None, n: int = 3, *, extra: dict[str, Any] | None = None, **kw: Any
) -> Simulation:
    extra = extra or {}
    block = BlockSpec(
        "b",
        n,
        PluginSpec(motion or NoisyMotion("m")),
        controllers=extra.get("controllers", ()),
        autonomy=extra.get("autonomy", ()),
        sensors=extra.get("sensors", ()),
        spawn=Spawn(north=1.0, east=2.0, spread={"north": 3.0, "east": 3.0}),
    )
    kw.setdefault("end", 1.0)
    return Simulation([block], dt=0.1, seed=kw.pop("seed", 7), **kw)


def test_same_seed_identical_and_other_seed_differs() -> None:
    a = _sim().run()
    b = _sim().run()
    c = _sim(seed=8).run()
    assert np.array_equal(a["truth.pos"], b["truth.pos"])
    assert not np.array_equal(a["truth.pos"], c["truth.pos"])


def test_time_warp_does_not_change_results() -> None:
    a = _sim(end=0.3).run()
    b = _sim(end=0.3, time_warp=5.0).run()
    assert np.array_equal(a["truth.pos"], b["truth.pos"])
    assert b.manifest["time_warp"] == 5.0


def test_signals_keep_the_entity_axis_for_one_vehicle() -> None:
    r = _sim(n=1).run()
    assert r["truth.pos"].shape == (1, 11, 3)
    assert r["m.step"].shape == (1, 11, 1)
    assert np.isnan(r["m.step"][0, 0, 0])  # logged from the first substep on


def test_snapshot_restore_continues_bit_identically() -> None:
    ref = _sim().run()
    sim = _sim()
    sim.step(4)
    snap = sim.snapshot()
    first = sim.run()
    sim.restore(snap)
    second = sim.run()
    assert np.array_equal(first["truth.pos"], ref["truth.pos"])
    assert np.array_equal(second["truth.pos"], ref["truth.pos"])
    assert np.array_equal(second["m.step"], ref["m.step"], equal_nan=True)


def test_pause_resume_and_reset() -> None:
    sim = _sim()

    calls = {"n": 0}

    def progress(t: float, t_end: float | None) -> None:
        calls["n"] += 1
        if calls["n"] == 3:
            sim.pause()

    part = sim.run(progress=progress)
    assert part.status == "paused" and len(part.t) == 4
    full = sim.resume()
    ref = _sim().run()
    assert full.status == "completed"
    assert np.array_equal(full["truth.pos"], ref["truth.pos"])
    sim.reset(seed=8)
    other = sim.run()
    assert np.array_equal(other["truth.pos"], _sim(seed=8).run()["truth.pos"])


def test_controller_without_uses_truth_cannot_read_truth() -> None:
    sim = _sim(extra={"controllers": (PluginSpec(TruthPeeker("peek")),)})
    with pytest.raises(EngineError, match="may not read truth; set 'uses_truth: true'") as info:
        sim.run()
    assert info.value.result.status == "failed"  # type: ignore[attr-defined]
    ok = _sim(extra={"controllers": (PluginSpec(TruthPeeker("peek"), uses_truth=True),)}).run()
    assert ok.manifest["oracle"] == ["b.peek"]


def test_declared_truth_reader_fails_at_build_time() -> None:
    with pytest.raises(ConfigError, match="reads truth; set 'uses_truth: true'"):
        _sim(extra={"controllers": (PluginSpec(DeclaredOracle("peek")),)})


def test_views_are_read_only() -> None:
    sim = _sim(extra={"controllers": (PluginSpec(Writer("w")),)})
    with pytest.raises(ValueError, match="read-only"):
        sim.run()


def test_two_belief_writers_rejected() -> None:
    with pytest.raises(ConfigError, match="2 belief writers"):
        _sim(extra={"sensors": (PluginSpec(BeliefA("a")), PluginSpec(BeliefB("b2")))})


def test_perfect_navigation_listed() -> None:
    r = _sim(n=2).run()
    assert r.manifest["perfect_navigation"] == ["b[0]", "b[1]"]


def test_rate_not_multiple_of_dt_names_valid_rates() -> None:
    with pytest.raises(
        ConfigError, match=r"rate 3 Hz is not a whole number of ticks.*3.33333 Hz or 2.5 Hz"
    ):
        _sim(extra={"autonomy": (PluginSpec(Done("d"), rate_hz=3.0),)})


def test_end_conditions() -> None:
    r = _sim(
        extra={"autonomy": (PluginSpec(Done("d")),)}, end_conditions=["time", "all_done"]
    ).run()
    assert r.manifest["ended_by"] == "all_done"
    # done is reported by the autonomy of tick 5 (t = 0.5); that tick completes to t = 0.6
    assert r.t[-1] == pytest.approx(0.6)
    assert r.manifest["ended_tick"] == 6
    with pytest.raises(ConfigError, match="can never end"):
        _sim(end=None)
    with pytest.raises(ConfigError, match="no autonomy plugin reports done"):
        _sim(end_conditions=["all_done"])
    with pytest.raises(ConfigError, match="no metric plugin"):
        _sim(end_conditions=[MetricCondition("x", "<", 1.0)])


def test_nonfinite_stop_gives_diverged_with_event_and_partial_log() -> None:
    r = _sim(BlowUp("m"), end_conditions=["time"]).run()
    assert r.status == "diverged"
    ev = [e for e in r.events if e.kind == "NumericalError"]
    assert len(ev) == 1 and ev[0].entity == "b[1]"
    assert "non-finite truth pos" in ev[0].text and "last finite state: north=" in ev[0].text
    assert ev[0].t == pytest.approx(0.6)
    assert len(r.t) == 7  # frames t_0 ... t_6, the last one with the NaN
    assert np.isfinite(r["truth.pos"][1, :6]).all()


def test_nonfinite_deactivate_keeps_the_others_running() -> None:
    r = _sim(BlowUp("m"), on_nonfinite="deactivate").run()
    assert r.status == "completed"
    assert r["active"][1, -1, 0] == 0.0 and r["active"][0, -1, 0] == 1.0
    assert np.isfinite(r["truth.pos"]).all()  # the last finite position is kept
    assert any(e.kind == "NumericalError" for e in r.events)


def test_error_in_a_hook_keeps_partial_results() -> None:
    sim = _sim(extra={"autonomy": (PluginSpec(Crash("boom")),)})
    with pytest.raises(ValueError, match="plugin bug") as info:
        sim.run()
    res = info.value.result  # type: ignore[attr-defined]
    assert res.status == "failed"
    assert "ValueError: plugin bug" in res.manifest["error"]
    assert len(res.t) == 4  # t_0 .. t_3 were logged
    assert sim.result is res


def test_harness_motion_runs_with_substeps() -> None:
    a = _sim(HarnessMotion("h"), substeps=1).run()
    b = _sim(HarnessMotion("h"), substeps=4).run()
    assert a["truth.pos"].shape == b["truth.pos"].shape
    # arcs: same speed, finer integration; positions agree to the integration error
    assert np.allclose(a["truth.pos"], b["truth.pos"], atol=0.02)


class Extra(Plugin):
    """A plugin that draws from its own streams (must not disturb anybody else)."""

    kind: ClassVar[str] = "autonomy"

    def autonomy(self, ctx: Any, rng: Any) -> None:
        ctx.log("u", rng.uniform(size=3), "")


def _two_blocks(extra_on_b: bool, reverse: bool = False) -> Any:
    def block(name: str, extra: bool) -> BlockSpec:
        autos = (PluginSpec(Extra("extra")),) if extra else ()
        return BlockSpec(
            name,
            2,
            PluginSpec(NoisyMotion("m")),
            autonomy=autos,
            spawn=Spawn(spread={"north": 1.0}),
        )

    blocks = [block("a", False), block("b", extra_on_b)]
    if reverse:
        blocks.reverse()
    return Simulation(blocks, dt=0.1, end=0.5, seed=11).run()


def test_streams_are_keyed_by_names_not_order() -> None:
    ref = _two_blocks(False)
    more = _two_blocks(True)
    rev = _two_blocks(False, reverse=True)
    rows_a = [i for i, e in enumerate(ref.entities) if e["block"] == "a"]
    rows_a_rev = [i for i, e in enumerate(rev.entities) if e["block"] == "a"]
    assert np.array_equal(ref["truth.pos"][rows_a], more["truth.pos"][rows_a])
    assert np.array_equal(ref["truth.pos"][rows_a], rev["truth.pos"][rows_a_rev])
    assert np.array_equal(ref["truth.pos"], more["truth.pos"])  # b's motion is untouched too


def test_finished_run_is_final() -> None:
    sim = _sim()
    r = sim.run()
    assert sim.run() is r
    assert sim.step(3) == 0


class Spread(Plugin):
    """World metric: north spread of all entities; ends the run through a metric condition."""

    kind: ClassVar[str] = "metric"

    def metric(self, ctx: Any, rng: Any) -> None:
        views = ctx.blocks
        north = np.concatenate([v.truth.pos[:, 0] for v in views])
        for v in views:
            ctx.log_block(v.name, "north", v.truth.pos[:, 0], "m")
        ctx.metric_value("t_seen", ctx.t)
        ctx.state["last"] = float(np.ptp(north))

    def summary(self, ctx: Any, rng: Any) -> None:
        ctx.add_summary("", "north_spread", ctx.state["last"], "m")


def test_world_metric_plugin_api(tmp_path: Any) -> None:
    from marinesim.io.log import load_run

    sim = _sim(
        world=[PluginSpec(Spread("spread"))],
        end_conditions=["time", MetricCondition("t_seen", ">=", 0.5)],
    )
    r = sim.run()
    assert r.manifest["ended_by"] == "metric t_seen >= 0.5"
    assert r["spread.north"].shape == (3, 6, 1)
    assert np.array_equal(r["spread.north"][:, 1:, 0], r["truth.pos"][:, 1:, 0])
    assert r.metrics == [
        {
            "plugin": "spread",
            "entity": "",
            "team": None,
            "metric": "north_spread",
            "value": pytest.approx(float(np.ptp(r["truth.pos"][:, -1, 0]))),
            "unit": "m",
        }
    ]
    r.save(tmp_path)
    assert load_run(tmp_path).metrics[0]["metric"] == "north_spread"
    with pytest.raises(EngineError, match="sees its own block only"):
        _sim(extra={"controllers": (PluginSpec(BlocksPeeker("bp")),)}).run()


class BlocksPeeker(Plugin):
    kind: ClassVar[str] = "controller"

    def control(self, ctx: Any, rng: Any) -> None:
        _ = ctx.blocks


def test_name_hash_collisions_are_rejected() -> None:
    # "plumless" and "buckeroo" share a CRC-32: their streams would coincide
    with pytest.raises(ConfigError, match="have the same CRC-32"):
        _sim(extra={"autonomy": (PluginSpec(Done("plumless")), PluginSpec(Extra("buckeroo")))})
    blocks = [BlockSpec(n, 1, PluginSpec(NoisyMotion("m"))) for n in ("plumless", "buckeroo")]
    with pytest.raises(ConfigError, match="same CRC-32"):
        Simulation(blocks, dt=0.1, end=1.0, seed=1)
