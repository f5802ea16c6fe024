"""``marinesim gym list|show|check`` from the command line entry point."""

from __future__ import annotations

import pytest

from marinesim.cli.main import main


def test_list_shows_every_environment(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gym", "list"]) == 0
    out = capsys.readouterr().out
    for env_id in (
        "marinesim/UsmWaypoint-v0",
        "marinesim/Remus100DepthHeading-v0",
        "marinesim/BlueRov2StationKeeping-v0",
        "marinesim/SurftrakAltitude-v0",
        "marinesim/Survey-v0",
    ):
        assert env_id in out


def test_show_lists_units_and_reward(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gym", "show", "marinesim/Remus100DepthHeading-v0"]) == 0
    out = capsys.readouterr().out
    assert "depth_err [m]" in out and "q [rad/s]" in out and "reward:" in out


@pytest.mark.parametrize("env_id", ["marinesim/UsmWaypoint-v0", "marinesim/Survey-v0"])
def test_check_passes(env_id: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gym", "check", env_id, "--steps", "30"]) == 0
    out = capsys.readouterr().out
    assert "FAIL" not in out and out.count("PASS") >= 2


def test_unknown_environment_is_exit_2_with_a_suggestion(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["gym", "check", "marinesim/UsmWaypont-v0"]) == 2
    err = capsys.readouterr().err
    assert "did you mean 'marinesim/UsmWaypoint-v0'" in err and "Traceback" not in err
