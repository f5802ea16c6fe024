"""``marinesim vehicles`` and ``vehicles show NAME [--json]``."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

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


LAUV_URDF = Path(__file__).parents[1] / "interop" / "data" / "lauv_actuators.urdf"


def test_actuators_import_prints_reloadable_yaml(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import yaml

    from marinesim.interop.uuv import load_actuators

    assert main(["vehicles", "actuators", str(LAUV_URDF)]) == 0
    out, err = capsys.readouterr()
    assert "warning:" in err and ":17:7: thrusters.0.clamp_min" in err and "disabled" in err
    data = yaml.safe_load(out)
    thr = data["thrusters"][0]
    # the swapped LAUV clamp (3000 / -3000) is written as "no clamp"; the thrust limit stays
    assert "clamp_min" not in thr and (thr["thrust_min"], thr["thrust_max"]) == (-50.0, 50.0)
    assert thr["rpy"][2] == pytest.approx(-3.141592653589793) and len(data["fins"]) == 2
    (tmp_path / "lauv.yaml").write_text(out, encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # reloads with no warning
        again = load_actuators(tmp_path / "lauv.yaml")
    assert again.fins == load_actuators(LAUV_URDF).fins
    assert again.thrusters[0].clamp_min is None and again.thrusters[0].thrust_max == 50.0


def test_actuators_import_errors_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "thr.xml"
    bad.write_text(
        '<plugin name="t" filename="libuuv_thruster_ros_plugin.so">\n'
        "  <thrustMaxx>100</thrustMaxx>\n"
        "  <dynamics><type>FirstOrder</type><timeConstant>0.05</timeConstant></dynamics>\n"
        "  <conversion><type>Basic</type><rotorConstant>0.00031</rotorConstant></conversion>\n"
        "</plugin>\n",
        encoding="utf-8",
    )
    assert main(["vehicles", "actuators", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2:3: thrustMaxx" in err and "did you mean <thrustMax>" in err
    assert "Traceback" not in err
    assert main(["vehicles", "actuators", str(tmp_path / "missing.xml")]) == 2
    assert main(["vehicles", "actuators", str(LAUV_URDF), "--strict"]) == 2
    assert "strict" in capsys.readouterr().err
