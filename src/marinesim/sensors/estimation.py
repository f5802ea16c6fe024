"""``nav_ekf``: loosely coupled, attitude-aided INS/EKF batched over N vehicles (engine spec §7).

State x = [p (NED, m), v (NED, m/s), b_a (accelerometer bias, body, m/s²)], covariance P of
shape (N, 9, 9).  Prediction at every IMU sample; updates from depth, GPS and DVL in the Joseph
form with a χ² innovation gate; vehicles without a measurement skip the update through a mask
(gain 0) — there is no loop over vehicles.  Delayed measurements are applied in ``t_stamp``
order; with ``delay_compensation="replay"`` the filter keeps a ring buffer of its priors, IMU
inputs and applied measurements, rewinds to the stamp, applies the update and re-propagates.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from marinesim.core.params import ParamsBase, field
from marinesim.sensors import ekf_rows
from marinesim.sensors.dvl import sensor_velocity

__all__ = [
    "EkfParams",
    "NavEkf",
    "dvl_model",
    "ekf_predict",
    "ekf_update",
]

Arr = NDArray[np.float64]


class EkfParams(ParamsBase):
    """Noise model, gate, delay handling and initial uncertainty of ``nav_ekf`` (all required)."""

    accel_noise_std: float = field(
        ...,
        unit="m/s^2",
        description="IMU accelerometer noise sigma per sample",
        ge=0,
        allow_inf_nan=False,
    )
    accel_bias_walk: float = field(
        ...,
        unit="m/s^2/sqrt(s)",
        description="accelerometer bias random walk",
        ge=0,
        allow_inf_nan=False,
    )
    depth_std: float = field(
        ..., unit="m", description="depth measurement sigma", gt=0, allow_inf_nan=False
    )
    gps_std: float = field(
        ..., unit="m", description="GPS horizontal sigma per axis", gt=0, allow_inf_nan=False
    )
    dvl_std: float = field(
        ...,
        unit="m/s",
        description="DVL bottom-lock velocity sigma per axis",
        gt=0,
        allow_inf_nan=False,
    )
    initial_pos_std: float = field(
        ...,
        unit="m",
        description="sigma of the launch position fix per axis",
        ge=0,
        allow_inf_nan=False,
    )
    initial_vel_std: float = field(
        ...,
        unit="m/s",
        description="sigma of the initial NED velocity per axis",
        ge=0,
        allow_inf_nan=False,
    )
    initial_bias_std: float = field(
        ...,
        unit="m/s^2",
        description="sigma of the initial accelerometer bias",
        ge=0,
        allow_inf_nan=False,
    )
    dvl_lever_arm: tuple[float, float, float] = field(
        (0.0, 0.0, 0.0), unit="m", description="DVL position in body FRD"
    )
    gate_probability: float = field(
        0.999, unit="", description="chi-square gate probability (1 = no gate)", gt=0, le=1
    )
    delay_compensation: Literal["replay", "none"] = field(
        "replay", description="how delayed measurements are applied"
    )
    max_delay: float = field(
        1.0, unit="s", description="longest measurement delay the replay buffer covers", ge=0
    )
    gravity: float = field(
        9.81, unit="m/s^2", description="gravity used by the mechanisation", gt=0
    )
    initialisation: Literal["launch_fix", "first_gps"] = field(
        "launch_fix",
        description="launch_fix: truth + N(0, initial σ²) at start; first_gps: position from "
        "the first GPS fix (σ = gps_std), depth from the depth sensor, v = 0 and b_a = 0 with "
        "the initial σ (every vehicle needs a fix at the first estimate)",
    )


def ekf_predict(
    x: Arr, P: Arr, f: Arr, rot: Arr, dt: float, sigma_a: float, sigma_ba: float, g: float = 9.81
) -> tuple[Arr, Arr]:
    """One strapdown prediction step over ``dt`` seconds.

    Parameters
    ----------
    x : ndarray, shape (N, 9)
        [p, v, b_a].
    P : ndarray, shape (N, 9, 9)
    f : ndarray, shape (N, 3)
        Measured specific force [m/s²] (body).
    rot : ndarray, shape (N, 3, 3)
        Attitude estimate R̂ (body → NED).
    dt : float
        IMU period [s].
    sigma_a : float
        Accelerometer white noise per sample [m/s²].
    sigma_ba : float
        Bias random walk [m/s²/√s].
    g : float
        Gravity [m/s²].

    Returns
    -------
    x, P : ndarray
        Predicted state (N, 9) and covariance (N, 9, 9).
    """
    n = x.shape[0]
    p, v, b = x[:, 0:3], x[:, 3:6], x[:, 6:9]
    a = np.einsum("nij,nj->ni", rot, f - b)
    a[:, 2] += g
    xn = np.concatenate([p + v * dt + 0.5 * a * dt * dt, v + a * dt, b], axis=1)
    F = np.broadcast_to(np.eye(9), (n, 9, 9)).copy()
    F[:, 0:3, 3:6] = dt * np.eye(3)
    F[:, 0:3, 6:9] = -0.5 * dt * dt * rot
    F[:, 3:6, 6:9] = -dt * rot
    q = np.zeros((9, 9))
    s2 = sigma_a * sigma_a
    q[0:3, 0:3] = s2 * dt**4 / 4 * np.eye(3)
    q[0:3, 3:6] = q[3:6, 0:3] = s2 * dt**3 / 2 * np.eye(3)
    q[3:6, 3:6] = s2 * dt * dt * np.eye(3)
    q[6:9, 6:9] = sigma_ba * sigma_ba * dt * np.eye(3)
    Pn = F @ P @ np.swapaxes(F, 1, 2) + q
    return xn, 0.5 * (Pn + np.swapaxes(Pn, 1, 2))


def ekf_update(
    x: Arr, P: Arr, z: Arr, zhat: Arr, H: Arr, R: Arr, mask: NDArray[np.bool_], gate: float
) -> tuple[Arr, Arr, NDArray[np.bool_], Arr]:
    """Joseph-form update of the rows in ``mask`` with a χ² gate.

    Parameters
    ----------
    x : ndarray, shape (N, 9)
    P : ndarray, shape (N, 9, 9)
    z, zhat : ndarray, shape (N, m)
        Measurement and its prediction.
    H : ndarray, shape (N, m, 9) or (m, 9)
    R : ndarray, shape (m, m) or (N, m, m)
    mask : ndarray of bool, shape (N,)
        Rows with a measurement.
    gate : float
        NIS threshold (``inf`` = no gate).

    Returns
    -------
    x, P : ndarray
        Updated state and covariance (unchanged where not accepted).
    accepted : ndarray of bool, shape (N,)
    nis : ndarray, shape (N,)
        Normalised innovation squared (NaN where no measurement).
    """
    n = x.shape[0]
    mask = np.asarray(mask, dtype=bool)
    rows = np.flatnonzero(mask)
    if rows.size * 2 <= n:  # sparse: rows without a measurement keep x and (symmetric) P
        xn = np.array(x, dtype=float)
        Pn = np.asarray(P, dtype=float)
        Pn = 0.5 * (Pn + np.swapaxes(Pn, 1, 2))
        accepted = np.zeros(n, dtype=bool)
        nis = np.full(n, np.nan)
        if rows.size:
            Hr = H[rows] if np.ndim(H) == 3 else H
            Rr = R[rows] if np.ndim(R) == 3 else R
            xr, Pr, ar, nr = _joseph(
                xn[rows], np.asarray(P)[rows], z[rows], zhat[rows], Hr, Rr, mask[rows], gate
            )
            xn[rows], Pn[rows], accepted[rows], nis[rows] = xr, Pr, ar, nr
        return xn, Pn, accepted, nis
    return _joseph(x, P, z, zhat, H, R, mask, gate)


def _joseph(
    x: Arr, P: Arr, z: Arr, zhat: Arr, H: Arr, R: Arr, mask: NDArray[np.bool_], gate: float
) -> tuple[Arr, Arr, NDArray[np.bool_], Arr]:
    """The dense Joseph-form update of :func:`ekf_update` over every row of ``x``."""
    n = x.shape[0]
    H = np.broadcast_to(H, (n, *np.shape(H)[-2:]))
    y = np.where(mask[:, None], z - zhat, 0.0)
    Ht = np.swapaxes(H, 1, 2)
    S = H @ P @ Ht + R
    Sinv = np.linalg.inv(S)
    nis = np.einsum("ni,nij,nj->n", y, Sinv, y)
    accepted = mask & (nis <= gate)
    K = P @ Ht @ Sinv * accepted[:, None, None]
    xn = x + np.einsum("nij,nj->ni", K, y)
    IKH = np.eye(9) - K @ H
    Pn = IKH @ P @ np.swapaxes(IKH, 1, 2) + K @ np.broadcast_to(R, S.shape) @ np.swapaxes(K, 1, 2)
    Pn = 0.5 * (Pn + np.swapaxes(Pn, 1, 2))
    return xn, Pn, accepted, np.where(mask, nis, np.nan)


def dvl_model(x: Arr, rot: Arr, omega: Arr, lever: Arr) -> tuple[Arr, Arr]:
    """Predicted DVL velocity R̂ᵀv + ω × r (N, 3) and its Jacobian H (N, 3, 9)."""
    n = x.shape[0]
    rt = np.swapaxes(rot, 1, 2)
    zhat = sensor_velocity(np.einsum("nij,nj->ni", rt, x[:, 3:6]), omega, lever)
    H = np.zeros((n, 3, 9))
    H[:, :, 3:6] = rt
    return zhat, H


_H_DEPTH = np.zeros((1, 9))
_H_DEPTH[0, 2] = 1.0
_H_GPS = np.zeros((2, 9))
_H_GPS[0, 0] = _H_GPS[1, 1] = 1.0
#: Columns of the state each measurement's H reads (position down, position NE, velocity).
_H_COLUMNS = {"depth": (2, 3), "gps": (0, 2), "dvl": (3, 6)}


@dataclass
class _Step:
    """One buffered filter step: prior at t, inputs that led to it, measurements applied at t."""

    t: float
    x: Arr
    P: Arr
    f: Arr | None
    rot: Arr
    dt: float
    meas: list[tuple[float, str, Arr, NDArray[np.bool_], Arr, Arr]] = dc_field(default_factory=list)


class NavEkf:
    """Batched INS/EKF with replay of delayed measurements.

    Parameters
    ----------
    params : EkfParams
    x0 : ndarray, shape (N, 9)
        Initial state.
    P0 : ndarray, shape (N, 9, 9)
    rot0 : ndarray, shape (N, 3, 3)
        Initial attitude estimate.
    t0 : float
        Time of the initial state [s].
    compiled : bool, optional
        Run the compiled laws of :mod:`marinesim.sensors.ekf_rows` (agree with the numpy
        reference to rounding); default: when numba is usable and ``MARINESIM_JIT`` is not 0.
    """

    def __init__(
        self,
        params: EkfParams,
        x0: Arr,
        P0: Arr,
        rot0: Arr,
        t0: float,
        compiled: bool | None = None,
    ) -> None:
        self.p = params
        #: Prediction and update by the compiled per-vehicle laws (:mod:`.ekf_rows`); default:
        #: when numba is usable and ``MARINESIM_JIT`` is not 0, else the numpy reference.
        self.compiled = ekf_rows.compiled_ok() if compiled is None else bool(compiled)
        self.x = np.array(x0, dtype=float)
        self.P = np.array(P0, dtype=float)
        self.rot = np.array(rot0, dtype=float)
        self.t = float(t0)
        self.n = self.x.shape[0]
        from scipy.special import gammaincinv  # chi2 quantile: 2·P⁻¹(k/2, p)

        self.gates = {
            m: (
                np.inf
                if params.gate_probability >= 1
                else float(2.0 * gammaincinv(0.5 * m, params.gate_probability))
            )
            for m in (1, 2, 3)
        }
        self.rejected = {
            "depth": np.zeros(self.n, np.int64),
            "gps": np.zeros(self.n, np.int64),
            "dvl": np.zeros(self.n, np.int64),
        }
        self.nis: dict[str, Arr] = {}
        self.history: deque[_Step] = deque()
        self.history.append(_Step(self.t, self.x.copy(), self.P.copy(), None, self.rot.copy(), 0.0))

    # ------------------------------------------------------------------------------------
    def _predict(
        self, x: Arr, P: Arr, f: Arr, rot: Arr, dt: float, sa: float, sba: float, g: float
    ) -> tuple[Arr, Arr]:
        """:func:`ekf_predict`, compiled when :attr:`compiled`."""
        return (ekf_rows.predict if self.compiled else ekf_predict)(x, P, f, rot, dt, sa, sba, g)

    def set_attitude(self, rot: Arr, mask: NDArray[np.bool_] | None = None) -> None:
        """Use a new attitude estimate R̂ (N, 3, 3) for the rows in ``mask`` (all by default)."""
        self.rot = rot.copy() if mask is None else np.where(mask[:, None, None], rot, self.rot)

    def predict(self, f: Arr, t: float) -> None:
        """Propagate all rows to time ``t`` [s] with specific force ``f`` (N, 3)."""
        dt = t - self.t
        if dt <= 0:
            return
        self.x, self.P = self._predict(
            self.x,
            self.P,
            f,
            self.rot,
            dt,
            self.p.accel_noise_std,
            self.p.accel_bias_walk,
            self.p.gravity,
        )
        self.t = t
        # x and P are fresh arrays of the step, never changed in place: kept without a copy
        self.history.append(_Step(t, self.x, self.P, f.copy(), self.rot.copy(), dt))
        keep = self.p.max_delay + 1e-9
        while len(self.history) > 2 and self.history[1].t < t - keep:
            self.history.popleft()

    def _apply(
        self,
        x: Arr,
        P: Arr,
        kind: str,
        z: Arr,
        mask: NDArray[np.bool_],
        rot: Arr,
        omega: Arr,
        count: bool = True,
    ) -> tuple[Arr, Arr]:
        if kind == "depth":
            zhat, H, R = x[:, 2:3], _H_DEPTH, np.array([[self.p.depth_std**2]])
        elif kind == "gps":
            zhat, H, R = x[:, 0:2], _H_GPS, self.p.gps_std**2 * np.eye(2)
        else:
            zhat, H = dvl_model(x, rot, omega, np.asarray(self.p.dvl_lever_arm, dtype=float))
            R = self.p.dvl_std**2 * np.eye(3)
        gate = self.gates[z.shape[1]]
        if self.compiled:
            cols = _H_COLUMNS[kind]  # where H is non-zero
            x, P, acc, nis = ekf_rows.update(x, P, z, zhat, H, R, mask, gate, cols=cols)
        else:
            x, P, acc, nis = ekf_update(x, P, z, zhat, H, R, mask, gate)
        if count:
            self.rejected[kind] += (mask & ~acc).astype(np.int64)
            self.nis[kind] = nis
        return x, P

    def update(
        self, kind: str, z: Arr, mask: NDArray[np.bool_], t_stamp: float, omega: Arr | None = None
    ) -> None:
        """Apply a measurement of ``kind`` ("depth" (N,1), "gps" (N,2), "dvl" (N,3)) to masked rows.

        A measurement older than the filter time is replayed from the buffer when
        ``delay_compensation`` is "replay", else applied now.
        """
        om = np.zeros((self.n, 3)) if omega is None else np.asarray(omega, dtype=float)
        z = np.asarray(z, dtype=float).reshape(self.n, -1)
        mask = np.asarray(mask, dtype=bool)
        late = t_stamp < self.t - 1e-9
        if not late or self.p.delay_compensation == "none" or len(self.history) < 2:
            self.x, self.P = self._apply(self.x, self.P, kind, z, mask, self.rot, om)
            self.history[-1].meas.append((t_stamp, kind, z, mask, self.rot.copy(), om))
            return
        # replay: the newest buffered prior at or before t_stamp
        idx = 0
        for i, st in enumerate(self.history):
            if st.t <= t_stamp + 1e-9:
                idx = i
        steps = list(self.history)[idx:]
        steps[0].meas.append((t_stamp, kind, z, mask, self.rot.copy(), om))
        steps[0].meas.sort(key=lambda m: m[0])
        x, P = steps[0].x.copy(), steps[0].P.copy()
        for j, st in enumerate(steps):
            if j > 0:
                assert st.f is not None
                x, P = self._predict(
                    x,
                    P,
                    st.f,
                    st.rot,
                    st.dt,
                    self.p.accel_noise_std,
                    self.p.accel_bias_walk,
                    self.p.gravity,
                )
                st.x, st.P = x, P  # fresh arrays, never changed in place
            for ts, k2, z2, m2, r2, o2 in st.meas:
                new = ts == t_stamp and k2 == kind and z2 is z
                x, P = self._apply(x, P, k2, z2, m2, r2, o2, count=new)
        self.x, self.P = x, P

    def belief_velocity_body(self) -> Arr:
        """Body velocity R̂ᵀ v̂ (N, 3) [m/s]."""
        return np.einsum("nji,nj->ni", self.rot, self.x[:, 3:6])
