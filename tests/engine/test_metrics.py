"""World metric plugins: distance, separation / CPA, time in box, navigation error, energy."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pytest

from marinesim.core.errors import ConfigError
from marinesim.core.state import VehicleState
from marinesim.engine.entity import BlockSpec, PluginSpec, Spawn
from marinesim.engine.plugin import NoParams, Plugin
from marinesim.engine.plugins import metrics as M
from marinesim.engine.plugins import sensors as S
from marinesim.engine.simulation import Simulation


class _Line(Plugin):
    """Straight line north at 2 m/s."""

    kind: ClassVar[str] = "motion"

    def substep(self, ctx: Any, rng: Any) -> None:
        st = ctx.truth
        pos = st.pos.copy()
        pos[:, 0] += 2.0 * ctx.h
        ctx.set_truth(
            VehicleState.from_pose(
                pos[:, 0], pos[:, 1], pos[:, 2], np.zeros(ctx.n), np.full(ctx.n, 2.0)
            )
        )


def _rows(sim: Simulation, metric: str) -> dict[str, float]:
    return {r["entity"]: r["value"] for r in M.collect_metrics(sim) if r["metric"] == metric}


def _world(*specs: tuple[type[Plugin], str, Any]) -> list[PluginSpec]:
    return [PluginSpec(cls(name, params)) for cls, name, params in specs]


def test_distance_separation_and_box() -> None:
    a = BlockSpec("a", 1, PluginSpec(_Line("m")), spawn=Spawn(north=-20.0))
    b = BlockSpec("b", 1, PluginSpec(_Line("m")), spawn=Spawn(north=0.0, east=3.0, depth=4.0))
    box = M.TimeInBoxParams(north_min=0.0, north_max=10.0, east_min=-1.0, east_max=1.0)
    world = _world(
        (M.DistanceTravelled, "dist", NoParams()),
        (M.MinSeparation, "sep", M.MinSeparationParams()),
        (M.MinSeparation, "hsep", M.MinSeparationParams(horizontal=True)),
        (M.TimeInBox, "box", box),
    )
    sim = Simulation([a, b], dt=0.1, end=20.0, seed=1, world=world)
    res = sim.run()
    d = _rows(sim, "distance_travelled")
    np.testing.assert_allclose([d["a[0]"], d["b[0]"]], 40.0, rtol=1e-9)
    assert _rows(sim, "distance_travelled_sum")["team 1"] == pytest.approx(80.0)
    rows = [r for r in M.collect_metrics(sim) if r["metric_plugin"] == "sep"]
    seps = {r["entity"]: r["value"] for r in rows if r["metric"] == "min_separation"}
    np.testing.assert_allclose(seps["a[0]"], np.hypot(20.0, 5.0), rtol=1e-12)  # they never close in
    hs = [
        r
        for r in M.collect_metrics(sim)
        if r["metric_plugin"] == "hsep" and r["metric"] == "min_separation"
    ]
    np.testing.assert_allclose(hs[0]["value"], np.hypot(20.0, 3.0), rtol=1e-12)
    box_s = _rows(sim, "time_in_box")
    # a crosses north 0..10 between t = 10 s and 15 s (frames every 0.1 s, inclusive edges)
    assert box_s["a[0]"] == pytest.approx(5.1, abs=0.11)
    assert box_s["b[0]"] == 0.0
    assert res["dist.distance"].shape == (2, len(res.t), 1)
    assert any(e.kind == "metric" and "distance_travelled" in e.text for e in res.events)
    # the engine gathers the summary rows into the run result (metrics.csv)
    got = {
        (r["plugin"], r["entity"]): r["value"]
        for r in res.metrics
        if r["metric"] == "distance_travelled"
    }
    assert got[("dist", "a[0]")] == pytest.approx(40.0)


def test_cpa_time_of_crossing() -> None:
    class _Cross(Plugin):
        kind: ClassVar[str] = "motion"

        def substep(self, ctx: Any, rng: Any) -> None:
            st = ctx.truth
            pos = st.pos.copy()
            pos[:, 1] += np.where(pos[:, 0] > 0, 1.0, -1.0) * ctx.h
            ctx.set_truth(st.replace(pos=pos))

    a = BlockSpec(
        "a",
        2,
        PluginSpec(_Cross("m")),
        spawn=Spawn(east=-10.0, offsets=np.array([[5.0, 0, 0, 0], [-5.0, 20.0, 0, 0]])),
    )
    sim = Simulation(
        [a],
        dt=0.1,
        end=20.0,
        seed=1,
        world=_world((M.MinSeparation, "sep", M.MinSeparationParams())),
    )
    sim.run()
    rows = M.collect_metrics(sim)
    cpa = [r for r in rows if r["metric"].startswith("cpa (")][0]
    t = [r for r in rows if r["metric"] == "cpa_time"][0]
    # east positions -10 + t and 10 - t meet at t = 10 s; north separation 10 m remains
    assert cpa["value"] == pytest.approx(10.0, abs=1e-9)
    assert t["value"] == pytest.approx(10.0, abs=1e-9)


def test_nav_error_matches_noisy_state_sigmas() -> None:
    p = S.nav.NoisyStateParams(
        pos_std=(1.0, 1.0, 0.0),
        pos_mean=(0.0, 0.0, 0.0),
        vel_std=(0.0, 0.0, 0.0),
        vel_mean=(0.0, 0.0, 0.0),
        att_std_deg=(0.0, 0.0, 0.0),
        att_mean_deg=(0.0, 0.0, 0.0),
    )
    blk = BlockSpec(
        "a", 50, PluginSpec(_Line("m")), sensors=(PluginSpec(S.NoisyStateSensor("noisy", p)),)
    )
    bare = BlockSpec("perfect", 1, PluginSpec(_Line("m")))
    sim = Simulation(
        [blk, bare], dt=0.1, end=20.0, seed=1, world=_world((M.NavError, "nav_error", NoParams()))
    )
    res = sim.run()
    rms = np.array([r["value"] for r in M.collect_metrics(sim) if r["metric"] == "nav_error_rms"])
    # ‖e‖² of a 2-D N(0, I) has mean 2: RMS over 50 × 200 samples ≈ √2 (SE ≈ 0.5 %)
    assert abs(np.sqrt(np.mean(rms[:50] ** 2)) / np.sqrt(2.0) - 1) < 0.03
    assert rms[50] == 0.0  # perfect navigation
    cep = [r["value"] for r in M.collect_metrics(sim) if r["metric"] == "cep50_final"]
    np.testing.assert_allclose(cep[:50], np.sqrt(2 * np.log(2)), rtol=1e-9)
    assert np.isnan(cep[50])
    err = res["nav_error.error"]
    assert err.shape == (51, len(res.t), 1)
    assert any("perfect navigation" in e.text for e in res.events)


def test_energy_without_current_reports_is_skipped_with_a_note() -> None:
    blk = BlockSpec("a", 1, PluginSpec(_Line("m")))
    sim = Simulation([blk], dt=0.1, end=1.0, seed=1, world=_world((M.Energy, "energy", NoParams())))
    res = sim.run()
    assert M.collect_metrics(sim) == []
    assert any(
        e.severity == "warning" and "no thruster reports current" in e.text for e in res.events
    )


def test_box_params_checked() -> None:
    with pytest.raises(ConfigError, match="north_min must be below north_max"):
        M.TimeInBoxParams(north_min=5.0, north_max=0.0, east_min=0.0, east_max=1.0)
