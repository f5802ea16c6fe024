"""The UDP backend against a fake SITL on loopback: lockstep, repeats, malformed datagrams,
32-channel packets, stale packets, SITL restarts, several instances at once, the CLI."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

import pytest

from marinesim.cli.main import main
from marinesim.interop.sitl.lockstep import Lockstep
from marinesim.interop.sitl.plant import EnginePlant
from marinesim.interop.sitl.protocol import encode_servo, parse_reply_like_sitl
from marinesim.interop.sitl.server import instance_port, serve
from marinesim.scenario import load_simulation

PWM = [1500] * 8 + [1000] * 8


class FakeSitl:
    """SITL's side: one ephemeral UDP socket, send a packet, wait for the reply."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(5.0)

    def frame(self, count: int, pwm=PWM, timeout: float = 300.0) -> bytes | None:  # noqa: ANN001
        """Send a frame and wait for its reply, resending every 1.1 s as SITL does (a cold
        numba cache compiles for tens of seconds at the first frames)."""
        import time

        deadline = time.monotonic() + timeout
        pkt = encode_servo(1200, count, pwm)
        while True:
            self.sock.sendto(pkt, ("127.0.0.1", self.port))
            self.sock.settimeout(max(min(1.1, deadline - time.monotonic()), 0.001))
            try:
                return self.sock.recv(65535)
            except TimeoutError:
                if time.monotonic() >= deadline:
                    return None

    def raw(self, data: bytes, timeout: float = 0.3) -> bytes | None:
        self.sock.settimeout(timeout)
        self.sock.sendto(data, ("127.0.0.1", self.port))
        try:
            return self.sock.recv(65535)
        except TimeoutError:
            return None

    def close(self) -> None:
        self.sock.close()


def _start(delay: float = 0.3) -> tuple[Lockstep, int, threading.Event, threading.Thread]:
    sim = load_simulation("ardusub_sawtooth", variables=[f"delay={delay}", "end=60"])
    lock = Lockstep(EnginePlant(sim))
    bound: list[int] = []
    ready, stop = threading.Event(), threading.Event()

    def on_bound(p: int) -> None:
        bound.append(p)
        ready.set()

    th = threading.Thread(
        target=serve,
        args=(lock,),
        kwargs={"port": 0, "on_bound": on_bound, "should_stop": stop.is_set, "grace": 0.01},
        daemon=True,
    )
    th.start()
    assert ready.wait(10)
    return lock, bound[0], stop, th


def test_lockstep_over_udp_repeats_faults_and_restart():
    lock, port, stop, th = _start()
    try:
        sitl = FakeSitl(port)
        stamps = []
        for i in range(100):
            r = sitl.frame(i)
            stamps.append(parse_reply_like_sitl(r, first=i == 0)["timestamp"])
        assert stamps == pytest.approx([(i + 1) / 1200 for i in range(100)], abs=1e-12)
        last = r
        # a repeat (SITL lost our reply) is answered with the same bytes, without a step
        assert sitl.frame(99) == last and lock.stats.frames == 100
        # malformed datagrams are counted, never answered, never fatal
        assert sitl.raw(b"garbage") is None
        assert sitl.raw(encode_servo(1200, 100, PWM)[:-3]) is None
        assert lock.stats.malformed == 2 and "byte offset" in lock.stats.last_error
        # 32-channel packets (SERVO_32_ENABLE = 1) are served the same
        r = sitl.frame(100, [1500] * 8 + [0] * 24)
        assert parse_reply_like_sitl(r, first=False)["timestamp"] == pytest.approx(101 / 1200)
        # a stale (out-of-order) packet is not answered
        assert sitl.raw(encode_servo(1200, 50, PWM)) is None
        # packets went missing: the frames in between are stepped (time = frame count)
        r = sitl.frame(110)
        assert parse_reply_like_sitl(r, first=False)["timestamp"] == pytest.approx(111 / 1200)
        assert lock.stats.missing == 9
        # a stray frame-0 datagram from another local program: not answered, physics goes on
        stray = FakeSitl(port)
        assert stray.raw(encode_servo(1200, 0, PWM)) is None
        stray.close()
        r = sitl.frame(111)
        assert parse_reply_like_sitl(r, first=False)["timestamp"] == pytest.approx(112 / 1200)
        assert lock.stats.strays == 1 and lock.stats.restarts == 0
        sitl.close()
        # SITL restarts: new ephemeral port, frame 0 -> the scenario starts over
        sitl2 = FakeSitl(port)
        r = sitl2.frame(0)
        assert parse_reply_like_sitl(r)["timestamp"] == pytest.approx(1 / 1200)
        assert lock.stats.restarts == 1 and lock.stats.strays == 2  # answered at its resend
        sitl2.close()
    finally:
        stop.set()
        th.join(5)
    assert not th.is_alive()


def test_resends_queued_during_a_slow_frame_get_no_second_reply():
    """SITL resends a frame after ~1 s without a reply; when the frame itself was slow (a
    first-run compile), the resend waits in the socket while the reply goes out: answering it
    too would hand SITL a second reply that it takes for its next frame (one frame late for
    good). It is dropped and counted as a repeat."""
    import time

    lock, port, stop, th = _start()
    try:
        sitl = FakeSitl(port)
        for i in range(50):  # past the first frames (and their first-run compiles)
            assert sitl.frame(i) is not None
        repeats = lock.stats.repeats
        orig = lock._raw
        calls = [0]

        def slow(data: bytes) -> bytes:
            calls[0] += 1
            if calls[0] == 1:
                time.sleep(0.8)  # longer than SLOW_FRAME_S
            return orig(data)

        lock._raw = slow
        pkt = encode_servo(1200, 50, PWM)
        sitl.sock.sendto(pkt, ("127.0.0.1", port))
        time.sleep(0.3)
        sitl.sock.sendto(pkt, ("127.0.0.1", port))  # the resend, queued behind the slow frame
        sitl.sock.settimeout(120.0)  # (a loaded machine: the frame is slow, not lost)
        first = parse_reply_like_sitl(sitl.sock.recv(65535), first=False)
        assert first["timestamp"] == pytest.approx(51 / 1200)
        sitl.sock.settimeout(0.3)
        with pytest.raises(TimeoutError):
            sitl.sock.recv(65535)  # no second reply for frame 50
        assert lock.stats.repeats == repeats + 1
        r = parse_reply_like_sitl(sitl.frame(51), first=False)
        assert r["timestamp"] == pytest.approx(52 / 1200)  # in step: the next reply is frame 51's
        sitl.close()
    finally:
        stop.set()
        th.join(5)


def test_two_instances_at_once():
    """One backend per SITL instance (ports 9002 + 10·I), each with its own scenario."""
    assert [instance_port(i) for i in range(3)] == [9002, 9012, 9022]
    a = _start(delay=0.3)
    b = _start(delay=0.8)
    try:
        sa, sb = FakeSitl(a[1]), FakeSitl(b[1])
        for i in range(1300):  # 1.08 s: the 0.3 s sonar has spoken, the 0.8 s one not yet
            ra, rb = sa.frame(i), sb.frame(i)
        ja = parse_reply_like_sitl(ra, first=False)
        jb = parse_reply_like_sitl(rb, first=False)
        assert ja["timestamp"] == jb["timestamp"] == pytest.approx(1300 / 1200)
        assert 19.0 < ja["rng_1"] < 20.5  # 20 m floor, vehicle near the surface
        assert "rng_1" in jb  # first reading delivered at 0.8 s
        assert a[0].stats.frames == b[0].stats.frames == 1300
        sa.close()
        sb.close()
    finally:
        for _, _, stop, th in (a, b):
            stop.set()
            th.join(5)


def _free_port() -> int:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def test_cli_serves_and_writes_truth(tmp_path, capsys):
    port = _free_port()
    out = tmp_path / "run"
    rc: list[int] = []
    args = ["sitl", "ardusub_trapezoid", "--port", str(port), "--idle-exit", "1.5", "-o",
            str(out), "--var", "delay=0.5", "-q"]  # fmt: skip
    th = threading.Thread(target=lambda: rc.append(main(args)), daemon=True)
    th.start()
    sitl = FakeSitl(port)
    r = None
    for _ in range(100):  # the backend needs a moment to load the scenario and bind
        r = sitl.frame(0, timeout=0.2)
        if r is not None:
            break
    assert r is not None
    down = [1500] * 4 + [1650] * 4 + [1000] * 8  # verticals push down
    for i in range(1, 2400):
        r = sitl.frame(i, down)
    sitl.close()
    again = FakeSitl(port)  # SITL restarted: a new truth file and a new engine log
    for i in range(120):
        again.frame(i)
    again.close()
    th.join(60)
    assert rc == [0], capsys.readouterr().err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["frames"] == 2520 and summary["reason"] == "idle"
    assert summary["restarts"] == 1 and len(summary["truth_files"]) == 2
    assert summary["strays"] == 1  # the new SITL's first packet, answered at its resend
    assert (out / "truth-1.csv").exists()
    for d in ("engine", "engine-1"):
        man = json.loads((out / d / "manifest.json").read_text())
        assert man["status"] == "interrupted", man["status"]
    rows = (out / "truth.csv").read_text().splitlines()
    assert rows[0].startswith("t,sitl_time_us,frame_count,x,y,z")
    assert 39 <= len(rows) - 1 <= 41  # 2 s at 0.05 s
    z = [float(line.split(",")[5]) for line in rows[1:]]
    assert z[-1] > z[0] + 0.3  # it dived


def test_cli_errors_are_clean(tmp_path, capsys):
    busy = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    busy.bind(("127.0.0.1", 0))
    port = busy.getsockname()[1]
    try:
        rc = main(["sitl", "ardusub_sawtooth", "--port", str(port), "-q"])
        err = capsys.readouterr().err
        assert rc == 2 and "cannot bind" in err and "Traceback" not in err
    finally:
        busy.close()
    rc = main(["sitl", "ardusub_sawtoth"])
    err = capsys.readouterr().err
    assert rc == 2 and "ardusub_sawtooth" in err
    bad = tmp_path / "x.parm"
    bad.write_bytes(b"FRAME_CONFIG 2\n\x00\x01\x02")
    rc = main(["sitl", "ardusub_sawtooth", "--params", str(bad)])
    err = capsys.readouterr().err
    assert rc == 2 and "byte offset 15" in err
    frame3 = tmp_path / "f3.parm"
    frame3.write_text("# frame\nFRAME_CONFIG 3\n")
    rc = main(["sitl", "ardusub_sawtooth", "--params", str(frame3)])
    err = capsys.readouterr().err
    assert rc == 2 and "f3.parm:2" in err and "FRAME_CONFIG 2" in err


def test_params_set_the_servo_map(tmp_path):
    from marinesim.interop.sitl.frame import ServoMap

    p = {"SERVO8_FUNCTION": 7, "SERVO9_FUNCTION": 40, "MOT_3_DIRECTION": -1}
    m = ServoMap.from_params(8, p)
    assert m.channels == (0, 1, 2, 3, 4, 5, 6, 8) and m.directions[2] == -1.0
    pwm = [1600] * 16
    pwm[2] = 1400
    out = m.motor_pwm(pwm)
    assert out[2] == 1600  # reversed motor mirrored back
    assert m.motor_pwm([0] * 16).tolist() == [1500.0] * 8  # no pulse = off
    heavy = ServoMap.from_params(6, {}).on_heavy()
    assert heavy.channels == (0, 1, 2, 3, 4, 5, 4, 5)
    Path(tmp_path).joinpath("ok").write_text("")


def test_cli_sitl_format_mcap_and_live(tmp_path, capsys):
    """``marinesim sitl --format mcap --live``: the engine log is also a ROS 2 MCAP, and the
    live server starts (on a free loopback port) without pacing the lockstep."""
    pytest.importorskip("mcap")
    pytest.importorskip("foxglove")
    from marinesim.io.mcap.reader import read_messages

    port = _free_port()
    out = tmp_path / "run"
    rc: list[int] = []
    args = ["sitl", "ardusub_trapezoid", "--port", str(port), "--idle-exit", "0.5", "-o",
            str(out), "--var", "delay=0.5", "-q", "--format", "mcap", "--live",
            "--live-port", "0"]  # fmt: skip
    th = threading.Thread(target=lambda: rc.append(main(args)), daemon=True)
    th.start()
    sitl = FakeSitl(port)
    r = None
    for _ in range(100):
        r = sitl.frame(0, timeout=0.2)
        if r is not None:
            break
    assert r is not None
    for i in range(1, 400):
        sitl.frame(i)
    sitl.close()
    th.join(60)
    captured = capsys.readouterr()
    assert rc == [0], captured.err
    assert "live: Foxglove WebSocket on ws://127.0.0.1:" in captured.out
    msgs = read_messages(out / "engine" / "log.mcap")
    topics = {topic for topic, _typ, _t, _m in msgs}
    assert msgs.note is None
    assert {"/clock", "/tf", "/bluerov2_0/odom/truth", "/bluerov2_0/battery"} <= topics
