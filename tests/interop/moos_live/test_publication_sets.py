"""Every variable marinesim posts as uSimMarine / uSimMarineV22, per NAV packet and over a
session, against the recorded captures of the real programs (``moos_live/captures``).

The real uSimMarineV22 posts all 15 NAV variables (its embedded PID engine has depth control
on by default), and pMarinePIDV22 waits for a first NAV_PITCH before it acts: a missing
publication is a mission that never moves.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from pathlib import Path

import pytest

from marinesim.interop.moos.app import UsmMoosApp, moos_settings
from marinesim.interop.moos.files import load_usm_config

DATA = Path(__file__).resolve().parents[2] / "data" / "moos_live"
CAPTURES = Path(__file__).resolve().parents[4] / "shared" / "reference" / "moos_live" / "captures"

#: (capture, block of the mission file, warp)
CASES = [
    ("b2_usim_warp1", "uSimMarine", 1.0),
    ("d_plogger", "uSimMarine", 1.0),
    ("b_usimv22_warp1", "uSimMarineV22", 1.0),
    ("c_usimv22_warp10", "uSimMarineV22", 10.0),
]


def _per_iteration(keys: list[str]) -> tuple[str, ...]:
    """The NAV publications of one packet (status, appcast and the start-up summaries ride
    along in some)."""
    once = {"APPCAST", "USM_FSUMMARY", "USM_DRIFT_SUMMARY"}
    return tuple(k for k in keys if not k.endswith("_STATUS") and k not in once)


def _recorded(capture: str) -> tuple[set[str], Counter[tuple[str, ...]]]:
    if not CAPTURES.is_dir():
        pytest.skip("../shared not present")
    packets: list[list[dict]] = []
    for line in (CAPTURES / f"{capture}.decoded.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if r.get("direction") != "client->db" or not r.get("client", "").startswith("uSim"):
            continue
        if r.get("pkt_index") == 0:
            packets.append([])
        if packets:
            packets[-1].append(r)
    every = {r["key"] for p in packets for r in p if r.get("type") == "N"}
    nav = Counter(
        _per_iteration([r["key"] for r in p if r.get("type") == "N"])
        for p in packets
        if any(r.get("type") == "N" and r["key"] == "NAV_X" for r in p)
    )
    return every, nav


def _ours(tmp_path: Path, fake_db, block: str, warp: float) -> tuple[set[str], Counter]:  # noqa: ANN001
    db = fake_db("capX", warp=warp)
    text = (DATA / "b2_usim_warp1.moos").read_text(encoding="utf-8")
    text = text.replace("ServerPort   = 9101", f"ServerPort   = {db.port}")
    text = text.replace("ServerHost   = localhost", "ServerHost   = 127.0.0.1")
    text = text.replace("MOOSTimeWarp = 1", f"MOOSTimeWarp = {warp:g}")
    mission = tmp_path / "m.moos"
    mission.write_text(text, encoding="utf-8")
    loaded = load_usm_config(mission, compat="moos", block=block)
    app = UsmMoosApp(loaded, moos_settings(loaded), log_path=None, say=lambda s: None)
    box: dict = {}

    def target() -> None:
        box["report"] = app.run(stop=threading.Event(), connect_retry=3.0, duration=1.6 * warp)

    th = threading.Thread(target=target, daemon=True)
    th.start()
    th.join(20)
    assert "report" in box
    name = block
    packets = [[m for m in p if m.type == "N"] for _, p in db.packets(name)]
    every = {m.key for p in packets for m in p}
    nav = Counter(
        _per_iteration([m.key for m in p]) for p in packets if any(m.key == "NAV_X" for m in p)
    )
    return every, nav


@pytest.mark.parametrize(("capture", "block", "warp"), CASES)
def test_every_publication_matches_the_capture(
    capture: str,
    block: str,
    warp: float,
    fake_db,
    tmp_path: Path,  # noqa: ANN001
) -> None:
    rec_every, rec_nav = _recorded(capture)
    our_every, our_nav = _ours(tmp_path, fake_db, block, warp)
    assert our_every == rec_every
    # the recorded NAV packets all carry one list (15 variables, the program's order) ...
    # (a handful of records split by TCP chunking are left aside)
    rec_list, count = rec_nav.most_common(1)[0]
    assert count >= 0.9 * sum(rec_nav.values())
    assert len(rec_list) == 15
    # ... and so do all of ours
    assert set(our_nav) == {rec_list}, our_nav
