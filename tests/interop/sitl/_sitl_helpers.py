"""Shared helpers of the SIM_JSON backend tests: recorded captures and the recording's plant.

The recorded sessions live in ``../shared/reference/ardusub_sitl/`` (CI has them); a small
excerpt ships in ``tests/data/ardusub/`` so that the codec and lockstep tests run offline.
``RefPlant`` is the plant of that README's §4 (BlueROV2 heave/roll/yaw, imposed surge,
terrain, sample-and-hold sonar), written here from the specification to check the backend's
frame stepping, time base and reply encoding bit for bit against the recordings.
"""

from __future__ import annotations

import csv
import gzip
import json
import math
from pathlib import Path

import numpy as np
import pytest

from marinesim.interop.sitl.protocol import SensorReply

REPO = Path(__file__).resolve().parents[3]
SHARED = REPO.parent / "shared"
REF = SHARED / "reference" / "ardusub_sitl"
T200_CSV = SHARED / "data" / "t200" / "t200_performance_10-20V.csv"
LOCAL = REPO / "tests" / "data" / "ardusub"
SESSIONS = ("a_manual_descent", "b_althold", "c_surftrak_sawtooth", "p_protocol_probe")

needs_shared = pytest.mark.skipif(not REF.exists(), reason="../shared not present")


def read_capture(path: Path) -> list[dict]:
    """Rows of a ``capture.jsonl(.gz)``."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:  # type: ignore[operator]
        return [json.loads(line) for line in fh if line.strip()]


def pairs(rows: list[dict]) -> list[tuple[bytes, dict]]:
    """(packet bytes, reply row) in capture order."""
    out = []
    for i in range(0, len(rows) - 1):
        if rows[i]["dir"] == "ap2be" and rows[i + 1]["dir"] == "be2ap":
            out.append((bytes.fromhex(rows[i]["hex"]), rows[i + 1]))
    return out


def session_json(session: str) -> dict:
    return json.loads((REF / session / "session.json").read_text())


def _thrust_table() -> tuple[np.ndarray, np.ndarray]:
    pwm, force = [], []
    with T200_CSV.open() as fh:
        for r in csv.DictReader(fh):
            if float(r["voltage_V"]) == 16.0:
                pwm.append(float(r["pwm_us"]))
                force.append(float(r["force_N"]))
    return np.array(pwm), np.array(force)


class RefPlant:
    """The recording backend's plant (README §4), one frame per :meth:`step`."""

    M, MA, W, B = 11.5, 14.57, 112.8, 114.8
    DL, DQ, H = 5.18, 36.99, 0.254
    INERTIA, IA, KL, KQ, BG, ARM = 0.16, 0.12, 0.07, 1.55, 0.02, 0.218
    L = (0.156 + 0.111) * math.sqrt(0.5)
    G = 9.80665

    def __init__(self, backend: dict, rate: float = 1200.0) -> None:
        self.cfg = backend
        self.rate = rate
        self.pwm_tab, self.f_tab = _thrust_table()
        self.reset()

    def reset(self) -> None:
        self.n = 0
        self.t = 0.0
        self.x = self.y = self.w = self.phi = self.p = self.psi = self.r = 0.0
        self.z = self.H * (self.W / self.B) - self.H / 2  # 0.12257491289198608 (README §4)
        self.pings: list[tuple[float, float]] = []  # (ping time, range)
        self.next_ping = 0
        self.rng: float | None = None

    def thrust(self, pwm: float) -> float:
        if pwm == 0 or 1472 < pwm < 1528:
            return 0.0
        return float(np.interp(pwm, self.pwm_tab, self.f_tab))

    def u(self, t: float) -> float:
        u0 = self.cfg.get("u0_m_s") or 0.0
        t0 = self.cfg.get("u_start_s")
        ramp = self.cfg.get("u_ramp_s") or 4.0
        if t0 is None or t < t0:
            return 0.0
        return u0 * min((t - t0) / ramp, 1.0)

    def floor(self, x: float) -> float:
        if self.cfg["terrain"] == "flat20":
            return 20.0
        v = (x + 30.0) / 60.0
        return 14.0 - 4.0 * (v - math.floor(v))

    def step(self, pwm: np.ndarray) -> SensorReply:
        dt = 1.0 / self.rate
        t1 = [self.thrust(float(v)) for v in pwm[:6]]
        f = min(max((self.z + self.H / 2) / self.H, 0.0), 1.0)
        wd = (
            self.W - self.B * f + (t1[4] + t1[5]) * math.cos(self.phi)
            - self.DL * self.w - self.DQ * self.w * abs(self.w)
        ) / (self.M + self.MA)  # fmt: skip
        pd = (
            self.ARM * (t1[4] - t1[5]) - self.W * self.BG * math.sin(self.phi)
            - self.KL * self.p - self.KQ * self.p * abs(self.p)
        ) / (self.INERTIA + self.IA)  # fmt: skip
        rd = (
            self.L * (t1[0] - t1[1] - t1[2] + t1[3]) - self.KL * self.r
            - self.KQ * self.r * abs(self.r)
        ) / (self.INERTIA + self.IA)  # fmt: skip
        self.n += 1
        t_new = self.n / self.rate
        u_old, u_new = self.u(self.t), self.u(t_new)
        du = (u_new - u_old) / dt
        self.w += wd * dt
        self.z += self.w * dt
        self.p += pd * dt
        self.phi += self.p * dt
        self.r += rd * dt
        self.psi += self.r * dt
        self.psi = ((self.psi + math.pi) % (2 * math.pi)) - math.pi
        self.x += u_new * math.cos(self.psi) * dt
        self.y += u_new * math.sin(self.psi) * dt
        fl = self.floor(self.x)
        if self.z > fl - self.H / 2:
            self.z, self.w, wd = fl - self.H / 2, min(self.w, 0.0), 0.0
        self.t = t_new
        # sonar: ping at j*0.1, delivered at j*0.1 + delay, sample and hold
        period, delay = self.cfg["rng_period_s"], self.cfg["rng_delay_s"]
        while t_new >= self.next_ping * period - 1e-9:
            rng = (fl - self.z) / math.cos(self.phi)
            self.pings.append((self.next_ping * period, rng))
            self.next_ping += 1
        while self.pings and t_new >= self.pings[0][0] + delay - 1e-9:
            self.rng = self.pings.pop(0)[1]
        sp, cp = math.sin(self.phi), math.cos(self.phi)
        u = u_new
        return SensorReply(
            timestamp=t_new,
            gyro=[self.p, sp * self.r, cp * self.r],
            accel_body=[
                du,
                cp * u * self.r + sp * (wd - self.G),
                -sp * u * self.r + cp * (wd - self.G),
            ],
            position=[self.x, self.y, self.z],
            velocity=[u * math.cos(self.psi), u * math.sin(self.psi), self.w],
            attitude=[self.phi, 0.0, self.psi],
            rng={} if self.rng is None else {1: self.rng},
        )

    def set_state_from_reply(self, r: dict) -> None:
        """Continue from a recorded reply (the frame before a window; roll must be 0 so that
        r = gyro_z exactly).  Pings not yet delivered are unknown: ``rng`` restarts with the
        reply's held value and the first new ping."""
        self.t = r["timestamp"]
        self.n = round(self.t * self.rate)
        self.x, self.y, self.z = r["position"]
        self.w = r["velocity"][2]
        self.phi, _, self.psi = r["attitude"]
        self.p = r["gyro"][0]
        self.r = r["gyro"][2] / math.cos(self.phi)
        self.rng = r.get("rng_1")
        period = self.cfg["rng_period_s"]
        self.next_ping = math.floor(self.t / period) + 1
        self.pings = []
