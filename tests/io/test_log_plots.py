"""Run logs (CSV/Parquet/manifest round trip, partial logs) and figures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from marinesim.core.errors import ConfigError, DataError
from marinesim.engine.entity import BlockSpec, PluginSpec, Spawn
from marinesim.engine.plugin import Plugin
from marinesim.engine.results import RunResult
from marinesim.engine.simulation import Simulation
from marinesim.io.log import load_run, save_run
from marinesim.io.plots import save_figures, timeseries_figure, trajectory_figure
from marinesim.testing import HarnessMotion


class Drift(Plugin):
    kind: ClassVar[str] = "autonomy"

    def autonomy(self, ctx: Any, rng: Any) -> None:
        ctx.log("drift", np.tile([0.1, 0.2], (ctx.n, 1)), "m/s", ("east", "north"))
        ctx.log("target", np.tile([5.0, 5.0], (ctx.n, 1)), "m", ("north", "east"))
        if ctx.t > 0.55:
            raise RuntimeError("boom")


def _result(fail: bool = False) -> RunResult:
    autos = (PluginSpec(Drift("nav")),) if fail else ()
    block = BlockSpec(
        "v",
        2,
        PluginSpec(HarnessMotion("m")),
        autonomy=autos,
        spawn=Spawn(north=1.0, spread={"east": 1.0}),
    )
    sim = Simulation([block], dt=0.1, end=1.0, seed=4, name="logtest")
    if not fail:
        return sim.run()
    with pytest.raises(RuntimeError) as info:
        sim.run()
    return info.value.result  # type: ignore[attr-defined]


@pytest.mark.parametrize("fmt", ["csv", "parquet", "both"])
def test_round_trip(tmp_path: Path, fmt: str) -> None:
    res = _result()
    files = save_run(res, tmp_path, fmt=fmt)
    assert ("log_csv" in files) == (fmt != "parquet")
    assert ("log_parquet" in files) == (fmt != "csv")
    back = load_run(tmp_path)
    assert set(back.signals) == set(res.signals)
    for name in res.signals:
        assert np.array_equal(back[name], res[name], equal_nan=True), name
        assert back.signal(name).unit == res.signal(name).unit
    assert np.array_equal(back.t, res.t)
    assert [e["name"] for e in back.entities] == ["v[0]", "v[1]"]


def test_manifest_and_csv_header_carry_version_seed_hash(tmp_path: Path) -> None:
    res = _result()
    res.manifest["scenario_sha256"] = "abc123"
    save_run(res, tmp_path, fmt="both")
    man = json.loads((tmp_path / "manifest.json").read_text())
    for key in (
        "marinesim_version",
        "python",
        "numpy",
        "numpy_libm",
        "platform",
        "seed",
        "status",
        "wall_time_s",
    ):
        assert key in man, key
    assert man["seed"] == 4 and man["status"] == "completed"
    from marinesim.core.libm import numpy_matches_libm

    assert man["numpy_libm"] is numpy_matches_libm()
    assert man["scenario_sha256"] == "abc123"  # metadata lives in the manifest (issue 9 §5)
    head = (tmp_path / "log.csv").read_text().splitlines()[0]
    assert head.startswith("entity,block,t,")
    import pyarrow.parquet as pq

    part = sorted((tmp_path / "log.parquet").glob("part-*.parquet"))[0]
    assert pq.read_schema(part).metadata[b"marinesim.seed"] == b"4"


def test_partial_log_of_a_failed_run(tmp_path: Path) -> None:
    res = _result(fail=True)
    assert res.status == "failed"
    save_run(res, tmp_path)
    back = load_run(tmp_path)
    assert back.manifest["status"] == "failed"
    assert "RuntimeError: boom" in back.manifest["error"]
    assert len(back.t) == 7  # t_0 .. t_6: the tick that raised is not logged
    assert any(e.kind == "RuntimeError" for e in back.events)


def test_bad_inputs(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown log format 'xls'"):
        save_run(_result(), tmp_path, fmt="xls")
    with pytest.raises(DataError, match="no manifest.json"):
        load_run(tmp_path / "nowhere")


def test_figures(tmp_path: Path) -> None:
    res = _result(fail=True)
    field = lambda e, n: (np.full(np.shape(e), 0.2), np.zeros(np.shape(e)))  # noqa: E731
    fig = trajectory_figure(res, current=field)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "east [m]" and ax.get_ylabel() == "north [m]"
    assert "seed 4" in ax.get_title()
    assert ax.get_aspect() == 1.0
    assert len([ln for ln in ax.get_lines() if ln.get_label() in ("v[0]", "v[1]")]) == 2
    fig2 = timeseries_figure(res)
    depth = res["truth.pos"][:, :, 2]
    assert np.nanmax(depth) == np.nanmin(depth)  # a surface run: no depth panel
    assert [a.get_ylabel() for a in fig2.axes] == ["heading [deg]", "speed [m/s]"]
    paths = save_figures(res, tmp_path, current=field)
    assert sorted(paths) == ["timeseries", "trajectory"]
    for p in paths.values():
        assert p.stat().st_size > 10_000
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_to_pandas_long_table() -> None:
    res = _result()
    df = res.to_pandas()
    assert list(df.columns[:3]) == ["entity", "block", "t"]
    assert len(df) == 2 * len(res.t)
    assert {"truth.pos.north", "truth.pos.east", "truth.pos.down", "truth.heading"} <= set(
        df.columns
    )
    row = df[(df.entity == "v[1]")].iloc[3]
    assert row["truth.pos.north"] == res["truth.pos"][1, 3, 0]


def test_demo_trajectory_shows_tracks_drift_arrows_and_current_field() -> None:
    """The figure of `marinesim demo`: one track per vehicle, drift arrows, current background."""
    import matplotlib.pyplot as plt
    from matplotlib.collections import QuadMesh
    from matplotlib.quiver import Quiver

    from marinesim.scenario import load_simulation

    res = load_simulation("demo_survey", sets=["time.end=124"]).run()  # gust from 120 s
    env = res.manifest.get("current_field_file")
    assert env and env.endswith("demo_current.cfd")
    fig = trajectory_figure(res)
    ax = fig.axes[0]
    names = [e["name"] for e in res.entities]
    tracks = [ln for ln in ax.get_lines() if ln.get_label() in names]
    assert sorted(ln.get_label() for ln in tracks) == names
    # the track ends where the vehicle ended (east, north)
    pos = res["truth.pos"]
    for ln in tracks:
        i = names.index(ln.get_label())
        assert ln.get_xdata()[-1] == pytest.approx(pos[i, -1, 1])
        assert ln.get_ydata()[-1] == pytest.approx(pos[i, -1, 0])
    meshes = [c for c in ax.collections if isinstance(c, QuadMesh)]
    quivers = [c for c in ax.collections if isinstance(c, Quiver)]
    assert len(meshes) == 1 and float(np.nanmax(meshes[0].get_array())) > 0.0  # current speed
    assert len(quivers) >= 1 + len(names)  # the field, then the drift arrows of each vehicle
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "current field" in labels and any(t.startswith("drift (longest") for t in labels)
    plt.close(fig)


# ------------------------------------------------------------------ what the figures draw


@pytest.fixture(scope="module")
def station_keeping() -> RunResult:
    from marinesim.scenario import load_simulation

    return load_simulation("bluerov2_station_keeping", sets=["time.end=8"]).run()


@pytest.fixture(scope="module")
def usm_survey() -> RunResult:
    from marinesim.scenario import load_simulation

    root = Path(__file__).resolve().parents[2]
    sim = load_simulation(str(root / "docs" / "examples" / "harbour_survey.yaml"),
                          sets=["time.end=120"])  # fmt: skip
    return sim.run()


def test_station_keeping_is_drawn_at_its_own_scale(station_keeping: RunResult) -> None:
    fig = trajectory_figure(station_keeping)
    ax = fig.axes[0]
    pos = station_keeping["truth.pos"][0]
    motion = max(np.ptp(pos[:, 0]), np.ptp(pos[:, 1]))
    assert motion < 0.5  # centimetres to decimetres of drift
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    assert x1 - x0 < 1.0 and y1 - y0 < 1.0  # not the old 10 m floor
    assert x0 <= np.min(pos[:, 1]) and np.max(pos[:, 1]) <= x1
    # uniform current: an arrow and a legend entry, no colour bar (one axes only)
    assert len(fig.axes) == 1
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any(t.startswith("uniform current 0.30 m/s toward 45") for t in texts)
    assert "start" in texts and "end" in texts and any("time ticks" in t for t in texts)
    assert any(t.get_text().endswith(" s") for t in ax.texts)  # time tick labels


def test_sixdof_timeseries_has_a_thruster_panel(station_keeping: RunResult) -> None:
    fig = timeseries_figure(station_keeping)
    labels = [ax.get_ylabel() for ax in fig.axes]
    assert labels == ["heading [deg]", "speed [m/s]", "depth [m]", "thruster command [N]"]
    act = fig.axes[3]
    assert [t.get_text() for t in act.get_legend().get_texts()] == [
        f"thruster {j}" for j in range(1, 9)
    ]
    # every legend sits right of its axes
    for ax in (fig.axes[0], act):
        assert ax.get_legend().get_bbox_to_anchor().x0 >= ax.get_window_extent().x1 - 1


def test_usm_timeseries_heading_breaks_and_actuators(usm_survey: RunResult) -> None:
    fig = timeseries_figure(usm_survey)
    assert fig.axes[3].get_ylabel() == "thrust, rudder,\nelevator [%]"
    legend = [t.get_text() for t in fig.axes[3].get_legend().get_texts()]
    assert legend == ["thrust [%]", "rudder [%]", "elevator [%]"]
    heading = usm_survey["truth.heading"][:, :, 0]
    wraps = int(np.sum(np.abs(np.diff(heading, axis=1)) > 180.0))
    drawn = [ln.get_ydata() for ln in fig.axes[0].get_lines() if ln.get_linestyle() == "-"]
    ys = np.concatenate([np.asarray(y, dtype=float) for y in drawn])
    assert wraps > 0 and int(np.isnan(ys).sum()) >= wraps  # a NaN break at every wrap
    for y in drawn:  # no drawn segment jumps across the 0/360 seam
        y = np.asarray(y, dtype=float)
        d = np.abs(np.diff(y))
        assert not np.any(d[np.isfinite(d)] > 180.0)


def test_trajectory_names_the_datum_and_colours_a_field(usm_survey: RunResult) -> None:
    fig = trajectory_figure(usm_survey)
    ax = fig.axes[0]
    assert any("42.358456° N, 71.087589° W" in t.get_text() for t in ax.texts)
    assert len(fig.axes) == 2 and fig.axes[1].get_ylabel() == "current speed [m/s]"
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("east [m]", "north [m]")


def test_usm_run_figures_draw_the_desired_inputs(tmp_path: Path) -> None:
    from marinesim.interop.moos.runner import run_moos_file
    from marinesim.io.plots import save_usm_run_figures, usm_run_figures

    root = Path(__file__).resolve().parents[2] / "docs" / "examples"
    run = run_moos_file(root / "mission.moos", duration=30, script=root / "events.txt")
    assert run.columns[13:16] == ["DESIRED_THRUST", "DESIRED_RUDDER", "DESIRED_ELEVATOR"]
    assert run.column("DESIRED_THRUST")[-1] == 50.0 and run.column("DESIRED_RUDDER")[-1] == 20.0
    figs = usm_run_figures(run, title="mission.moos")
    act = figs["timeseries"].axes[3]
    legend = [t.get_text() for t in act.get_legend().get_texts()]
    assert legend == ["DESIRED_THRUST [%]", "DESIRED_RUDDER [%]", "DESIRED_ELEVATOR [%]"]
    thrust = act.get_lines()[0].get_ydata()
    assert thrust[0] == 0.0 and thrust[-1] == 50.0
    paths = save_usm_run_figures(run, tmp_path, fmt="svg")
    assert sorted(p.name for p in paths) == ["timeseries.svg", "trajectory.svg"]


def test_engine_surftrak_figure(tmp_path: Path) -> None:
    from marinesim.io.figures import save_all_figures
    from marinesim.io.surftrak_plot import PANEL_YLABELS, engine_surftrak_figure
    from marinesim.scenario import load_simulation

    res = load_simulation("surftrak_sawtooth", sets=["time.end=15"]).run()
    fig = engine_surftrak_figure(res)
    assert [ax.get_ylabel() for ax in fig.axes] == list(PANEL_YLABELS)
    legends = [[t.get_text() for t in ax.get_legend().get_texts()] for ax in fig.axes]
    assert "seafloor z up, truth" in legends[0] and "true altitude above the seafloor" in legends[1]
    true_alt = fig.axes[1].get_lines()[2].get_ydata()
    assert np.nanmin(true_alt) > 5.0  # the vehicle holds ~8.8 m over the floor, not 0
    paths = save_all_figures(res, tmp_path, fmt="pdf")
    assert paths["surftrak"] == tmp_path / "surftrak.pdf" and paths["surftrak"].is_file()


def test_figure_set_follows_the_signals_of_a_surftrak_run(tmp_path: Path) -> None:
    """SURFTRAK only heaves: no trajectory, no flat heading/speed panels (issue 22)."""
    from marinesim.io.figures import save_all_figures
    from marinesim.io.plots import figure_plan
    from marinesim.scenario import load_simulation

    res = load_simulation("surftrak_sawtooth", sets=["time.end=5"]).run()
    assert figure_plan(res) == {"timeseries": ("depth",)}
    paths = save_all_figures(res, tmp_path, fmt="svg")
    assert sorted(paths) == ["surftrak", "timeseries"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["surftrak.svg", "timeseries.svg"]
    fig = timeseries_figure(res)
    assert [ax.get_ylabel() for ax in fig.axes] == ["depth [m]"]
    assert fig.axes[0].yaxis_inverted()  # depth positive down
    depth = fig.axes[0].get_lines()[0].get_ydata()
    assert np.nanmax(depth) - np.nanmin(depth) > 0.0  # the panel drawn has something in it


def test_figure_set_of_a_usm_survey_keeps_every_panel(usm_survey: RunResult) -> None:
    from marinesim.io.plots import figure_plan

    plan = figure_plan(usm_survey)
    assert plan == {"trajectory": ("track",),
                    "timeseries": ("heading", "speed", "depth", "actuators")}  # fmt: skip


def test_ensemble_timeseries_leaves_out_constant_panels() -> None:
    from marinesim.engine.results import RunResult, Signal
    from marinesim.io.ensemble_plots import MAX_INDIVIDUAL

    n, tt = MAX_INDIVIDUAL + 3, 50
    t = np.arange(tt) * 0.1
    pos = np.zeros((n, tt, 3))
    pos[:, :, 2] = 5.0 + np.sin(t)[None, :] + np.arange(n)[:, None] * 0.1
    res = RunResult(
        t=t,
        signals={
            "truth.pos": Signal(pos, "m", ("north", "east", "down")),
            "truth.heading": Signal(np.zeros((n, tt, 1)), "deg", ("",)),
            "truth.speed": Signal(np.zeros((n, tt, 1)), "m/s", ("",)),
        },
        entities=[{"id": i, "name": f"v[{i}]", "block": "v", "index": i, "team": 1}
                  for i in range(n)],  # fmt: skip
        events=[],
        metrics=[],
        manifest={"scenario": "heave", "seed": 1},
    )
    fig = timeseries_figure(res)
    assert [ax.get_ylabel() for ax in fig.axes] == ["depth [m]"]
