"""Blue Robotics T200 data conventions and the shipped fit (``specs/allocation.md`` §4).

ESC output u = (PWM − 1500)/400, u ∈ [−1, 1] ↔ 1100…1900 µs; PWM > 1500 µs is the T200's
forward (stronger) side; forces in N in the T200's own frame (positive = forward); supply
voltage V in volts at the ESC, valid range 10–20 V (the data range): outside it
:func:`check_voltage` raises :class:`~marinesim.core.errors.ConfigError` (``policy="error"``)
or clamps (``policy="clamp"``, for the plant).

The fit (:func:`load_fit`): bivariate cubic least-squares coefficients in (a, V) with basis
``[1, a, V, a², aV, V², a³, a²V, aV², V³]`` (:func:`basis`), one set per branch, fitted by
``scripts/fit_t200.py`` from Blue Robotics' public performance data and shipped as package
data (``data/t200_fit.json``), with the measured force envelope per voltage
(:func:`envelope`).  The models that use them: :mod:`marinesim.actuators.t200_cubic` and
:mod:`marinesim.actuators.t200_table` (all re-exported by :mod:`marinesim.actuators.t200`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from marinesim.actuators.t200_law import horner3
from marinesim.core.errors import ConfigError, DataError

__all__ = [
    "KGF",
    "LIMIT_BISECT_STEPS",
    "PWM_MAX",
    "PWM_MIN",
    "PWM_NEUTRAL",
    "V_MAX",
    "V_MIN",
    "ZERO_FORCE",
    "T200Fit",
    "basis",
    "check_voltage",
    "cubic_in_a",
    "envelope",
    "horner",
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
LIMIT_BISECT_STEPS = 48  #: bisection steps of the force limits: 2⁻⁴⁸·F_max < 1e−13 N
ZERO_FORCE = 0.01 * KGF  #: |F| below this → u = 0 (MRoboSub's threshold, 0.01 kgf) [N]

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


def cubic_in_a(c: Array, v: Array) -> Array:
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


def horner(p: Array, a: Array) -> Array:
    """Evaluate p0 + p1 a + p2 a² + p3 a³ with coefficients on the last axis of ``p``.

    The law is :func:`~marinesim.actuators.t200_law.horner3`, applied element-wise.
    """
    return horner3(p[..., 0], p[..., 1], p[..., 2], p[..., 3], a)


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
