"""The recorded reference plant (``../shared/reference/ardusub_sitl`` README §4), compiled.

The plant that flew the recorded ArduSub SITL sessions: BlueROV2 heave, roll and yaw driven by
motors 1–6 of the vectored frame (FRAME_CONFIG 1) through the T200 16 V curve, an imposed
surge speed, a seafloor and a sample-and-hold sonar.  Selecting it (``marinesim sitl
--physics reference``) lets users and tests compare marinesim's results with the recordings
like with like.  One frame is one call of a numba-compiled step (about a microsecond); the
reply text is formatted from the state vector with one ``%`` operation, so a frame costs a
few microseconds of Python beyond the UDP I/O.

Each frame (dt = 1/rate): thrusts from the PWM; ẇ, ṗ, ṙ from the §4 equations; t_new = n/rate;
semi-implicit Euler (w, z; p, φ; r, ψ wrapped to [−π, π); x, y with the new ψ and u(t_new));
the hard floor; the sonar: ping j at the first frame with t_new ≥ j·period (slant range
(floor − z)/cos φ), delivered from the first frame with t_new ≥ j·period + delay and held.

Floors: ``flat20`` (20 m), ``sawtooth`` (the recordings' 14 − 4·frac((x + 30)/60) m along
north), or any gridded :class:`~marinesim.environment.terrain.Bathymetry` (bilinear, edges
held).  Scripted sonar faults (:class:`SonarFault`) replace the value *sent* while the reply
time is inside a window: ``nan`` (no data), ``zero`` (0.0, below minimum) or ``out_of_range``
(a value beyond RNGFND1_MAX).
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numba
import numpy as np
from numpy.typing import NDArray

from marinesim.core.errors import ConfigError
from marinesim.interop.sitl.protocol import SensorReply

__all__ = [
    "FAULT_KINDS",
    "REF_FLOORS",
    "ReferencePlant",
    "SonarFault",
    "parse_fault",
    "t200_16v_table",
]

#: Floors of the reference plant (besides a Bathymetry object).
REF_FLOORS = ("flat20", "sawtooth")
#: Sonar fault kinds → code in the kernel.
FAULT_KINDS = {"nan": 0, "zero": 1, "out_of_range": 2}

# state vector indices
_N, _T, _X, _Y, _Z, _W, _PHI, _P, _PSI, _R, _RNG, _HAVE, _NEXT, _WD, _DU, _U, _FLOOR = range(17)
_NSTATE = 17

# constants (README §4, BlueROV2 after Wu 2018)
_M, _MA, _WGT, _BUOY = 11.5, 14.57, 112.8, 114.8
_DL, _DQ, _H = 5.18, 36.99, 0.254
_INERTIA, _IA, _KL, _KQ, _BG, _ARM = 0.16, 0.12, 0.07, 1.55, 0.02, 0.218
_L = (0.156 + 0.111) * math.sqrt(0.5)
_G = 9.80665
Z0 = _H * (_WGT / _BUOY) - _H / 2  # surface equilibrium (f = W/B), 0.12257491289198608 m


@dataclass(frozen=True)
class SonarFault:
    """A scripted sonar fault: ``kind`` from ``t0`` to ``t1`` [s of backend time]."""

    kind: str
    t0: float
    t1: float

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ConfigError(
                f"sonar fault kind {self.kind!r}: expected one of {', '.join(FAULT_KINDS)}",
                param="--sonar-fault",
            )
        if not (math.isfinite(self.t0) and math.isfinite(self.t1) and 0 <= self.t0 < self.t1):
            raise ConfigError(
                f"sonar fault window {self.t0:g}:{self.t1:g} s: need 0 <= start < end",
                param="--sonar-fault",
            )


def parse_fault(text: str) -> SonarFault:
    """``KIND:START:END`` (seconds), e.g. ``nan:60:62`` → :class:`SonarFault`."""
    parts = text.split(":")
    if len(parts) != 3:
        raise ConfigError(
            f"--sonar-fault {text!r}: expected KIND:START:END (e.g. nan:60:62; kinds "
            f"{', '.join(FAULT_KINDS)})",
            param="--sonar-fault",
        )
    try:
        t0, t1 = float(parts[1]), float(parts[2])
    except ValueError:
        raise ConfigError(
            f"--sonar-fault {text!r}: START and END must be numbers of seconds",
            param="--sonar-fault",
        ) from None
    return SonarFault(parts[0].strip(), t0, t1)


def fault_arrays(faults: list[SonarFault]) -> NDArray[np.float64]:
    """(k, 3) array of (t0, t1, kind code) for the kernels."""
    out = np.zeros((len(faults), 3))
    for i, f in enumerate(faults):
        out[i] = (f.t0, f.t1, FAULT_KINDS[f.kind])
    return out


def t200_16v_table(path: str | Path) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(pwm [µs], force [N]) of the 16 V rows of Blue Robotics' T200 performance CSV
    (``t200_performance_10-20V.csv``: ``voltage_V, pwm_us, ..., force_N``; not shipped with
    marinesim — the workbook carries no licence statement).

    Raises
    ------
    ConfigError
        The file is missing, lacks the columns or has no 16 V rows (names the file and line).
    """
    p = Path(path)
    if not p.is_file():
        raise ConfigError(
            f"T200 performance table {str(p)!r} not found (Blue Robotics' "
            "t200_performance_10-20V.csv; pass --t200-csv or set MARINESIM_T200_CSV)",
            param="--t200-csv",
        )
    pwm, force = [], []
    with p.open(encoding="utf-8-sig", newline="") as fh:
        rows = csv.DictReader(fh)
        missing = {"voltage_V", "pwm_us", "force_N"} - set(rows.fieldnames or ())
        if missing:
            raise ConfigError(
                f"{p}:1: T200 table lacks column(s) {', '.join(sorted(missing))}",
                param="--t200-csv",
            )
        for r in rows:
            try:
                if float(r["voltage_V"]) != 16.0:
                    continue
                pwm.append(float(r["pwm_us"]))
                force.append(float(r["force_N"]))
            except (TypeError, ValueError):
                raise ConfigError(
                    f"{p}:{rows.line_num}: not a number in voltage_V/pwm_us/force_N",
                    param="--t200-csv",
                ) from None
    if len(pwm) < 2:
        raise ConfigError(f"{p}: no 16 V rows in the T200 table", param="--t200-csv")
    order = np.argsort(pwm, kind="stable")
    return np.array(pwm)[order], np.array(force)[order]


@numba.njit(cache=True)
def _thrust(pwm: float, tab_p: NDArray[np.float64], tab_f: NDArray[np.float64]) -> float:
    if pwm == 0.0 or (1472.0 < pwm < 1528.0):
        return 0.0
    return np.interp(pwm, tab_p, tab_f)


@numba.njit(cache=True)
def _floor(x: float, y: float, kind: int, gx: Any, gy: Any, gd: Any) -> float:
    if kind == 0:
        return 20.0
    if kind == 1:
        v = (x + 30.0) / 60.0
        return 14.0 - 4.0 * (v - math.floor(v))
    n = min(max(x, gx[0]), gx[-1])
    e = min(max(y, gy[0]), gy[-1])
    i = min(max(np.searchsorted(gx, n, side="right") - 1, 0), gx.shape[0] - 2)
    j = min(max(np.searchsorted(gy, e, side="right") - 1, 0), gy.shape[0] - 2)
    tx = (n - gx[i]) / (gx[i + 1] - gx[i])
    ty = (e - gy[j]) / (gy[j + 1] - gy[j])
    return (
        gd[i, j] * (1 - tx) * (1 - ty)
        + gd[i + 1, j] * tx * (1 - ty)
        + gd[i, j + 1] * (1 - tx) * ty
        + gd[i + 1, j + 1] * tx * ty
    )


@numba.njit(cache=True)
def _surge(t: float, u0: float, t0: float, ramp: float) -> float:
    if t0 < 0.0 or t < t0:
        return 0.0
    return u0 * min((t - t0) / ramp, 1.0)


@numba.njit(cache=True)
def ref_step(
    s: Any,
    pwm: Any,
    rate: float,
    cfg: Any,
    tab_p: Any,
    tab_f: Any,
    floor_kind: int,
    gx: Any,
    gy: Any,
    gd: Any,
    pings: Any,
    faults: Any,
    out: Any,
) -> None:
    """One frame of the §4 plant in place on ``s``; the reply values into ``out`` (17,).

    ``cfg`` = (u0, u_start (< 0: never), ramp, sonar period, sonar delay, out-of-range value);
    ``pings`` a ring of held ping ranges; ``out`` = timestamp, gyro 3, accel 3, position 3,
    attitude 3, velocity 3, rng_1 (NaN when none / a NaN fault; see ``s[_HAVE]``).
    """
    dt = 1.0 / rate
    t1 = _thrust(float(pwm[0]), tab_p, tab_f)
    t2 = _thrust(float(pwm[1]), tab_p, tab_f)
    t3 = _thrust(float(pwm[2]), tab_p, tab_f)
    t4 = _thrust(float(pwm[3]), tab_p, tab_f)
    t5 = _thrust(float(pwm[4]), tab_p, tab_f)
    t6 = _thrust(float(pwm[5]), tab_p, tab_f)
    z, w, phi, p, psi, r = s[_Z], s[_W], s[_PHI], s[_P], s[_PSI], s[_R]
    f = min(max((z + _H / 2) / _H, 0.0), 1.0)
    wd = (
        _WGT - _BUOY * f + (t5 + t6) * math.cos(phi) - _DL * w - _DQ * w * abs(w)
    ) / (_M + _MA)  # fmt: skip
    pd = (
        _ARM * (t5 - t6) - _WGT * _BG * math.sin(phi) - _KL * p - _KQ * p * abs(p)
    ) / (_INERTIA + _IA)  # fmt: skip
    rd = (_L * (t1 - t2 - t3 + t4) - _KL * r - _KQ * r * abs(r)) / (_INERTIA + _IA)
    s[_N] += 1.0
    t_old = s[_T]
    t_new = s[_N] / rate
    u_old = _surge(t_old, cfg[0], cfg[1], cfg[2])
    u_new = _surge(t_new, cfg[0], cfg[1], cfg[2])
    du = (u_new - u_old) / dt
    w += wd * dt
    z += w * dt
    p += pd * dt
    phi += p * dt
    r += rd * dt
    psi += r * dt
    psi = ((psi + math.pi) % (2 * math.pi)) - math.pi
    x = s[_X] + u_new * math.cos(psi) * dt
    y = s[_Y] + u_new * math.sin(psi) * dt
    fl = _floor(x, y, floor_kind, gx, gy, gd)
    if z > fl - _H / 2:
        z = fl - _H / 2
        w = min(w, 0.0)
        wd = 0.0
    s[_T], s[_X], s[_Y], s[_Z], s[_W] = t_new, x, y, z, w
    s[_PHI], s[_P], s[_PSI], s[_R] = phi, p, psi, r
    s[_WD], s[_DU], s[_U], s[_FLOOR] = wd, du, u_new, fl
    # sonar: ping j at the first frame with t_new >= j·period, delivered at j·period + delay
    period, delay = cfg[3], cfg[4]
    k = pings.shape[0]
    while t_new >= s[_NEXT] * period - 1e-9:
        j = int(s[_NEXT])
        pings[j % k] = (fl - z) / math.cos(phi)
        s[_NEXT] += 1.0
    # newest ping due: the largest j < next with j·period + delay <= t_new (held)
    jd = int(math.floor((t_new - delay + 1e-9) / period))
    if jd > s[_NEXT] - 1:
        jd = int(s[_NEXT]) - 1
    if jd >= 0 and jd > s[_NEXT] - 1 - k:
        s[_RNG] = pings[jd % k]
        s[_HAVE] = 1.0
    sp, cp = math.sin(phi), math.cos(phi)
    out[0] = t_new
    out[1], out[2], out[3] = p, sp * r, cp * r
    out[4] = du
    out[5] = cp * u_new * r + sp * (wd - _G)
    out[6] = -sp * u_new * r + cp * (wd - _G)
    out[7], out[8], out[9] = x, y, z
    out[10], out[11], out[12] = phi, 0.0, psi
    out[13], out[14], out[15] = u_new * math.cos(psi), u_new * math.sin(psi), w
    rng = s[_RNG]
    for i in range(faults.shape[0]):
        if faults[i, 0] <= t_new < faults[i, 1]:
            kind = int(faults[i, 2])
            rng = math.nan if kind == 0 else (0.0 if kind == 1 else cfg[5])
    out[16] = rng


@numba.njit(cache=True)
def ref_step_raw(
    data: Any,
    pwm: Any,
    s: Any,
    rate: float,
    cfg: Any,
    tab_p: Any,
    tab_f: Any,
    floor_kind: int,
    gx: Any,
    gy: Any,
    gd: Any,
    pings: Any,
    faults: Any,
    out: Any,
) -> None:
    """:func:`ref_step` from a raw servo datagram (``bytes``, already validated): the first
    16 little-endian uint16 pulses after the 8-byte header are decoded into ``pwm`` first."""
    for i in range(16):
        pwm[i] = float(data[8 + 2 * i] | (data[9 + 2 * i] << 8))
    ref_step(s, pwm, rate, cfg, tab_p, tab_f, floor_kind, gx, gy, gd, pings, faults, out)


# %.17g round-trips every double exactly (SITL parses with atof), and is about twice as fast
# as repr's shortest-digits search
_KEYS = (
    '\n{"timestamp":%.17g,"imu":{"gyro":[%.17g,%.17g,%.17g],"accel_body":[%.17g,%.17g,%.17g]},'
    '"position":[%.17g,%.17g,%.17g],"attitude":[%.17g,%.17g,%.17g],'
    '"velocity":[%.17g,%.17g,%.17g]'
)
_FMT_NORNG = _KEYS + "}\n"
_FMT_RNG = _KEYS + ',"rng_1":%.17g}\n'


class ReferencePlant:
    """The §4 reference plant behind the SIM_JSON backend (compiled step).

    Parameters
    ----------
    floor : str or Bathymetry
        ``flat20``, ``sawtooth`` (the recordings' floors) or a gridded bathymetry.
    u0, u_start, u_ramp : float
        Imposed surge: 0 until ``u_start`` [s] (None: never), a ramp over ``u_ramp`` to ``u0``.
    rng_period, rng_delay : float
        Sonar ping period and delivery delay [s].
    faults : list of SonarFault
        Scripted sonar faults (on the reply time).
    out_of_range : float
        Value sent by an ``out_of_range`` fault [m] (beyond RNGFND1_MAX).
    rate : float
        Frame rate [Hz] (SITL's SIM_RATE_HZ, 1200).
    t200_csv : path
        Blue Robotics' T200 performance CSV (the 16 V rows are the thrust curve).
    """

    #: No servo map or rangefinder quality: the reference plant reads motors 1–6 directly.
    servo_map = None
    sq_min = 0.0

    def __init__(
        self,
        t200_csv: str | Path,
        floor: Any = "flat20",
        *,
        u0: float = 0.0,
        u_start: float | None = None,
        u_ramp: float = 4.0,
        rng_period: float = 0.1,
        rng_delay: float = 0.3,
        faults: list[SonarFault] | None = None,
        out_of_range: float = 99.0,
        rate: float = 1200.0,
        name: str = "reference",
    ) -> None:
        if rng_period <= 0 or rng_delay < 0 or rate <= 0 or u_ramp <= 0:
            raise ConfigError(
                "reference plant: rng_period, rate and u_ramp must be > 0, rng_delay >= 0",
                param="physics",
            )
        self.name = name
        self.rate = self.rate_hz = float(rate)
        self.dt = 1.0 / self.rate
        self.floor = floor
        if isinstance(floor, str):
            if floor not in REF_FLOORS:
                raise ConfigError(
                    f"reference plant floor {floor!r}: expected {', '.join(REF_FLOORS)} or a "
                    "bathymetry file",
                    param="--floor",
                )
            self._fk = REF_FLOORS.index(floor)
            self._grid = (np.zeros(2), np.zeros(2), np.zeros((2, 2)))
        else:
            self._fk = 2
            self._grid = (floor.x, floor.y, floor.depth)
        self.cfg = np.array(
            [u0, -1.0 if u_start is None else u_start, u_ramp, rng_period, rng_delay, out_of_range]
        )
        self.faults = list(faults or [])
        self._faults = fault_arrays(self.faults)
        self._tab = t200_16v_table(t200_csv)
        self._pings = np.zeros(int(math.ceil(rng_delay / rng_period)) + 3)
        self._out = np.zeros(17)
        self._pwm = np.zeros(16)
        self._rawpwm = np.zeros(16)
        self.s = np.zeros(_NSTATE)
        self._raw: Any = None
        self._raw_args = (
            self._rawpwm, self.s, self.rate, self.cfg, self._tab[0], self._tab[1], self._fk,
            *self._grid, self._pings, self._faults, self._out,
        )  # fmt: skip
        self.reset()

    def reset(self) -> None:
        """Back to the start: floating at rest at the surface equilibrium, no sonar yet."""
        self.s[:] = 0.0
        self.s[_Z] = Z0
        self.s[_RNG] = math.nan
        self._pings[:] = math.nan
        self._out[:] = 0.0
        self._rawpwm[:] = 0.0
        self._pwm = np.zeros(16)

    @property
    def t(self) -> float:
        """Time of the newest state [s]."""
        return float(self.s[_T])

    def finish(self, reason: str = "") -> None:  # noqa: ARG002 - same face as EnginePlant
        """Nothing to finalise (no engine log)."""
        return None

    @property
    def stream_dirs(self) -> list[Path]:
        """No engine log."""
        return []

    def _advance(self, pwm: Any) -> None:
        p = pwm if isinstance(pwm, np.ndarray) and pwm.shape[0] >= 6 else self._pad(pwm)
        self._pwm = p
        ref_step(self.s, p, self.rate, self.cfg, self._tab[0], self._tab[1], self._fk,
                 *self._grid, self._pings, self._faults, self._out)  # fmt: skip

    @staticmethod
    def _pad(pwm: Any) -> NDArray[np.float64]:
        p = np.zeros(16)
        a = np.asarray(pwm, dtype=float)[:16]
        p[: a.shape[0]] = a
        return p

    def step(self, pwm: Any) -> SensorReply:
        """One frame with these servo outputs (µs); the reply."""
        self._advance(pwm)
        return self.reply()

    def step_bytes(self, pwm: Any) -> bytes:
        """One frame; the encoded reply (fast path of :class:`Lockstep`)."""
        self._advance(pwm)
        return self.encoded()

    def step_raw(self, data: bytes) -> bytes:
        """One frame from a validated servo datagram (its first 16 pulses); the encoded reply.

        The fastest path of :class:`Lockstep`: the pulses are decoded inside the compiled
        step, and after the first frame the compiled entry point is called directly (the
        argument types never change: ``data`` is always ``bytes``).
        """
        if type(data) is not bytes:
            data = bytes(data)
        self._pwm = self._rawpwm
        if self._raw is None:
            ref_step_raw(data, *self._raw_args)
            ovl = getattr(ref_step_raw, "overloads", {})
            entry = [c.entry_point for c in ovl.values()] if len(ovl) == 1 else []
            self._raw = entry[0] if entry else ref_step_raw
        else:
            self._raw(data, *self._raw_args)
        o = self._out.tolist()
        if self.s[_HAVE] == 0.0:
            del o[16]
            text = _FMT_NORNG % tuple(o)
        else:
            text = _FMT_RNG % tuple(o)
        if "n" in text:  # nan or inf; SITL's atof reads NaN and inf
            text = text.replace("nan", "NaN")
        return text.encode("ascii")

    def encoded(self) -> bytes:
        """The current reply as SITL reads it (compact JSON, ``%.17g``: exact doubles)."""
        o = self._out.tolist()
        text = _FMT_NORNG % tuple(o[:16]) if self.s[_HAVE] == 0.0 else _FMT_RNG % tuple(o)
        if "nan" in text:
            text = text.replace("nan", "NaN")
        return text.encode("ascii")

    def reply(self) -> SensorReply:
        """The current reply as a :class:`SensorReply`."""
        o = self._out
        return SensorReply(
            timestamp=float(o[0]),
            gyro=o[1:4].tolist(),
            accel_body=o[4:7].tolist(),
            position=o[7:10].tolist(),
            attitude=o[10:13].tolist(),
            velocity=o[13:16].tolist(),
            rng={} if self.s[_HAVE] == 0.0 else {1: float(o[16])},
        )

    def floor_depth(self) -> float:
        """Seafloor depth under the vehicle [m, down +]."""
        return float(self.s[_FLOOR]) if self.s[_N] > 0 else float("nan")

    def truth_row(self, sitl_time_us: int, frame_count: int) -> list[float]:
        """One row of the truth log (:data:`~marinesim.interop.sitl.plant.TRUTH_COLUMNS`)."""
        s, o = self.s, self._out
        u, w, r = s[_U], s[_W], s[_R]
        fl = self.floor_depth()
        rng = float(o[16]) if s[_HAVE] else float("nan")
        pwm8 = np.zeros(8)
        k = min(8, self._pwm.shape[0])
        pwm8[:k] = self._pwm[:k]
        return [
            s[_T], sitl_time_us, frame_count, s[_X], s[_Y], s[_Z], s[_PHI], 0.0, s[_PSI],
            u, 0.0, w, s[_P], 0.0, r, o[4], o[5], o[6], -fl, fl - s[_Z], rng,
            *pwm8,
        ]  # fmt: skip
