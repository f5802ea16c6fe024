"""The height and climb rate ArduPilot's EKF3 reports, from a barometer and an accelerometer.

ArduSub's controllers do not see the depth sensor: they see EKF3's output (``inertial_nav``).
The vertical channel of EKF3 that matters for them is modelled here (z up, SI units):

* a **delayed fusion horizon**: states height, climb rate and accelerometer bias, predicted
  every ``ekf_loops`` 400 Hz loops (80 Hz) with the mean acceleration of those loops, running
  ``imu_buffer_length`` = ``max_delay_ms // 12 + 1`` EKF steps behind the present (EKF3 sizes
  its buffer from the longest sensor delay: the GPS lag, capped at 250 ms);
* **barometer fusion**: ArduSub reads the barometer at 10 Hz (``update_altitude``); EKF3 takes
  each new reading, stamps it ``arrival − EK3_HGT_DELAY − EKF step/2`` and fuses it (scalar
  Kalman update, R = EK3_ALT_M_NSE²) at the first horizon step at or after that stamp (the
  model reads the barometer at the first loop and every ``baro_period`` after; a reading is
  matched to a state up to one EKF step younger than its stamp, as in EKF3, and that alone
  changes the estimate's amplitude by ~2 % at 0.2 Hz).  Process noise per
  step: climb rate (dt·EK3_ACC_P_NSE)², bias (dt·EK3_ABIAS_P_NSE)²;
* the **output predictor**: height and climb rate propagated every loop with the accelerometer,
  pulled towards the horizon states by EKF3's PI correction (gain dt_ekf/τ, τ = EK3_TAU_OUTPUT,
  integral gain 0.1·gain²) applied to the whole output history.

The point of the model is the delay EKF3 *assumes*: when the real reading is fresher than
EK3_HGT_DELAY (ArduPilot's SITL barometer has no delay, ``baro_age`` ≈ 5 ms), each reading is
matched to a state ~60 ms older, and the reported height runs ahead of the truth during heave
motion — phase lead that damps ArduSub's depth loops.  With ``EK3_HGT_DELAY`` equal to the real
delay the estimate has no lead.  Not modelled: the horizontal states, innovation gates, height
source switching, the GPS/origin height corrections.

Values are floats (N = 1) or arrays (N,); all vehicles share the clock.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

import numpy as np

from marinesim.core.params import ParamsBase, field

__all__ = ["Ekf3Height", "Ekf3HeightParams"]

Num = Any


class Ekf3HeightParams(ParamsBase):
    """EKF3 parameters of the vertical channel (ArduPilot names and units) and its timing."""

    EK3_HGT_DELAY: float = field(60.0, unit="ms", description="assumed height delay", ge=0, le=250)
    EK3_ALT_M_NSE: float = field(0.1, unit="m", description="height noise (≥ 0.1 used)", gt=0)
    EK3_ACC_P_NSE: float = field(0.35, unit="m/s^2", description="accel process noise", gt=0)
    EK3_ABIAS_P_NSE: float = field(0.02, unit="m/s^3", description="accel bias noise", ge=0)
    EK3_TAU_OUTPUT: float = field(25.0, unit="cs", description="output tracking τ", gt=0)
    max_delay_ms: float = field(
        220.0, unit="ms", description="longest sensor delay the EKF buffers (GPS lag)", ge=0,
        le=250,
    )  # fmt: skip
    baro_period: float = field(0.1, unit="s", description="barometer read period", gt=0)
    baro_age: float = field(
        0.005, unit="s", description="real age of a reading at arrival (SITL: 0-10 ms)", ge=0
    )
    loop_dt: float = field(0.0025, unit="s", description="autopilot loop period", gt=0)
    ekf_loops: int = field(5, description="loops per EKF prediction (12 ms target)", ge=1)

    @classmethod
    def from_ardupilot(cls, params: dict[str, float], **kw: Any) -> Ekf3HeightParams:
        """The EK3_* values found in an ArduPilot parameter dict (others at their defaults)."""
        names = ("EK3_HGT_DELAY", "EK3_ALT_M_NSE", "EK3_ACC_P_NSE", "EK3_ABIAS_P_NSE",
                 "EK3_TAU_OUTPUT")  # fmt: skip
        return cls(**{k: float(params[k]) for k in names if k in params}, **kw)


class Ekf3Height:
    """EKF3's reported height and climb rate for N vehicles (see the module notes).

    Parameters
    ----------
    params : Ekf3HeightParams
    z : float or ndarray (N,)
        Initial height (m, up), taken as exact.
    vz : float or ndarray (N,)
        Initial climb rate (m/s).

    Notes
    -----
    Call :meth:`step` once per autopilot loop with the measured vertical acceleration (m/s²,
    up, gravity removed) and the current barometer height (m, up); read :attr:`z` and
    :attr:`vz` (EKF3's output, what ``inertial_nav`` returns) afterwards.
    """

    def __init__(self, params: Ekf3HeightParams, z: Num, vz: Num = 0.0) -> None:
        p = params
        self.p = p
        self._scalar = np.ndim(z) == 0
        z = np.atleast_1d(np.asarray(z, dtype=float)).copy()
        n = z.shape[0]
        self.dt = p.loop_dt
        self.dte = p.loop_dt * p.ekf_loops
        self.nbuf = int(round(max(p.EK3_HGT_DELAY, p.max_delay_ms))) // 12 + 1
        # the stamp EKF3 gives a reading, relative to when the reading was really taken
        self.stamp_shift = p.EK3_HGT_DELAY * 1e-3 + 0.5 * self.dte - p.baro_age
        self.x = np.zeros((n, 3))
        self.x[:, 0] = z
        self.x[:, 1] = vz
        self.P = np.zeros((n, 3, 3))
        self.P[:, 0, 0] = self.P[:, 1, 1] = 0.01
        self.P[:, 2, 2] = 1e-4
        self.q = np.array([0.0, (self.dte * p.EK3_ACC_P_NSE) ** 2,
                           (self.dte * p.EK3_ABIAS_P_NSE) ** 2])  # fmt: skip
        self.R = max(p.EK3_ALT_M_NSE, 0.1) ** 2
        self.F = np.array([[1.0, self.dte, -0.5 * self.dte**2], [0.0, 1.0, -self.dte],
                           [0.0, 0.0, 1.0]])  # fmt: skip
        self.gain = self.dte / min(max(0.01 * p.EK3_TAU_OUTPUT, 0.1), 0.5)
        self.out = np.stack([z, np.zeros(n) + vz])  # (2, N): height, climb rate
        self.hist = np.zeros((max(self.nbuf - 1, 1), 2, n))  # output at each buffered EKF step
        self.acc = np.zeros((max(self.nbuf - 1, 1), n))  # mean acceleration of each step
        self.t_buf = np.zeros(max(self.nbuf - 1, 1))
        self.n_buf = 0
        self.head = 0
        self.err_int = np.zeros((2, n))
        self.baro: deque[tuple[float, np.ndarray]] = deque()
        self.t = 0.0
        self.t_baro = -math.inf
        self.loops = 0
        self.acc_sum = np.zeros(n)

    @property
    def z(self) -> Num:
        """Reported height (m, up)."""
        return float(self.out[0, 0]) if self._scalar else self.out[0].copy()

    @property
    def vz(self) -> Num:
        """Reported climb rate (m/s)."""
        return float(self.out[1, 0]) if self._scalar else self.out[1].copy()

    def step(self, a_up: Num, baro_z: Num) -> None:
        """One autopilot loop: acceleration (m/s², up) and barometer height (m, up) now."""
        self.t += self.dt
        if self.t - self.t_baro >= self.p.baro_period - 1e-9:
            self.baro.append((self.t - self.stamp_shift, np.asarray(baro_z, dtype=float) + 0.0))
            self.t_baro = self.t
        a = np.asarray(a_up, dtype=float) - self.x[:, 2]
        v_last = self.out[1].copy()
        self.out[1] += a * self.dt
        self.out[0] += (self.out[1] + v_last) * (0.5 * self.dt)
        self.acc_sum += a_up
        self.loops += 1
        if self.loops == self.p.ekf_loops:
            self._ekf_step()

    def _ekf_step(self) -> None:
        a_mean = self.acc_sum / self.loops
        self.acc_sum = self.acc_sum * 0.0
        self.loops = 0
        m = self.nbuf - 1  # the horizon lags the newest step by m EKF steps
        if m == 0:
            t_h, a_h, out_h = self.t, a_mean, self.out.copy()
        elif self.n_buf < m:  # filling: nothing reaches the horizon yet
            i = self.n_buf
            self.n_buf += 1
            self.t_buf[i], self.acc[i], self.hist[i] = self.t, a_mean, self.out
            return
        else:
            i = self.head
            t_h, a_h, out_h = self.t_buf[i], self.acc[i].copy(), self.hist[i].copy()
            self.t_buf[i], self.acc[i], self.hist[i] = self.t, a_mean, self.out
            self.head = (i + 1) % m
        x, dt = self.x, self.dte
        v0 = x[:, 1].copy()
        x[:, 1] += (a_h - x[:, 2]) * dt
        x[:, 0] += (x[:, 1] + v0) * (0.5 * dt)
        self.P = self.F @ self.P @ self.F.T
        self.P[:, [0, 1, 2], [0, 1, 2]] += self.q
        while self.baro and self.baro[0][0] <= t_h:
            _, y = self.baro.popleft()
            ph = self.P[:, :, 0]
            k = ph / (ph[:, :1] + self.R)
            x += k * (y - x[:, 0])[:, None]
            self.P = self.P - k[:, :, None] * ph[:, None, :]
        # output predictor: PI correction towards the horizon states, on the whole history
        err = np.stack([x[:, 0], x[:, 1]]) - out_h
        self.err_int += err
        g = self.gain
        corr = err * g + self.err_int * (g * g * 0.1)
        self.hist += corr
        self.out += corr
