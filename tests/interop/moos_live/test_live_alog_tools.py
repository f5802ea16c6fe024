"""Opt-in (``pytest -m live``): marinesim's ``.alog`` files read by the real MOOS-IvP log
tools, built without a GUI from the same tree as the other live programs (``alogsplit``,
``aloggrep``, ``alogscan`` and ``alogcheck`` in ``MARINESIM_MOOS_BIN``; skipped when absent).

``alogsplit`` is the split alogview runs when it opens a log (lib_logutils ``SplitHandler``):
the per-variable files and ``summary.klog`` that alogview's loader (``ALogDataBroker``) reads
for the time range (``logstart``, ``logtmin``, ``logtmax``), the vehicle's name (from
``DB_TIME``), type and length (from ``NODE_REPORT_LOCAL``), and ``VISUALS.klog``, where a
fleet's ``NODE_REPORT`` posts become the ``VIEW_VESSEL`` objects alogview draws.  The alogview
GUI itself runs in ``test_live_alogview.py``.

The logs: ``marinesim usm run -o X.alog``, ``marinesim run --format alog`` and
``marinesim moos`` (against the stand-in MOOSDB: the log is the same with the real one).
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
from pathlib import Path

import pytest

from marinesim.cli.main import main

BIN = Path(os.environ.get("MARINESIM_MOOS_BIN", "/nonexistent"))
TOOLS = ("alogsplit", "aloggrep", "alogscan", "alogcheck")
REPO = Path(__file__).resolve().parents[3]
DATA = REPO / "tests" / "data" / "moos_live"
pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(
        not all((BIN / t).is_file() for t in TOOLS),
        reason="MOOS-IvP log tools (alogsplit, aloggrep, alogscan, alogcheck) not in "
        "MARINESIM_MOOS_BIN",
    ),
]
REPORT_FIELDS = ("NAME", "X", "Y", "SPD", "HDG", "DEP", "TYPE", "TIME", "LENGTH")


def _usm_log(tmp: Path) -> Path:
    ex = REPO / "docs" / "examples"
    out = tmp / "usm.alog"
    rc = main(["usm", "run", str(ex / "mission.moos"), "--duration", "60", "--script",
               str(ex / "events.txt"), "-o", str(out), "-q"])  # fmt: skip
    assert rc == 0
    return out


def _run_log(tmp: Path) -> Path:
    ex = REPO / "docs" / "examples"
    rc = main(["run", str(ex / "harbour_survey.yaml"), "--format", "alog", "--set",
               "time.end=60", "--no-plot", "-o", str(tmp / "run"), "-q"])  # fmt: skip
    assert rc == 0
    return tmp / "run" / "log.alog"


def _moos_log(tmp: Path, fake_db) -> Path:  # noqa: ANN001
    db = fake_db("alpha", warp=10.0)
    text = (DATA / "b2_usim_warp1.moos").read_text(encoding="utf-8")
    text = text.replace("ServerPort   = 9101", f"ServerPort   = {db.port}")
    text = text.replace("ServerHost   = localhost", "ServerHost   = 127.0.0.1")
    text = text.replace("MOOSTimeWarp = 1", "MOOSTimeWarp = 10")
    (tmp / "m.moos").write_text(text, encoding="utf-8")
    out = tmp / "moos.alog"
    box: dict[str, int] = {}
    th = threading.Thread(target=lambda: box.update(rc=main(
        ["moos", str(tmp / "m.moos"), "uSimMarine", "--duration", "20", "-o", str(out)])))  # fmt: skip
    th.start()
    while th.is_alive():
        th.join(0.2)
        if db.client("uSimMarine") is not None and "t" not in box:
            db.inject("DESIRED_THRUST", 40.0)
            box["t"] = 1
    assert box.get("rc") == 0
    return out


def _tool(*args: str, cwd: Path) -> str:
    out = subprocess.run([str(BIN / args[0]), *args[1:]], capture_output=True, text=True,
                         timeout=120, cwd=cwd)  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


@pytest.mark.parametrize("kind", ["usm", "run", "moos"])
def test_moos_log_tools_read_marinesims_alogs(kind: str, tmp_path: Path, fake_db) -> None:  # noqa: ANN001
    log = {"usm": _usm_log, "run": _run_log}.get(kind, lambda t: _moos_log(t, fake_db))(tmp_path)
    text = log.read_text(encoding="utf-8")
    logstart = float(re.search(r"^%% LOGSTART\s+(\S+)", text, re.M).group(1))  # type: ignore[union-attr]
    times = [float(line.split()[0]) for line in text.splitlines() if line and line[0] != "%"]
    assert logstart > 1e9  # a real (MOOS) time, not 0
    # alogview's split: every line parsed, the time range from LOGSTART, the vehicle's type
    _tool("alogsplit", log.name, cwd=log.parent)
    split = log.parent / (log.stem + "_alvtmp")
    summary = dict(
        line.split("=", 1) for line in (split / "summary.klog").read_text().splitlines()
        if "=" in line and not line.startswith("var=")
    )  # fmt: skip
    assert float(summary["logstart"]) == pytest.approx(logstart, abs=1e-6)
    assert float(summary["logtmin"]) == pytest.approx(min(times), abs=1e-5)
    assert float(summary["logtmax"]) == pytest.approx(max(times), abs=1e-5)
    klog_lines = sum(len(p.read_text().splitlines()) for p in split.glob("*.klog")
                     if p.name not in ("summary.klog", "VISUALS.klog"))  # fmt: skip
    assert klog_lines == len(times)  # no line lost or misread
    report = "NODE_REPORT" if kind == "run" else "NODE_REPORT_LOCAL"
    if kind == "run":  # two vehicles in one log: alogview draws each from its NODE_REPORT
        visuals = (split / "VISUALS.klog").read_text().splitlines()
        labels = {m.group(1) for m in (re.search(r"VIEW_VESSEL\s+\S+\s+label=([^,]+)", v)
                                       for v in visuals) if m}  # fmt: skip
        assert labels == {"auv[0]", "auv[1]"}, visuals[:3]
        assert summary["vname"] == ""  # no DB_TIME: the log is nobody's own
    else:  # one vehicle: typed by its NODE_REPORT_LOCAL
        assert summary["vtype"] == "kayak" and float(summary["vlength"]) == 4.0
    if kind == "usm":  # named after its MOOSDB's DB_TIME (no Community: the process)
        assert summary["vname"] == "uSimMarine"
    reports = (split / f"{report}.klog").read_text().splitlines()
    assert len(reports) >= 50
    fields = dict(kv.split("=", 1) for kv in reports[-1].split(None, 3)[3].strip().split(","))
    assert set(REPORT_FIELDS) <= set(fields), fields
    assert float(fields["TIME"]) == pytest.approx(
        logstart + float(reports[-1].split()[0]), abs=0.02
    )
    # the other tools on the whole log
    scan = _tool("alogscan", log.name, "--nocolors", cwd=log.parent)
    assert re.search(rf"{report}\s+\d+", scan), scan
    grep = _tool("aloggrep", log.name, report, "--final", "-q", cwd=log.parent)
    assert "NAME=" in grep
    check = _tool("alogcheck", log.name, "-p", "NAV_SPEED > 0.5", cwd=log.parent)
    assert "PASSED" in check, check
