"""Compiled allocation kernels: one source per law, run interpreted or compiled by numba.

The pseudo-inverse allocation with the exact uniform scale (``specs/allocation.md`` §5.2) and
the total-current scale shared by every mode are written once, as plain functions of one
vehicle ``i`` (registered with ``register_jitable``).  A backend only decides how vehicles
are walked:

``"cpu"`` (default)
    numba ``njit`` kernels cached on disk: a ``prange`` loop over vehicles
    (``parallel=True``) from :data:`PARALLEL_MIN` vehicles on, a serial loop below.
``"python"``
    the same functions interpreted, a Python loop over vehicles (slow; a check on the
    compiled kernels and for debugging).

Every vehicle runs the same instructions whatever N is, so N = 1 and any N give
bit-identical results on one backend.  ``cpu`` and ``python`` differ only where LLVM's and
the C library's ``log``/``pow`` round differently (≤ 1 ulp per call, tested to 1e−12).
The T200 thruster law itself is :func:`marinesim.actuators.t200_law.thruster_u_current`.

Coefficient input ``craw``: shape (2, 2, 10) — map (force → u, u → current) × branch
(forward, reverse) × the ten bivariate basis coefficients.  ``coef`` holds the univariate
cubics at the supply voltage: shape (1, 2, 2, 4) when every vehicle shares one voltage
(:func:`shared_coefficients`), else (N, 2, 2, 4), each vehicle's row computed in the kernel
by the same function.

Memory traffic, not arithmetic, bounds the CPU kernel (its outputs are ~0.4 kB per vehicle,
freshly allocated per call), so scratch rows reuse output rows where they can.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np
from numba.extending import register_jitable

from marinesim.actuators.t200_law import cubic_at_voltage, thruster_u_current
from marinesim.core import compile as cc
from marinesim.core.errors import ConfigError

__all__ = [
    "BACKENDS",
    "BISECT_STEPS",
    "PARALLEL_MIN",
    "SECANT_STEPS",
    "S_TOL",
    "coefficients",
    "launch",
    "pinv_one",
    "shared_coefficients",
    "resolve_backend",
    "total_scale_one",
]

BACKENDS = ("cpu", "python")
#: Below this many vehicles the CPU kernels run serially (measured: the prange loop wins from
#: ~16 vehicles on; below, thread start-up costs more).
PARALLEL_MIN = 16
BISECT_STEPS = 24  #: fallback bisection steps of the total-current scale (2⁻²⁴ < 6e−8)
SECANT_STEPS = 12  #: log–log secant steps before the bisection fallback
S_TOL = 5e-7  #: bracket width at which the total-current scale is accepted (spec: ≤ 1e−6)


def resolve_backend(backend: str | None = None) -> str:
    """``backend``, else ``$MARINESIM_BACKEND`` if it names an allocation backend, else ``cpu``.

    Raises
    ------
    ConfigError
        An explicitly requested backend that allocation does not have.
    """
    if backend is None:
        env = os.environ.get("MARINESIM_BACKEND")
        return env if env in BACKENDS else "cpu"
    if backend not in BACKENDS:
        raise ConfigError(
            f"unknown allocation backend {backend!r}; choose one of {', '.join(BACKENDS)}",
            param="backend",
        )
    return backend


@register_jitable
def _row(a: Any, i: int) -> int:
    """Row index of vehicle i in a per-vehicle array that may hold one shared row."""
    return i if a.shape[0] > 1 else i - i  # i - i keeps the type of i (prange: uint64)


@register_jitable
def coefficients(i: int, v: Any, craw: Any, coef: Any) -> int:
    """The row of ``coef`` holding vehicle i's univariate cubics at its voltage.

    ``coef`` of shape (1, 2, 2, 4) holds the cubics of a voltage shared by all vehicles
    (filled by :func:`shared_coefficients`); of shape (N, 2, 2, 4) row i is filled here.
    """
    if coef.shape[0] == 1:
        return i - i  # 0, typed like i (prange: uint64)
    vi = v[_row(v, i)]
    for m in range(2):
        for b in range(2):
            cubic_at_voltage(craw, m, b, vi, coef, i)
    return i


def shared_coefficients(craw: np.ndarray, v: float) -> np.ndarray:
    """Cubics (1, 2, 2, 4) at one voltage shared by every vehicle (the kernels' own function,
    interpreted: only + and ×, so bit-identical to the compiled per-vehicle values)."""
    out = np.empty((1, 2, 2, 4))
    for m in range(2):
        for b in range(2):
            cubic_at_voltage(craw, m, b, float(v), out, 0)
    return out


@register_jitable
def _ray(i: int, s: float, x0: Any, cf: Any, r: int, x_dead: float, u: Any, cur: Any) -> float:
    """u and current of vehicle i's thrusters at T200-frame forces s·x0[i] (fit units); Σ I.

    Writes rows i of ``u`` and ``cur``.  The sum runs over forward-branch thrusters first,
    then reverse ones (each in index order).
    """
    n = x0.shape[1]
    for j in range(n):
        uu, ii = thruster_u_current(s * x0[i, j], cf, r, x_dead)
        u[i, j] = uu
        cur[i, j] = ii
    tot = 0.0
    for j in range(n):
        if x0[i, j] > 0.0:
            tot += cur[i, j]
    for j in range(n):
        if x0[i, j] < 0.0:
            tot += cur[i, j]
    return tot


@register_jitable
def _ray_start(i: int, f: Any, sig: Any, fscale: float, x0: Any) -> None:
    """x0[i] = σ·f[i]/F_unit: allocation-frame forces [N] → T200 frame in fit units."""
    for j in range(f.shape[1]):
        x0[i, j] = (f[i, j] * sig[j]) / fscale


@register_jitable
def _solve_total(
    i: int,
    s_hi: float,
    t_hi: float,
    imax: float,
    x0: Any,
    cf: Any,
    r: int,
    x_dead: float,
    u: Any,
    cur: Any,
) -> float:
    """Largest s ∈ [0, s_hi] with Σ I(s·F0) ≤ imax (the feasible end of the bracket).

    Σ I along a ray is close to a power law c·s^p (T200 current ≈ |F|^1.5): each step is a
    secant in log–log coordinates through the two latest points (p = 1.5 first), nudged
    0.45·S_TOL past the estimate so that an accurate estimate closes the bracket (Dekker).
    Steps leaving the bracket [lo, hi] (Σ I(lo) ≤ imax < Σ I(hi)), or made while the bracket
    stopped halving, bisect; after SECANT_STEPS only bisection.  Ends when hi − lo ≤ S_TOL.
    """
    lo = 0.0
    hi = s_hi
    side = 0
    sa = s_hi
    ta = t_hi
    sb = math.nan
    tb = math.nan
    w1 = math.inf
    w2 = math.inf
    margin = 0.1 * S_TOL
    for step in range(SECANT_STEPS + BISECT_STEPS):
        width = hi - lo
        if not width > S_TOL:
            break
        sv = 0.5 * (lo + hi)
        if step < SECANT_STEPS and width <= 0.5 * w2 and ta > 0.0 and sa > 0.0:
            p = 1.5
            ok = True
            if not math.isnan(sb):
                ok = tb > 0.0 and sb > 0.0 and sa != sb
                if ok:
                    p = math.log(ta / tb) / math.log(sa / sb)
                    ok = p > 0.0 and math.isfinite(p)
            if ok:
                est = sa * (imax / ta) ** (1.0 / p)
                est += (0.45 if side == -1 else -0.45) * S_TOL
                if math.isfinite(est) and est > lo and est < hi:
                    sv = est
        sv = min(max(sv, lo + margin), hi - margin)
        w2 = w1
        w1 = width if step >= 2 else math.inf
        tv = _ray(i, sv, x0, cf, r, x_dead, u, cur)
        if tv <= imax:
            lo = sv
            side = -1
        elif tv > imax:
            hi = sv
            side = 1
        sb = sa
        tb = ta
        sa = sv
        ta = tv
    return lo


@register_jitable
def scale_to_total(
    i: int, force: Any, v: Any, sig: Any, craw: Any, coef: Any, fscale: float, x_dead: float,
    imax: float, x0: Any, u: Any, cur: Any,
) -> tuple[float, int]:
    """Vehicle i's forces scaled in place to the total-current limit: the largest
    s ∈ [0, 1] with Σ I(s·f[i]) ≤ imax (1.0, forces unchanged, when they keep to it; s < 1
    exactly when the limit binds).  Returns (s, the voltage row of ``coef``); ``u``, ``cur``
    hold the model's values of the last ray evaluated."""
    r = coefficients(i, v, craw, coef)
    _ray_start(i, force, sig, fscale, x0)
    tot = _ray(i, 1.0, x0, coef, r, x_dead, u, cur)
    s = 1.0
    if tot > imax:
        s = _solve_total(i, 1.0, tot, imax, x0, coef, r, x_dead, u, cur)
        for j in range(force.shape[1]):
            force[i, j] = s * force[i, j]
    return s, r


@register_jitable
def outputs_at(
    i: int, force: Any, u: Any, cur: Any, pwm_gain: Any, lo: Any, hi: Any, rb: int, pwm: Any,
    cur_tot: Any, sat: Any,
) -> None:
    """Vehicle i's PWM [µs], Σ current [A] and saturation flags from the ESC outputs and
    currents of its final forces (``u``, ``cur``); saturated: within 1e-9 of the span of
    bound row ``rb`` of ``lo``, ``hi`` [N] from a bound, and not zero."""
    ctot = 0.0
    for j in range(force.shape[1]):
        pwm[i, j] = u[i, j] * pwm_gain[j] + 1500.0
        ctot += cur[i, j]
        tol = 1e-9 * max(1.0, abs(hi[rb, j] - lo[rb, j]))
        fj = force[i, j]
        sat[i, j] = (abs(fj - hi[rb, j]) <= tol or abs(fj - lo[rb, j]) <= tol) and fj != 0.0
    cur_tot[i] = ctot


@register_jitable
def total_scale_one(i: int, ins: tuple, outs: tuple) -> None:
    """Vehicle i: the largest s ∈ [0, 1] with Σ I(s·f[i]) ≤ imax (``scale[i]``, ``bound[i]``).

    ``ins`` = (f (N, n) [N], v (N,) or (1,) [V], σ (n,), craw, coef, F_unit [N], dead band,
    imax [A] (inf = none)); ``outs`` = (x0, u, cur (N, n) scratch, scale (N,), bound (N,)).
    """
    f, v, sig, craw, coef, fscale, x_dead, imax = ins
    x0, u, cur, scale, bound = outs
    r = coefficients(i, v, craw, coef)
    _ray_start(i, f, sig, fscale, x0)
    tot = _ray(i, 1.0, x0, coef, r, x_dead, u, cur)
    if tot > imax:
        scale[i] = _solve_total(i, 1.0, tot, imax, x0, coef, r, x_dead, u, cur)
        bound[i] = True
    else:
        scale[i] = 1.0
        bound[i] = False


@register_jitable
def pinv_one(i: int, ins: tuple, outs: tuple) -> None:
    """Pseudo-inverse allocation of vehicle i with the exact uniform scale (§5.2).

    f₀ = B⁺τ; per thruster the closed-form scale s_j = max(hi_j/f₀_j, lo_j/f₀_j) (f₀_j = 0:
    never binding); s_hi = min(1, min_j s_j); then the total-current scale on [0, s_hi].
    Writes the forces [N], ESC outputs, PWM [µs], currents [A], Σ current, the scale, B·f,
    τ − B·f, saturation flags and the binding/status codes of vehicle i.

    ``ins`` = (τ (N, 6), v (N,) or (1,) [V], B⁺ (n, 6), B (6, n), σ (n,), PWM gain (n,) [µs],
    lo, hi, lo_env, hi_env ((N, n) or (1, n)) [N], craw, coef, F_unit [N], dead band (fit
    units), imax [A] (inf = none)); ``outs`` = (force, u, pwm, current (N, n), Σ current,
    scale (N,), achieved, unmet (N, 6), saturated (N, n), binding, status (N,)).
    """
    tau, v, b_pinv, b_act, sig, pwm_gain, lo, hi, lo_e, hi_e, craw, coef, fscale, x_dead, imax = ins
    force, u, pwm, cur, cur_tot, scale, achieved, unmet, sat, binding, status = outs
    n = b_pinv.shape[0]
    rb = _row(lo, i)
    re = _row(lo_e, i)
    zero = True
    for k in range(6):
        if tau[i, k] != 0.0:
            zero = False
    # f₀ = B⁺τ and the closed-form scale per thruster (kept in the pwm row until the end)
    s_bound = math.inf
    for j in range(n):
        acc = 0.0
        for k in range(6):
            acc += b_pinv[j, k] * tau[i, k]
        force[i, j] = acc
        sj = math.inf
        if acc != 0.0:
            sj = max(hi[rb, j] / acc, lo[rb, j] / acc)
            if sj < s_bound:
                s_bound = sj
        pwm[i, j] = sj
    s_hi = min(1.0, s_bound)
    code = 0
    if s_bound < 1.0:
        # envelope (1) when a thruster reaching s_bound does so at its envelope bound, else
        # the per-motor current bound (2)
        code = 2
        for j in range(n):
            acc = force[i, j]
            if acc != 0.0 and max(hi_e[re, j] / acc, lo_e[re, j] / acc) <= s_bound * (1.0 + 1e-12):
                code = 1
    # thrusters at their bound: those whose closed-form scale is the one applied; the pwm
    # row then holds the T200-frame forces in fit units (x0) until the end
    for j in range(n):
        sat[i, j] = s_hi < 1.0 and pwm[i, j] <= s_hi * (1.0 + 1e-12)
    _ray_start(i, force, sig, fscale, pwm)
    r = coefficients(i, v, craw, coef)
    tot = _ray(i, s_hi, pwm, coef, r, x_dead, u, cur)
    s = s_hi
    if tot > imax:
        s = _solve_total(i, s_hi, tot, imax, pwm, coef, r, x_dead, u, cur)
        _ray(i, s, pwm, coef, r, x_dead, u, cur)
        code = 3
        for j in range(n):
            sat[i, j] = False
    ctot = 0.0
    for j in range(n):
        force[i, j] = s * force[i, j]
        pwm[i, j] = u[i, j] * pwm_gain[j] + 1500.0
        ctot += cur[i, j]
    cur_tot[i] = ctot
    for k in range(6):
        acc = 0.0
        for j in range(n):
            acc += b_act[k, j] * force[i, j]
        achieved[i, k] = acc
        unmet[i, k] = tau[i, k] - acc
    scale[i] = s
    binding[i] = code
    if zero:
        status[i] = 3
    elif s >= 1.0:
        status[i] = 0
    elif s < 1e-6:
        status[i] = 2
    else:
        status[i] = 1


# The compiled loops over vehicles (:mod:`marinesim.core.compile`): inputs and outputs travel
# as two tuples, the vehicle axis is that of the first input.  ``error_model="numpy"``: no
# zero-divisor checks (every division in the kernels is guarded, so the interpreted functions
# never divide by zero either).  The cache key covers this package and the T200 law.
_T200_LAW = Path(__file__).resolve().parents[1] / "actuators" / "t200_law.py"
_KERNELS = {
    name: cc.kernels(
        one,
        (0, 0),
        stamp=cc.source_stamp(one, (_T200_LAW,)),
        parallel_min=PARALLEL_MIN,
        error_model="numpy",
    )  # fmt: skip
    for name, one in (("pinv", pinv_one), ("total_scale", total_scale_one))
}


def launch(name: str, backend: str | None, ins: tuple, outs: tuple) -> None:
    """Run kernel ``name`` (``pinv`` or ``total_scale``) for every vehicle of ``ins[0]``.

    The first input's first axis is the vehicle axis N.  ``cpu`` runs the serial loop below
    :data:`PARALLEL_MIN` vehicles and the ``prange`` loop from there on; ``python`` runs the
    per-vehicle function interpreted.
    """
    _KERNELS[name].launch(resolve_backend(backend), (ins, outs))


def empty_outputs(n_rows: int, n: int) -> tuple[np.ndarray, ...]:
    """The ``outs`` tuple of :func:`pinv_one` for ``n_rows`` vehicles with ``n`` thrusters."""
    f2 = [np.empty((n_rows, n)) for _ in range(4)]  # force, u, pwm, current
    f1 = [np.empty(n_rows) for _ in range(2)]  # Σ current, scale
    w = [np.empty((n_rows, 6)) for _ in range(2)]  # achieved, unmet
    codes = [np.empty(n_rows, dtype=np.int8) for _ in range(2)]  # binding, status
    return (*f2, *f1, *w, np.empty((n_rows, n), dtype=np.bool_), *codes)
