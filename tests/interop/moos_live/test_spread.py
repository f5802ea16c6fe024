"""Closed-loop judging metrics (README §2.3) reproduce the recorded ``spread.json`` figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from marinesim.cli.main import main
from marinesim.interop.moos.spread import compare_tracks, mission_track

SHARED = Path(__file__).resolve().parents[4] / "shared" / "reference" / "moos_live" / "missions"
pytestmark = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared not present")
KEYS = (
    "max_dist_equal_along_track_m",
    "rms_dist_equal_along_track_m",
    "hausdorff_m",
    "max_dist_equal_time_from_motion_start_m",
    "path_length_diff_m",
)


@pytest.mark.parametrize(
    ("folder", "stem"), [("survey", "survey_usm"), ("survey_v22", "survey_v22")]
)
def test_metrics_match_spread_json(folder: str, stem: str) -> None:
    spread = json.loads((SHARED / folder / "spread.json").read_text(encoding="utf-8"))
    tracks = {i: mission_track(SHARED / folder / f"{stem}_run{i}.alog") for i in (1, 2, 3)}
    for i, run in enumerate(spread["runs"], start=1):
        assert tracks[i].duration_from_motion == pytest.approx(
            run["duration_from_motion_start_s"], abs=1e-9
        )
        assert tracks[i].path_length == pytest.approx(run["path_length_to_complete_m"], abs=1e-9)
    for pair in spread["pairs"]:
        a, b = pair["runs"]
        got = compare_tracks(tracks[a], tracks[b])
        for k in KEYS:
            # the RMS of one pair differs by 6e-6 m (how samples at equal s are resolved)
            tol = 1e-5 if k.startswith("rms") else 1e-9
            assert got[k] == pytest.approx(pair[k], abs=tol), k


def test_cli_compare(capsys: pytest.CaptureFixture[str]) -> None:
    d = SHARED / "survey"
    rc = main(["moos", "compare", str(d / "survey_usm_run1.alog"), str(d / "survey_usm_run2.alog"),
               str(d / "survey_usm_run3.alog"), "--json"])  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert out["runs"]["survey_usm_run2.alog"]["hausdorff_m"] == pytest.approx(0.14789134795345693)
    assert out["duration_from_motion_s"] == pytest.approx(220.5398)
