"""The ``redistributed_pinv`` allocation law of one vehicle: one source, compiled or interpreted.

:func:`redistributed_one` is the whole redistributed pseudo-inverse allocation of vehicle ``i``
(``specs/allocation.md`` §6.2): f = B_W⁺τ with B_W = B W⁻¹ over the thrusters not yet fixed;
thrusters beyond a bound are fixed at it and the remaining wrench re-solved with the others,
at most n rounds; then the uniform total-current scale, the model outputs (ESC u, PWM,
currents), B·f, saturation and the binding/status codes.  The 6×6 pseudo-inverse of
B_F W⁻¹ B_Fᵀ is taken from its eigen-decomposition (cyclic Jacobi,
:func:`marinesim.allocation.qp_rows.jacobi6`), eigenvalues at or below 1e−10 of the largest
dropped (``numpy.linalg.pinv``'s ``rcond=1e-10``).  ``Allocator.redistributed_pinv`` walks it
with :func:`marinesim.core.compile.walk_rows` (compiled, or interpreted under
``MARINESIM_JIT=0``: the same bits, the secant's ``log``/``pow`` aside); with ``imax`` = NaN
it stops after the forces (the measured-table model scales and evaluates them in numpy).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from numba.extending import register_jitable

from marinesim.allocation.kernels import _ray, _ray_start, _row, outputs_at, scale_to_total
from marinesim.allocation.qp_rows import PARALLEL_MIN, jacobi6
from marinesim.core import compile as cc

__all__ = ["redistributed_one", "scratch", "walk"]


@register_jitable
def _solve_round(i, tau, b, w, fixed, f, gm, vec, r, z):  # noqa: ANN001, ANN202
    """z = (B_F W⁻¹ B_Fᵀ)⁺ (τ − B_A f_A) of row i (the fixed thrusters' wrench removed)."""
    n = f.shape[1]
    for k in range(6):
        acc = tau[i, k]
        for j in range(n):
            if fixed[i, j]:
                acc -= f[i, j] * b[k, j]
        r[i, k] = acc
        for q in range(6):
            acc = 0.0
            for j in range(n):
                if not fixed[i, j]:
                    acc += (b[k, j] * (1.0 / w[j])) * b[q, j]
            gm[i, k, q] = acc
    emin, emax = jacobi6(gm, i, vec, True)
    big = max(abs(emin), abs(emax))
    for k in range(6):
        z[i, k] = 0.0
    for p in range(6):
        lam = gm[i, p, p]
        if abs(lam) > 1e-10 * big:
            proj = 0.0
            for k in range(6):
                proj += vec[i, k, p] * r[i, k]
            proj /= lam
            for k in range(6):
                z[i, k] += vec[i, k, p] * proj


@register_jitable
def redistributed_one(i: int, ins: tuple, outs: tuple) -> None:
    """The redistributed pseudo-inverse allocation of vehicle i (§6.2), with model outputs.

    ``ins`` = (τ (N, 6), B (6, n), W (n,), enabled (n,) bool, lo, hi ((N, n) or (1, n)) [N],
    v (N,) or (1,) [V], σ (n,), PWM gain (n,) [µs], craw, coef, F_unit [N], dead band (fit
    units), imax [A] (inf = none, NaN = forces only)); ``outs`` = (force, fixed, gm, vec (N, 6,
    6), r, z (N, 6), x0 (scratch), u, pwm, current (N, n), Σ current, scale (N,), achieved,
    unmet (N, 6), saturated (N, n), binding, status (N,)).
    """
    tau, b, w, enabled, lo, hi, v, sig, pwm_gain, craw, coef, fscale, x_dead, imax = ins
    force, fixed, gm, vec, r, z, x0 = outs[:7]
    u, pwm, cur, cur_tot, scale, achieved, unmet, sat, binding, status = outs[7:]
    n = force.shape[1]
    rb = _row(lo, i)
    for j in range(n):
        force[i, j] = 0.0
        fixed[i, j] = not enabled[j]
    for _ in range(n):
        _solve_round(i, tau, b, w, fixed, force, gm, vec, r, z)
        over_any = False
        for j in range(n):
            if not fixed[i, j]:
                acc = 0.0
                for k in range(6):
                    acc += (b[k, j] * (1.0 / w[j])) * z[i, k]
                if acc > hi[rb, j] or acc < lo[rb, j]:
                    fixed[i, j] = True
                    over_any = True
                force[i, j] = min(max(acc, lo[rb, j]), hi[rb, j])
            else:
                force[i, j] = min(max(force[i, j], lo[rb, j]), hi[rb, j])
        free_left = False
        for j in range(n):
            if not fixed[i, j]:
                free_left = True
        if not (over_any and free_left):
            break
    # the demand met before the total-current scale (the unscaled forces)
    zero = True
    met = True
    for k in range(6):
        if tau[i, k] != 0.0:
            zero = False
        acc = 0.0
        for j in range(n):
            acc += b[k, j] * force[i, j] if enabled[j] else 0.0
        if not abs(acc - tau[i, k]) <= 1e-6 * (1.0 + abs(tau[i, k])):
            met = False
    if math.isnan(imax):
        return
    s, ri = scale_to_total(i, force, v, sig, craw, coef, fscale, x_dead, imax, x0, u, cur)
    by_total = s < 1.0
    if by_total:
        _ray_start(i, force, sig, fscale, x0)
        _ray(i, 1.0, x0, coef, ri, x_dead, u, cur)
    outputs_at(i, force, u, cur, pwm_gain, lo, hi, rb, pwm, cur_tot, sat)
    for k in range(6):
        acc = 0.0
        for j in range(n):
            acc += b[k, j] * force[i, j] if enabled[j] else 0.0
        achieved[i, k] = acc
        unmet[i, k] = tau[i, k] - acc
    scale[i] = s
    binding[i] = 3 if by_total else (0 if met else 1)
    status[i] = 3 if zero else (1 if by_total or not met else 0)


_T200_LAW = Path(__file__).resolve().parents[1] / "actuators" / "t200_law.py"
_GET = cc.lazy_kernels(
    redistributed_one,
    (0, 0),
    stamp=cc.source_stamp(redistributed_one, (_T200_LAW,)),
    parallel_min=PARALLEL_MIN,
    error_model="numpy",
)


def walk(ins: tuple, outs: tuple) -> None:
    """:func:`redistributed_one` for every row of ``ins[0]``: compiled, or interpreted under
    ``MARINESIM_JIT=0``."""
    cc.walk_rows(_GET, int(ins[0].shape[0]), (ins, outs))


def scratch(n_rows: int, n: int) -> tuple[np.ndarray, ...]:
    """The rounds' scratch rows: (fixed, gm, vec, r, z, x0)."""
    return (
        np.empty((n_rows, n), dtype=np.bool_),
        np.empty((n_rows, 6, 6)),
        np.empty((n_rows, 6, 6)),
        np.empty((n_rows, 6)),
        np.empty((n_rows, 6)),
        np.empty((n_rows, n)),
    )
