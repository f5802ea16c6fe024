"""Blue Robotics T200 thruster: force ↔ ESC output ↔ current as functions of supply voltage.

Two models (``specs/allocation.md`` §4):

* :class:`T200Cubic` — the **allocator model**: bivariate cubic least-squares fits in
  (a, V) with basis ``[1, a, V, a², aV, V², a³, a²V, aV², V³]``, one coefficient set per branch
  (forward = T200 positive thrust, reverse), fitted by ``scripts/fit_t200.py`` from Blue
  Robotics' public performance data and shipped as package data (``data/t200_fit.json``; the
  raw table is not shipped).  Maps: force [N], V → u; u, V → force [N]; u, V → current [A].
* :class:`T200Table` — the **plant** (and the ``t200_model: table`` allocator model): bilinear
  interpolation of the measured table in (PWM, V), built from arrays the caller reads (e.g.
  ``../shared/data/t200/t200_performance_10-20V.csv``) — this package does not read it.

Conventions: ESC output u = (PWM − 1500)/400, u ∈ [−1, 1] ↔ 1100…1900 µs; PWM > 1500 µs is
the T200's forward (stronger) side; forces in N in the T200's own frame (positive = forward);
supply voltage V in volts at the ESC, valid range 10–20 V (the data range): outside it the
functions raise :class:`~marinesim.core.errors.ConfigError` (``policy="error"``) or clamp
(``policy="clamp"``, for the plant).  Every function is vectorised over broadcastable arrays;
voltages of shape (N,) pair with forces of shape (N, n).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from marinesim.core.errors import ConfigError, DataError

__all__ = [
    "KGF",
    "CubicRay",
    "TableRay",
    "PWM_MAX",
    "PWM_MIN",
    "PWM_NEUTRAL",
    "V_MAX",
    "V_MIN",
    "ZERO_FORCE",
    "T200Cubic",
    "T200Fit",
    "T200Table",
    "basis",
    "check_voltage",
    "envelope",
    "load_fit",
    "pwm_from_u",
    "u_from_pwm",
]

PWM_NEUTRAL = 1500.0  #: neutral ESC pulse [µs]
PWM_MIN = 1100.0  #: full reverse [µs]
PWM_MAX = 1900.0  #: full forward [µs]
V_MIN = 10.0  #: lowest supply voltage of the data [V]
V_MAX = 20.0  #: highest supply voltage of the data [V]
KGF = 9.80665  #: one kilogram-force in N
ZERO_FORCE = 0.01 * KGF  #: |F| below this → u = 0 (MRoboSub's threshold, 0.01 kgf) [N]
LIMIT_BISECT_STEPS = 48  #: bisection steps of the force limits: 2⁻⁴⁸·F_max < 1e−13 N

Array = NDArray[np.float64]


def basis(a: ArrayLike, v: ArrayLike) -> Array:
    """Bivariate cubic basis φ(a, V) = [1, a, V, a², aV, V², a³, a²V, aV², V³].

    Parameters
    ----------
    a : array_like
        First variable (force [N] or ESC output u [-]), any shape broadcastable with ``v``.
    v : array_like
        Supply voltage [V].

    Returns
    -------
    ndarray
        Shape ``broadcast(a, v).shape + (10,)``.
    """
    a_, v_ = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(v, dtype=float))
    return np.stack(
        [
            np.ones_like(a_),
            a_,
            v_,
            a_ * a_,
            a_ * v_,
            v_ * v_,
            a_**3,
            a_ * a_ * v_,
            a_ * v_ * v_,
            v_**3,
        ],
        axis=-1,
    )


def _cubic_in_a(c: Array, v: Array) -> Array:
    """Coefficients (p0, p1, p2, p3) of the univariate cubic in ``a`` at fixed V, shape v.shape+(4,)."""
    return np.stack(
        [
            c[0] + c[2] * v + c[5] * v * v + c[9] * v**3,
            c[1] + c[4] * v + c[8] * v * v,
            c[3] + c[7] * v,
            np.full_like(v, c[6]),
        ],
        axis=-1,
    )


def _horner(p: Array, a: Array) -> Array:
    """Evaluate p0 + p1 a + p2 a² + p3 a³ with coefficients on the last axis of ``p``."""
    return p[..., 0] + a * (p[..., 1] + a * (p[..., 2] + a * p[..., 3]))


def check_voltage(
    voltage: ArrayLike, *, policy: Literal["error", "clamp"] = "error", param: str = "voltage"
) -> Array:
    """Validate supply voltages against the data range 10–20 V.

    Parameters
    ----------
    voltage : array_like
        Supply voltage(s) at the ESC [V], any shape.
    policy : {"error", "clamp"}
        ``"error"`` raises for any value outside [10, 20] V; ``"clamp"`` clips into the range
        (the plant's behaviour; the caller logs the range event).
    param : str
        Parameter name used in the error message.

    Returns
    -------
    ndarray
        The voltages as float64 (clipped under ``"clamp"``), same shape.

    Raises
    ------
    ConfigError
        Non-finite voltage, or out of range under ``policy="error"``.
    """
    v = np.asarray(voltage, dtype=float)
    if not np.all(np.isfinite(v)):
        raise ConfigError("supply voltage must be finite", param=param)
    if policy == "clamp":
        return np.clip(v, V_MIN, V_MAX)
    bad = (v < V_MIN) | (v > V_MAX)
    if np.any(bad):
        worst = float(v[bad].flat[0]) if v.ndim else float(v)
        raise ConfigError(
            f"supply voltage {worst:g} V is outside the T200 data range "
            f"{V_MIN:g}–{V_MAX:g} V (Blue Robotics' measurements)",
            param=param,
        )
    return v


def u_from_pwm(pwm: ArrayLike) -> Array:
    """ESC pulse width [µs] → normalised output u = (PWM − 1500)/400 [-]."""
    return (np.asarray(pwm, dtype=float) - PWM_NEUTRAL) / 400.0


def pwm_from_u(u: ArrayLike, signal_inverted: ArrayLike = False) -> Array:
    """Normalised output u → ESC pulse width PWM = 1500 + 400·(±u) [µs].

    Parameters
    ----------
    u : array_like
        ESC output [-], T200 frame (positive = forward thrust), shape (..., n).
    signal_inverted : array_like of bool
        Per thruster (shape (n,) or broadcastable): the ESC receives −u (wiring or
        ``MOT_n_DIRECTION = −1``).  It never changes which T200 branch acts.
    """
    u_ = np.asarray(u, dtype=float)
    inv = np.asarray(signal_inverted, dtype=bool)
    gain = 400.0 if not inv.any() else np.where(inv, -400.0, 400.0)
    out = u_ * gain
    out += PWM_NEUTRAL
    return out


# ----------------------------------------------------------------------------------------------
# Shipped fit
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class T200Fit:
    """Coefficients and envelope of the shipped T200 fit (see ``scripts/fit_t200.py``).

    Attributes
    ----------
    coefficients : dict of str to ndarray
        Ten coefficients each for ``force_to_u_{pos,neg}``, ``u_to_force_{pos,neg}``,
        ``u_to_current_{pos,neg}`` (forces in N, current in A).
    env_voltage : ndarray, shape (6,)
        Tabulated voltages [V].
    env_fmax, env_fmin : ndarray, shape (6,)
        Extreme measured forward / reverse force per voltage [N] (fmin < 0).
    first_fwd, first_rev : ndarray, shape (6,)
        First thrust-producing PWM per voltage on each side [µs].
    mrobosub : dict of str to ndarray
        MRoboSub parity constants (force in kgf), keys ``POS_OUTPUT`` … ``NEG_POWER``.
    residuals : list of dict
        The residual table printed by the fit script.
    """

    coefficients: dict[str, Array]
    env_voltage: Array
    env_fmax: Array
    env_fmin: Array
    first_fwd: Array
    first_rev: Array
    mrobosub: dict[str, Array] = field(default_factory=dict)
    residuals: tuple[dict[str, object], ...] = ()


@lru_cache(maxsize=1)
def load_fit() -> T200Fit:
    """Load the shipped fit ``marinesim/actuators/data/t200_fit.json`` (package data, cached).

    Raises
    ------
    DataError
        If the file is missing or malformed.
    """
    name = "t200_fit.json"
    try:
        text = resources.files("marinesim.actuators").joinpath("data", name).read_text()
        doc = json.loads(text)
        coef = {k: np.asarray(v, dtype=float) for k, v in doc["coefficients"].items()}
        env = doc["envelope"]
        mro = {
            k: np.asarray(v, dtype=float)
            for k, v in doc.get("mrobosub", {}).get("coefficients", {}).items()
        }
        fit = T200Fit(
            coefficients=coef,
            env_voltage=np.asarray(env["voltage_V"], dtype=float),
            env_fmax=np.asarray(env["force_max_N"], dtype=float),
            env_fmin=np.asarray(env["force_min_N"], dtype=float),
            first_fwd=np.asarray(env["first_thrust_fwd_us"], dtype=float),
            first_rev=np.asarray(env["first_thrust_rev_us"], dtype=float),
            mrobosub=mro,
            residuals=tuple(doc.get("residuals", ())),
        )
    except (OSError, KeyError, ValueError, TypeError) as exc:
        raise DataError(f"cannot read the shipped T200 fit: {exc}", file=name) from None
    for key in (
        "force_to_u_pos",
        "force_to_u_neg",
        "u_to_force_pos",
        "u_to_force_neg",
        "u_to_current_pos",
        "u_to_current_neg",
    ):
        if key not in coef or coef[key].shape != (10,):
            raise DataError(f"coefficient set {key!r} missing or not 10 values", file=name)
    return fit


def envelope(voltage: ArrayLike) -> tuple[Array, Array]:
    """Measured force envelope at supply voltage V (linear interpolation in V).

    Parameters
    ----------
    voltage : array_like
        Supply voltage [V], any shape, inside 10–20 V.

    Returns
    -------
    fmax, fmin : ndarray
        Largest forward force (> 0) and most negative reverse force (< 0) [N], shape of V.
        At 16 V: +51.43622732069733 N and −39.90792903824067 N.
    """
    v = check_voltage(voltage)
    fit = load_fit()
    return np.interp(v, fit.env_voltage, fit.env_fmax), np.interp(v, fit.env_voltage, fit.env_fmin)


# ----------------------------------------------------------------------------------------------
# Allocator model: cubic fits
# ----------------------------------------------------------------------------------------------


class T200Cubic:
    """The T200 allocator model of ``specs/allocation.md`` §4.3–4.4 (bivariate cubics).

    Parameters
    ----------
    zero_force : float
        |F| below this gives u = 0 and no current [N] (default 0.0980665 N = 0.01 kgf).
    profile : {"default", "mrobosub"}
        ``"default"``: our fit of the full-precision data (forces in N).  ``"mrobosub"``: the
        MRoboSub parity constants (fitted in kgf; converted at this boundary, so the API is
        still in N).

    Notes
    -----
    Force → u (rules of §4.4): u = 0 for |F| < zero_force; else û = φ(F, V)·c_branch with the
    branch chosen by the sign of F, clamped at zero towards the other branch (forward
    u = max(û, 0), reverse u = min(û, 0)), **not** clipped at ±1 (|u| > 1 means not
    achievable at this voltage).  Current: 0 where u = 0, else max(0, φ(u, V)·c_I).
    """

    name = "cubic"

    def __init__(
        self, zero_force: float = ZERO_FORCE, profile: Literal["default", "mrobosub"] = "default"
    ) -> None:
        if not np.isfinite(zero_force) or zero_force < 0:
            raise ConfigError(
                f"zero_force must be finite and >= 0 (got {zero_force!r})", param="zero_force"
            )
        fit = load_fit()
        self.zero_force = float(zero_force)
        self.profile = profile
        if profile == "default":
            c = fit.coefficients
            self._f2u = (c["force_to_u_pos"], c["force_to_u_neg"])
            self._u2f = (c["u_to_force_pos"], c["u_to_force_neg"])
            self._u2i = (c["u_to_current_pos"], c["u_to_current_neg"])
            self._fscale = 1.0  # force unit of the fit, in N
        elif profile == "mrobosub":
            m = fit.mrobosub
            if not m:
                raise DataError(
                    "the shipped T200 fit has no mrobosub profile", file="t200_fit.json"
                )
            self._f2u = (m["POS_OUTPUT"], m["NEG_OUTPUT"])
            self._u2f = (m["POS_POWER"], m["NEG_POWER"])
            self._u2i = (m["POS_CURRENT"], m["NEG_CURRENT"])
            self._fscale = KGF
        else:
            raise ConfigError(
                f"unknown T200 profile {profile!r} (known: default, mrobosub)", param="t200_profile"
            )
        self._limit_cache: dict[tuple[float, float], tuple[float, float]] = {}
        self._coef_cache: dict[float, Array] = {}

    # -- per-voltage univariate coefficients --------------------------------------------------
    def _poly(self, which: tuple[Array, Array], v: Array) -> tuple[Array, Array]:
        return _cubic_in_a(which[0], v), _cubic_in_a(which[1], v)

    def force_to_u(self, force: ArrayLike, voltage: ArrayLike) -> Array:
        """ESC output u for a T200-frame force (§4.4 rules 2–3).

        Parameters
        ----------
        force : array_like
            Force [N], positive = T200 forward, shape (N, n) or broadcastable with V.
        voltage : array_like
            Supply voltage [V], shape (N, 1)/(N,)-compatible with ``force`` (10–20 V).

        Returns
        -------
        ndarray
            u [-], not clipped to [−1, 1]; shape of the broadcast.
        """
        f = np.asarray(force, dtype=float) / self._fscale
        v = check_voltage(voltage)
        f, v = np.broadcast_arrays(f, v)
        pp, pn = self._poly(self._f2u, v)
        up = np.maximum(_horner(pp, f), 0.0)
        un = np.minimum(_horner(pn, f), 0.0)
        u = np.where(f > 0, up, un)
        return np.where(np.abs(f) * self._fscale < self.zero_force, 0.0, u)

    def u_to_force(self, u: ArrayLike, voltage: ArrayLike) -> Array:
        """Predicted force [N] for ESC output u (diagnostic forward model; 0 at u = 0).

        Parameters
        ----------
        u : array_like
            ESC output [-] (T200 frame), shape broadcastable with V.
        voltage : array_like
            Supply voltage [V].
        """
        u_ = np.asarray(u, dtype=float)
        v = check_voltage(voltage)
        u_, v = np.broadcast_arrays(u_, v)
        pp, pn = self._poly(self._u2f, v)
        f = np.where(u_ > 0, _horner(pp, u_), _horner(pn, u_))
        return np.where(u_ == 0, 0.0, f) * self._fscale

    def u_to_current(self, u: ArrayLike, voltage: ArrayLike) -> Array:
        """Supply current [A] for ESC output u (§4.4 rule 4: 0 at u = 0, never negative).

        Parameters
        ----------
        u : array_like
            ESC output [-] (T200 frame), shape broadcastable with V.
        voltage : array_like
            Supply voltage [V].
        """
        u_ = np.asarray(u, dtype=float)
        v = check_voltage(voltage)
        u_, v = np.broadcast_arrays(u_, v)
        pp, pn = self._poly(self._u2i, v)
        i = np.where(u_ > 0, _horner(pp, u_), _horner(pn, u_))
        return np.where(u_ == 0, 0.0, np.maximum(i, 0.0))

    def current(self, force: ArrayLike, voltage: ArrayLike) -> Array:
        """Supply current [A] drawn for a T200-frame force [N] at V (force → u → current)."""
        return self.u_to_current(self.force_to_u(force, voltage), voltage)

    # -- rays for the allocator's scaling (fixed branch per element) -----------------------------
    def ray(self, force: Array, voltage: Array) -> CubicRay:
        """Forces s_r·F_r along one ray per vehicle, for fast repeated current evaluation.

        Parameters
        ----------
        force : ndarray, shape (N, n)
            T200-frame forces at s = 1 [N].
        voltage : ndarray, shape (N,)
            Supply voltage per vehicle [V] (validated).
        """
        return CubicRay(self, force, voltage)

    def _coefficients_at(self, v: float) -> Array:
        """Cached cubic-in-a coefficients at one voltage: [map (u, I), branch (fwd, rev), 4]."""
        c = self._coef_cache.get(v)
        if c is None:
            va = np.array(v)
            c = np.array(
                [
                    [_cubic_in_a(self._f2u[0], va), _cubic_in_a(self._f2u[1], va)],
                    [_cubic_in_a(self._u2i[0], va), _cubic_in_a(self._u2i[1], va)],
                ]
            )
            if len(self._coef_cache) > 4096:
                self._coef_cache.clear()
            self._coef_cache[v] = c
        return c

    def force_limits(self, voltage: ArrayLike, max_current: float = np.inf) -> tuple[Array, Array]:
        """Largest forward and reverse force the allocator may command at V.

        The force range is the measured envelope at V, intersected with |u| ≤ 1 and with the
        per-motor current limit, each found by bisection on the monotone branch maps to 1e−12
        relative (cached per voltage).

        Parameters
        ----------
        voltage : array_like
            Supply voltage [V], any shape, 10–20 V.
        max_current : float
            Per-thruster current limit [A] (``inf`` = none).

        Returns
        -------
        fmax, fmin : ndarray
            Forward bound (> 0) and reverse bound (< 0) [N], shape of V.
        """
        v = check_voltage(voltage)
        flat = v.reshape(-1)
        uniq, inv = np.unique(flat, return_inverse=True)
        imax = float(max_current)
        if uniq.size > 64:  # many distinct voltages: one vectorised solve, no per-value cache
            out = self._solve_limits(uniq, imax)
        else:
            out = np.empty((uniq.size, 2))
            todo: list[int] = []
            for k, vv in enumerate(uniq):
                hit = self._limit_cache.get((float(vv), imax))
                if hit is None:
                    todo.append(k)
                else:
                    out[k] = hit
            if todo:
                out[todo] = self._solve_limits(uniq[todo], imax)
                if len(self._limit_cache) > 4096:
                    self._limit_cache.clear()
                for k in todo:
                    self._limit_cache[(float(uniq[k]), imax)] = (float(out[k, 0]), float(out[k, 1]))
        res_all = out[inv.reshape(-1)]
        return res_all[:, 0].reshape(v.shape), res_all[:, 1].reshape(v.shape)

    def _solve_limits(self, v: Array, max_current: float) -> Array:
        fmax, fmin = envelope(v)
        out = np.empty((v.size, 2))
        for col, edge, sgn in ((0, fmax, 1.0), (1, fmin, -1.0)):
            br = 0 if sgn > 0 else 1
            pu = _cubic_in_a(self._f2u[br], v)
            pi = _cubic_in_a(self._u2i[br], v)

            # feasible(F) = |u(F)| <= 1 and I(F) <= max_current, monotone in |F| on the branch
            def ok(mag: Array, sgn: float = sgn, pu: Array = pu, pi: Array = pi) -> Array:
                u = _horner(pu, sgn * mag / self._fscale)
                u = np.maximum(u, 0.0) if sgn > 0 else np.minimum(u, 0.0)
                i = np.maximum(_horner(pi, u), 0.0)
                return (np.abs(u) <= 1.0) & (i <= max_current)

            hi = np.abs(edge)
            res = hi.copy()
            need = np.nonzero(~ok(hi))[0]  # the envelope itself is not allowed: bisect
            if need.size:
                pu_n, pi_n = pu[need], pi[need]
                lo = np.zeros(need.size)
                top = hi[need].copy()
                for _ in range(LIMIT_BISECT_STEPS):
                    mid = 0.5 * (lo + top)
                    m_ok = ok(mid, sgn, pu_n, pi_n)
                    lo = np.where(m_ok, mid, lo)
                    top = np.where(m_ok, top, mid)
                res[need] = lo
            out[:, col] = sgn * res
        return out


# ----------------------------------------------------------------------------------------------
# Plant / table model
# ----------------------------------------------------------------------------------------------


class T200Table:
    """The measured T200 table as a plant: bilinear interpolation in (PWM, V).

    Parameters
    ----------
    voltage, pwm, force, current : array_like, shape (M,)
        Long-format columns (V, µs, N, A) covering a full PWM × voltage grid, e.g. the columns
        ``voltage_V, pwm_us, force_N, current_A`` of ``t200_performance_10-20V.csv``.
    zero_force : float
        Threshold of the table allocator model's dead band [N].

    Raises
    ------
    DataError
        If the rows do not form a complete grid or contain non-finite values.

    Notes
    -----
    The plant is exact at every table row and zero inside each voltage's measured zero band.
    Outside 10–20 V use ``policy="clamp"`` (the plant clamps and the caller logs the event).
    """

    name = "table"

    def __init__(
        self,
        voltage: ArrayLike,
        pwm: ArrayLike,
        force: ArrayLike,
        current: ArrayLike,
        zero_force: float = ZERO_FORCE,
    ) -> None:
        v = np.asarray(voltage, dtype=float)
        p = np.asarray(pwm, dtype=float)
        f = np.asarray(force, dtype=float)
        i = np.asarray(current, dtype=float)
        if not (v.shape == p.shape == f.shape == i.shape) or v.ndim != 1:
            raise DataError("T200 table columns must be 1-D and of equal length")
        if not all(np.all(np.isfinite(x)) for x in (v, p, f, i)):
            raise DataError("T200 table contains non-finite values")
        self.voltages = np.unique(v)
        self.pwms = np.unique(p)
        if (
            self.voltages.size < 2
            or self.pwms.size < 2
            or v.size != self.voltages.size * self.pwms.size
        ):
            raise DataError("T200 table rows do not form a complete PWM x voltage grid")
        iv = np.searchsorted(self.voltages, v)
        ip = np.searchsorted(self.pwms, p)
        self.force_grid = np.full((self.voltages.size, self.pwms.size), np.nan)
        self.current_grid = np.full_like(self.force_grid, np.nan)
        self.force_grid[iv, ip] = f
        self.current_grid[iv, ip] = i
        if np.isnan(self.force_grid).any():
            raise DataError(
                "T200 table rows do not form a complete PWM x voltage grid (duplicates)"
            )
        self.zero_force = float(zero_force)
        self._curve_cache: dict[float, tuple[Array, Array, Array, Array, Array, Array]] = {}

    # -- plant --------------------------------------------------------------------------------
    def plant(
        self, pwm: ArrayLike, voltage: ArrayLike, *, policy: Literal["error", "clamp"] = "clamp"
    ) -> tuple[Array, Array]:
        """Force [N] and current [A] for ESC pulse widths at supply voltages (bilinear).

        Parameters
        ----------
        pwm : array_like
            ESC pulse width [µs] as the ESC receives it (after any signal inversion), clipped to
            1100–1900 µs; shape broadcastable with V.
        voltage : array_like
            Supply voltage [V].
        policy : {"clamp", "error"}
            Out-of-range voltages are clamped (default) or raise ConfigError.

        Returns
        -------
        force, current : ndarray
            Shape of the broadcast; force positive = T200 forward.
        """
        v = check_voltage(voltage, policy=policy)
        p = np.clip(np.asarray(pwm, dtype=float), self.pwms[0], self.pwms[-1])
        p, v = np.broadcast_arrays(p, v)
        jv = np.clip(np.searchsorted(self.voltages, v, side="right") - 1, 0, self.voltages.size - 2)
        jp = np.clip(np.searchsorted(self.pwms, p, side="right") - 1, 0, self.pwms.size - 2)
        tv = (v - self.voltages[jv]) / (self.voltages[jv + 1] - self.voltages[jv])
        tp = (p - self.pwms[jp]) / (self.pwms[jp + 1] - self.pwms[jp])

        def interp(g: Array) -> Array:
            g00, g01 = g[jv, jp], g[jv, jp + 1]
            g10, g11 = g[jv + 1, jp], g[jv + 1, jp + 1]
            return (1 - tv) * ((1 - tp) * g00 + tp * g01) + tv * ((1 - tp) * g10 + tp * g11)

        return interp(self.force_grid), interp(self.current_grid)

    # -- table allocator model ----------------------------------------------------------------
    def _curves(self, v: float) -> tuple[Array, Array, Array, Array, Array, Array]:
        """Monotone (|F| ascending) branch curves at V: (F, PWM, I) forward, then reverse."""
        if v in self._curve_cache:
            return self._curve_cache[v]
        f, i = self.plant(self.pwms, np.full(self.pwms.shape, v))
        out: list[Array] = []
        for side in (1.0, -1.0):
            sel = (self.pwms > PWM_NEUTRAL) if side > 0 else (self.pwms < PWM_NEUTRAL)
            order = np.argsort(np.abs(self.pwms[sel] - PWM_NEUTRAL))
            fs, ps, cs = side * f[sel][order], self.pwms[sel][order], i[sel][order]
            thrust = fs > 0
            fs, ps, cs = fs[thrust], ps[thrust], cs[thrust]
            # keep the monotone part up to the extreme force
            stop = int(np.argmax(fs)) + 1
            fs, ps, cs = fs[:stop], ps[:stop], cs[:stop]
            keep = np.concatenate([[True], np.diff(np.maximum.accumulate(fs)) > 0])
            out += [fs[keep], ps[keep], cs[keep]]
        res = tuple(out)
        if len(self._curve_cache) > 1024:
            self._curve_cache.clear()
        self._curve_cache[v] = res  # type: ignore[assignment]
        return res  # type: ignore[return-value]

    def _per_voltage(self, x: Array, v: Array, fn: object) -> Array:
        x, v = np.broadcast_arrays(np.asarray(x, dtype=float), check_voltage(v))
        out = np.empty(x.shape)
        for vv in np.unique(v):
            m = v == vv
            out[m] = fn(x[m], float(vv))  # type: ignore[operator]
        return out

    def current(self, force: ArrayLike, voltage: ArrayLike) -> Array:
        """Measured current [A] for a T200-frame force [N] at V: piecewise-linear I(|F|) per branch.

        The curve starts at (0 N, 0 A) and runs through the table's thrust-producing rows at V.
        """

        def one(f: Array, v: float) -> Array:
            ff, _, fi, rf, _, ri = self._curves(v)
            pos = np.interp(f, np.concatenate([[0.0], ff]), np.concatenate([[0.0], fi]))
            neg = np.interp(-f, np.concatenate([[0.0], rf]), np.concatenate([[0.0], ri]))
            return np.where(f > 0, pos, np.where(f < 0, neg, 0.0))

        return self._per_voltage(
            np.asarray(force, dtype=float), np.asarray(voltage, dtype=float), one
        )

    def force_to_u(self, force: ArrayLike, voltage: ArrayLike) -> Array:
        """ESC output u [-] inverting the table at V; jumps the dead band to the first thrust PWM.

        Forces beyond the measured extreme give |u| > 1 (linear extrapolation of the last
        segment), i.e. not achievable.
        """

        def one(f: Array, v: float) -> Array:
            ff, fp, _, rf, rp, _ = self._curves(v)

            def inv(x: Array, fs: Array, ps: Array) -> Array:
                y = np.interp(x, fs, ps)
                slope = (ps[-1] - ps[-2]) / (fs[-1] - fs[-2])
                return np.where(x > fs[-1], ps[-1] + slope * (x - fs[-1]), y)

            up = u_from_pwm(inv(f, ff, fp))
            un = u_from_pwm(inv(-f, rf, rp))
            u = np.where(f > 0, up, un)
            return np.where(np.abs(f) < self.zero_force, 0.0, u)

        return self._per_voltage(
            np.asarray(force, dtype=float), np.asarray(voltage, dtype=float), one
        )

    def force_limits(self, voltage: ArrayLike, max_current: float = np.inf) -> tuple[Array, Array]:
        """Forward (> 0) and reverse (< 0) force bounds [N] at V: the envelope, cut at max_current."""
        v = check_voltage(voltage)

        def side(vv: float, fwd: bool) -> float:
            ff, _, fi, rf, _, ri = self._curves(vv)
            fs, cs = (ff, fi) if fwd else (rf, ri)
            fs0 = np.concatenate([[0.0], fs])
            cs0 = np.concatenate([[0.0], cs])
            if cs0[-1] <= max_current:
                return float(fs0[-1])
            k = int(np.argmax(cs0 > max_current))  # first sample over the limit
            t = (max_current - cs0[k - 1]) / (cs0[k] - cs0[k - 1])
            return float(fs0[k - 1] + t * (fs0[k] - fs0[k - 1]))

        flat = v.reshape(-1)
        fmax = np.array([side(float(x), True) for x in flat]).reshape(v.shape)
        fmin = -np.array([side(float(x), False) for x in flat]).reshape(v.shape)
        return fmax, fmin

    def breakpoints(self, voltage: float) -> tuple[Array, Array]:
        """Force magnitudes [N] of the table's thrust-producing points at V (forward, reverse).

        Between these the table model's current I(F) is linear (exactly piecewise-linear).
        """
        ff, _, _, rf, _, _ = self._curves(float(check_voltage(voltage)))
        return ff.copy(), rf.copy()

    def ray(self, force: Array, voltage: Array) -> TableRay:
        """Forces s_r·F_r along one ray per vehicle (see :meth:`T200Cubic.ray`)."""
        return TableRay(self, force, voltage)


_GRIDS: dict[tuple[int, int], tuple[NDArray[np.intp], NDArray[np.intp]]] = {}


def _index_grids(n_rows: int, n_cols: int) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Row and column index of every element of a C-ordered (n_rows, n_cols) array (cached)."""
    key = (n_rows, n_cols)
    grids = _GRIDS.get(key)
    if grids is None:
        rows = np.repeat(np.arange(n_rows, dtype=np.intp), n_cols)
        cols = np.tile(np.arange(n_cols, dtype=np.intp), n_rows)
        rows.flags.writeable = False
        cols.flags.writeable = False
        if len(_GRIDS) > 16:
            _GRIDS.clear()
        grids = _GRIDS[key] = (rows, cols)
    return grids


class CubicRay:
    """Rays F = s_r·F0_r of the cubic model, evaluated on a flat list of non-zero elements.

    Elements are kept sorted by branch (forward first) so each branch's cubics run on one
    contiguous slice with scalar coefficients (one shared voltage) or per-element ones.
    """

    def __init__(
        self, model: T200Cubic, force: Array, voltage: Array, _parts: tuple | None = None
    ) -> None:
        self.model = model
        if _parts is not None:
            (self.n_rows, self.n_cols, self.row, self.col, self.f, self.split) = _parts[:6]
            self.cu, self.ci = _parts[6:]
            self.f_dead = model.zero_force / model._fscale
            self.flat_idx = None
            return
        n_rows, n_cols = force.shape
        flat = force.reshape(-1)
        fwd = np.flatnonzero(flat > 0)
        rev = np.flatnonzero(flat < 0)
        idx = np.concatenate([fwd, rev])
        self.n_rows, self.n_cols = n_rows, n_cols
        rows_grid, cols_grid = _index_grids(n_rows, n_cols)
        self.row, self.col = rows_grid[idx], cols_grid[idx]
        self.flat_idx: NDArray[np.intp] | None = idx
        self.f = flat[idx] / model._fscale
        self.split = fwd.size
        self.f_dead = model.zero_force / model._fscale  # |F| below: neutral (fit units)
        v = np.asarray(voltage, dtype=float).reshape(-1)
        if v.size == 1 or np.all(v == v[0]):
            c = model._coefficients_at(float(v[0]))
            self.cu: tuple[Array | float, ...] = (c[0, 0], c[0, 1])  # type: ignore[assignment]
            self.ci: tuple[Array | float, ...] = (c[1, 0], c[1, 1])  # type: ignore[assignment]
        else:
            vr = v[:, None]
            per = [
                np.stack(
                    [_cubic_in_a(model._f2u[b], vr)[:, 0], _cubic_in_a(model._u2i[b], vr)[:, 0]]
                )
                for b in (0, 1)
            ]  # each (2 maps, N, 4)
            rows_f, rows_r = self.row[: self.split], self.row[self.split :]
            self.cu = (per[0][0][rows_f].T, per[1][0][rows_r].T)  # (4, E_b)
            self.ci = (per[0][1][rows_f].T, per[1][1][rows_r].T)

    def _u_i(self, s: Array) -> tuple[Array, Array]:
        """Flat u and current of the elements at per-row scales s (in-place Horner)."""
        se = s[self.row]
        f = se * self.f
        k = self.split
        u = np.empty_like(f)
        cur = np.empty_like(f)
        for sl, cu, ci, fwd in (
            (slice(0, k), self.cu[0], self.ci[0], True),
            (slice(k, None), self.cu[1], self.ci[1], False),
        ):
            x = f[sl]
            if x.size == 0:
                continue
            uu = u[sl]
            np.multiply(x, cu[3], out=uu)
            uu += cu[2]
            uu *= x
            uu += cu[1]
            uu *= x
            uu += cu[0]
            if fwd:
                np.maximum(uu, 0.0, out=uu)
            else:
                np.minimum(uu, 0.0, out=uu)
            ii = cur[sl]
            np.multiply(uu, ci[3], out=ii)
            ii += ci[2]
            ii *= uu
            ii += ci[1]
            ii *= uu
            ii += ci[0]
        np.maximum(cur, 0.0, out=cur)
        # rule 2 (|F| < zero_force → neutral) and rule 4 (u = 0 → no current)
        live = np.abs(f) >= self.f_dead
        live &= u != 0.0
        u *= live
        cur *= live
        return u, cur

    def total_current(self, s: Array) -> Array:
        """Σ_i I_i(s_r·F0_r,i) per row [A], shape (R,)."""
        _, cur = self._u_i(np.asarray(s, dtype=float))
        return np.bincount(self.row, weights=cur, minlength=self.n_rows)

    def evaluate(self, s: Array) -> tuple[Array, Array]:
        """ESC outputs u and currents [A] at scales s, each shape (R, n)."""
        u, cur = self._u_i(np.asarray(s, dtype=float))
        out_u = np.zeros(self.n_rows * self.n_cols)
        out_i = np.zeros(self.n_rows * self.n_cols)
        flat = self.row * self.n_cols + self.col if self.flat_idx is None else self.flat_idx
        out_u[flat] = u
        out_i[flat] = cur
        return out_u.reshape(self.n_rows, self.n_cols), out_i.reshape(self.n_rows, self.n_cols)

    def subset(self, rows: Array) -> CubicRay:
        """The rays of rows ``rows`` (ascending indices), renumbered 0..len(rows)−1."""
        mask = np.zeros(self.n_rows, dtype=bool)
        mask[rows] = True
        keep = mask[self.row]
        remap = np.cumsum(mask) - 1
        split = int(np.count_nonzero(keep[: self.split]))

        def cut(c: tuple[Array | float, ...]) -> tuple[Array | float, ...]:
            if np.ndim(c[0]) == 1:
                return c
            return (c[0][:, keep[: self.split]], c[1][:, keep[self.split :]])  # type: ignore[index]

        parts = (
            int(mask.sum()),
            self.n_cols,
            remap[self.row[keep]],
            self.col[keep],
            self.f[keep],
            split,
            cut(self.cu),
            cut(self.ci),
        )
        return CubicRay(self.model, np.empty((0, 0)), np.empty(0), _parts=parts)


class TableRay:
    """Rays F = s_r·F0_r of the table model (evaluated per unique voltage)."""

    def __init__(self, model: T200Table, force: Array, voltage: Array) -> None:
        self.model = model
        self.f = np.asarray(force, dtype=float)
        self.v = np.broadcast_to(np.asarray(voltage, dtype=float), (self.f.shape[0],))

    def total_current(self, s: Array) -> Array:
        """Σ_i I_i per row [A], shape (R,)."""
        return self.model.current(s[:, None] * self.f, self.v[:, None]).sum(axis=1)

    def evaluate(self, s: Array) -> tuple[Array, Array]:
        """ESC outputs u and currents [A] at scales s, each shape (R, n)."""
        f = s[:, None] * self.f
        return self.model.force_to_u(f, self.v[:, None]), self.model.current(f, self.v[:, None])

    def subset(self, rows: Array) -> TableRay:
        """The rays of rows ``rows``."""
        return TableRay(self.model, self.f[rows], self.v[rows])
