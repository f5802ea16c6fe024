"""The MOOS app's start record (:mod:`marinesim.interop.moos.startup`) and the stand-in
MOOSDB's silence rule.

* The first launch of a mission computes the record through the model and stores it; a
  later launch posts iteration 1 from it before numpy is imported, then the model replays
  that iteration and agrees.
* Iteration 1 holds the variables (and, for the recorded start pose, the values) that the
  real uSimMarine posted first in the capture ``b2_usim_warp1``.
* The stand-in MOOSDB drops a client silent for more than ``ClientTimeout`` seconds.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from marinesim.interop.moos import startup
from marinesim.interop.moos.client import MoosClient
from marinesim.io.alog import read_alog

DATA = Path(__file__).resolve().parents[2] / "data" / "moos_live"
SHARED = Path(__file__).resolve().parents[4] / "shared" / "reference" / "moos_live" / "captures"
#: The folder holding the marinesim these tests import (the repo's src/ in an editable
#: install, site-packages in CI's plain install): the record's key covers the package's
#: files, so the launched process must run the same copy.
SRC = Path(startup.__file__).resolve().parents[3]


def _mission(tmp_path: Path, port: int, warp: float = 10.0) -> Path:
    text = (DATA / "b2_usim_warp1.moos").read_text(encoding="utf-8")
    text = text.replace("ServerPort   = 9101", f"ServerPort   = {port}")
    text = text.replace("ServerHost   = localhost", "ServerHost   = 127.0.0.1")
    text = text.replace("MOOSTimeWarp = 1", f"MOOSTimeWarp = {warp:g}")
    p = tmp_path / "m.moos"
    p.write_text(text, encoding="utf-8")
    return p


def _launch(mission: Path, tmp_path: Path, log: str, cache: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(SRC), "MARINESIM_CACHE_DIR": str(cache)}
    return subprocess.run(
        [
            *(sys.executable, "-m", "marinesim", "moos", str(mission), "uSimMarine"),
            *("--duration", "2", "-o", str(tmp_path / log)),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )


def _first_packet(db, name: str = "uSimMarine") -> list:  # noqa: ANN001
    pkts = [p for _, p in db.packets(name) if any(m.type == "N" for m in p)]
    return [m for m in pkts[0] if m.type == "N"]


def test_first_launch_stores_the_record_and_the_next_posts_it(fake_db, tmp_path: Path) -> None:  # noqa: ANN001
    db = fake_db("capB2", warp=10.0)
    mission = _mission(tmp_path, db.port)
    cache = tmp_path / "cache"
    out = _launch(mission, tmp_path, "a.alog", cache)
    assert out.returncode == 0, out.stderr
    stored = list((cache / "moos-start").glob("*.json"))
    assert len(stored) == 1
    rec = json.loads(stored[0].read_text(encoding="utf-8"))
    assert [k for k, _ in rec["first"]][:2] == ["NAV_X", "NAV_Y"]
    first_cold = _first_packet(db)
    out = _launch(mission, tmp_path, "b.alog", cache)
    assert out.returncode == 0, out.stderr
    assert "differs from the model" not in out.stderr
    conns = [c for c in db.history if c.name == "uSimMarine"]
    assert len(conns) == 2
    warm = [m for p in [p for _, p in conns[1].received] for m in p if m.type == "N"]
    warm_first = warm[: len(first_cold)]
    # the same variables and values as the cold launch (only the stamps differ)
    assert [(m.key, m.value) for m in warm_first if not m.key.endswith(("_STATUS", "APPCAST"))] == [
        (m.key, m.value) for m in first_cold if not m.key.endswith(("_STATUS", "APPCAST"))
    ]
    # the log has iteration 1 at the start-up time, then the model's iterations
    log = read_alog(tmp_path / "b.alog")
    t, x = log.numeric("NAV_X")
    assert abs(float(t[0])) < 1e-6 and len(t) >= 5


def test_the_record_is_posted_before_numpy_is_imported(fake_db, tmp_path: Path) -> None:  # noqa: ANN001
    db = fake_db("capB2", warp=10.0)
    mission = _mission(tmp_path, db.port)
    cache = tmp_path / "cache"
    assert _launch(mission, tmp_path, "a.alog", cache).returncode == 0
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from marinesim.interop.moos import startup\n"
        "from marinesim.interop.moos.client import MoosClient\n"
        f"key = startup.record_key(Path({str(mission)!r}), name='uSimMarine', block=None,"
        " variant=None)[0]\n"
        "rec = startup.load_record(key)\n"
        "s = rec['settings']\n"
        "c = MoosClient(s['host'], s['port'], 'probe', time_warp=s['time_warp'])\n"
        "pre = startup.join(c, rec, connect_retry=5)\n"
        "print('POSTED', pre.iterations, 'numpy' in sys.modules, 'pyproj' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC), "MARINESIM_CACHE_DIR": str(cache)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env
    )
    assert "POSTED 1 False False" in out.stdout, out.stdout + out.stderr
    keys = [m.key for m in db.received("probe") if m.type == "N"]
    assert "NAV_X" in keys and "NAV_LAT" in keys


def test_iteration_one_is_what_the_real_usimmarine_posted_first(tmp_path: Path) -> None:
    capture = SHARED / "b2_usim_warp1.decoded.jsonl"
    if not capture.is_file():
        pytest.skip("../shared not present")
    real: list[tuple[str, float | str]] = []
    for line in capture.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if (
            r.get("client") == "uSimMarine"
            and r.get("type") == "N"
            and r["direction"] == ("client->db")
        ):
            if real and r.get("pkt_index") == 0:
                break
            real.append((r["key"], r["sval"] if r["dtype"] == "S" else r["dval"]))
    from marinesim.interop.moos.app import UsmMoosApp, moos_settings
    from marinesim.interop.moos.files import load_usm_config

    loaded = load_usm_config(SHARED / "b2_usim_warp1.moos", compat="moos", block="uSimMarine")
    app = UsmMoosApp(loaded, moos_settings(loaded), say=lambda s: None)
    rec = app.start_record()
    ours = [(k, v) for k, v in rec["first"]]
    body = [(k, v) for k, v in real if k not in ("USIMMARINE_STATUS", "APPCAST")]
    assert [k for k, _ in ours] == [k for k, _ in body]
    for (k, v), (_, w) in zip(ours, body, strict=True):
        if isinstance(v, str):
            assert v == w, k
        else:  # the capture's text decodes doubles exactly; the datum rounds lat/long
            assert v == pytest.approx(w, abs=1e-9), k
    # nothing moves without mail: the hold packet is the NAV record again
    assert rec["hold"] and [k for k, _ in rec["hold"][0]] == [k for k, _ in body[:15]]


def test_a_changed_mission_is_a_new_record_but_not_a_new_port(tmp_path: Path) -> None:
    m = tmp_path / "m.moos"
    m.write_text("ServerPort = 9000\nLatOrigin = 42\n", encoding="utf-8")
    k1 = startup.record_key(m, name="a")
    m.write_text("ServerHost = 127.0.0.1\nServerPort = 9001\nLatOrigin = 42\n", encoding="utf-8")
    k2 = startup.record_key(m, name="a")
    assert k1 is not None and k2 is not None
    assert k1[0] == k2[0] and k2[1:] == ("127.0.0.1", 9001) and k1[1:] == ("localhost", 9000)
    m.write_text("ServerPort = 9001\nLatOrigin = 43\n", encoding="utf-8")
    k3 = startup.record_key(m, name="a")
    assert k3 is not None and k3[0] != k2[0]
    assert startup.record_key(m, name="b")[0] != k3[0]  # type: ignore[index]
    assert startup.record_key(tmp_path / "missing.moos", name="a") is None
    m.write_text("ServerPort = ninety\n", encoding="utf-8")
    assert startup.record_key(m, name="a") is None  # the full start names the error


def test_fake_db_drops_a_client_silent_for_more_than_five_seconds(fake_db) -> None:  # noqa: ANN001
    db = fake_db("quiet", warp=1.0)
    talker = MoosClient("127.0.0.1", db.port, "talker")
    silent = MoosClient("127.0.0.1", db.port, "silent")
    talker.connect(retry_for=5)
    silent.connect(retry_for=5)
    t0 = time.monotonic()
    while time.monotonic() - t0 < 4.5:  # the talker sends its TIMING every wall second
        talker.heartbeat()
        talker.fetch(timeout=0.1)
    assert db.dropped == [] and db.client("silent") in db.conns.values()
    while time.monotonic() - t0 < 7.5 and "silent" not in db.dropped:
        talker.heartbeat()
        talker.fetch(timeout=0.1)
    waited = time.monotonic() - t0
    assert db.dropped == ["silent"], db.dropped
    assert 5.0 < waited < 7.5
    silent.fetch(timeout=0.5)  # the closed socket is noticed on the next read
    assert not silent.connected and talker.connected
    talker.close()
    silent.close()


def test_v22_holds_the_start_state_while_the_model_loads(fake_db, tmp_path: Path) -> None:  # noqa: ANN001
    """V22 gets its own NAV_X back (it registers it): that echo must not end the hold."""
    db = fake_db("capB", warp=10.0)
    mission = _mission(tmp_path, db.port)
    cache = tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": str(SRC), "MARINESIM_CACHE_DIR": str(cache)}
    outs = []
    for log in ("a.alog", "b.alog"):
        outs.append(subprocess.run(
            [sys.executable, "-m", "marinesim", "moos", str(mission), "uSimMarineV22",
             "--duration", "2", "-o", str(tmp_path / log)],
            capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path,
        ))  # fmt: skip
        assert outs[-1].returncode == 0, outs[-1].stderr
    warm = outs[1].stderr
    assert "differs from the model" not in warm
    held = int(re.search(r"model running at iteration (\d+)", warm).group(1))  # type: ignore[union-attr]
    # the model loads in 0.1 s or more: 10 or more iterations at warp 10, held meanwhile
    assert held >= 4, warm
    # the model replayed every held iteration and agreed ("differs" above); on the wire,
    # one NAV packet every second iteration, held or not
    iterations = int(re.search(r"(\d+) iterations over", warm).group(1))  # type: ignore[union-attr]
    conn = [c for c in db.history if c.name == "uSimMarineV22"][1]
    n_nav = sum(any(m.key == "NAV_X" and m.type == "N" for m in p) for _, p in conn.received)
    assert abs(n_nav - iterations // 2) <= 1, (n_nav, iterations)


def test_prepare_stores_the_record_without_a_moosdb(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    mission = _mission(tmp_path, 1)  # nothing listens on port 1: --prepare never connects
    cache = tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": str(SRC), "MARINESIM_CACHE_DIR": str(cache)}
    out = subprocess.run(
        [sys.executable, "-m", "marinesim", "moos", str(mission), "uSimMarine", "--prepare"],
        capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0 and "start record stored" in out.stderr, out.stderr
    launch = startup.record_key(mission, name="uSimMarine", block=None, variant=None)
    assert launch is not None
    monkeypatch.setenv("MARINESIM_CACHE_DIR", str(cache))
    rec = startup.load_record(launch[0])
    assert rec is not None and rec["first"][0][0] == "NAV_X"
