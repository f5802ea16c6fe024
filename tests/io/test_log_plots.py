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
        "platform",
        "seed",
        "status",
        "wall_time_s",
    ):
        assert key in man, key
    assert man["seed"] == 4 and man["status"] == "completed"
    head = (tmp_path / "log.csv").read_text().splitlines()[:5]
    assert head[0].startswith("# marinesim_version: ")
    assert "# seed: 4" in head and "# scenario_sha256: abc123" in head
    import pyarrow.parquet as pq

    md = pq.read_schema(tmp_path / "log.parquet").metadata
    assert md[b"marinesim.seed"] == b"4"


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
    assert len(fig2.axes) == 3
    paths = save_figures(res, tmp_path, current=field)
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
