"""``marinesim moos MISSION.moos [NAME]`` as pAntler launches it starts without the command
line framework (typer and every sub-command's imports), and joins as the full CLI does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from marinesim.cli.moos_run import fast_argv
from marinesim.io.alog import read_alog

DATA = Path(__file__).resolve().parents[2] / "data" / "moos_live"
SRC = Path(__file__).resolve().parents[3] / "src"


def test_fast_argv_takes_the_pantler_convention_only() -> None:
    kw = fast_argv(["moos", "m.moos", "uSimMarine"])
    assert kw is not None and kw["mission"] == Path("m.moos") and kw["name"] == "uSimMarine"
    kw = fast_argv(["moos", "run", "m.moos", "--alias=sim", "-o", "x.alog", "--duration=5"])
    assert kw is not None and kw["alias"] == "sim" and kw["out"] == Path("x.alog")
    assert kw["duration"] == 5.0 and kw["name"] is None
    for other in (
        ["moos"],
        ["moos", "--help"],
        ["moos", "m.moos", "--help"],
        ["moos", "replay", "m.moos", "r.alog", "-o", "o.alog"],
        ["moos", "m.moos", "--scenario", "s.yaml"],
        ["moos", "m.moos", "--duration", "ten"],
        ["moos", "m.moos", "--duration"],
        ["moos", "a.moos", "b", "c"],
        ["run", "x.yaml"],
    ):
        assert fast_argv(other) is None, other


def test_launch_line_joins_without_the_cli_framework(fake_db, tmp_path: Path) -> None:  # noqa: ANN001
    db = fake_db("capF", warp=10.0)
    text = (DATA / "b2_usim_warp1.moos").read_text(encoding="utf-8")
    text = text.replace("ServerPort   = 9101", f"ServerPort   = {db.port}")
    text = text.replace("ServerHost   = localhost", "ServerHost   = 127.0.0.1")
    text = text.replace("MOOSTimeWarp = 1", "MOOSTimeWarp = 10")
    mission = tmp_path / "m.moos"
    mission.write_text(text, encoding="utf-8")
    code = (
        "import sys\n"
        "from marinesim.cli.main import main\n"
        f"rc = main(['moos', {str(mission)!r}, '--alias=uSimMarine', '--duration', '3',"
        f" '-o', {str(tmp_path / 'r.alog')!r}])\n"
        "print('RC', rc, 'typer' in sys.modules, 'click' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
    )
    assert "RC 0 False False" in out.stdout, out.stdout + out.stderr
    log = read_alog(tmp_path / "r.alog")
    assert len(log.numeric("NAV_X")[0]) >= 5  # 30 on time (3 MOOS s at AppTick 10); fewer when starved
    assert any(m.key == "NAV_X" for m in db.received("uSimMarine"))


@pytest.mark.parametrize("argv", [["moos", "--version"], ["version"]])
def test_other_commands_still_go_through_the_cli(argv: list[str], capsys) -> None:  # noqa: ANN001
    from marinesim.cli.main import main

    assert main(argv) == 0
    assert "marinesim" in capsys.readouterr().out
