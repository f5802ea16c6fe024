"""Bounded allocators: the batched QP with DOF priorities, failures and rate limits, and the
redistributed pseudo-inverse (``specs/allocation.md`` §6).

* ``qp`` (:func:`qp`) — minimise ‖W_τ(Bf − τ)‖² + ε‖f‖² subject to the asymmetric
  per-thruster bounds (batched primal active set, :func:`box_qp`; SciPy ``lsq_linear``
  ``bvls`` per vehicle as the reference), the ε → 0 limit on the active set, then the uniform
  total-current scale.  DOF priorities through W_τ; failed thrusters fixed at 0; an optional
  force-rate window |f − f_prev| ≤ Δ·dt.
* ``redistributed_pinv`` (:func:`redistributed_pinv`) — weighted B⁺ with saturated
  thrusters fixed at their bounds and the rest re-solved, at most n rounds (vectorised).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from marinesim.allocation.limits import AllocationResult, Array, finish, rate_window, total_scale
from marinesim.core.errors import ConfigError, NumericalError

if TYPE_CHECKING:
    from marinesim.allocation.solve import Allocator

__all__ = ["box_qp", "polish", "polish_batched", "qp", "qp_scipy", "redistributed_pinv"]


def qp(
    alloc: Allocator,
    tau: ArrayLike,
    voltage: ArrayLike | None = None,
    dof_weights: ArrayLike | None = None,
    *,
    solver: Literal["batched", "scipy"] = "batched",
    f_prev: ArrayLike | None = None,
    dt: float | None = None,
) -> AllocationResult:
    """Bounded least-squares allocation with DOF priorities (§6.2 ``qp``).

    Minimises ‖W_τ(Bf − τ)‖² + ε‖f‖² subject to lo ≤ f ≤ hi, takes the ε → 0 limit on
    the active set when the demand is met exactly (the minimum-norm exact solution), then
    applies the uniform total-current scale.

    With ``limits.max_force_rate`` = Δ [N/s], ``f_prev`` and ``dt`` the bounds are also
    intersected with |f_i − f_prev,i| ≤ Δ·dt (§6.1; where the previous force lies outside
    the present envelope, e.g. after a voltage drop, the envelope wins).  If the uniform
    total-current scale then leaves that rate window, the rate limit wins and the status
    is ``current_limit_exceeded``.

    Parameters
    ----------
    tau : array_like, shape (N, 6) or (6,)
        Wrench demand [N, N·m].
    voltage : float or array_like, shape (N,), optional
        Supply voltage [V].
    dof_weights : array_like, shape (6,), optional
        W_τ diagonal (default: the allocator's).
    solver : {"batched", "scipy"}
        ``batched``: a primal active-set method over all vehicles at once (array masks,
        batched 8×8 solves); ``scipy``: SciPy ``lsq_linear`` (``bvls``) per vehicle, the
        reference implementation.
    f_prev : array_like, shape (N, n) or (n,), optional
        Previous allocated forces [N] (for the rate limit).
    dt : float, optional
        Time since ``f_prev`` [s] (for the rate limit).
    """
    t, v = alloc._inputs(tau, voltage)
    w = alloc.dof_weights if dof_weights is None else np.asarray(dof_weights, dtype=float)
    if w.shape != (6,) or np.any(~np.isfinite(w)) or np.any(w <= 0):
        raise ConfigError("dof_weights must be 6 finite positive numbers", param="dof_weights")
    lo, hi, _, _ = alloc.bounds(v)
    lo, hi = np.array(lo), np.array(hi)  # writeable (N, n)
    g = alloc.geometry
    rate = rate_window(alloc, f_prev, dt, t.shape[0])
    if rate is not None:
        lo_env, hi_env = lo, hi
        lo = np.minimum(np.maximum(lo_env, rate[0]), hi_env)
        hi = np.maximum(np.minimum(hi_env, rate[1]), lo_env)
    if solver == "scipy":
        f = qp_scipy(alloc, t, w, lo, hi)
    elif solver == "batched":
        wb = w[:, None] * g.b_active
        h = wb.T @ wb + alloc.limits.eps * np.eye(g.n)
        grad0 = (w[None, :] * t) @ wb  # Aᵀb per vehicle, (N, n)
        f = box_qp(h, grad0, lo, hi)
        f = polish_batched(f, t, g.b_active, lo, hi)
    else:
        raise ConfigError(f"unknown qp solver {solver!r} (known: batched, scipy)", param="solver")
    s, by_total = total_scale(alloc, f, v, np.ones(t.shape[0]))
    f = s[:, None] * f
    exceeded = np.zeros(t.shape[0], dtype=bool)
    if rate is not None and np.any(by_total):
        # the scaled forces may leave the rate window (0 need not lie in it): rate wins
        clipped = np.clip(f, lo, hi)
        moved = np.any(clipped != f, axis=1)
        f = clipped
        imax = alloc.limits.max_current_total
        if imax is not None and np.any(moved):
            tot = alloc.currents(f, v).sum(axis=1)
            exceeded = moved & (tot > imax * (1 + 1e-12))
    zero, binding, status = _outcome(t, f, g.b_active, by_total)
    status = np.where((s < 1e-6) & ~zero, 2, status)
    status = np.where(exceeded, 4, status)
    return finish(alloc, "qp", t, v, f, s, lo, hi, binding, status)


def qp_scipy(alloc: Allocator, t: Array, w: Array, lo: Array, hi: Array) -> Array:
    """Per-vehicle SciPy ``lsq_linear`` (bvls) solution of the ``qp`` problem, polished."""
    from scipy.optimize import lsq_linear

    g = alloc.geometry
    act = np.nonzero(g.enabled)[0]
    a = np.vstack([w[:, None] * g.b[:, act], math.sqrt(alloc.limits.eps) * np.eye(act.size)])
    f = np.zeros((t.shape[0], g.n))
    rhs = np.zeros(6 + act.size)
    for j in range(t.shape[0]):
        rhs[:6] = w * t[j]
        res = lsq_linear(
            a, rhs, bounds=(lo[j, act], hi[j, act]), method="bvls", tol=1e-14, lsmr_tol=None
        )
        f[j, act] = polish(
            np.clip(res.x, lo[j, act], hi[j, act]), t[j], g.b[:, act], lo[j, act], hi[j, act]
        )
    return f


def redistributed_pinv(
    alloc: Allocator,
    tau: ArrayLike,
    voltage: ArrayLike | None = None,
    thruster_weights: ArrayLike | None = None,
) -> AllocationResult:
    """Redistributed (weighted) pseudo-inverse allocation (§6.2 ``redistributed_pinv``).

    f = B_W⁺τ; thrusters beyond a bound are fixed at it, their columns removed and the
    remaining wrench re-solved with the others, at most n rounds (vectorised with masks,
    batched 6×6 pseudo-inverses).  Whatever cannot be met stays in ``unmet``; then the
    uniform total-current scale applies.

    Parameters
    ----------
    tau : array_like, shape (N, 6) or (6,)
        Wrench demand [N, N·m].
    voltage : float or array_like, shape (N,), optional
        Supply voltage [V].
    thruster_weights : array_like, shape (n,), optional
        W diagonal (> 0; default 1): a heavier thruster is used less.
    """
    t, v = alloc._inputs(tau, voltage)
    g = alloc.geometry
    w = np.ones(g.n) if thruster_weights is None else np.asarray(thruster_weights, dtype=float)
    if w.shape != (g.n,) or np.any(~np.isfinite(w)) or np.any(w <= 0):
        raise ConfigError(
            "thruster_weights must be n finite positive numbers", param="thruster_weights"
        )
    lo, hi, _, _ = alloc.bounds(v)
    lo, hi = np.array(lo), np.array(hi)
    n_rows = t.shape[0]
    f = np.zeros((n_rows, g.n))
    fixed = np.broadcast_to(~g.enabled, (n_rows, g.n)).copy()
    open_rows = np.arange(n_rows)
    for _ in range(g.n):
        if open_rows.size == 0:
            break
        fr = ~fixed[open_rows]
        bw = g.b[None, :, :] * (fr / w[None, :])[:, None, :]  # B_F W⁻¹, (R, 6, n)
        gram = bw @ g.b.T  # B_F W⁻¹ B_Fᵀ, (R, 6, 6)
        r = t[open_rows] - np.where(fr, 0.0, f[open_rows]) @ g.b.T
        x = np.einsum("rkn,rk->rn", bw, (np.linalg.pinv(gram, rcond=1e-10) @ r[:, :, None])[..., 0])
        fn = np.where(fr, x, f[open_rows])
        over = fr & ((fn > hi[open_rows]) | (fn < lo[open_rows]))
        f[open_rows] = np.clip(fn, lo[open_rows], hi[open_rows])
        fixed[open_rows] |= over
        open_rows = open_rows[np.any(over, axis=1) & np.any(~fixed[open_rows], axis=1)]
    s, by_total = total_scale(alloc, f, v, np.ones(n_rows))
    _, binding, status = _outcome(t, f, g.b_active, by_total)
    return finish(alloc, "redistributed_pinv", t, v, s[:, None] * f, s, lo, hi, binding, status)


def _outcome(
    t: Array, f: Array, b: Array, by_total: NDArray[np.bool_]
) -> tuple[NDArray[np.bool_], NDArray[np.int64], NDArray[np.int64]]:
    """Zero demands, binding and status codes of a bounded solution (``limits.BINDING``/``STATUS``).

    Parameters
    ----------
    t : ndarray, shape (N, 6)
        Wrench demand [N, N·m].
    f : ndarray, shape (N, n)
        Forces [N] whose wrench B·f is checked against τ (met within 1e-6 relative).
    b : ndarray, shape (6, n)
        Allocation matrix of the working thrusters.
    by_total : ndarray of bool, shape (N,)
        Rows scaled down by the total-current limit.

    Returns
    -------
    zero : ndarray of bool, shape (N,)
        τ = 0.
    binding : ndarray, shape (N,)
        3 total current, else 0 when τ is met, 1 (envelope) when not.
    status : ndarray, shape (N,)
        3 zero, 1 scaled (total current or τ not met), else 0 ok.
    """
    zero = ~np.any(t != 0, axis=1)
    met = np.all(np.abs(f @ b.T - t) <= 1e-6 * (1 + np.abs(t)), axis=1)
    binding = np.where(by_total, 3, np.where(met, 0, 1))
    status = np.where(zero, 3, np.where(by_total | ~met, 1, 0))
    return zero, binding, status


def polish(x: Array, tau: Array, b: Array, lo: Array, hi: Array) -> Array:
    """ε → 0 limit of the regularised QP on its active set, when it meets τ exactly.

    Thrusters at a bound stay there; the free ones take the minimum-norm exact solution
    B_F⁺(τ − B_A f_A) if B_F has full row rank and the result stays inside the bounds.
    Otherwise (demand not attainable) the regularised solution is kept.
    """
    tol = 1e-9 * np.maximum(1.0, hi - lo)
    free = (x > lo + tol) & (x < hi - tol)
    bf = b[:, free]
    if bf.shape[1] < 6 or np.linalg.matrix_rank(bf) < 6:
        return x
    y = x.copy()
    y[~free] = np.where(x[~free] >= hi[~free] - tol[~free], hi[~free], lo[~free])
    y[free] = np.linalg.pinv(bf) @ (tau - b[:, ~free] @ y[~free])
    if np.all(y >= lo - 1e-12) and np.all(y <= hi + 1e-12):
        return np.clip(y, lo, hi)
    return x


def box_qp(h: Array, c: Array, lo: Array, hi: Array, max_iter: int = 100) -> Array:
    """Batched strictly convex box QP: min ½fᵀHf − cᵀf subject to lo ≤ f ≤ hi, per row.

    Primal active-set method over all rows at once with masks: from the feasible start
    f = clip(0, lo, hi) (bounds not containing 0 start fixed at the nearer one), solve the equality-constrained problem on the free set (batched n×n solves),
    step to the first blocking bound (which becomes fixed) or, at the subproblem optimum,
    release the fixed variable with the most negative multiplier.  Finite termination for
    strictly convex H (H = BᵀW²B + εI here).

    Parameters
    ----------
    h : ndarray, shape (n, n)
        Shared symmetric positive definite Hessian.
    c : ndarray, shape (N, n)
        Linear terms per row.
    lo, hi : ndarray, shape (N, n)
        Bounds with lo ≤ hi (lo = hi fixes a variable).
    max_iter : int
        Iteration cap (a :class:`NumericalError` is raised if any row has not converged).

    Returns
    -------
    ndarray, shape (N, n)
        The minimiser per row.
    """
    n_rows, n = c.shape
    # feasible start: 0 where the box contains it, else the nearer bound (fixed there)
    f = np.clip(0.0, lo, hi)
    moved = f != 0.0
    fixed = (lo >= hi) | moved  # lo = hi (failed thrusters) stays pinned
    at_hi = moved & (f == hi)
    rows = np.arange(n_rows)
    eye = np.eye(n, dtype=bool)
    tol = 1e-12 * max(1.0, float(np.abs(h).max()))
    for _ in range(max_iter):
        if rows.size == 0:
            return f
        fr = ~fixed[rows]
        fx = f[rows]
        # reduced system: free rows/cols of H, identity on fixed ones
        both = fr[:, :, None] & fr[:, None, :]
        m = np.where(both, h[None, :, :], eye[None, :, :].astype(float))
        rhs = np.where(fr, c[rows] - np.einsum("ij,rj->ri", h, np.where(fr, 0.0, fx)), fx)
        x = np.linalg.solve(m, rhs[:, :, None])[:, :, 0]
        d = x - fx
        lo_r, hi_r = lo[rows], hi[rows]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(d > 0, (hi_r - fx) / d, np.where(d < 0, (lo_r - fx) / d, np.inf))
        ratio = np.where(fr, ratio, np.inf)
        kblock = np.argmin(ratio, axis=1)
        alpha = ratio[np.arange(rows.size), kblock]
        blocked = alpha < 1.0
        # blocked rows: step to the bound, fix the blocking variable there
        step = np.where(blocked, np.maximum(alpha, 0.0), 1.0)
        fnew = fx + step[:, None] * d
        rb = np.nonzero(blocked)[0]
        kb = kblock[rb]
        up = d[rb, kb] > 0
        fnew[rb, kb] = np.where(up, hi_r[rb, kb], lo_r[rb, kb])
        f[rows] = fnew
        fixed[rows[rb], kb] = True
        at_hi[rows[rb], kb] = up
        # unblocked rows: optimal on their free set; check the multipliers of fixed variables
        ru = np.nonzero(~blocked)[0]
        gr = fnew[ru] @ h - c[rows[ru]]  # gradient Hf − c (h symmetric)
        lam = np.where(at_hi[rows[ru]], -gr, gr)  # ≥ 0 at the optimum
        releasable = fixed[rows[ru]] & (lo[rows[ru]] < hi[rows[ru]])
        lam = np.where(releasable, lam, np.inf)
        kr = np.argmin(lam, axis=1)
        worst = lam[np.arange(ru.size), kr]
        release = worst < -tol
        rr = ru[release]
        fixed[rows[rr], kr[release]] = False
        at_hi[rows[rr], kr[release]] = False
        done = np.zeros(rows.size, dtype=bool)
        done[ru[~release]] = True
        rows = rows[~done]
    raise NumericalError(
        f"box QP did not converge in {max_iter} iterations for {rows.size} vehicle(s)"
    )


def polish_batched(f: Array, tau: Array, b: Array, lo: Array, hi: Array) -> Array:
    """ε → 0 limit of the regularised QP on each row's active set where it meets τ exactly.

    Free thrusters (strictly inside their bounds) take the minimum-norm exact solution
    B_Fᵀ(B_F B_Fᵀ)⁻¹(τ − B_A f_A) when B_F has full row rank and the result stays inside the
    bounds; other rows keep the regularised solution.
    """
    tol = 1e-9 * np.maximum(1.0, hi - lo)
    free = (f > lo + tol) & (f < hi - tol)
    y = np.where(free, f, np.where(f >= hi - tol, hi, np.where(f <= lo + tol, lo, f)))
    r = tau - np.where(free, 0.0, y) @ b.T
    gram = np.einsum("ij,nj,kj->nik", b, free.astype(float), b)
    ev = np.linalg.eigvalsh(gram)
    good = ev[:, 0] > 1e-10 * np.maximum(ev[:, -1], 1e-300)
    out = f.copy()
    if not np.any(good):
        return out
    z = np.linalg.solve(gram[good], r[good][:, :, None])[:, :, 0]
    ff = np.where(free[good], z @ b, y[good])
    inside = np.all((ff >= lo[good] - 1e-12) & (ff <= hi[good] + 1e-12), axis=1)
    idx = np.nonzero(good)[0][inside]
    out[idx] = np.clip(ff[inside], lo[idx], hi[idx])
    return out
