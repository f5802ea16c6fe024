"""The ``qp`` allocation law of one vehicle: one source, run compiled by numba or interpreted.

:func:`qp_one` is the whole ``qp`` allocation of vehicle ``i`` (``specs/allocation.md`` §6.2):
the bounds intersected with the force-rate window, the primal active set on
min ½fᵀHf − cᵀf (H = BᵀW_τ²B + εI, c = BᵀW_τ²τ), the ε → 0 polish on the active set, the
uniform total-current scale (:func:`marinesim.allocation.kernels.total_scale_one`'s secant),
the rate window winning over that scale, then the model outputs (ESC u, PWM, currents), B·f,
saturation and the binding/status codes.  :func:`qp_forces_one` stops after the polish (the
measured-table model scales and evaluates in numpy), :func:`box_qp_one` is the active set
alone (:func:`marinesim.allocation.qp.box_qp`).  The numpy API walks the rows with
:func:`marinesim.core.compile.walk_rows` (compiled kernels, or the functions interpreted
under ``MARINESIM_JIT=0``); the engine's generated tick calls :func:`qp_one` itself.

The linear algebra is written out (Cholesky solves of the free set, a cyclic Jacobi
eigenvalue check of the polish Gram matrix): the same instructions interpreted or compiled,
so the two give the same bits (the total-current secant's ``log``/``pow`` aside, ≤ 1 ulp).

Status code −1 (not in :data:`~marinesim.allocation.limits.STATUS`) marks a row whose active
set did not converge in ``max_iter`` iterations; the callers raise
:class:`~marinesim.core.errors.NumericalError` for it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
from numba.extending import register_jitable

from marinesim.allocation.kernels import _ray, _ray_start, _row, outputs_at, scale_to_total
from marinesim.core import compile as cc

__all__ = ["MAX_ITER", "box_qp_one", "qp_forces_one", "qp_one", "walk"]

MAX_ITER = 100  #: active-set iterations before a row is reported as not converged
#: Rows from which the CPU kernel runs the ``prange`` loop.  A row costs about 5 µs; on a
#: loaded two-core machine 100 rows took 5.6 ms with two threads against 0.5 ms serially
#: (``benchmarks/bench_alloc.py``), so the threads start at the engine default.
PARALLEL_MIN = cc.PARALLEL_MIN


@register_jitable
def _chol_solve(m: Any, i: int, nf: int, rhs: Any) -> bool:
    """Solve m[i, :nf, :nf] y = rhs[i, :nf] in place (Cholesky, lower factor in m); False
    when the matrix is not positive definite."""
    for a in range(nf):
        s = m[i, a, a]
        for k in range(a):
            s -= m[i, a, k] * m[i, a, k]
        if not s > 0.0:
            return False
        d = math.sqrt(s)
        m[i, a, a] = d
        for b in range(a + 1, nf):
            t = m[i, b, a]
            for k in range(a):
                t -= m[i, b, k] * m[i, a, k]
            m[i, b, a] = t / d
    for a in range(nf):
        t = rhs[i, a]
        for k in range(a):
            t -= m[i, a, k] * rhs[i, k]
        rhs[i, a] = t / m[i, a, a]
    for a in range(nf - 1, -1, -1):
        t = rhs[i, a]
        for k in range(a + 1, nf):
            t -= m[i, k, a] * rhs[i, k]
        rhs[i, a] = t / m[i, a, a]
    return True


@register_jitable
def _box_qp_row(i, h, c, lo, hi, f, fixed, at_hi, m, x, idx, max_iter):  # noqa: ANN001, ANN202
    """Primal active set of row i: min ½fᵀHf − cᵀf on lo[i] ≤ f ≤ hi[i] (result in f[i]).

    From f = clip(0, lo, hi) (a bound not containing 0 starts fixed at the nearer end; lo = hi
    stays pinned) it solves the free set's equality problem, steps to the first blocking bound
    (fixed there) or, at the subproblem optimum, releases the fixed variable with the most
    negative multiplier (the first such on ties).  Returns the iterations taken, −1 when
    ``max_iter`` did not suffice.
    """
    n = c.shape[1]
    hmax = 0.0
    for a in range(n):
        for b in range(n):
            hmax = max(hmax, abs(h[a, b]))
    tol = 1e-12 * max(1.0, hmax)
    for j in range(n):
        v = min(max(0.0, lo[i, j]), hi[i, j])
        f[i, j] = v
        moved = v != 0.0
        fixed[i, j] = lo[i, j] >= hi[i, j] or moved
        at_hi[i, j] = moved and v == hi[i, j]
    for it in range(max_iter):
        # the free set's system H_FF x_F = c_F − H_FA f_A (fixed variables stay)
        nf = 0
        for j in range(n):
            if not fixed[i, j]:
                idx[i, nf] = j
                nf += 1
        for a in range(nf):
            ja = idx[i, a]
            r = c[i, ja]
            for k in range(n):
                if fixed[i, k]:
                    r -= h[ja, k] * f[i, k]
            x[i, a] = r
            for b in range(nf):
                m[i, a, b] = h[ja, idx[i, b]]
        if not _chol_solve(m, i, nf, x):
            return -1
        # the step d = x − f on the free set: the first bound it meets
        alpha = math.inf
        kb = -1
        for a in range(nf):
            j = idx[i, a]
            d = x[i, a] - f[i, j]
            ratio = math.inf
            if d > 0.0:
                ratio = (hi[i, j] - f[i, j]) / d
            elif d < 0.0:
                ratio = (lo[i, j] - f[i, j]) / d
            if ratio < alpha or (kb < 0 and ratio == alpha):
                alpha = ratio
                kb = a
        if alpha < 1.0:
            step = max(alpha, 0.0)
            jb = idx[i, kb]
            up = x[i, kb] - f[i, jb] > 0.0
            for a in range(nf):
                j = idx[i, a]
                f[i, j] = f[i, j] + step * (x[i, a] - f[i, j])
            f[i, jb] = hi[i, jb] if up else lo[i, jb]
            fixed[i, jb] = True
            at_hi[i, jb] = up
            continue
        for a in range(nf):
            j = idx[i, a]
            f[i, j] = f[i, j] + 1.0 * (x[i, a] - f[i, j])
        # optimal on the free set: the multipliers of the fixed (releasable) variables
        worst = math.inf
        kr = -1
        for j in range(n):
            if fixed[i, j] and lo[i, j] < hi[i, j]:
                g = -c[i, j]
                for k in range(n):
                    g += f[i, k] * h[k, j]
                lam = -g if at_hi[i, j] else g
                if lam < worst:
                    worst = lam
                    kr = j
        if not worst < -tol:
            return it + 1
        fixed[i, kr] = False
        at_hi[i, kr] = False
    return -1


@register_jitable
def jacobi6(g: Any, i: int, vec: Any, want: bool) -> tuple[float, float]:
    """Smallest and largest eigenvalue of the symmetric 6×6 g[i] (cyclic Jacobi).

    g[i] ends diagonal (its eigenvalues); with ``want`` vec[i] holds the eigenvectors as
    columns (g = V Λ Vᵀ), else vec is not touched.
    """
    if want:
        for p in range(6):
            for q in range(6):
                vec[i, p, q] = 1.0 if p == q else 0.0
    for _ in range(60):
        off = 0.0
        diag = 0.0
        for p in range(6):
            diag += g[i, p, p] * g[i, p, p]
            for q in range(p + 1, 6):
                off += g[i, p, q] * g[i, p, q]
        if not off > 1e-34 * diag:
            break
        for p in range(5):
            for q in range(p + 1, 6):
                apq = g[i, p, q]
                if apq == 0.0:
                    continue
                theta = (g[i, q, q] - g[i, p, p]) / (2.0 * apq)
                t = 1.0 / (abs(theta) + math.sqrt(theta * theta + 1.0))
                if theta < 0.0:
                    t = -t
                cs = 1.0 / math.sqrt(t * t + 1.0)
                sn = t * cs
                for k in range(6):
                    gkp = g[i, k, p]
                    gkq = g[i, k, q]
                    g[i, k, p] = cs * gkp - sn * gkq
                    g[i, k, q] = sn * gkp + cs * gkq
                for k in range(6):
                    gpk = g[i, p, k]
                    gqk = g[i, q, k]
                    g[i, p, k] = cs * gpk - sn * gqk
                    g[i, q, k] = sn * gpk + cs * gqk
                if want:
                    for k in range(6):
                        vkp = vec[i, k, p]
                        vkq = vec[i, k, q]
                        vec[i, k, p] = cs * vkp - sn * vkq
                        vec[i, k, q] = sn * vkp + cs * vkq
    emin = math.inf
    emax = -math.inf
    for p in range(6):
        emin = min(emin, g[i, p, p])
        emax = max(emax, g[i, p, p])
    return emin, emax


@register_jitable
def _gram_free(i: int, b: Any, free: Any, m: Any) -> None:
    """m[i] = B_F B_Fᵀ (6 × 6) over row i's free thrusters."""
    n = b.shape[1]
    for k in range(6):
        for q in range(6):
            acc = 0.0
            for j in range(n):
                if free[i, j]:
                    acc += b[k, j] * b[q, j]
            m[i, k, q] = acc


@register_jitable
def _polish_row(i, tau, b, lo, hi, f, free, y, m, r):  # noqa: ANN001, ANN202
    """ε → 0 limit of the regularised solution f[i] on its active set, where it meets τ.

    Free thrusters (strictly inside their bounds, 1e−9·max(1, hi − lo)) take the
    minimum-norm exact solution B_Fᵀ(B_F B_Fᵀ)⁻¹(τ − B_A f_A) (the fixed ones snapped to
    their bound) when B_F B_Fᵀ is well conditioned (λ_min > 1e−10 λ_max) and the result
    stays inside the bounds (1e−12); otherwise f[i] is kept.  Returns True when polished.
    """
    n = f.shape[1]
    for j in range(n):
        tol = 1e-9 * max(1.0, hi[i, j] - lo[i, j])
        fj = f[i, j]
        free[i, j] = fj > lo[i, j] + tol and fj < hi[i, j] - tol
        if free[i, j]:
            y[i, j] = fj
        elif fj >= hi[i, j] - tol:
            y[i, j] = hi[i, j]
        elif fj <= lo[i, j] + tol:
            y[i, j] = lo[i, j]
        else:
            y[i, j] = fj
    for k in range(6):
        acc = tau[i, k]
        for j in range(n):
            if not free[i, j]:
                acc -= b[k, j] * y[i, j]
        r[i, k] = acc
    _gram_free(i, b, free, m)
    emin, emax = jacobi6(m, i, m, False)
    if not emin > 1e-10 * max(emax, 1e-300):
        return False
    _gram_free(i, b, free, m)  # again: the eigenvalue sweep overwrote it
    if not _chol_solve(m, i, 6, r):
        return False
    for j in range(n):
        if free[i, j]:
            acc = 0.0
            for k in range(6):
                acc += r[i, k] * b[k, j]
            y[i, j] = acc
        if not (y[i, j] >= lo[i, j] - 1e-12 and y[i, j] <= hi[i, j] + 1e-12):
            return False
    for j in range(n):
        f[i, j] = min(max(y[i, j], lo[i, j]), hi[i, j])
    return True


@register_jitable
def _qp_forces(i, ins, outs):  # noqa: ANN001, ANN202
    """Rate-windowed bounds, active set and polish of row i: (iterations or −1)."""
    tau, w, h, wb, b_act, lo, hi, f_prev, dr, max_iter = ins
    force, lo_r, hi_r, c, fixed, at_hi, m, x, idx, y = outs
    n = force.shape[1]
    rb = _row(lo, i)
    rp = _row(f_prev, i)
    for j in range(n):
        lo_j = lo[rb, j]
        hi_j = hi[rb, j]
        if dr >= 0.0:  # |f − f_prev| ≤ Δ·dt, the envelope winning where they do not meet
            lo_r[i, j] = min(max(lo_j, f_prev[rp, j] - dr), hi_j)
            hi_r[i, j] = max(min(hi_j, f_prev[rp, j] + dr), lo_j)
        else:
            lo_r[i, j] = lo_j
            hi_r[i, j] = hi_j
        acc = 0.0
        for k in range(6):
            acc += (w[k] * tau[i, k]) * wb[k, j]
        c[i, j] = acc
    its = _box_qp_row(i, h, c, lo_r, hi_r, force, fixed, at_hi, m, x, idx, max_iter)
    if its >= 0:
        _polish_row(i, tau, b_act, lo_r, hi_r, force, fixed, y, m, x)
    return its


@register_jitable
def qp_forces_one(i: int, ins: tuple, outs: tuple) -> None:
    """Forces of row i before the total-current scale (``ins``/``outs`` of :func:`_qp_forces`
    and ``outs[-1]``: iterations (N,), −1 = not converged)."""
    its = _qp_forces(i, ins[:10], outs[:10])
    outs[10][i] = its


@register_jitable
def box_qp_one(i: int, ins: tuple, outs: tuple) -> None:
    """Row i of the box QP min ½fᵀHf − cᵀf, lo ≤ f ≤ hi: ``ins`` = (c, h, lo, hi, max_iter),
    ``outs`` = (f, fixed, at_hi, m, x, idx, iterations)."""
    c, h, lo, hi, max_iter = ins
    f, fixed, at_hi, m, x, idx, its = outs
    its[i] = _box_qp_row(i, h, c, lo, hi, f, fixed, at_hi, m, x, idx, max_iter)


@register_jitable
def qp_one(i: int, ins: tuple, outs: tuple) -> None:
    """The whole ``qp`` allocation of vehicle i (§6.2), with the model outputs at the forces.

    ``ins`` = (τ (N, 6), W_τ (6,), H (n, n), W_τB (6, n), B (6, n), lo, hi ((N, n) or (1, n))
    [N], f_prev ((N, n) or (1, n)) [N], Δ·dt [N] (< 0: no rate window), max_iter, v (N,) or
    (1,) [V], σ (n,), PWM gain (n,) [µs], craw, coef, F_unit [N], dead band (fit units),
    imax [A] (inf = none)); ``outs`` = (force, lo_r, hi_r, c, fixed, at_hi, m (N, n, n) or
    (N, 6, 6) whichever is larger, x, idx, y (scratch), u, pwm, current (N, n), Σ current,
    scale (N,), achieved, unmet (N, 6), saturated (N, n), binding, status (N,)).
    """
    v, sig, pwm_gain, craw, coef, fscale, x_dead, imax = ins[10:]
    force, lo_r, hi_r = outs[0], outs[1], outs[2]
    x0 = outs[9]  # y: free after the polish, holds the T200-frame forces
    u, pwm, cur, cur_tot, scale, achieved, unmet, sat, binding, status = outs[10:]
    tau, b_act, dr = ins[0], ins[4], ins[8]
    n = force.shape[1]
    its = _qp_forces(i, ins[:10], outs[:10])
    if its < 0:
        status[i] = -1
        return
    # the uniform total-current scale (the feasible end of its bracket)
    s, r = scale_to_total(i, force, v, sig, craw, coef, fscale, x_dead, imax, x0, u, cur)
    by_total = s < 1.0
    exceeded = False
    moved = False
    if dr >= 0.0 and by_total:
        # the scaled forces may leave the rate window (0 need not lie in it): rate wins
        for j in range(n):
            fj = min(max(force[i, j], lo_r[i, j]), hi_r[i, j])
            if fj != force[i, j]:
                moved = True
            force[i, j] = fj
    # the model at the final forces
    _ray_start(i, force, sig, fscale, x0)
    tot = _ray(i, 1.0, x0, coef, r, x_dead, u, cur)
    if moved:
        exceeded = tot > imax * (1 + 1e-12)
    outputs_at(i, force, u, cur, pwm_gain, lo_r, hi_r, i, pwm, cur_tot, sat)
    zero = True
    met = True
    for k in range(6):
        if tau[i, k] != 0.0:
            zero = False
        acc = 0.0
        for j in range(n):
            acc += b_act[k, j] * force[i, j]
        achieved[i, k] = acc
        unmet[i, k] = tau[i, k] - acc
        if not abs(acc - tau[i, k]) <= 1e-6 * (1.0 + abs(tau[i, k])):
            met = False
    scale[i] = s
    binding[i] = 3 if by_total else (0 if met else 1)
    code = 3 if zero else (1 if by_total or not met else 0)
    if s < 1e-6 and not zero:
        code = 2
    if exceeded:
        code = 4
    status[i] = code


# Lazily built kernels (numba imported at the first compiled call), walked by
# :func:`marinesim.core.compile.walk_rows`; the cache key covers this package and the T200 law.
_T200_LAW = Path(__file__).resolve().parents[1] / "actuators" / "t200_law.py"
_GET = {
    name: cc.lazy_kernels(
        one,
        (0, 0),
        stamp=cc.source_stamp(one, (_T200_LAW,)),
        parallel_min=PARALLEL_MIN,
        error_model="numpy",
    )
    for name, one in (("qp", qp_one), ("qp_forces", qp_forces_one), ("box_qp", box_qp_one))
}


def walk(name: str, ins: tuple, outs: tuple) -> None:
    """Row law ``name`` (``qp``, ``qp_forces`` or ``box_qp``) for every row of ``ins[0]``:
    compiled, or interpreted under ``MARINESIM_JIT=0``."""
    cc.walk_rows(_GET[name], int(ins[0].shape[0]), (ins, outs))


def scratch(n_rows: int, n: int) -> tuple[np.ndarray, ...]:
    """The active set's and polish's scratch rows: (c, fixed, at_hi, m, x, idx, y)."""
    k = max(n, 6)
    return (
        np.empty((n_rows, n)),
        np.empty((n_rows, n), dtype=np.bool_),
        np.empty((n_rows, n), dtype=np.bool_),
        np.empty((n_rows, k, k)),
        np.empty((n_rows, k)),
        np.empty((n_rows, n), dtype=np.int64),
        np.empty((n_rows, n)),
    )
