"""``marinesim moos`` against a fake MOOSDB on 127.0.0.1 (conftest.FakeMoosDB): handshake,
registrations, publications in the real program's order and rate under time warp, mail,
wrong-type warnings, malformed packets, the DB dying mid-run, an unreachable DB."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from marinesim.cli.main import main
from marinesim.interop.moos.app import (
    SUBSCRIPTIONS_USM,
    SUBSCRIPTIONS_V22,
    UsmMoosApp,
    moos_settings,
)
from marinesim.interop.moos.client import MoosConnectionError
from marinesim.interop.moos.files import load_usm_config
from marinesim.interop.moos.scenario_app import differential_thrust
from marinesim.interop.moos.wire import MoosMsg, encode_packet
from marinesim.io.alog import read_alog

DATA = Path(__file__).resolve().parents[2] / "data" / "moos_live"
SHARED = Path(__file__).resolve().parents[4] / "shared" / "reference" / "moos_live" / "captures"

#: One iteration's publications, in the order of the captures (README §1.4).
NAV_ORDER = [
    "NAV_X", "NAV_Y", "NAV_LAT", "NAV_LONG", "NAV_HEADING", "NAV_SPEED", "NAV_DEPTH",
    "SIMULATION_MODE", "NAV_Z", "NAV_PITCH", "NAV_YAW", "TRUE_X", "TRUE_Y",
    "NAV_HEADING_OVER_GROUND", "NAV_SPEED_OVER_GROUND",
]  # fmt: skip


def _mission(tmp_path: Path, port: int, warp: float) -> Path:
    text = (DATA / "b2_usim_warp1.moos").read_text(encoding="utf-8")
    text = text.replace("ServerPort   = 9101", f"ServerPort   = {port}")
    text = text.replace("ServerHost   = localhost", "ServerHost   = 127.0.0.1")
    text = text.replace("MOOSTimeWarp = 1", f"MOOSTimeWarp = {warp:g}")
    p = tmp_path / "m.moos"
    p.write_text(text, encoding="utf-8")
    return p


def _start(mission: Path, tmp_path: Path, *, block: str = "uSimMarine", **kw):  # noqa: ANN202
    loaded = load_usm_config(mission, compat="moos", block=block)
    app = UsmMoosApp(
        loaded, moos_settings(loaded), log_path=tmp_path / "run.alog", say=lambda s: None
    )
    stop = threading.Event()
    box: dict = {}

    def target() -> None:
        try:
            box["report"] = app.run(stop=stop, connect_retry=3.0, **kw)
        except BaseException as exc:  # noqa: BLE001 - the test inspects it
            box["error"] = exc

    th = threading.Thread(target=target, daemon=True)
    th.start()
    return app, stop, th, box


def _wait(cond, timeout: float = 10.0) -> None:  # noqa: ANN001
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError("condition not met in time")
        time.sleep(0.01)


def _recorded_registrations(capture: str) -> list[str]:
    keys = []
    for line in (SHARED / capture).read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if r.get("conn") == 1 and r.get("type") == "R" and r["direction"] == "client->db":
            keys.append(r["key"])
    return keys


def test_registration_lists_are_the_recorded_ones() -> None:
    if not SHARED.is_dir():
        pytest.skip("../shared not present")
    assert _recorded_registrations("b2_usim_warp1.decoded.jsonl") == 2 * list(SUBSCRIPTIONS_USM)
    assert _recorded_registrations("b_usimv22_warp1.decoded.jsonl") == 2 * list(SUBSCRIPTIONS_V22)


def test_flies_against_fake_db(fake_db, tmp_path: Path) -> None:  # noqa: ANN001
    warp = 10.0
    db = fake_db("capB2", warp=warp)
    app, stop, th, box = _start(_mission(tmp_path, db.port, warp), tmp_path, duration=8.0)
    _wait(lambda: db.client("uSimMarine") is not None and len(db.received("uSimMarine")) > 80)
    db.inject("DESIRED_THRUST", 40.0)
    db.inject("DESIRED_RUDDER", "ten")  # wrong type: warned, never a crash
    th.join(15)
    assert not th.is_alive() and "error" not in box, box.get("error")
    rep = box["report"]
    sent = db.received("uSimMarine")
    # handshake then two registration rounds with the recorded list; ids count from 0
    regs = [m.key for m in sent if m.type == "R"]
    assert regs == 2 * list(SUBSCRIPTIONS_USM)
    counted = [m.id for m in sent if m.type in "RN"]
    assert counted == list(range(len(counted)))
    assert all(m.id == -1 for m in sent if m.type in "iT")
    # _async_timing: about once per *wall* second (8 MOOS s at warp 10 = 0.8 s wall)
    timing = [m for m in sent if m.type == "T"]
    assert 1 <= len(timing) <= 2 and all(m.key == "_async_timing" for m in timing)
    # publications: one packet per iteration, the recorded order, one time stamp each

    def nav_packets_now() -> list[list[MoosMsg]]:
        return [p for _, p in db.packets("uSimMarine") if any(m.key == "NAV_X" for m in p)]

    _wait(lambda: len(nav_packets_now()) >= rep.iterations, timeout=3)  # the DB's last reads
    nav_packets = nav_packets_now()
    assert len(nav_packets) == rep.iterations
    for p in nav_packets[2:]:
        keys = [m.key for m in p if m.type == "N" and m.key in NAV_ORDER]
        assert keys == NAV_ORDER
        assert len({m.time for m in p if m.type == "N"}) == 1
        assert all(m.community == "" and m.src == "uSimMarine" for m in p if m.type == "N")
    first = [m.key for m in nav_packets[0] if m.type == "N"]
    assert first[0] == "USIMMARINE_STATUS" and first[-3:] == [
        "USM_FSUMMARY",
        "USM_DRIFT_SUMMARY",
        "APPCAST",
    ]
    # rate: AppTick 10 in MOOS time (0.01 s wall at warp 10)
    t = np.array([m.time for p in nav_packets for m in p if m.key == "NAV_X"])
    assert 0.09 < float(np.median(np.diff(t))) < 0.11
    assert abs(float(t[0]) / (time.time() * warp) - 1) < 1e-6  # warped MOOS time stamps
    # mail reached the model: speed rises after DESIRED_THRUST=40 (thrust_map 40 -> 2 m/s)
    speeds = [m.dval for p in nav_packets for m in p if m.key == "NAV_SPEED"]
    assert speeds[0] == 0.0 and max(speeds) > 1.0
    assert any("string message for a double variable" in w for w in rep.warnings)
    # the log holds every NAV_X posted and the mail received
    log = read_alog(tmp_path / "run.alog")
    assert len(log.numeric("NAV_X")[0]) == len(t)
    assert log.series("DESIRED_THRUST")[1] == [40.0]
    assert abs(log.logstart - rep.moos_start) < 1e-3
    # the recorded schedule beside the log makes the live run replayable to the log's rounding
    from marinesim.interop.moos.replay import replay_alog

    assert (tmp_path / "run.delivery.csv").is_file()
    res = replay_alog(tmp_path / "m.moos", tmp_path / "run.alog")
    assert res.rule == "delivery" and res.compared == len(t) and res.passed, res.report()
    assert res.deviations["NAV_X"] <= 1e-4 and res.deviations["NAV_SPEED"] < 1e-9


def test_v22_publishes_every_second_iteration(fake_db, tmp_path: Path) -> None:  # noqa: ANN001
    db = fake_db("capB", warp=10.0)
    _app, _stop, th, box = _start(
        _mission(tmp_path, db.port, 10.0), tmp_path, block="uSimMarineV22", duration=4.0
    )
    th.join(15)
    rep = box["report"]
    regs = [m.key for m in db.received("uSimMarineV22") if m.type == "R"]
    assert regs == 2 * list(SUBSCRIPTIONS_V22)
    nav = [m for m in db.received("uSimMarineV22") if m.key == "NAV_X" and m.type == "N"]
    assert abs(len(nav) - rep.iterations // 2) <= 1
    # V22 subscribes to NAV_X: its own posts come back and are accepted silently
    assert not any("NAV_X" in w for w in rep.warnings)


def test_db_dying_mid_run_reconnects_and_keeps_the_log(fake_db, tmp_path: Path) -> None:  # noqa: ANN001
    warp = 10.0
    db = fake_db("capB2", warp=warp)
    port = db.port
    app, stop, th, box = _start(_mission(tmp_path, port, warp), tmp_path)  # until stopped
    _wait(lambda: len(db.received("uSimMarine")) > 100)
    db.stop()  # the DB dies
    time.sleep(0.4)
    db2 = fake_db("capB2", warp=warp, port=port)
    _wait(lambda: db2.client("uSimMarine") is not None, timeout=15)

    def nav_x_at_db2() -> int:
        return sum(m.key == "NAV_X" for m in db2.received("uSimMarine"))

    _wait(lambda: nav_x_at_db2() > 20)
    db2.inject("DESIRED_THRUST", 60.0)
    seen = nav_x_at_db2()
    _wait(lambda: nav_x_at_db2() > seen + 10)  # the mail has been applied and logged
    stop.set()
    th.join(20)
    assert "error" not in box, box.get("error")
    rep = box["report"]
    assert rep.reconnects == 1
    assert [m.key for m in db2.received("uSimMarine") if m.type == "R"][
        : len(SUBSCRIPTIONS_USM)
    ] == list(SUBSCRIPTIONS_USM)
    t, _x = read_alog(tmp_path / "run.alog").numeric("NAV_X")
    assert len(t) == rep.iterations  # iterating went on while the DB was away
    # the DB was away for >= 0.4 s wall (4 MOOS s) and reconnection takes ~1 s wall: a gap
    # shorter than 3 MOOS s shows the app kept iterating (and logging) through the outage
    assert float(np.max(np.diff(t))) < 3.0
    log = read_alog(tmp_path / "run.alog")
    assert log.series("DESIRED_THRUST")[1] == [60.0]
    # what was posted while the DB was away is logged as not delivered, not as published
    t_lost, _ = log.numeric("NAV_X", "uSimMarine:undelivered")
    t_ok, _ = log.numeric("NAV_X", "uSimMarine")
    assert len(t_lost) >= 3 and len(t_lost) + len(t_ok) == rep.iterations
    assert rep.undelivered >= 15 * len(t_lost)
    # the outage is one stretch inside the run
    assert t_ok[0] < t_lost[0] and t_lost[-1] < t_ok[-1]
    assert not np.any((t_ok > t_lost[0]) & (t_ok < t_lost[-1]))


def test_malformed_packets_are_counted(fake_db, tmp_path: Path) -> None:  # noqa: ANN001
    db = fake_db("capB2", warp=10.0)
    app, stop, th, box = _start(_mission(tmp_path, db.port, 10.0), tmp_path)  # until stopped
    _wait(lambda: len(db.received("uSimMarine")) > 60)
    bad = bytearray(encode_packet([MoosMsg("N", "D", "DESIRED_THRUST", 1.0, 20.0, src="x")]))
    bad[17] = ord("?")
    db.send_raw(bytes(bad))
    db.inject("DESIRED_THRUST", 20.0)
    _wait(lambda: any(m.key == "NAV_SPEED" and m.dval > 0 for m in db.received("uSimMarine")))
    stop.set()
    th.join(15)
    rep = box["report"]
    assert rep.malformed == 1 and rep.reconnects == 0
    assert read_alog(tmp_path / "run.alog").series("DESIRED_THRUST")[1] == [20.0]


def test_duplicate_name_is_refused(fake_db, tmp_path: Path) -> None:  # noqa: ANN001
    db = fake_db("capB2")
    app, stop, th, box = _start(_mission(tmp_path, db.port, 1.0), tmp_path)
    _wait(lambda: db.client("uSimMarine") is not None)
    loaded = load_usm_config(_mission(tmp_path, db.port, 1.0), compat="moos")
    twin = UsmMoosApp(loaded, moos_settings(loaded), say=lambda s: None)
    with pytest.raises(MoosConnectionError, match="already exists"):
        twin.run(duration=1.0, connect_retry=1.0)
    stop.set()
    th.join(5)


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_unreachable_db_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    port = _free_port()
    mission = _mission(tmp_path, port, 1.0)
    t0 = time.monotonic()
    rc = main(["moos", str(mission), "--connect-timeout", "1.5", "-o", str(tmp_path / "x.alog")])
    took = time.monotonic() - t0
    err = capsys.readouterr().err
    assert rc == 1
    assert f"127.0.0.1:{port}" in err and "cannot connect to the MOOSDB" in err
    assert "retrying every 1 s" in err and "Traceback" not in err
    assert 0.9 < took < 10


def _warm(scenario: Path) -> None:
    """Compile the scenario model's kernels first (into numba's disk cache): on a cold cache
    the compile would take tens of wall seconds of the run's MOOS time at warp 10."""
    from marinesim.scenario import load_simulation

    load_simulation(scenario, sets=["time.end=1"]).run()


def test_scenario_6dof_behind_the_moos_face(fake_db, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """A Fossen 6-DOF REMUS 100 with an INS takes DESIRED_* and posts NAV_* (belief) and
    NAV_*_GT (truth); positive rudder turns to starboard, as uSimMarine's."""
    _warm(DATA / "remus100_moos.yaml")
    db = fake_db("capB2", warp=10.0)
    mission = _mission(tmp_path, db.port, 10.0)
    box: dict = {}

    def target() -> None:
        box["rc"] = main(
            ["moos", str(mission), "--scenario", str(DATA / "remus100_moos.yaml"),
             "--duration", "60", "-o", str(tmp_path / "s.alog")]
        )  # fmt: skip

    th = threading.Thread(target=target, daemon=True)
    th.start()
    _wait(lambda: len(db.received("uSimMarine")) > 40)
    db.inject("DESIRED_THRUST", 80.0, src="pMarinePID")
    db.inject("DESIRED_RUDDER", 30.0, src="pMarinePID")
    db.inject("USM_RESET", "x=0,y=0", src="someone")  # not for this model: warned
    th.join(300)  # 6 s wall, or longer while a cold numba cache compiles the model
    assert box.get("rc") == 0
    err = capsys.readouterr().err
    assert "not used by the scenario model" in err
    log = read_alog(tmp_path / "s.alog")
    _t, h_gt = log.numeric("NAV_HEADING_GT")
    _t, x_gt = log.numeric("NAV_X_GT")
    _t, x = log.numeric("NAV_X")
    _t, y = log.numeric("NAV_Y")
    _t, y_gt = log.numeric("NAV_Y_GT")
    _t, spd = log.numeric("NAV_SPEED_GT")
    assert h_gt[0] == pytest.approx(180.0, abs=1.0) and h_gt[-1] > 200.0  # turned to starboard
    assert spd.max() > 1.0
    n = min(len(x), len(x_gt))
    err_m = np.hypot(x[-n:] - x_gt[-n:], y[-n:] - y_gt[-n:])
    assert 0.0 < float(np.median(err_m)) < 10.0  # a noisy INS: close to, not equal to, truth


def _recorded(direction: str, typ: str) -> dict:
    src = SHARED if SHARED.is_dir() else DATA
    for line in (src / "a_upokedb.decoded.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if r.get("direction") == direction and r.get("type") == typ:
            return r
    raise AssertionError(f"no {typ} in the capture")


def test_handshake_and_welcome_are_the_recorded_ones(fake_db) -> None:  # noqa: ANN001
    """Our DATA handshake and the fake DB's WELCOME carry the recorded fields (all but time)."""
    from marinesim.interop.moos.client import MoosClient

    db = fake_db("capA")
    client = MoosClient("127.0.0.1", db.port, "uPokeDB")
    assert client.try_connect()
    client.close()
    hello = db.received("uPokeDB")[0]
    rec = _recorded("client->db", "i")
    fields = ("type", "dtype", "key", "src", "src_aux", "community", "id", "dval", "dval2", "sval")
    assert {f: getattr(hello, f) for f in fields} == {f: rec[f] for f in fields}
    assert len(encode_packet([hello])) == rec["pkt_len"]
    welcome = _recorded("db->client", "W")
    assert (client.community, client.db_host) == (welcome["community"], "fake")
    assert welcome["src_aux"].startswith("hostname=") and welcome["sval"] == "asynchronous"
    assert 0.0 <= client.skew < 0.5  # DB time − our stamp: the answer delay on one host


@given(
    thrust=st.floats(-100, 100), rudder=st.floats(-100, 100),
    left=st.floats(-300, 300), right=st.floats(-300, 300),
)  # fmt: skip
def test_differential_thrust_inverts_usimmarines_convention(
    thrust: float, rudder: float, left: float, right: float
) -> None:
    """Normal mode: uSimMarine's diff-mode speed model reads thrust = (L+R)/2 and rudder =
    (L−R)/2, so unclipped L, R give back the mail; clipped ones stay within ±100 %.  In
    differential mode the L/R mail passes through, clipped."""
    lft, rgt = differential_thrust(thrust, rudder, left, right, differential=False)
    assert -100.0 <= min(lft, rgt) <= max(lft, rgt) <= 100.0
    if abs(thrust) + abs(rudder) <= 100.0:
        assert (lft + rgt) / 2 == pytest.approx(thrust, abs=1e-9)
        assert (lft - rgt) / 2 == pytest.approx(rudder, abs=1e-9)
    assert differential_thrust(thrust, rudder, left, right, differential=True) == (
        min(max(left, -100.0), 100.0),
        min(max(right, -100.0), 100.0),
    )


def test_otter_differential_thrust_and_latlong(fake_db, tmp_path: Path) -> None:  # noqa: ANN001
    """An Otter (two propellers) behind the MOOS face: positive DESIRED_RUDDER gives more
    port thrust and turns to starboard; after THRUST_MODE_DIFFERENTIAL=true equal
    DESIRED_THRUST_L/_R hold the heading; NAV_LAT/NAV_LONG follow the mission's datum."""
    from marinesim.core.geodesy import MoosGeodesy

    _warm(DATA / "otter_moos.yaml")
    db = fake_db("capB2", warp=10.0)
    mission = _mission(tmp_path, db.port, 10.0)
    box: dict = {}

    def target() -> None:
        box["rc"] = main(
            ["moos", str(mission), "--scenario", str(DATA / "otter_moos.yaml"),
             "--duration", "70", "-o", str(tmp_path / "o.alog")]
        )  # fmt: skip

    th = threading.Thread(target=target, daemon=True)
    th.start()
    _wait(lambda: len(db.received("uSimMarine")) > 40)
    db.inject("DESIRED_THRUST", 60.0, src="pMarinePID")
    db.inject("DESIRED_RUDDER", 10.0, src="pMarinePID")
    # a cold numba cache compiles the model's kernels during the run (a gap of MOOS s)
    _wait(lambda: sum(m.key == "NAV_X" for m in db.received("uSimMarine")) > 120, 300)
    db.inject("THRUST_MODE_DIFFERENTIAL", "true", src="pMarinePID")
    db.inject("DESIRED_THRUST_L", 50.0, src="pMarinePID")
    db.inject("DESIRED_THRUST_R", 50.0, src="pMarinePID")
    th.join(300)
    assert box.get("rc") == 0
    log = read_alog(tmp_path / "o.alog")
    t_h, h = log.numeric("NAV_HEADING_GT")
    (t_mode,) = [r.t for r in log.records if r.var == "THRUST_MODE_DIFFERENTIAL"]
    turning = h[t_h < t_mode]
    assert turning[0] == pytest.approx(180.0, abs=1.0)
    assert np.unwrap(np.radians(turning))[-1] > np.radians(200.0)  # to starboard
    late = np.unwrap(np.radians(h[t_h > t_mode + 10.0]))  # equal propellers: no turn
    assert np.ptp(np.degrees(late)) < 2.0
    _t, x = log.numeric("NAV_X_GT")
    _t, y = log.numeric("NAV_Y_GT")
    _t, lat = log.numeric("NAV_LAT_GT")
    _t, lon = log.numeric("NAV_LONG_GT")
    geo = MoosGeodesy(42.3584, -71.0876)
    want_lat, want_lon = geo.local_to_latlon(x, y)
    n = min(len(lat), len(x))
    assert np.abs(lat[:n] - want_lat[:n]).max() < 1e-5  # the log prints 5 decimals
    assert np.abs(lon[:n] - want_lon[:n]).max() < 1e-5
