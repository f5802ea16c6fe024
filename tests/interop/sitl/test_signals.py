"""SIGTERM and Ctrl-C (SIGINT) stop ``marinesim sitl`` cleanly while SITL is flying: the
summary, the engine manifest and every truth row are complete."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from marinesim.interop.sitl.plant import TRUTH_COLUMNS
from marinesim.interop.sitl.protocol import encode_servo

REPO = Path(__file__).resolve().parents[3]
DOWN = [1500] * 4 + [1650] * 4 + [1000] * 8


def _free_port() -> int:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_mid_flight_leaves_complete_logs(tmp_path, sig, code):
    port = _free_port()
    out = tmp_path / "run"
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "marinesim", "sitl", "ardusub_sawtooth", "--port", str(port),
         "-o", str(out), "-q"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    replies = [0]
    flying = threading.Event()
    done = threading.Event()

    def fly() -> None:  # a fake SITL in lockstep until the backend stops answering
        sock.settimeout(0.5)
        count = 0
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not done.is_set():
            sock.sendto(encode_servo(1200, count, DOWN), ("127.0.0.1", port))
            try:
                sock.recv(65535)
            except TimeoutError:
                if proc.poll() is not None:
                    return  # the backend stopped
                continue  # still loading the scenario, or compiling: resend, as SITL does
            replies[0] += 1
            count += 1
            if count == 1500:
                flying.set()

    th = threading.Thread(target=fly, daemon=True)
    th.start()
    try:
        assert flying.wait(120), proc.stderr.read() if proc.poll() is not None else "no frames"
        proc.send_signal(sig)  # while frames keep coming
        rc = proc.wait(60)
    finally:
        done.set()
        if proc.poll() is None:
            proc.kill()
        th.join(10)
        sock.close()
    err = proc.stderr.read()
    assert rc == code, err
    assert "Traceback" not in err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["reason"] == sig.name
    assert summary["frames"] == replies[0] >= 1500  # every answered frame was a physics frame
    man = json.loads((out / "engine" / "manifest.json").read_text())
    assert man["status"] == "interrupted" and man["ended_by"] == sig.name
    lines = (out / "truth.csv").read_text().split("\n")
    assert lines[-1] == ""  # ends on a newline: no half row
    assert lines[0].split(",") == list(TRUTH_COLUMNS)
    rows = [[float(v) for v in line.split(",")] for line in lines[1:-1]]
    assert all(len(r) == len(TRUTH_COLUMNS) for r in rows)
    t_last = rows[-1][0]
    assert summary["sim_time_s"] - 0.05 - 1e-9 <= t_last <= summary["sim_time_s"]
