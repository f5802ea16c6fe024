"""Pseudo-inverse allocation with the exact current-limited uniform scale (``specs/allocation.md`` §5.2).

f₀ = B⁺τ, then the **exact** largest uniform scale s* ∈ [0, 1] keeping every thruster inside
its voltage-dependent force range (T200 envelope, |u| ≤ 1, per-motor current limit: closed
form per thruster) and the total current under its limit (safeguarded log–log secant with a
bisection fallback, |Δs| ≤ 5e−7, keeping the feasible end).  Never silently all-zero:
s* < 1e−6 with τ ≠ 0 is status ``infeasible``.

With the cubic T200 model (the default) the whole allocation of each vehicle is one compiled
kernel (:func:`marinesim.allocation.kernels.pinv_one`, numba, parallel over vehicles; N = 1
and any N bit-identical).  With the measured-table model (``t200_model: table``), or with
``backend="numpy"`` (the vectorised reference the kernel is checked against), the numpy
path below runs on the model's rays (the table's curves are built per voltage in numpy).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from marinesim.actuators.t200 import T200Cubic
from marinesim.allocation import kernels
from marinesim.allocation.limits import (
    AllocationResult,
    Array,
    compact,
    cubic_kernel_args,
    finish,
    kernels_coef,
    solve_total,
)

if TYPE_CHECKING:
    from marinesim.allocation.solve import Allocator

__all__ = ["pinv"]


def pinv(
    alloc: Allocator,
    tau: ArrayLike,
    voltage: ArrayLike | None = None,
    *,
    backend: str | None = None,
) -> AllocationResult:
    """Pseudo-inverse allocation with the exact uniform scale (§5.2; :meth:`Allocator.pinv`).

    Parameters
    ----------
    tau : array_like, shape (N, 6) or (6,)
        Wrench demand [N, N·m].
    voltage : float or array_like, shape (N,), optional
        Supply voltage per vehicle [V] (default ``limits.voltage``).
    backend : {"cpu", "python", "numpy"}, optional
        Backend of the cubic model (default ``cpu``: the compiled kernel, parallel over
        vehicles; ``python``: the same kernel interpreted; ``numpy``: the vectorised
        reference path; see :mod:`marinesim.allocation.kernels`).  The table model
        always runs the numpy path.

    Returns
    -------
    AllocationResult
        ``scale`` = s*; ``binding`` names the limiting constraint.
    """
    t, v = alloc._inputs(tau, voltage)
    if backend == "numpy" or not isinstance(alloc.model, T200Cubic):
        return _pinv_numpy(alloc, t, v)
    return _pinv_kernel(alloc, t, v, backend)


def _geometry_args(alloc: Allocator) -> tuple[Array, Array, Array, Array]:
    """B⁺ (n, 6), B (6, n), σ (n,) and the PWM gain ±400 µs (n,), contiguous (cached)."""
    cached = getattr(alloc, "_kernel_geometry", None)
    if cached is None:
        g = alloc.geometry
        gain = np.where(np.asarray(g.signal_inverted, dtype=bool), -400.0, 400.0)
        cached = tuple(
            np.ascontiguousarray(np.broadcast_to(x, shape), dtype=float)
            for x, shape in (
                (g.b_pinv, (g.n, 6)),
                (g.b_active, (6, g.n)),
                (g.sigma, (g.n,)),
                (gain, (g.n,)),
            )
        )
        alloc._kernel_geometry = cached  # type: ignore[attr-defined]
    return cached  # type: ignore[return-value]


def _pinv_kernel(alloc: Allocator, t: Array, v: Array, backend: str | None) -> AllocationResult:
    """The compiled per-vehicle path (cubic model)."""
    lo, hi, lo_e, hi_e = (np.ascontiguousarray(compact(x)) for x in alloc.bounds(v))
    g = alloc.geometry
    craw, fscale, x_dead = cubic_kernel_args(alloc.model)  # type: ignore[arg-type]
    imax = alloc.limits.max_current_total
    n_rows = t.shape[0]
    outs = kernels.empty_outputs(n_rows, g.n)
    ins = (
        np.ascontiguousarray(t),
        np.ascontiguousarray(v),
        *_geometry_args(alloc),
        lo,
        hi,
        lo_e,
        hi_e,
        craw,
        kernels_coef(alloc, craw, v),
        fscale,
        x_dead,
        np.inf if imax is None else float(imax),
    )
    kernels.launch("pinv", backend, ins, outs)
    force, u, pwm, cur, cur_tot, scale, achieved, unmet, sat, binding, status = outs
    return AllocationResult(
        mode="pinv",
        force=force,
        u=u,
        pwm=pwm,
        current=cur,
        current_total=cur_tot,
        scale=scale,
        demand=t,
        achieved=achieved,
        unmet=unmet,
        saturated=sat,
        binding_code=binding,
        status_code=status,
    )


def _pinv_numpy(alloc: Allocator, t: Array, v: Array) -> AllocationResult:
    """The vectorised numpy path over all vehicles at once, on the model's rays.

    Runs for the measured-table model and as the ``numpy`` reference of the compiled kernel
    (the same law; it sums currents in another order, so the two agree to the scale
    tolerance S_TOL rather than bit for bit).
    """
    lo, hi, lo_e, hi_e = (compact(x) for x in alloc.bounds(v))
    f0 = t @ alloc.geometry.b_pinv.T
    # per thruster, closed form: s_i = bound_i / f0_i on the branch sign(f0_i) selects.
    # With lo < 0 < hi that is max(hi/f0, lo/f0) exactly (the other quotient is ≤ 0);
    # f0_i = ±0 gives +inf, a failed thruster (0/0) nan → +inf: never binding.  Worked
    # thruster-major, (n, N), so the per-thruster bounds broadcast along the long axis and
    # the reductions over thrusters are cheap.
    f0t = np.ascontiguousarray(f0.T)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        sit = np.maximum(hi.T / f0t, lo.T / f0t)
        s_env = np.maximum(hi_e.T / f0t, lo_e.T / f0t)
    np.copyto(sit, np.inf, where=np.isnan(sit))
    np.copyto(s_env, np.inf, where=np.isnan(s_env))
    s_bound = sit.min(axis=0)
    s_hi = np.minimum(1.0, s_bound)
    # envelope (1) when a thruster reaching s_bound does so at its envelope bound, else the
    # per-motor current bound (2)
    env_binds = s_env.min(axis=0) <= s_bound * (1 + 1e-12)
    binding = np.where(s_bound < 1.0, np.where(env_binds, 1, 2), 0)
    sig = alloc.geometry.sigma
    big0 = f0 if np.all(sig == 1.0) else f0 * sig[None, :]
    # outputs at s_hi; rows over the total current limit are re-solved and re-evaluated
    ray = alloc.model.ray(big0, v)
    u, cur = ray.evaluate(s_hi)
    s = s_hi.copy()
    by_total = np.zeros(s.shape, dtype=bool)
    imax = alloc.limits.max_current_total
    if imax is not None:
        tot = cur.sum(axis=1)
        idx = np.nonzero(tot > imax)[0]
        if idx.size:
            sub = ray.subset(idx)
            s[idx] = solve_total(sub, s_hi[idx], tot[idx] - imax, imax)
            u[idx], cur[idx] = sub.evaluate(s[idx])
            by_total[idx] = True
    binding = np.where(by_total, 3, binding)
    zero = ~np.any(t != 0, axis=1)
    status = np.where(zero, 3, np.where(s >= 1.0, 0, np.where(s < 1e-6, 2, 1)))
    # thrusters at their bound: those whose closed-form scale is the one applied
    sat_t = sit <= s_hi * (1.0 + 1e-12)
    sat_t &= (s_hi < 1.0) & ~by_total
    sat = sat_t.T
    return finish(alloc, "pinv", t, v, s[:, None] * f0, s, lo, hi, binding, status, (u, cur), sat)
