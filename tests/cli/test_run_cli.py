"""``marinesim run / demo / plot / plugins / scenarios`` end to end (short runs into tmp_path)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from marinesim.cli.main import main
from marinesim.core import registry
from marinesim.engine.plugin import Plugin

SCEN = """\
marinesim: 1
name: cli_test
seed: ${seed=11}
time: {dt: 0.2, end: 6.0}
entities:
  - name: boat
    count: 2
    spawn: {north: 0.0, east: 0.0, heading_deg: 45.0, step: {east: 20.0}}
    motion: {plugin: ${motion=usm}}
    controllers:
      - {name: pid, plugin: heading_speed_depth_pid}
    autonomy:
      - {name: wpt, plugin: waypoints, params: {points_ne: [[20, 0], [20, 20]], speed: 1.0}}
script:
  - 'DRIFT_VECTOR_ADD="90,0.3" at 2'
"""


def _scenario(tmp_path: Path, text: str = SCEN) -> Path:
    p = tmp_path / "scen.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def test_demo_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "demo"
    assert main(["demo", "-o", str(out), "--end", "20"]) == 0
    text = capsys.readouterr().out
    assert "perfect navigation" in text and "trajectory.png" in text
    for name in (
        "log.csv",
        "log.parquet",
        "manifest.json",
        "events.csv",
        "scenario.yaml",
        "current.cfd",
    ):
        assert (out / name).exists(), name  # log.parquet is a directory of Parquet parts
    for name in ("trajectory.png", "timeseries.png"):
        assert (out / name).stat().st_size > 20_000
    man = json.loads((out / "manifest.json").read_text())
    assert man["seed"] == 20240118 and len(man["scenario_sha256"]) == 64
    assert man["marinesim_version"] and man["status"] == "completed"
    assert man["entities"][2]["name"] == "survey[2]"


def test_run_with_vars_sets_and_csv_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = _scenario(tmp_path)
    out = tmp_path / "o"
    code = main(
        [
            "run",
            str(p),
            "-o",
            str(out),
            "--var",
            "seed=3",
            "--set",
            "entities.boat.count=3",
            "--seed",
            "99",
            "--format",
            "csv",
            "--no-plot",
        ]
    )
    assert code == 0
    assert (out / "log.csv").is_file() and not (out / "log.parquet").exists()
    assert not (out / "trajectory.png").exists()
    man = json.loads((out / "manifest.json").read_text())
    assert man["seed"] == 99 and len(man["entities"]) == 3
    assert "seed: 99" in (out / "scenario.yaml").read_text()


def test_same_seed_same_log(tmp_path: Path) -> None:
    p = _scenario(tmp_path)
    assert main(["run", str(p), "-o", str(tmp_path / "a"), "--no-plot", "--format", "csv"]) == 0
    assert main(["run", str(p), "-o", str(tmp_path / "b"), "--no-plot", "--format", "csv"]) == 0
    a = (tmp_path / "a" / "log.csv").read_text()
    b = (tmp_path / "b" / "log.csv").read_text()
    assert a == b


def test_bad_scenario_exit_2_with_location_no_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = _scenario(tmp_path, SCEN.replace("speed: 1.0", "sped: 1.0"))
    assert main(["run", str(p), "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert f"error: {p}:13:" in err
    assert (
        "entities.boat.autonomy.wpt.params.sped: extra field not permitted (did you mean 'speed'?)"
        in err
    )
    assert "Traceback" not in err
    p2 = _scenario(
        tmp_path, SCEN.replace("'DRIFT_VECTOR_ADD=\"90,0.3\" at 2'", "'DESIRED_SPEED=fast at 2'")
    )
    assert main(["run", str(p2)]) == 2
    err = capsys.readouterr().err
    assert (
        f"error: {p2}:15:5: script.0: DESIRED_SPEED takes a number, got the non-numeric value 'fast'"
        in err
    )
    assert main(["run", str(tmp_path / "missing.yaml")]) == 2
    assert "not found" in capsys.readouterr().err


class _BlowUp(Plugin):
    """Test motion that produces NaN after 1 s."""

    kind: ClassVar[str] = "motion"

    def substep(self, ctx: Any, rng: Any) -> None:
        st = ctx.truth
        pos = st.pos.copy()
        pos[:, 0] += ctx.h * (np.nan if ctx.t >= 1.0 else 1.0)
        ctx.set_truth(st.replace(pos=pos))


class _Crash(Plugin):
    """Test motion that raises after 1 s."""

    kind: ClassVar[str] = "motion"

    def substep(self, ctx: Any, rng: Any) -> None:
        if ctx.t >= 1.0:
            raise ZeroDivisionError("model bug")


@pytest.fixture
def test_motions() -> Any:
    registry.register("motion", "test_blowup", _BlowUp, replace=True)
    registry.register("motion", "test_crash", _Crash, replace=True)
    yield
    for name in ("test_blowup", "test_crash"):
        registry._LOADED.pop(("motion", name), None)


def test_diverged_run_exit_1_keeps_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], test_motions: Any
) -> None:
    text = (
        SCEN.replace("    controllers:\n      - {name: pid, plugin: heading_speed_depth_pid}\n", "")
        .replace(
            "    autonomy:\n      - {name: wpt, plugin: waypoints, params: {points_ne: [[20, 0], [20, 20]], speed: 1.0}}\n",
            "",
        )
        .replace("script:\n  - 'DRIFT_VECTOR_ADD=\"90,0.3\" at 2'\n", "")
    )
    p = _scenario(tmp_path, text)
    out = tmp_path / "o"
    assert main(["run", str(p), "-o", str(out), "--var", "motion=test_blowup"]) == 1
    err = capsys.readouterr().err
    assert "run diverged" in err and "non-finite truth pos" in err
    man = json.loads((out / "manifest.json").read_text())
    assert man["status"] == "diverged" and man["ended_by"] == "nonfinite"
    assert (out / "log.parquet").is_dir() and (out / "trajectory.png").is_file()
    out2 = tmp_path / "o2"
    assert main(["run", str(p), "-o", str(out2), "--var", "motion=test_crash", "--no-plot"]) == 1
    err = capsys.readouterr().err
    assert "ZeroDivisionError: model bug" in err and "Traceback" not in err
    man = json.loads((out2 / "manifest.json").read_text())
    assert man["status"] == "failed" and "model bug" in man["error"]


def test_plot_redraws_from_a_saved_log(tmp_path: Path) -> None:
    p = _scenario(tmp_path)
    run = tmp_path / "r"
    assert main(["run", str(p), "-o", str(run), "--no-plot"]) == 0
    assert main(["plot", str(run), "-o", str(tmp_path / "figs")]) == 0
    assert (tmp_path / "figs" / "trajectory.png").stat().st_size > 10_000
    assert main(["plot", str(tmp_path / "nothing")]) == 2


def test_plugins_and_scenarios(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plugins", "list"]) == 0
    out = capsys.readouterr().out
    for name in ("usm", "heading_speed_depth_pid", "waypoints", "event_script"):
        assert name in out
    assert main(["plugins", "show", "waypoints"]) == 0
    out = capsys.readouterr().out
    assert "capture_radius" in out and "[m]" in out and "publishes: DESIRED_HEADING" in out
    assert main(["plugins", "show", "heading_speed_depth_pid", "--example"]) == 0
    import yaml

    doc = yaml.safe_load(capsys.readouterr().out)
    assert doc["controllers"][0]["params"]["heading_kp"] == 1.2
    assert main(["plugins", "show", "waypoint"]) == 2
    assert "did you mean 'waypoints'" in capsys.readouterr().err
    assert main(["scenarios"]) == 0
    assert "demo_survey" in capsys.readouterr().out
