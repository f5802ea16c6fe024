"""``marinesim moos`` app conventions: --version, -e/--example, -i/--interface, --alias and
the MOOS calling convention ``APP MISSION.moos [NAME]`` (as pAntler launches apps)."""

from __future__ import annotations

from pathlib import Path

import pytest

from marinesim.cli.main import main
from marinesim.io.alog import read_alog

DATA = Path(__file__).resolve().parents[2] / "data" / "moos_live"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_version_example_interface(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _run(capsys, "moos", "--version")
    assert rc == 0 and out.startswith("marinesim ") and "moos" in out
    rc, out, _ = _run(capsys, "moos", "-i")
    assert rc == 0 and "DESIRED_THRUST" in out and "USM_X" in out  # default prefix
    rc, out, _ = _run(capsys, "moos", "--variant", "usm_v22", "--interface")
    assert rc == 0 and "uSimMarineV22" in out
    rc, out, _ = _run(capsys, "moos", "--alias", "uSimMarine_kayak", "-e")
    assert rc == 0 and "ProcessConfig = uSimMarine_kayak" in out
    rc, _, err = _run(capsys, "moos", "--variant", "usm_v99", "-i")
    assert rc == 2 and "--variant" in err


def _mission(tmp_path: Path, port: int) -> Path:
    text = (DATA / "b2_usim_warp1.moos").read_text(encoding="utf-8")
    text = text.replace("ServerPort   = 9101", f"ServerPort   = {port}")
    text = text.replace("MOOSTimeWarp = 1", "MOOSTimeWarp = 10")
    p = tmp_path / "m.moos"
    p.write_text(text, encoding="utf-8")
    return p


@pytest.mark.parametrize("how", ["positional", "option"])
def test_alias_names_the_process(fake_db, tmp_path: Path, how: str, capsys) -> None:  # noqa: ANN001
    db = fake_db("capB2", warp=10.0)
    mission = _mission(tmp_path, db.port)
    name = ["uSimMarine_2"] if how == "positional" else ["--alias=uSimMarine_2"]
    rc, _, err = _run(
        capsys, "moos", str(mission), *name, "--duration", "1.5", "-o", str(tmp_path / "l.alog")
    )
    assert rc == 0, err
    assert db.client("uSimMarine_2") is not None
    assert "USIMMARINE_2_STATUS" in {m.key for m in db.received("uSimMarine_2")}
    assert read_alog(tmp_path / "l.alog").records[0].src == "uSimMarine_2"
    assert "iterations" in err and "0 malformed" in err


def test_log_must_be_alog(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mission = _mission(tmp_path, 9)
    rc, _, err = _run(capsys, "moos", str(mission), "-o", str(tmp_path / "l.csv"))
    assert rc == 2 and ".alog" in err


def test_bad_port_names_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "m.moos"
    p.write_text(
        (DATA / "b2_usim_warp1.moos").read_text(encoding="utf-8").replace("9101", "ninety"),
        encoding="utf-8",
    )
    rc, _, err = _run(capsys, "moos", str(p), "--duration", "1")
    assert rc == 2 and "m.moos:4" in err and "ServerPort" in err
