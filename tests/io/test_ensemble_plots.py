"""Ensemble figures past a dozen entities: no per-entity legend, fleet-wide views (issue 12 §2)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from marinesim.engine.entity import BlockSpec, PluginSpec, Spawn
from marinesim.engine.results import RunResult
from marinesim.engine.simulation import Simulation
from marinesim.io import ensemble_plots
from marinesim.io.log import load_run
from marinesim.io.plots import timeseries_figure, trajectory_figure
from marinesim.io.sixdof_plots import timeseries_6dof_figure, track3d_figure
from marinesim.testing import HarnessMotion


def _run(n: int, end: float = 6.0) -> RunResult:
    block = BlockSpec(
        "auv",
        n,
        PluginSpec(HarnessMotion("m")),
        spawn=Spawn(north=0.0, spread={"north": 30.0, "east": 30.0, "heading_deg": 180.0}),
    )
    return Simulation([block], dt=0.1, end=end, seed=2, name="fleet").run()


def _legend_labels(fig: object) -> list[str]:
    labels: list[str] = []
    for ax in fig.axes:  # type: ignore[attr-defined]
        leg = ax.get_legend()
        if leg is not None:
            labels += [t.get_text() for t in leg.get_texts()]
    labels += [t.get_text() for leg in fig.legends for t in leg.get_texts()]  # type: ignore[attr-defined]
    return labels


@pytest.fixture(scope="module")
def fleet() -> RunResult:
    return _run(50)


def test_trajectory_of_50_vehicles_has_no_per_entity_legend(fleet: RunResult) -> None:
    import matplotlib.pyplot as plt
    from matplotlib.collections import LineCollection, QuadMesh

    fig = trajectory_figure(fleet)
    names = {e["name"] for e in fleet.entities}
    labels = _legend_labels(fig)
    assert labels and not names & set(labels)
    assert len(labels) <= 3  # sampled tracks, start, end
    ax = fig.axes[0]
    assert ax.get_xlabel() == "east [m]" and ax.get_ylabel() == "north [m]"
    meshes = [c for c in ax.collections if isinstance(c, QuadMesh)]
    assert len(meshes) == 1 and np.nansum(meshes[0].get_array()) > 0  # the density layer
    lines = [c for c in ax.collections if isinstance(c, LineCollection)]
    assert len(lines) == 1 and len(lines[0].get_segments()) == ensemble_plots.SAMPLE_TRACKS
    assert len(ax.get_lines()) == 0  # no Line2D per vehicle
    # the density counts every sampled position of every vehicle
    assert np.nansum(meshes[0].get_array()) == fleet.n * len(fleet.t)
    plt.close(fig)


def test_timeseries_of_50_vehicles_draws_quantile_bands(fleet: RunResult) -> None:
    import matplotlib.pyplot as plt

    fig = timeseries_figure(fleet)
    labels = _legend_labels(fig)
    assert not {e["name"] for e in fleet.entities} & set(labels)
    assert "speed median" in labels and "speed 5–95 %" in labels
    speed_ax = next(a for a in fig.axes if a.get_ylabel() == "speed [m/s]")
    med = next(ln for ln in speed_ax.get_lines() if ln.get_label() == "speed median")
    np.testing.assert_allclose(med.get_ydata(), np.median(fleet["truth.speed"][:, :, 0], axis=0))
    assert any(a.get_ylabel() == "heading [deg]" for a in fig.axes)
    plt.close(fig)


def test_sixdof_entry_points_dispatch_too(fleet: RunResult) -> None:
    import matplotlib.pyplot as plt

    for f in (timeseries_6dof_figure, track3d_figure):
        fig = f(fleet)
        assert not {e["name"] for e in fleet.entities} & set(_legend_labels(fig))
        plt.close(fig)


def test_a_dozen_vehicles_are_still_drawn_one_by_one() -> None:
    import matplotlib.pyplot as plt

    res = _run(ensemble_plots.MAX_INDIVIDUAL, end=1.0)
    assert ensemble_plots.dispatch("trajectory", res) is None
    fig = trajectory_figure(res)
    labels = _legend_labels(fig)
    assert "auv[0]" in labels and f"auv[{ensemble_plots.MAX_INDIVIDUAL - 1}]" in labels
    plt.close(fig)


def test_figures_of_a_streamed_run_read_a_sample_of_frames(tmp_path: Path) -> None:
    block = BlockSpec("auv", 20, PluginSpec(HarnessMotion("m")), spawn=Spawn())
    sim = Simulation([block], dt=0.1, end=30.0, seed=1, name="long")
    sim.stream_to(tmp_path)
    res = sim.run()
    t, v = res.sample("truth.pos", max_frames=50)
    assert len(t) <= 50 and v.shape == (20, len(t), 3)
    full = load_run(tmp_path)["truth.pos"]
    step = int(round((t[1] - t[0]) / 0.1))
    np.testing.assert_array_equal(v, full[:, ::step, :])
    assert "truth.pos" not in res.signals._cache  # type: ignore[attr-defined]  # not loaded whole


@pytest.fixture(scope="module")
def nav_fleet() -> RunResult:
    """50 vehicles with a drifting INS belief (``simple_ins``) and a forward sonar."""
    from marinesim.engine.plugins import sensors as S

    ins = S.nav.SimpleInsParams(
        **{**S.SimpleInsSensor.example_params, "q_distance": 0.05, "q_time": 0.05}
    )
    son = S.contacts.ContactParams(**S.ContactSensor.example_params)
    block = BlockSpec(
        "auv",
        50,
        PluginSpec(HarnessMotion("m")),
        sensors=(
            PluginSpec(S.SimpleInsSensor("ins", ins)),
            PluginSpec(S.ContactSensor("son", son)),
        ),
        spawn=Spawn(depth=5.0, spread={"north": 60.0, "east": 60.0, "heading_deg": 180.0}),
    )
    return Simulation([block], dt=0.1, end=8.0, seed=4, name="navfleet").run()


def test_nav_figures_of_50_vehicles_are_ensembles(nav_fleet: RunResult) -> None:
    import matplotlib.pyplot as plt
    from matplotlib.collections import LineCollection, QuadMesh

    from marinesim.io.nav_plots import contacts_figure, error_figure, tracks_figure

    names = {e["name"] for e in nav_fleet.entities}
    tp, bp = nav_fleet["truth.pos"], nav_fleet["belief.pos"]
    assert np.isfinite(bp[:, 1:]).all()  # a belief from the first estimate on (none at t0)
    assert np.all(np.abs(bp - tp)[:, 1:, :2] > 0)  # a real, noisy belief

    fig = tracks_figure(nav_fleet)
    labels = _legend_labels(fig)
    assert not names & set(labels) and len(labels) == 2  # truth, belief
    ax = fig.axes[0]
    assert len(ax.get_lines()) == 0  # no Line2D per vehicle, no ellipse per vehicle
    lcs = [c for c in ax.collections if isinstance(c, LineCollection)]
    assert [len(c.get_segments()) for c in lcs] == [ensemble_plots.SAMPLE_TRACKS] * 2
    mesh = next(c for c in ax.collections if isinstance(c, QuadMesh))
    assert np.nansum(mesh.get_array()) == np.isfinite(bp[:, :, 0]).sum()  # every belief sample
    plt.close(fig)

    fig = error_figure(nav_fleet, sigma=2.0)
    labels = _legend_labels(fig)
    assert not names & set(labels)
    assert {"error median", "error 5–95 %", "2-sigma median"} <= set(labels)
    top, bottom = fig.axes[0], fig.axes[1]
    err = np.linalg.norm((bp - tp)[:, :, :2], axis=2)
    med = next(ln for ln in top.get_lines() if ln.get_label() == "error median")
    np.testing.assert_allclose(med.get_ydata()[1:], np.median(err[:, 1:], axis=0))
    std = nav_fleet[next(s for s in nav_fleet.signals if s.endswith(".pos_std"))]
    bound = 2.0 * np.hypot(std[:, :, 0], std[:, :, 1])
    share = next(ln for ln in bottom.get_lines() if ln.get_label() == "within own 2-sigma")
    np.testing.assert_allclose(
        share.get_ydata()[1:], 100.0 * np.mean(err[:, 1:] <= bound[:, 1:], axis=0)
    )
    # SimpleINS errors are isotropic Gaussians with the variance it reports, so the share inside
    # 2·σ_h = 2√2·σ is 1 − e⁻⁴ = 98.2 %: within 3 binomial sigmas of 50 vehicles
    ref = 1.0 - np.exp(-4.0)
    tol = 3.0 * np.sqrt(ref * (1.0 - ref) / nav_fleet.n)
    assert abs(np.mean(share.get_ydata()[1:]) / 100.0 - ref) < tol
    ref_line = next(ln for ln in bottom.get_lines() if ln.get_label().startswith("consistent"))
    np.testing.assert_allclose(ref_line.get_ydata(), 100.0 * ref)
    plt.close(fig)

    fig = contacts_figure(nav_fleet)
    assert not names & set(_legend_labels(fig))
    assert sum(len(a.get_lines()) for a in fig.axes) <= 1  # the median line only
    plt.close(fig)
