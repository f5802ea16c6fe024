"""``marinesim vehicles`` and ``vehicles show NAME [--json]``."""

from __future__ import annotations

import json

import pytest

from marinesim.cli.main import main


def test_list_names_every_preset_with_source(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["vehicles"]) == 0
    out = capsys.readouterr().out
    for name in (
        "remus100",
        "otter",
        "rexrov",
        "lauv",
        "bluerov2_heavy_vonbenzon2022",
        "bluerov2_heavy_wu2018",
    ):
        assert name in out
    assert out.count("source:") >= 7
    assert "[unverified]" in out


def test_show_json_has_pvs_constants(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["vehicles", "show", "remus100", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["derived"]["W"] == pytest.approx(304.3982666126004, rel=1e-15)
    assert "PythonVehicleSimulator" in data["source"]


def test_show_text_fossen(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["vehicles", "show", "rexrov"]) == 0
    out = capsys.readouterr().out
    assert "mass: 1862.87" in out and "derived:" in out


def test_unknown_name_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["vehicles", "show", "remus10"]) == 2
    assert "did you mean 'remus100'" in capsys.readouterr().err


def test_verify_pvs_folder(capsys: pytest.CaptureFixture[str]) -> None:
    from marinesim.reference.runner import shipped_root

    assert main(["verify", str(shipped_root() / "pvs")]) == 0
    assert "2 passed, 0 failed" in capsys.readouterr().out
