"""Bounded allocators: the batched QP with DOF priorities, failures and rate limits, and the
redistributed pseudo-inverse (``specs/allocation.md`` §6).

* ``qp`` (:func:`qp`) — minimise ‖W_τ(Bf − τ)‖² + ε‖f‖² subject to the asymmetric
  per-thruster bounds (primal active set), the ε → 0 limit on the active set, then the
  uniform total-current scale: one row law per vehicle,
  :func:`marinesim.allocation.qp_rows.qp_one`, compiled by numba (or interpreted under
  ``MARINESIM_JIT=0``), the same function the engine's generated tick calls; SciPy
  ``lsq_linear`` ``bvls`` per vehicle is the independent reference (``solver="scipy"``).  DOF priorities through W_τ; failed thrusters fixed at 0; an optional
  force-rate window |f − f_prev| ≤ Δ·dt.
* ``redistributed_pinv`` (:func:`redistributed_pinv`) — weighted B⁺ with saturated
  thrusters fixed at their bounds and the rest re-solved, at most n rounds: the row law
  :func:`marinesim.allocation.redistributed_rows.redistributed_one`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from marinesim.actuators.t200 import T200Cubic
from marinesim.allocation import kernels, qp_rows, redistributed_rows
from marinesim.allocation.limits import (
    AllocationResult,
    Array,
    compact,
    cubic_kernel_args,
    finish,
    kernels_coef,
    rate_window,
    total_scale,
)
from marinesim.allocation.pinv import _geometry_args
from marinesim.core.errors import ConfigError, NumericalError

if TYPE_CHECKING:
    from marinesim.allocation.solve import Allocator

__all__ = ["box_qp", "polish", "qp", "qp_geometry", "qp_scipy", "redistributed_pinv"]


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
        ``batched``: the per-vehicle row law :func:`marinesim.allocation.qp_rows.qp_one`
        (primal active set, polish, total-current scale and model outputs; compiled, or
        interpreted under ``MARINESIM_JIT=0``); with the measured-table model the row law's
        forces (:func:`~marinesim.allocation.qp_rows.qp_forces_one`) are scaled and evaluated
        on the table in numpy.  ``scipy``: SciPy ``lsq_linear`` (``bvls``) per vehicle, the
        independent reference.
    f_prev : array_like, shape (N, n) or (n,), optional
        Previous allocated forces [N] (for the rate limit).
    dt : float, optional
        Time since ``f_prev`` [s] (for the rate limit).

    Raises
    ------
    NumericalError
        The active set of a vehicle did not converge in ``qp_rows.MAX_ITER`` iterations.
    """
    t, v = alloc._inputs(tau, voltage)
    w = alloc.dof_weights if dof_weights is None else np.asarray(dof_weights, dtype=float)
    if w.shape != (6,) or np.any(~np.isfinite(w)) or np.any(w <= 0):
        raise ConfigError("dof_weights must be 6 finite positive numbers", param="dof_weights")
    if solver not in ("batched", "scipy"):
        raise ConfigError(f"unknown qp solver {solver!r} (known: batched, scipy)", param="solver")
    lo, hi, _, _ = (np.ascontiguousarray(compact(x)) for x in alloc.bounds(v))
    g = alloc.geometry
    n_rows = t.shape[0]
    rate = rate_window(alloc, f_prev, dt, n_rows)
    fp, dr = (np.zeros((1, g.n)), -1.0) if rate is None else (compact(rate[0]), rate[1])
    head = (
        np.ascontiguousarray(t),
        *qp_geometry(alloc, w),
        lo,
        hi,
        np.ascontiguousarray(fp, dtype=float),
        float(dr),
        qp_rows.MAX_ITER,
    )
    f = np.empty((n_rows, g.n))
    lo_r, hi_r = np.empty((n_rows, g.n)), np.empty((n_rows, g.n))
    work = qp_rows.scratch(n_rows, g.n)
    if solver == "batched" and isinstance(alloc.model, T200Cubic):
        craw, fscale, x_dead = cubic_kernel_args(alloc.model)
        imax = alloc.limits.max_current_total
        ins = (
            *head,
            np.ascontiguousarray(v),
            *_geometry_args(alloc)[2:],
            craw,
            kernels_coef(alloc, craw, v),
            fscale,
            x_dead,
            np.inf if imax is None else float(imax),
        )
        outs = kernels.empty_outputs(n_rows, g.n)
        u, pwm, cur, cur_tot, scale, achieved, unmet, sat, binding, status = outs[1:]
        qp_rows.walk("qp", ins, (f, lo_r, hi_r, *work, *outs[1:]))
        _converged(status)
        return AllocationResult("qp", f, u, pwm, cur, cur_tot, scale, t, achieved, unmet, sat,
                                binding, status)  # fmt: skip
    # forces of the row law (table model) or SciPy's (the reference); scale and outputs here
    if solver == "scipy":
        lo_r[...], hi_r[...] = lo, hi
        if rate is not None:  # the row law's window, in numpy
            lo_r[...] = np.minimum(np.maximum(lo, fp - dr), hi)
            hi_r[...] = np.maximum(np.minimum(hi, fp + dr), lo)
        f = qp_scipy(alloc, t, w, lo_r, hi_r)
    else:
        its = np.empty(n_rows, dtype=np.int64)
        qp_rows.walk("qp_forces", head, (f, lo_r, hi_r, *work, its))
        _converged(its)
    s, by_total = total_scale(alloc, f, v, np.ones(n_rows))
    f = s[:, None] * f
    exceeded = np.zeros(n_rows, dtype=bool)
    if rate is not None and np.any(by_total):
        # the scaled forces may leave the rate window (0 need not lie in it): rate wins
        clipped = np.clip(f, lo_r, hi_r)
        moved = np.any(clipped != f, axis=1)
        f = clipped
        imax = alloc.limits.max_current_total
        if imax is not None and np.any(moved):
            tot = alloc.currents(f, v).sum(axis=1)
            exceeded = moved & (tot > imax * (1 + 1e-12))
    zero, binding, status = _outcome(t, f, g.b_active, by_total)
    status = np.where((s < 1e-6) & ~zero, 2, status)
    status = np.where(exceeded, 4, status)
    return finish(alloc, "qp", t, v, f, s, lo_r, hi_r, binding, status)


def qp_geometry(alloc: Allocator, w: Array) -> tuple[Array, Array, Array, Array]:
    """W_τ (6,), H = (W_τB)ᵀW_τB + εI (n, n), W_τB (6, n) and B (6, n) of the working
    thrusters, contiguous (cached per weight vector)."""
    cache = alloc.__dict__.setdefault("_qp_geometry", {})
    key = w.tobytes()
    hit = cache.get(key)
    if hit is None:
        g = alloc.geometry
        wb = w[:, None] * g.b_active
        h = wb.T @ wb + alloc.limits.eps * np.eye(g.n)
        hit = tuple(np.ascontiguousarray(x, dtype=float) for x in (w, h, wb, g.b_active))
        if len(cache) > 64:
            cache.clear()
        cache[key] = hit
    return hit


def _converged(code: NDArray[np.integer]) -> None:
    """NumericalError when a row's active set did not converge (its code −1)."""
    bad = int(np.count_nonzero(code < 0))
    if bad:
        raise NumericalError(
            f"box QP did not converge in {qp_rows.MAX_ITER} iterations for {bad} vehicle(s)"
        )


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
    remaining wrench re-solved with the others, at most n rounds: the row law
    :func:`marinesim.allocation.redistributed_rows.redistributed_one` per vehicle (compiled,
    or interpreted under ``MARINESIM_JIT=0``).  Whatever cannot be met stays in ``unmet``;
    then the uniform total-current scale applies.

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
    lo, hi, _, _ = (np.ascontiguousarray(compact(x)) for x in alloc.bounds(v))
    n_rows = t.shape[0]
    cubic = isinstance(alloc.model, T200Cubic)
    if cubic:
        craw, fscale, x_dead = cubic_kernel_args(alloc.model)
        coef = kernels_coef(alloc, craw, v)
        imax = alloc.limits.max_current_total
        lim = np.inf if imax is None else float(imax)
    else:  # forces only (NaN): the table's rays scale and evaluate them below
        craw, fscale, x_dead, coef, lim = (
            np.zeros((2, 2, 10)),
            1.0,
            0.0,
            np.zeros((1, 2, 2, 4)),
            np.nan,
        )
    ins = (
        np.ascontiguousarray(t),
        np.ascontiguousarray(g.b_active, dtype=float),
        np.ascontiguousarray(w),
        np.ascontiguousarray(g.enabled, dtype=np.bool_),
        lo,
        hi,
        np.ascontiguousarray(v),
        *_geometry_args(alloc)[2:],
        craw,
        coef,
        fscale,
        x_dead,
        lim,
    )
    outs = kernels.empty_outputs(n_rows, g.n)
    f = outs[0]
    redistributed_rows.walk(ins, (f, *redistributed_rows.scratch(n_rows, g.n), *outs[1:]))
    if cubic:
        u, pwm, cur, cur_tot, scale, achieved, unmet, sat, binding, status = outs[1:]
        return AllocationResult("redistributed_pinv", f, u, pwm, cur, cur_tot, scale, t,
                                achieved, unmet, sat, binding, status)  # fmt: skip
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
    """Strictly convex box QP per row: min ½fᵀHf − cᵀf subject to lo ≤ f ≤ hi.

    The primal active set of the ``qp`` row law (:func:`marinesim.allocation.qp_rows.box_qp_one`,
    compiled or interpreted): from the feasible start f = clip(0, lo, hi) (bounds not
    containing 0 start fixed at the nearer one) it solves the equality-constrained problem
    on the free set (Cholesky), steps to the first blocking bound (which becomes fixed) or,
    at the subproblem optimum, releases the fixed variable with the most negative
    multiplier.  Finite termination for strictly convex H (H = BᵀW²B + εI here).

    Parameters
    ----------
    h : ndarray, shape (n, n)
        Shared symmetric positive definite Hessian.
    c : ndarray, shape (N, n)
        Linear terms per row.
    lo, hi : ndarray, shape (N, n) or (1, n)
        Bounds with lo ≤ hi (lo = hi fixes a variable).
    max_iter : int
        Iteration cap (a :class:`NumericalError` is raised if any row has not converged).

    Returns
    -------
    ndarray, shape (N, n)
        The minimiser per row.
    """
    c = np.ascontiguousarray(c, dtype=float)
    n_rows, n = c.shape
    lo, hi = (np.ascontiguousarray(np.broadcast_to(x, (n_rows, n)), dtype=float) for x in (lo, hi))
    f = np.empty((n_rows, n))
    c_, fixed, at_hi, m, x, idx, _ = qp_rows.scratch(n_rows, n)
    its = np.empty(n_rows, dtype=np.int64)
    ins = (c, np.ascontiguousarray(h, dtype=float), lo, hi, int(max_iter))
    qp_rows.walk("box_qp", ins, (f, fixed, at_hi, m, x, idx, its))
    bad = int(np.count_nonzero(its < 0))
    if bad:
        raise NumericalError(
            f"box QP did not converge in {max_iter} iterations for {bad} vehicle(s)"
        )
    return f
