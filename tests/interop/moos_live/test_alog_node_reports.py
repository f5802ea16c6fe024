"""The ``.alog`` of ``marinesim moos`` is one the MOOS tools can draw: ``NODE_REPORT_LOCAL``
as pNodeReporter writes it (alogview and pMarineViewer draw vehicles from it), a real
``LOGSTART``, and the mail (DESIRED_*) beside the posts."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from marinesim.core.alog import moos_number, node_report
from marinesim.interop.moos.app import UsmMoosApp, moos_settings
from marinesim.interop.moos.files import load_usm_config
from marinesim.io.alog import read_alog

DATA = Path(__file__).resolve().parents[2] / "data" / "moos_live"


def _fields(text: str) -> dict[str, str]:
    return dict(kv.split("=", 1) for kv in text.split(","))


def test_number_format_is_moos_ivps() -> None:
    assert moos_number(10.0, 2) == "10"
    assert moos_number(0.5, 2) == "0.5"
    assert moos_number(-0.001, 2) == "0"
    assert moos_number(100, 2) == "100"
    assert moos_number(42.358456123, 8) == "42.35845612"


def test_node_report_fields_in_pnodereporters_order() -> None:
    text = node_report(
        name="survey", x=0, y=-10, speed=0, heading=180, depth=0, moos_time=1.5e9 + 0.123,
        lat=42.35836607, lon=-71.08758901, mode="NOHELM-EVER", index=3,
    )  # fmt: skip
    assert list(_fields(text)) == [
        "NAME", "X", "Y", "SPD", "HDG", "DEP", "LAT", "LON", "TYPE", "MODE", "INDEX", "YAW",
        "TIME", "LENGTH",
    ]  # fmt: skip
    f = _fields(text)
    assert f["Y"] == "-10" and f["HDG"] == "180" and f["YAW"] == "-1.5707963"
    assert f["TIME"] == "1500000000.12" and f["TYPE"] == "kayak" and f["LENGTH"] == "4"


def test_moos_log_has_node_reports_logstart_and_mail(fake_db, tmp_path: Path) -> None:  # noqa: ANN001
    warp = 10.0
    db = fake_db("capN", warp=warp)
    text = (DATA / "b2_usim_warp1.moos").read_text(encoding="utf-8")
    text = text.replace("ServerPort   = 9101", f"ServerPort   = {db.port}")
    text = text.replace("ServerHost   = localhost", "ServerHost   = 127.0.0.1")
    text = text.replace("MOOSTimeWarp = 1", f"MOOSTimeWarp = {warp:g}")
    text += "\nProcessConfig = pNodeReporter\n{\n  platform_type = UUV\n  platform_length = 3\n}\n"
    mission = tmp_path / "m.moos"
    mission.write_text(text, encoding="utf-8")
    loaded = load_usm_config(mission, compat="moos", block="uSimMarine")
    app = UsmMoosApp(loaded, moos_settings(loaded), log_path=tmp_path / "r.alog", say=print)
    box: dict = {}
    th = threading.Thread(
        target=lambda: box.setdefault("rep", app.run(stop=threading.Event(), duration=6.0)),
        daemon=True,
    )
    t_launch = time.time()
    th.start()
    deadline = time.monotonic() + 10
    while db.client("uSimMarine") is None and time.monotonic() < deadline:
        time.sleep(0.01)
    t_joined = time.time()
    time.sleep(0.15)
    db.inject("DESIRED_THRUST", 40.0)
    th.join(20)
    assert "rep" in box
    log = read_alog(tmp_path / "r.alog")
    # a real LOGSTART: the MOOS time (UNIX time x warp) at start-up
    assert t_launch * warp <= log.logstart <= t_joined * warp + 1.0
    assert log.series("DESIRED_THRUST")[1] == [40.0]
    tx, xs = log.numeric("NAV_X")
    ty, ys = log.numeric("NAV_Y")
    ts, sp = log.numeric("NAV_SPEED")
    tr, reports = log.series("NODE_REPORT_LOCAL")
    assert len(reports) == len(tx) > 40  # one report per NAV record
    for k in (0, len(reports) // 2, -1):
        f = _fields(reports[k])
        assert f["NAME"] == "capB2"  # the mission's Community, as pNodeReporter
        assert f["TYPE"] == "UUV" and f["LENGTH"] == "3"
        assert tr[k] == pytest.approx(tx[k], abs=1e-5)
        assert float(f["X"]) == pytest.approx(xs[k], abs=0.006)
        assert float(f["Y"]) == pytest.approx(ys[k], abs=0.006)
        assert float(f["SPD"]) == pytest.approx(sp[k], abs=0.006)
        assert float(f["TIME"]) == pytest.approx(log.logstart + tr[k], abs=0.006)
        assert "LAT" in f and "LON" in f
    assert float(_fields(reports[-1])["SPD"]) > 1.0  # the mail moved the vehicle
