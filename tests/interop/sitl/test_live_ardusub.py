"""Opt-in: the real ArduSub SITL flies marinesim (``MARINESIM_ARDUSUB`` = an ``ardusub`` binary).

SITL is started as a user starts it: ``ardusub --model JSON -w --defaults sub.parm,heavy.parm``
where ``sub.parm`` is the ArduPilot tree's ``Tools/autotest/default_params/sub.parm`` (found
next to the binary's tree, or ``MARINESIM_ARDUSUB_DEFAULTS``, or the recordings' byte copy in
``../shared``): without it SITL's barometer noise is 0.2 m instead of 0.02 m.

The backend serves ``ardusub_sawtooth`` / ``ardusub_trapezoid`` (BlueROV2 Heavy, FRAME_CONFIG
2) on SITL instance 7's port (9072); a pymavlink GCS on TCP 5830 arms, dives in ALT_HOLD,
holds depth, then switches to SURFTRAK and lets it track the seafloor.  Judged by the
SURFTRAK spec's SITL bands (§16; e = true altitude − rangefinder target, after engagement):

* ALT_HOLD: depth within ±0.10 m of its mean over a 10 s hold (README §8.5 "a few cm");
* SURFTRAK: exactly one ``rangefinder target is X meters``, X = true altitude ± 0.10 m;
* sawtooth: RMS e in [0.28, 0.45] m; trapezoid: max |e| ≤ 0.50 m.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest

BIN = os.environ.get("MARINESIM_ARDUSUB")
SHARED_SUB_PARM = (
    Path(__file__).resolve().parents[4] / "shared" / "reference" / "ardusub_sitl" / "sub.parm"
)


def sub_parm() -> Path:
    """ArduSub SITL's vehicle defaults, as ``sim_vehicle.py`` passes them."""
    env = os.environ.get("MARINESIM_ARDUSUB_DEFAULTS")
    if env:
        return Path(env)
    exe = Path(BIN or "").resolve()
    for up in exe.parents:
        cand = up / "Tools" / "autotest" / "default_params" / "sub.parm"
        if cand.is_file():
            return cand
    if SHARED_SUB_PARM.is_file():
        return SHARED_SUB_PARM
    pytest.skip("sub.parm not found: set MARINESIM_ARDUSUB_DEFAULTS")


pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not BIN, reason="set MARINESIM_ARDUSUB to an ardusub SITL binary"),
]

INSTANCE = 7
PARAMS = """FRAME_CONFIG 2
SERVO8_FUNCTION 40
MNT1_TYPE 0
LOG_DISARMED 1
RNGFND1_TYPE 100
RNGFND1_ORIENT 25
RNGFND1_MIN 0.5
RNGFND1_MAX 50
SURFTRAK_DEPTH -100
PSC_JERK_Z 8
PILOT_ACCEL_Z 500
"""


class Gcs:
    """Minimal pymavlink GCS: heartbeat, joystick, modes, arming, on SITL's clock."""

    def __init__(self, port: int) -> None:
        from pymavlink import mavutil

        deadline = time.time() + 60
        while True:
            try:
                self.m = mavutil.mavlink_connection(f"tcp:127.0.0.1:{port}", source_system=255)
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.5)
        self.m.wait_heartbeat(timeout=60)
        self.t_boot = 0.0
        self.texts: list[tuple[float, str]] = []
        self.depth = 0.0
        self.mode = -1
        # 4 Hz: ALL at 10 Hz saturates SITL's serial queue (README §5 of the recordings)
        self.m.mav.request_data_stream_send(self.m.target_system, 0, 0, 4, 1)

    def pump(self, dt: float, z: int = 500) -> None:
        """Process messages and send MANUAL_CONTROL / HEARTBEAT for dt seconds of SITL time."""
        t_end = self.t_boot + dt
        next_ctl = self.t_boot
        wall_end = time.time() + dt * 5 + 30
        while self.t_boot < t_end:
            if time.time() > wall_end:
                raise TimeoutError("SITL stopped advancing")
            if self.t_boot >= next_ctl:
                self.m.mav.manual_control_send(self.m.target_system, 0, 0, z, 0, 0)
                self.m.mav.heartbeat_send(6, 8, 0, 0, 0)
                next_ctl = self.t_boot + 0.1
            msg = self.m.recv_match(blocking=True, timeout=0.2)
            if msg is None:
                continue
            if hasattr(msg, "time_boot_ms"):
                self.t_boot = msg.time_boot_ms / 1000.0
            if msg.get_type() == "STATUSTEXT":
                self.texts.append((self.t_boot, msg.text))
            elif msg.get_type() == "GLOBAL_POSITION_INT":
                self.depth = -msg.relative_alt / 1000.0
            elif msg.get_type() == "HEARTBEAT" and msg.autopilot == 3:
                self.mode = msg.custom_mode

    def set_mode(self, mode: int) -> float:
        """Change mode; returns the SITL time the request was sent (messages that the change
        itself prints, e.g. ``rangefinder target is``, come after it)."""
        t_sent = self.t_boot
        self.m.mav.set_mode_send(self.m.target_system, 1, mode)
        for _ in range(6):
            self.pump(0.5)
            if self.mode == mode:
                break
        assert self.mode == mode, (self.mode, mode)
        return t_sent

    def arm(self) -> None:
        self.m.mav.command_long_send(self.m.target_system, 1, 400, 0, 1, 0, 0, 0, 0, 0, 0)
        self.pump(2.0)


def _die_with_parent() -> None:
    """In the SITL child: SIGTERM when the test process dies (a killed pytest, a CI timeout),
    so no SITL is left holding port 5830 for the next run (Linux ``PR_SET_PDEATHSIG``)."""
    import contextlib
    import ctypes
    import signal

    # not Linux: no prctl; stop_sitl still stops SITL at a normal end
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM), 0, 0, 0)


def start_sitl(tmp_path: Path, name: str = "sitl") -> subprocess.Popen:
    """``ardusub --model JSON -w --defaults sub.parm,heavy.parm -I7`` in ``tmp_path``."""
    (tmp_path / "heavy.parm").write_text(PARAMS)
    return subprocess.Popen(
        [str(Path(BIN or "")), "--model", "JSON", "--speedup", "10", "-w", "--defaults",
         f"{sub_parm()},heavy.parm", f"-I{INSTANCE}", "--home", "33.810313,-118.39386,0,0"],
        cwd=tmp_path, stdout=(tmp_path / f"{name}.out").open("w"), stderr=subprocess.STDOUT,
        preexec_fn=_die_with_parent,
    )  # fmt: skip


def stop_sitl(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


def _fly(terrain: str, tmp_path: Path) -> tuple[np.ndarray, list[tuple[float, str]], dict]:
    from marinesim.interop.sitl.lockstep import Lockstep
    from marinesim.interop.sitl.plant import EnginePlant
    from marinesim.interop.sitl.server import instance_port, serve
    from marinesim.interop.sitl.truthlog import TruthLog
    from marinesim.scenario import load_simulation

    sim = load_simulation(f"ardusub_{terrain}", variables=["end=3600"])
    plant = EnginePlant(sim)
    log = TruthLog(plant, tmp_path / "run")
    lock = Lockstep(plant, on_frame=log)
    stop = threading.Event()
    th = threading.Thread(target=serve, args=(lock,), daemon=True,
                          kwargs={"port": instance_port(INSTANCE), "should_stop": stop.is_set})  # fmt: skip
    th.start()
    sitl = start_sitl(tmp_path)
    info: dict = {}
    try:
        try:
            gcs = Gcs(5760 + 10 * INSTANCE)
            while not any("origin set" in t for _, t in gcs.texts):
                gcs.pump(1.0)
            gcs.set_mode(2)  # ALT_HOLD
            gcs.arm()
            while gcs.depth < 9.0:  # dive
                gcs.pump(0.5, z=250)
            gcs.pump(10.0)  # settle
            t0 = gcs.t_boot
            gcs.pump(10.0)  # hold
            info["hold"] = (t0, gcs.t_boot)
            info["engaged"] = gcs.set_mode(21)  # SURFTRAK
            gcs.pump(150.0 if terrain == "sawtooth" else 200.0)
            texts = gcs.texts
        except OSError as exc:  # the link broke: say why SITL went away (a port in use, …)
            out = (tmp_path / "sitl.out").read_text(errors="replace")[-800:]
            raise AssertionError(
                f"GCS link to SITL -I{INSTANCE} lost: {exc}; sitl.out:\n{out}"
            ) from exc
    finally:
        stop_sitl(sitl)
        stop.set()
        th.join(5)
        log.close()
    with (tmp_path / "run" / "truth.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    cols = ("sitl_time_us", "z", "true_alt")
    tab = np.array([[float(r[c]) for c in cols] for r in rows])
    return tab, texts, info


@pytest.mark.parametrize("terrain", ["sawtooth", "trapezoid"])
def test_real_ardusub_holds_depth_and_tracks_the_seafloor(terrain, tmp_path):
    if shutil.which(BIN or "") is None and not Path(BIN or "").exists():
        pytest.skip(f"MARINESIM_ARDUSUB={BIN!r} is not an executable")
    tab, texts, info = _fly(terrain, tmp_path)
    t = tab[:, 0] / 1e6
    h0, h1 = info["hold"]
    hold = (t >= h0) & (t <= h1)
    z = tab[hold, 1]
    assert np.max(np.abs(z - z.mean())) <= 0.10, "ALT_HOLD did not hold depth"
    targets = [(tt, txt) for tt, txt in texts
               if "rangefinder target is" in txt and tt >= info["engaged"]]  # fmt: skip
    assert len(targets) == 1, targets
    t_msg, txt = targets[0]
    target = float(txt.split("is")[1].split()[0])
    # the target is ArduSub's 0.25 Hz low-passed sonar reading at engagement (time constant
    # 0.64 s: 3τ ≈ 1.9 s of memory), of readings that are 0.3 s (delay) + up to 0.1 s (10 Hz)
    # + 0.05 s (ArduSub's 20 Hz) old: over a moving floor it lies among the true altitudes
    # of the last 0.45 + 1.9 s, ±3σ of the noise
    win = (t >= t_msg - 2.4) & (t <= t_msg)
    lo, hi = float(tab[win, 2].min()), float(tab[win, 2].max())
    assert lo - 0.15 <= target <= hi + 0.15, (target, lo, hi)
    after = t >= t_msg + 5.0
    e = tab[after, 2] - target
    if terrain == "sawtooth":
        rms = float(np.sqrt(np.mean(e**2)))
        assert 0.28 <= rms <= 0.45, rms
    else:
        assert float(np.max(np.abs(e))) <= 0.50


def test_real_sitl_restart_and_a_stray_packet(tmp_path):
    """A stray frame-0 datagram mid-dive changes nothing; a restarted SITL gets a fresh vehicle
    floating at the surface (not the old run's depth), in a new truth file."""
    import socket

    from marinesim.interop.sitl.lockstep import Lockstep
    from marinesim.interop.sitl.plant import EnginePlant
    from marinesim.interop.sitl.protocol import encode_servo
    from marinesim.interop.sitl.server import instance_port, serve
    from marinesim.interop.sitl.truthlog import TruthLog
    from marinesim.scenario import load_simulation

    if shutil.which(BIN or "") is None and not Path(BIN or "").exists():
        pytest.skip(f"MARINESIM_ARDUSUB={BIN!r} is not an executable")
    sim = load_simulation("ardusub_sawtooth", variables=["end=3600"])
    plant = EnginePlant(sim)
    log = TruthLog(plant, tmp_path / "run")
    lock = Lockstep(plant, on_frame=log)
    stop = threading.Event()
    port = instance_port(INSTANCE)
    th = threading.Thread(target=serve, args=(lock,), daemon=True,
                          kwargs={"port": port, "should_stop": stop.is_set})  # fmt: skip
    th.start()
    (tmp_path / "s1").mkdir()
    (tmp_path / "s2").mkdir()
    sitl = start_sitl(tmp_path / "s1")
    try:
        gcs = Gcs(5760 + 10 * INSTANCE)
        while not any("origin set" in t for _, t in gcs.texts):
            gcs.pump(1.0)
        gcs.set_mode(19)  # MANUAL
        gcs.arm()
        while gcs.depth < 2.0:
            gcs.pump(0.5, z=250)
        gcs.pump(1.0)
        stray = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        stray.sendto(encode_servo(1200, 0, [1500] * 16), ("127.0.0.1", port))
        stray.close()
        gcs.pump(3.0)
        assert lock.stats.strays >= 1 and lock.stats.restarts == 0
        deep = float(plant.block.truth.pos[0, 2])
        assert deep > 1.5 and gcs.depth > 1.5
        stop_sitl(sitl)
        gcs.m.close()
        sitl = start_sitl(tmp_path / "s2")
        gcs = Gcs(5760 + 10 * INSTANCE)
        while not any("origin set" in t for _, t in gcs.texts):
            gcs.pump(1.0)
        gcs.pump(2.0)
        assert lock.stats.restarts == 1
        assert float(plant.block.truth.pos[0, 2]) < 0.5  # the new run floats at the surface
        assert abs(gcs.depth) < 0.5  # and the new SITL sees it there
    finally:
        stop_sitl(sitl)
        stop.set()
        th.join(5)
        log.close()
    z1 = np.array([float(r.split(",")[5]) for r in
                   (tmp_path / "run" / "truth.csv").read_text().splitlines()[1:]])  # fmt: skip
    z2 = np.array([float(r.split(",")[5]) for r in
                   (tmp_path / "run" / "truth-1.csv").read_text().splitlines()[1:]])  # fmt: skip
    assert z1.max() > 1.5 and np.all(np.abs(np.diff(z1)) < 0.1)  # no jump back to the surface
    assert z2.max() < 0.5
