"""``marinesim moos replay``: the recorded survey missions replayed open loop into usm /
usm_v22 reproduce the real uSimMarine's NAV_* to the log's rounding with the delivery
schedule, and to the README's plain-rule figures without it (README §2.5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from marinesim.cli.main import main
from marinesim.interop.moos.replay import TOLERANCE_SCHEDULE, replay_alog
from marinesim.io.alog import read_alog

SHARED = Path(__file__).resolve().parents[4] / "shared" / "reference" / "moos_live" / "missions"
pytestmark = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared not present")

SURVEY = SHARED / "survey" / "survey.moos"
V22 = SHARED / "survey_v22" / "survey_v22.moos"

#: README §2.5, schedule replay (NAV_X, NAV_Y [m], NAV_HEADING [deg]), printed with 2 digits.
README_SCHEDULE = {
    1: (1.0e-4, 9.3e-5, 6.2e-4),
    2: (1.6e-4, 2.0e-4, 1.3e-3),
    3: (2.0e-5, 2.5e-5, 2.0e-4),
}
#: README §2.5, plain rule: NAV_HEADING [deg] per run.
README_PLAIN_HEADING = {
    ("survey", 1): 0.21, ("survey", 2): 2.2, ("survey", 3): 2.0,
    ("survey_v22", 1): 1.2, ("survey_v22", 2): 0.96, ("survey_v22", 3): 0.38,
}  # fmt: skip


def _unit(x: float) -> float:
    """One unit in the last of the two printed significant digits."""
    import math

    return 10 ** (math.floor(math.log10(x)) - 1)


@pytest.mark.parametrize("run", [1, 2, 3])
def test_schedule_replay_reproduces_the_log(run: int) -> None:
    res = replay_alog(SURVEY, SHARED / "survey" / f"survey_usm_run{run}.alog")
    assert res.rule == "delivery"
    assert res.passed, res.report()
    x, y, h = README_SCHEDULE[run]
    d = res.deviations
    for got, want in ((d["NAV_X"], x), (d["NAV_Y"], y), (d["NAV_HEADING"], h)):
        assert abs(got - want) <= _unit(want), (got, want)
    assert d["NAV_SPEED"] < 1e-12  # "exact"
    for k in ("NAV_X", "NAV_Y", "NAV_HEADING", "NAV_LAT", "NAV_LONG"):
        assert d[k] <= TOLERANCE_SCHEDULE[k.split("_", 1)[1]]
    assert res.compared > 2200 and res.t_end == pytest.approx(
        next(
            r.t
            for r in read_alog(SHARED / "survey" / f"survey_usm_run{run}.alog").records
            if r.var == "MISSION" and r.value == "complete"
        )
    )


@pytest.mark.parametrize(
    ("folder", "run"), [("survey", 1), ("survey", 2), ("survey", 3), ("survey_v22", 1),
                        ("survey_v22", 2), ("survey_v22", 3)]
)  # fmt: skip
def test_plain_rule_matches_the_readme_spread(folder: str, run: int) -> None:
    mission = SURVEY if folder == "survey" else V22
    stem = "survey_usm" if folder == "survey" else "survey_v22"
    res = replay_alog(mission, SHARED / folder / f"{stem}_run{run}.alog", delivery="none")
    assert res.rule == "first-iteration-after"
    want = README_PLAIN_HEADING[(folder, run)]
    assert abs(res.deviations["NAV_HEADING"] - want) <= _unit(want)
    assert res.passed, res.report()


def test_cli_replay_json_and_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    alog = SHARED / "survey" / "survey_usm_run1.alog"
    rc = main(["moos", "replay", str(SURVEY), str(alog), "-o", str(tmp_path / "o.alog"), "--json"])
    out, err = capsys.readouterr()
    assert rc == 0
    devs = json.loads(out)
    assert set(devs) >= {"NAV_X", "NAV_Y", "NAV_HEADING", "NAV_SPEED"} and devs["NAV_X"] < 2e-4
    assert "delivery schedule survey_usm_run1.delivery.csv" in err
    produced = read_alog(tmp_path / "o.alog")
    assert produced.logstart == read_alog(alog).logstart
    assert len(produced.numeric("NAV_X")[0]) == len(read_alog(alog).numeric("NAV_X")[0])
    rc = main(["moos", "replay", str(V22), str(SHARED / "survey_v22" / "survey_v22_run1.alog"),
               "-o", str(tmp_path / "v.csv")])  # fmt: skip
    out, _ = capsys.readouterr()
    assert rc == 0 and "first-iteration-after rule" in out
    assert (tmp_path / "v.csv").read_text(encoding="utf-8").startswith("t,NAV_X,NAV_Y")


def test_wrong_model_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """turn_rate 60 instead of 70 (README §2.4): the sharp open-loop test catches it."""
    text = SURVEY.read_text(encoding="utf-8").replace("turn_rate", "turn_rate = 60 //", 1)
    mission = tmp_path / "survey.moos"
    mission.write_text(text, encoding="utf-8")
    alog = SHARED / "survey" / "survey_usm_run1.alog"
    rc = main(["moos", "replay", str(mission), str(alog), "-o", str(tmp_path / "o.alog"),
               "--delivery", str(alog.with_name("survey_usm_run1.delivery.csv"))])  # fmt: skip
    err = capsys.readouterr().err
    assert rc == 1 and "beyond the tolerance" in err and "NAV_HEADING" in err


def test_bad_inputs_are_clear_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    alog = SHARED / "survey" / "survey_usm_run1.alog"
    assert main(["moos", "replay", str(SURVEY), str(alog), "-o", str(tmp_path / "o.txt")]) == 2
    assert "use a .alog or .csv" in capsys.readouterr().err
    assert main(["moos", "replay", str(SURVEY), str(tmp_path / "no.alog"), "-o",
                 str(tmp_path / "o.alog")]) == 2  # fmt: skip
    assert "no.alog" in capsys.readouterr().err
