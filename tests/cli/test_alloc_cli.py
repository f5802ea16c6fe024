"""``marinesim alloc report`` through the real entry point (exit codes, figures, errors)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from marinesim.cli.main import main

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "t200"


def _report(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    code = main(["alloc", "report", *args, "--fast", "--json"])
    out = capsys.readouterr().out
    assert code == 0
    return json.loads(out)


def test_report_bluerov2_heavy_16v(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MARINESIM_T200_DATA", raising=False)
    r = _report(capsys, "bluerov2_heavy", "--voltage", "16")
    assert r["t200_model"] == "cubic"
    assert [round(x, 4) for x in r["singular_values"]] == [2.0, 1.4142, 1.4142, 0.43, 0.3352, 0.236]
    assert r["condition"] == pytest.approx(8.4746, abs=1e-4)
    assert r["condition_scaled"] == pytest.approx(1.8220, abs=1e-4)
    assert r["tam"][5][0] == pytest.approx(0.1640, abs=1e-4)
    env = r["max_wrench"]["envelope"]
    assert env["X"]["pinv_pos"] == pytest.approx(112.9, abs=0.06)
    assert env["X"]["constrained_pos"] == pytest.approx(129.2, abs=0.06)
    assert env["Z"]["constrained_pos"] == pytest.approx(205.7, abs=0.06)
    assert env["Z"]["constrained_neg"] == pytest.approx(159.6, abs=0.06)
    assert env["N"]["constrained_neg"] == pytest.approx(30.6, abs=0.06)
    lim = r["max_wrench"]["current_limited"]
    for ax in "XYZKMN":
        assert lim[ax]["pinv_pos"] < env[ax]["pinv_pos"]
        assert lim[ax]["constrained_pos"] >= lim[ax]["pinv_pos"] - 1e-6


@pytest.mark.skipif(not DATA.is_dir(), reason="T200 data not available")
def test_report_with_measured_table(capsys: pytest.CaptureFixture[str]) -> None:
    r = _report(capsys, "bluerov2_heavy", "--voltage", "16", "--t200-data", str(DATA))
    assert r["t200_model"] == "table"
    lim = r["max_wrench"]["current_limited"]
    assert lim["X"]["pinv_pos"] == pytest.approx(85.5, abs=0.06)
    assert lim["Z"]["pinv_pos"] == pytest.approx(138.8, abs=0.06)
    assert lim["Z"]["pinv_neg"] == pytest.approx(109.6, abs=0.06)
    assert lim["N"]["pinv_pos"] == pytest.approx(20.3, abs=0.06)


@pytest.mark.skipif(not DATA.is_dir(), reason="T200 data not available")
def test_report_reads_blue_robotics_workbook(capsys: pytest.CaptureFixture[str]) -> None:
    # the published .xlsx gives the same table as the long CSV (force kgf → N at the reader)
    xlsx = DATA / "T200-Public-Performance-Data-10-20V-September-2019.xlsx"
    r = _report(capsys, "bluerov2_heavy", "--t200-data", str(xlsx))
    assert r["t200_model"] == "table"
    lim = r["max_wrench"]["current_limited"]
    assert lim["X"]["pinv_pos"] == pytest.approx(85.5, abs=0.06)
    assert lim["Z"]["pinv_neg"] == pytest.approx(109.6, abs=0.06)


def test_bad_workbook_is_a_data_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "t200.xlsx"
    bad.write_text("not a workbook")
    assert main(["alloc", "report", "bluerov2_heavy", "--t200-data", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}" in err and "cannot read the T200 workbook" in err


def test_misspelt_thruster_key_and_names_suggest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = "\n".join(
        f"  - {{name: t{i}, {'positon' if i == 2 else 'position'}: [{x}, {y}, 0.0], "
        f"direction: [0, 0, 1]}}"
        for i, (x, y) in enumerate([(0.1, 0.1), (0.1, -0.1), (-0.1, 0.1), (-0.1, -0.1)] * 2)
    )
    bad = tmp_path / "typo.yaml"
    bad.write_text(f"name: sub\nthrusters:\n{rows}\n")
    assert main(["alloc", "report", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:5:" in err and "thrusters.2.positon" in err
    assert "did you mean 'position'" in err
    assert main(["alloc", "report", "bluerov2_heavy", "--bounds", "symetric"]) == 2
    assert "did you mean 'symmetric'" in capsys.readouterr().err
    assert main(["alloc", "report", "bluerov2_heavy", "--failed", "m2_front_prt"]) == 2
    assert "did you mean 'm2_front_port'" in capsys.readouterr().err


def test_report_failed_motor(capsys: pytest.CaptureFixture[str]) -> None:
    r = _report(capsys, "bluerov2_heavy", "--voltage", "16", "--failed", "1")
    assert r["failed"] == ["m1_front_starboard"]
    assert r["condition"] == pytest.approx(8.57, abs=0.005)
    env = r["max_wrench"]["envelope"]
    assert env["X"]["constrained_pos"] == pytest.approx(72.7, abs=0.06)
    assert env["X"]["constrained_neg"] == pytest.approx(56.4, abs=0.06)


def test_report_text(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["alloc", "report", "bluerov2_heavy", "--voltage", "16", "--fast"])
    out = capsys.readouterr().out
    assert code == 0
    assert "condition number 8.4746 raw" in out
    assert "1.8220 with torque rows" in out
    assert "+129.2 / -129.2" in out


def test_unknown_vehicle_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["alloc", "report", "bluerov2_hevy", "--voltage", "16"])
    err = capsys.readouterr().err
    assert code == 2
    assert "did you mean 'bluerov2_heavy'" in err


@pytest.mark.parametrize("volts", ["9.5", "20.5"])
def test_voltage_out_of_range_exit_2(capsys: pytest.CaptureFixture[str], volts: str) -> None:
    code = main(["alloc", "report", "bluerov2_heavy", "--voltage", volts])
    err = capsys.readouterr().err
    assert code == 2
    assert "outside the T200 data range 10–20 V" in err


def test_bad_options_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["alloc", "report", "bluerov2_heavy", "--failed", "9"]) == 2
    assert "out of range" in capsys.readouterr().err
    assert main(["alloc", "report", "bluerov2_heavy", "--motor-limit", "0"]) == 2
    assert "motor-limit" in capsys.readouterr().err
    assert main(["alloc", "report", "bluerov2_heavy", "--bounds", "weird"]) == 2
    assert main(["alloc", "report", "bluerov2_heavy", "--t200-data", "/nonexistent"]) == 2
    assert "T200 table not found" in capsys.readouterr().err


def test_yaml_layout_and_located_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = "\n".join(
        f"  - {{name: t{i}, position: [{x}, {y}, 0.0], yaw: {yaw}, pitch: {p}}}"
        for i, (x, y, yaw, p) in enumerate(
            [
                (0.3, 0.27, -0.785398, 0),
                (0.3, -0.27, 0.785398, 0),
                (-0.3, 0.27, 0.785398, 0),
                (-0.3, -0.27, -0.785398, 0),
                (0.13, 0.27, 0, 1.570796),
                (0.13, -0.27, 0, 1.570796),
                (-0.13, 0.27, 0, 1.570796),
                (-0.13, -0.27, 0, 1.570796),
            ]
        )
    )
    good = tmp_path / "sub.yaml"
    good.write_text(f"name: sub\nthrusters:\n{rows}\n")
    r = _report(capsys, str(good), "--voltage", "14.8")
    assert r["vehicle"] == "sub" and r["rank"] == 6
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"name: sub\ncharacteristic_lenght: 0.3\nthrusters:\n{rows}\n")
    assert main(["alloc", "report", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2:1: characteristic_lenght" in err
    assert "did you mean 'characteristic_length'" in err
