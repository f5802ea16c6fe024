"""The real alogview draws the vehicles of marinesim's ``.alog`` files (opt-in, ``-m live``).

alogview (MOOS-IvP, built with its GUI: FLTK and OpenGL) runs under ``Xvfb``; the screen is
read back with ``xwd``.  Each log is drawn as written and again with the lines a vehicle is
drawn from taken out; the two screens must differ (and one log drawn twice must not), so the
test fails when alogview draws nothing from those lines:

* two vehicles in one log (``marinesim run --format alog``): their ``NODE_REPORT`` posts,
  which alogview draws as one labelled vessel each;
* one vehicle (``marinesim usm run -o X.alog``): its ``DB_TIME`` line, after whose source
  (``MOOSDB_<community>``) alogview names (labels) the vehicle it draws from ``NAV_*``.

Only the map pane is compared: the time plots below it name the vehicle in their titles.

Needs ``alogview`` in ``MARINESIM_MOOS_BIN``, ``Xvfb`` and ``xwd`` on PATH and a background
image (alogview draws no vehicle without one): ``MARINESIM_ALOGVIEW_TIFF``, or
``ivp/data/AerialMIT.tif`` beside that ``bin`` in a MOOS-IvP source tree.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import time
from pathlib import Path

import pytest

from marinesim.cli.main import main

BIN = Path(os.environ.get("MARINESIM_MOOS_BIN", "/nonexistent"))
TIFF = Path(os.environ.get("MARINESIM_ALOGVIEW_TIFF", BIN.parent / "ivp" / "data" / "AerialMIT.tif"))
EXAMPLES = Path(__file__).resolve().parents[3] / "docs" / "examples"

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(
        not ((BIN / "alogview").is_file() and shutil.which("Xvfb") and shutil.which("xwd")
             and TIFF.is_file()),
        reason="alogview in MARINESIM_MOOS_BIN, Xvfb, xwd and a background tiff "
        "(MARINESIM_ALOGVIEW_TIFF) are needed",
    ),  # fmt: skip
]


@pytest.fixture(scope="module")
def display():  # noqa: ANN201
    """A private X server (``Xvfb -displayfd``: it picks a free display number)."""
    r, w = os.pipe()
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(w), "-screen", "0", "1400x900x24", "-nolisten", "tcp"],
        pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    os.close(w)
    with os.fdopen(r) as fh:
        number = fh.readline().strip()
    assert number, "Xvfb did not report its display"
    yield f":{number}"
    xvfb.terminate()
    xvfb.wait(10)


def _screen(display: str) -> bytes:
    """The pixels of the map pane (rows 50–620 of the 1400×900 root window: below the menu
    bar, above the time plots, whose titles name the vehicle too), from an ``xwd`` dump."""
    out = subprocess.run(["xwd", "-root", "-silent", "-display", display], capture_output=True,
                         check=True, timeout=30)  # fmt: skip
    head = struct.unpack(">25I", out.stdout[:100])  # XWDFileHeader: 25 big-endian CARD32
    size, height, line, ncolors = head[0], head[5], head[12], head[19]
    assert height == 900, head
    pixels = out.stdout[size + 12 * ncolors :]
    return pixels[50 * line : 620 * line]


def _draw(log: Path, nowtime: float, display: str) -> bytes:
    """The screen once alogview shows ``log`` at ``nowtime`` and has stopped changing."""
    env = {**os.environ, "DISPLAY": display}
    proc = subprocess.Popen(
        [str(BIN / "alogview"), log.name, str(TIFF), f"--nowtime={nowtime:g}"],
        cwd=log.parent, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        time.sleep(3.0)
        last, deadline = b"", time.monotonic() + 30.0
        while time.monotonic() < deadline:
            assert proc.poll() is None, f"alogview exited with {proc.returncode} on {log}"
            shot = _screen(display)
            if shot == last:
                return shot
            last = shot
            time.sleep(1.0)
        raise AssertionError(f"alogview's screen did not settle on {log}")
    finally:
        proc.terminate()
        proc.wait(10)


def _without(log: Path, var: str) -> Path:
    """A copy of ``log`` without its ``var`` lines (in a folder of its own: alogview's cache)."""
    out = log.parent / f"no_{var}" / log.name
    out.parent.mkdir()
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
    out.write_text("".join(x for x in lines if x.split()[1:2] != [var]), encoding="utf-8")
    return out


def test_two_vehicles_are_drawn_from_their_node_reports(tmp_path: Path, display: str) -> None:
    rc = main(["run", str(EXAMPLES / "harbour_survey.yaml"), "--format", "alog", "--set",
               "time.end=60", "--no-plot", "-o", str(tmp_path / "run"), "-q"])  # fmt: skip
    assert rc == 0
    log = tmp_path / "run" / "log.alog"
    drawn = _draw(log, 55.0, display)
    assert _draw(log, 55.0, display) == drawn  # the same log, the same screen
    assert _draw(_without(log, "NODE_REPORT"), 55.0, display) != drawn


def test_one_vehicle_is_named_after_its_db_time(tmp_path: Path, display: str) -> None:
    rc = main(["usm", "run", str(EXAMPLES / "mission.moos"), "--duration", "60", "--script",
               str(EXAMPLES / "events.txt"), "-o", str(tmp_path / "usm.alog"), "-q"])  # fmt: skip
    assert rc == 0
    log = tmp_path / "usm.alog"
    drawn = _draw(log, 40.0, display)
    assert _draw(_without(log, "DB_TIME"), 40.0, display) != drawn
