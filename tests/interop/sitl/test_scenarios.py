"""Scenario options of ``marinesim sitl``: the recorded reference plant as physics (compiled,
bit for bit against the recordings), floors (bundled recorded sawtooth, bathymetry, profile
files), scripted sonar faults, the SITL port hint."""

from __future__ import annotations

import importlib.util
import json
import math
import socket
import threading
from pathlib import Path

import numpy as np
import pytest

from marinesim.cli.main import main
from marinesim.cli.sitl import sitl_port_args
from marinesim.core.errors import ConfigError
from marinesim.interop.sitl.lockstep import Lockstep
from marinesim.interop.sitl.plant import EnginePlant
from marinesim.interop.sitl.protocol import decode_servo, encode_servo, parse_reply_like_sitl
from marinesim.interop.sitl.refplant import ReferencePlant, SonarFault, parse_fault
from marinesim.interop.sitl.session import _floor_sets, bathymetry_path
from marinesim.scenario import load_simulation

_spec = importlib.util.spec_from_file_location(
    "_sitl_helpers", Path(__file__).with_name("_sitl_helpers.py")
)
H = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(H)  # type: ignore[union-attr]

ADDR = ("127.0.0.1", 1)


def _ref(cfg: dict, **kw) -> ReferencePlant:  # noqa: ANN003
    return ReferencePlant(
        H.T200_CSV, cfg["terrain"], u0=cfg.get("u0_m_s") or 0.0, u_start=cfg.get("u_start_s"),
        u_ramp=cfg.get("u_ramp_s") or 4.0, rng_delay=cfg["rng_delay_s"],
        rng_period=cfg["rng_period_s"], **kw,
    )  # fmt: skip


@H.needs_shared
@pytest.mark.parametrize(
    ("session", "last", "pairs"),
    [("a_manual_descent", 3000, 3001), ("c_surftrak_sawtooth", 3000, 251)],
)
def test_reference_physics_replays_the_recording_from_boot(session, last, pairs):
    """The compiled plant behind the lockstep, fed the recorded packets from frame 0: every
    reply equals the recorded one exactly (session a is unabridged there; session c keeps 1
    frame in 12, and the boot's constant outputs make the stepped-through gaps exact too)."""
    rows = H.read_capture(H.REF / session / "capture.jsonl.gz")
    cfg = H.session_json(session)["backend"]
    lock = Lockstep(_ref(cfg))
    n = 0
    for data, reply in H.pairs(rows):
        if decode_servo(data).frame_count > last:
            break
        out = lock.handle(data, ADDR, now=0.0)
        assert parse_reply_like_sitl(out, first=False) == parse_reply_like_sitl(
            reply["text"], first=False
        )
        n += 1
    assert n == pairs and lock.stats.frames == last + 1


@H.needs_shared
def test_reference_physics_matches_the_spec_plant_on_surftrak_outputs():
    """The servo outputs of session c's cliff window (SURFTRAK, surge 0.5 m/s), from a fresh
    start, through the compiled plant and the test suite's Python transcription of §4: the same
    reply values as SITL parses them, frame after frame (the recording's start depth to the
    last bit; the fast path writes ``%.17g``, which round-trips every double exactly)."""
    rows = H.read_capture(H.REF / "c_surftrak_sawtooth" / "capture.jsonl.gz")
    cfg = H.session_json("c_surftrak_sawtooth")["backend"]
    prs = [(d, r) for d, r in H.pairs(rows) if 150000 <= decode_servo(d).frame_count <= 156000]
    a, b = H.RefPlant(cfg), _ref(cfg)
    rep0 = parse_reply_like_sitl(H.pairs(rows)[0][1]["text"])
    assert rep0["position"][2] == pytest.approx(0.12257491289198608, abs=0)
    from marinesim.interop.sitl.protocol import encode_reply

    c = _ref(cfg)
    for data, _ in prs:
        pwm = decode_servo(data).pwm
        want = parse_reply_like_sitl(encode_reply(a.step(pwm)), first=False)
        assert parse_reply_like_sitl(b.step_bytes(pwm), first=False) == want
        assert parse_reply_like_sitl(c.step_raw(data), first=False) == want
    assert b.t == pytest.approx(len(prs) / 1200) and c.t == b.t


def test_sonar_faults_replace_the_sent_value(tmp_path):
    csv = H.T200_CSV if H.T200_CSV.exists() else _tiny_t200(tmp_path)
    faults = [
        parse_fault("nan:1:1.5"),
        parse_fault("zero:2:2.2"),
        SonarFault("out_of_range", 3, 3.1),
    ]
    clean = ReferencePlant(csv, "sawtooth")
    faulty = ReferencePlant(csv, "sawtooth", faults=faults)
    pwm = np.full(16, 1500)
    seen = {"nan": 0, "zero": 0, "oor": 0, "same": 0}
    for _ in range(4 * 1200):
        a = clean.step(pwm)
        b = faulty.step(pwm)
        t = b.timestamp
        if 1 <= t < 1.5:
            assert math.isnan(b.rng[1])
            seen["nan"] += 1
        elif 2 <= t < 2.2:
            assert b.rng[1] == 0.0
            seen["zero"] += 1
        elif 3 <= t < 3.1:
            assert b.rng[1] == 99.0
            seen["oor"] += 1
        else:
            assert a.rng == b.rng and a.position == b.position
            seen["same"] += 1
    assert seen == {"nan": 600, "zero": 240, "oor": 120, "same": 4800 - 960}
    assert 11.5 < clean.reply().rng[1] < 12.0  # 12 m floor at x = 0, floating at the surface
    for bad in ("nan:2", "smoke:1:2", "nan:3:1", "nan:a:b"):
        with pytest.raises(ConfigError):
            parse_fault(bad)


def _tiny_t200(tmp_path: Path) -> Path:
    p = tmp_path / "t200.csv"
    p.write_text("voltage_V,pwm_us,force_N\n16,1100,-40\n16,1500,0\n16,1900,51\n")
    return p


def test_engine_faults_and_bundled_recorded_sawtooth():
    sets = _floor_sets("ardusub_sawtooth", ["end=60"], [], None, None, "recorded_sawtooth")
    sim = load_simulation("ardusub_sawtooth", variables=["end=60"], sets=sets)
    plant = EnginePlant(sim, faults=[parse_fault("zero:0.8:0.9"), parse_fault("nan:1.0:1.2")])
    lock = Lockstep(plant)
    rng = []
    for i in range(1800):
        r = parse_reply_like_sitl(lock.handle(encode_servo(1200, i, [1500] * 16), ADDR, now=0.0),
                                  first=False)  # fmt: skip
        rng.append((r["timestamp"], r.get("rng_1")))
    assert plant.floor_depth() == pytest.approx(12.0, abs=1e-9)  # x = 0 on the sawtooth
    got = {k: [v for t, v in rng if lo <= t < hi] for k, (lo, hi) in
           {"zero": (0.8, 0.9), "nan": (1.0, 1.2), "ok": (1.3, 1.5)}.items()}  # fmt: skip
    assert got["zero"] and all(v == 0.0 for v in got["zero"])
    assert got["nan"] and all(math.isnan(v) for v in got["nan"])
    assert all(11.5 < v < 12.2 for v in got["ok"])  # measures the 12 m floor (5 cm noise)
    assert bathymetry_path("recorded_sawtooth").is_file()
    with pytest.raises(ConfigError, match="bundled floor"):
        bathymetry_path("no_such_floor")


def test_engine_terrain_profile_file(tmp_path):
    prof = tmp_path / "floor15.csv"
    prof.write_text("0.1\n" + "-15.0\n" * 50)
    sets = _floor_sets("ardusub_sawtooth", [], [], None, str(prof), None)
    assert sets == [f"entities.bluerov2.sensors.rangefinder.params.terrain={prof.resolve()}"]
    sim = load_simulation("ardusub_sawtooth", variables=["end=60"], sets=sets)
    lock = Lockstep(EnginePlant(sim))
    for i in range(900):
        r = lock.handle(encode_servo(1200, i, [1500] * 16), ADDR, now=0.0)
    alt = parse_reply_like_sitl(r, first=False)["rng_1"]
    assert 14.7 < alt < 15.1  # 15 m floor, vehicle at the surface, 5 cm noise
    with pytest.raises(ConfigError, match="not a shipped profile"):
        _floor_sets("ardusub_sawtooth", [], [], None, str(tmp_path / "missing.csv"), None)


def test_port_hint():
    assert sitl_port_args(9002) == "-I0"
    assert sitl_port_args(9072) == "-I7"
    assert sitl_port_args(9005) == "--sim-port-out 9005"
    assert sitl_port_args(5000) == "--sim-port-out 5000"


def _free_port() -> int:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


@H.needs_shared
def test_cli_reference_physics(tmp_path, capsys):
    port = _free_port()
    out = tmp_path / "run"
    rc: list[int] = []
    args = ["sitl", "--physics", "reference", "--t200-csv", str(H.T200_CSV), "--bathymetry",
            "recorded_sawtooth", "--sonar-fault", "nan:0.5:0.6", "--port", str(port),
            "--idle-exit", "1.5", "-o", str(out)]  # fmt: skip
    th = threading.Thread(target=lambda: rc.append(main(args)), daemon=True)
    th.start()
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(0.3)
    i = 0
    while i < 1200:
        sock.sendto(encode_servo(1200, i, [1500] * 16), ("127.0.0.1", port))
        try:
            sock.recv(65535)
            i += 1
            sock.settimeout(10.0)  # up: wait like SITL does (a loaded machine stalls a while)
        except TimeoutError:
            assert i == 0  # only while the backend starts
    sock.close()
    th.join(30)
    text = capsys.readouterr()
    assert rc == [0], text.err
    assert "--sim-port-out" in text.out or "-I" in text.out
    summary = json.loads((out / "summary.json").read_text())
    assert summary["physics"] == "reference" and summary["frames"] == 1200
    assert summary["faults"] == ["nan:0.5:0.6"] and summary["engine_logs"] == []
    rows = (out / "truth.csv").read_text().splitlines()
    head = rows[0].split(",")
    last = dict(zip(head, map(float, rows[-1].split(",")), strict=True))
    assert last["floor_z"] == -12.0 and last["true_alt"] == pytest.approx(12.0 - last["z"])
    assert 11.8 < last["rng_1"] < 11.9


def test_cli_option_errors_are_clean(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("MARINESIM_T200_CSV", raising=False)
    cases = [
        (["sitl", "--physics", "reference", "-q"], "MARINESIM_T200_CSV"),
        (["sitl", "-q"], "give a scenario"),
        (["sitl", "ardusub_sawtooth", "--bathymetry", "nowhere_floor", "-q"], "bundled floor"),
        (["sitl", "ardusub_sawtooth", "--sonar-fault", "smoke:1:2", "-q"], "smoke"),
        (["sitl", "ardusub_sawtooth", "--terrain", "x.csv", "--bathymetry", "flat20", "-q"],
         "not both"),
        (["sitl", "--physics", "fluid", "-q"], "physics 'fluid'"),
    ]  # fmt: skip
    for args, text in cases:
        rc = main(args)
        err = capsys.readouterr().err
        assert rc == 2 and text in err and "Traceback" not in err, (args, err)


def test_cli_engine_bathymetry_and_faults(tmp_path, capsys):
    port = _free_port()
    out = tmp_path / "run"
    rc: list[int] = []
    args = ["sitl", "ardusub_sawtooth", "--bathymetry", "recorded_sawtooth", "--sonar-fault",
            "zero:0.5:0.7", "--port", str(port), "--idle-exit", "1.5", "-o", str(out), "-q"]  # fmt: skip
    th = threading.Thread(target=lambda: rc.append(main(args)), daemon=True)
    th.start()
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(0.3)
    i, rng = 0, {}
    while i < 1080:
        sock.sendto(encode_servo(1200, i, [1500] * 16), ("127.0.0.1", port))
        try:
            r = parse_reply_like_sitl(sock.recv(65535), first=i == 0)
        except TimeoutError:
            assert i == 0
            continue
        rng[round(r["timestamp"], 4)] = r.get("rng_1")
        i += 1
        sock.settimeout(10.0)  # up: wait like SITL does (a loaded machine stalls for a while)
    sock.close()
    th.join(60)
    assert rc == [0], capsys.readouterr().err
    assert rng[0.6] == 0.0 and 11.6 < rng[0.85] < 12.2  # the fault, then the 12 m floor
    summary = json.loads((out / "summary.json").read_text())
    assert summary["physics"] == "engine" and summary["faults"] == ["zero:0.5:0.7"]
    man = json.loads((out / "engine" / "manifest.json").read_text())
    assert man["status"] == "interrupted"
