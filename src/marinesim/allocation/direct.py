"""Direct (LP) allocation and the wrench-envelope analysis (``specs/allocation.md`` §6.2, §9).

* ``direct`` (:func:`direct`) — Durham's direct allocation: maximise α ∈ [0, 1] with
  Bf = ατ inside the bounds and Σ I ≤ limit, the current as tangent cuts of the convex hull of
  the current model; second stage minimises the summed current at α*·(1 − 1e−9) (SciPy
  HiGHS ``linprog``, one LP per vehicle; an analysis tool and test oracle).
* :func:`max_wrench_exact` — the largest wrench along a direction with the exact
  piecewise-linear current model (MILP, SciPy HiGHS ``milp``).
* :func:`max_axis_wrench` — the largest pure-axis wrench (pinv, LP or exact).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

import numpy as np
from numpy.typing import ArrayLike

from marinesim.allocation.limits import AllocationResult, Array, finish, total_scale
from marinesim.core.errors import ConfigError

if TYPE_CHECKING:
    from marinesim.allocation.solve import Allocator

__all__ = ["direct", "max_axis_wrench", "max_wrench_exact"]


def direct(
    alloc: Allocator,
    tau: ArrayLike,
    voltage: ArrayLike | None = None,
    *,
    alpha_max: float = 1.0,
    cuts: int = 48,
) -> AllocationResult:
    """Direct allocation (Durham 1993) with the current limits as LP constraints (§6.2).

    Maximises α ∈ [0, alpha_max] subject to B f = α τ, lo ≤ f ≤ hi, Σ t_i ≤ I_total,
    t_i ≥ tangent cuts of the lower convex hull of the current model I(f) (``cuts``
    samples per branch); then minimises Σ t_i at α*(1 − 1e−9).  If the model current of the
    solution still exceeds the total limit (a non-convex I(F)), the uniform scale of §5.2
    is applied.  One HiGHS LP per vehicle (not vectorised; analysis and test oracle).

    Parameters
    ----------
    tau : array_like, shape (N, 6) or (6,)
        Wrench demand (direction and magnitude) [N, N·m].
    voltage : float or array_like, shape (N,), optional
        Supply voltage [V].
    alpha_max : float
        Upper bound of α (1 = never more than the demand; ``inf`` for the largest wrench
        along τ).
    cuts : int
        Samples per branch of the current curve for the hull.
    """
    from scipy.optimize import linprog

    t, v = alloc._inputs(tau, voltage)
    lo, hi, _, _ = alloc.bounds(v)
    g = alloc.geometry
    n = g.n
    imax = alloc.limits.max_current_total
    f = np.zeros((t.shape[0], n))
    alpha = np.zeros(t.shape[0])
    for j in range(t.shape[0]):
        if not np.any(t[j] != 0):
            continue
        cut_rows, cut_rhs = (
            current_cuts(alloc, lo[j], hi[j], float(v[j]), cuts) if imax is not None else ([], [])
        )
        nv = 2 * n + 1  # f, t, α
        a_eq = np.zeros((6, nv))
        a_eq[:, :n] = g.b_active
        a_eq[:, -1] = -t[j]
        a_ub_rows = list(cut_rows)
        b_ub = list(cut_rhs)
        if imax is not None:
            row = np.zeros(nv)
            row[n : 2 * n] = 1.0
            a_ub_rows.append(row)
            b_ub.append(imax)
        a_ub = np.array(a_ub_rows) if a_ub_rows else None
        bub = np.array(b_ub) if b_ub else None
        amax = None if not math.isfinite(alpha_max) else alpha_max
        bnds = [(lo[j, i], hi[j, i]) for i in range(n)] + [(0.0, None)] * n + [(0.0, amax)]
        c = np.zeros(nv)
        c[-1] = -1.0
        r1 = linprog(
            c, A_ub=a_ub, b_ub=bub, A_eq=a_eq, b_eq=np.zeros(6), bounds=bnds, method="highs"
        )
        if r1.status != 0:
            continue
        a_star = float(r1.x[-1])
        bnds[-1] = (a_star * (1 - 1e-9), a_star * (1 - 1e-9))
        c2 = np.zeros(nv)
        c2[n : 2 * n] = 1.0
        c2[:n] = 1e-9  # tie-break towards small forces where current cuts are flat
        r2 = linprog(
            c2 if imax is not None else np.concatenate([np.zeros(n), np.ones(n), [0.0]]),
            A_ub=a_ub,
            b_ub=bub,
            A_eq=a_eq,
            b_eq=np.zeros(6),
            bounds=bnds,
            method="highs",
        )
        x = r2.x if r2.status == 0 else r1.x
        f[j] = np.clip(x[:n], lo[j], hi[j])
        alpha[j] = float(x[-1])
    s, by_total = total_scale(alloc, f, v, np.ones(t.shape[0]))
    f = s[:, None] * f
    alpha = alpha * s
    if np.any(by_total) and alpha_max <= 1.0:
        # the hull is a relaxation of a non-convex current curve: after scaling back, the
        # (direction-preserving) pseudo-inverse may reach further; keep the better one
        p = alloc.pinv(t[by_total], v[by_total])
        better = p.scale > alpha[by_total]
        idx = np.nonzero(by_total)[0][better]
        f[idx] = p.force[better]
        alpha[idx] = p.scale[better]
    zero = ~np.any(np.abs(t) > 0, axis=1)
    binding = np.where(by_total, 3, np.where(alpha < 1.0 - 1e-9, 1, 0))
    status = np.where(zero, 3, np.where(alpha >= 1.0 - 1e-9, 0, np.where(alpha < 1e-6, 2, 1)))
    return finish(alloc, "direct", t, v, f, alpha, lo, hi, binding, status)


def breakpoints(alloc: Allocator, i: int, lo: float, hi: float, v: float, samples: int) -> Array:
    """Allocation-frame forces at which thruster i's current model is evaluated (sorted)."""
    sig = alloc.geometry.sigma[i]
    pts: list[Array] = [np.array([lo, 0.0, hi])]
    bp = getattr(alloc.model, "breakpoints", None)
    if bp is not None:
        fwd, rev = bp(v)
        pts += [sig * fwd, -sig * rev]
        zf = alloc.limits.zero_force
        pts.append(np.array([zf, -zf]) * (1 + 1e-12))
    else:
        pts += [np.linspace(lo, 0.0, samples), np.linspace(0.0, hi, samples)]
    x = np.unique(np.concatenate(pts))
    return x[(x >= lo) & (x <= hi)]


def max_wrench_exact(
    alloc: Allocator, tau: ArrayLike, voltage: float | None = None, *, samples: int = 96
) -> float:
    """Largest α with B f = α τ inside the bounds and the **exact** piecewise-linear current limit.

    The current model is taken as piecewise-linear between breakpoints (the table's own
    points for ``t200_model: table``, ``samples`` per branch for the cubic model) and the
    non-convex total-current constraint is solved globally as a MILP (SOS2 by binaries,
    SciPy HiGHS ``milp``).  Analysis only (a few hundred ms per call).

    Parameters
    ----------
    tau : array_like, shape (6,)
        Wrench direction [N, N·m].
    voltage : float, optional
        Supply voltage [V] (default ``limits.voltage``).

    Returns
    -------
    float
        α* [-]: the largest wrench along τ is α*·τ.
    """
    from scipy.optimize import Bounds, LinearConstraint, milp

    t, v = alloc._inputs(tau, voltage)
    if t.shape[0] != 1:
        raise ConfigError("max_wrench_exact takes one wrench direction", param="tau")
    lo, hi, _, _ = alloc.bounds(v)
    g = alloc.geometry
    xs = [breakpoints(alloc, i, lo[0, i], hi[0, i], float(v[0]), samples) for i in range(g.n)]
    cur = [alloc.model.current(g.sigma[i] * x, np.full(x.shape, v[0])) for i, x in enumerate(xs)]
    nl = [x.size for x in xs]
    # logarithmic SOS2 (Vielma & Nemhauser): ceil(log2(segments)) binaries per thruster
    nb = [math.ceil(math.log2(k - 1)) if k > 2 else (1 if k == 2 else 0) for k in nl]
    off_l = np.concatenate([[0], np.cumsum(nl)])[:-1]
    n_lam = int(sum(nl))
    off_z = n_lam + np.concatenate([[0], np.cumsum(nb)])[:-1]
    nv = n_lam + int(sum(nb)) + 1
    rows: list[Array] = []
    lb: list[float] = []
    ub: list[float] = []
    # B f = α τ
    for r in range(6):
        row = np.zeros(nv)
        for i in range(g.n):
            row[off_l[i] : off_l[i] + nl[i]] = g.b_active[r, i] * xs[i]
        row[-1] = -t[0, r]
        rows.append(row)
        lb.append(0.0)
        ub.append(0.0)
    for i in range(g.n):
        row = np.zeros(nv)
        row[off_l[i] : off_l[i] + nl[i]] = 1.0
        rows.append(row)
        lb.append(1.0)
        ub.append(1.0)
        nseg = nl[i] - 1
        if nseg < 1:
            continue
        gray = np.arange(nseg) ^ (np.arange(nseg) >> 1)
        for bit in range(nb[i]):
            seg_bit = (gray >> bit) & 1
            ones = np.zeros(nv)
            zeros = np.zeros(nv)
            for k in range(nl[i]):
                adj = [sg for sg in (k - 1, k) if 0 <= sg < nseg]
                if all(seg_bit[sg] == 1 for sg in adj):
                    ones[off_l[i] + k] = 1.0
                if all(seg_bit[sg] == 0 for sg in adj):
                    zeros[off_l[i] + k] = 1.0
            ones[off_z[i] + bit] = -1.0  # Σ λ(J+) ≤ y
            zeros[off_z[i] + bit] = 1.0  # Σ λ(J0) ≤ 1 − y
            rows += [ones, zeros]
            lb += [-np.inf, -np.inf]
            ub += [0.0, 1.0]
    if alloc.limits.max_current_total is not None:
        row = np.zeros(nv)
        for i in range(g.n):
            row[off_l[i] : off_l[i] + nl[i]] = cur[i]
        rows.append(row)
        lb.append(-np.inf)
        ub.append(alloc.limits.max_current_total)
    c = np.zeros(nv)
    c[-1] = -1.0
    integrality = np.zeros(nv)
    integrality[n_lam:-1] = 1
    res = milp(
        c,
        constraints=LinearConstraint(np.array(rows), np.array(lb), np.array(ub)),
        integrality=integrality,
        bounds=Bounds(np.zeros(nv), np.concatenate([np.ones(nv - 1), [np.inf]])),
        options={"mip_rel_gap": 1e-6},
    )
    if res.status != 0 or res.x is None:
        return 0.0
    return float(res.x[-1])


def current_cuts(
    alloc: Allocator, lo: Array, hi: Array, v: float, samples: int
) -> tuple[list[Array], list[float]]:
    """Rows a·f_i − t_i ≤ −b of the lower convex hull of I(f_i) on [lo_i, hi_i], per thruster."""
    n = alloc.geometry.n
    nv = 2 * n + 1
    rows: list[Array] = []
    rhs: list[float] = []
    for i in range(n):
        if lo[i] == hi[i]:
            continue
        # the table's own breakpoints (with the bounds and 0) make the hull a true
        # relaxation of the piecewise-linear current; the cubic model is sampled
        grid = breakpoints(alloc, i, float(lo[i]), float(hi[i]), v, samples)
        cur = alloc.model.current(alloc.geometry.sigma[i] * grid, np.full(grid.shape, v))
        for x0, y0, x1, y1 in lower_hull_segments(grid, cur):
            a = (y1 - y0) / (x1 - x0)
            b = y0 - a * x0
            row = np.zeros(nv)
            row[i] = a
            row[n + i] = -1.0
            rows.append(row)
            rhs.append(-b)
    return rows, rhs


def lower_hull_segments(x: Array, y: Array) -> list[tuple[float, float, float, float]]:
    """Segments of the lower convex hull of points sorted by x (monotone chain)."""
    hull: list[tuple[float, float]] = []
    for px, py in zip(x.tolist(), y.tolist(), strict=True):
        while len(hull) >= 2:
            (ax, ay), (bx, by) = hull[-2], hull[-1]
            if (bx - ax) * (py - ay) - (by - ay) * (px - ax) <= 0:
                hull.pop()
            else:
                break
        hull.append((px, py))
    return [(hull[k][0], hull[k][1], hull[k + 1][0], hull[k + 1][1]) for k in range(len(hull) - 1)]


def max_axis_wrench(
    allocator: Allocator, axis: int, sign: float = 1.0, mode: Literal["pinv", "lp", "exact"] = "lp"
) -> float:
    """Largest pure-axis wrench the allocator reaches (``specs/allocation.md`` §9.4–9.5).

    Parameters
    ----------
    allocator : Allocator
        Geometry, limits and voltage.
    axis : int
        0..5 for X, Y, Z [N], K, M, N [N·m].
    sign : float
        +1 or −1: the direction along the axis.
    mode : {"pinv", "lp"}
        ``pinv``: f = w·B⁺e_k uniformly scaled until the first limit (what uniform-scaling
        allocators reach); ``lp``: ``direct`` with α unbounded (the true maximum when the
        current curve is convex or no total limit is set); ``exact``: the global optimum with
        the piecewise-linear current model (MILP, :meth:`Allocator.max_wrench_exact`).

    Returns
    -------
    float
        Magnitude of the largest wrench along ±e_k [N or N·m] (≥ 0).
    """
    if axis not in range(6):
        raise ConfigError(f"axis must be 0..5 (got {axis})", param="axis")
    e = np.zeros(6)
    e[axis] = 1.0 if sign >= 0 else -1.0
    # pinv: bracket with the per-thruster closed form, then the exact scale inside it
    lo, hi, _, _ = allocator.bounds()
    f0 = allocator.geometry.b_pinv @ e
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        si = np.where(f0 > 1e-12, hi[0] / f0, np.where(f0 < -1e-12, lo[0] / f0, np.inf))
    top = float(np.min(si))
    res = allocator.pinv(e * top)
    w_pinv = float(res.scale[0] * top)
    if mode == "pinv":
        return w_pinv
    # the B⁺ point is feasible along e, so the LP answer is never below it
    d = allocator.direct(e, alpha_max=math.inf)
    if mode == "exact" and d.binding_code[0] == 3:
        # the convex-hull LP is a relaxation: when its optimum also meets the model's own
        # (non-convex) total current it is the global optimum; only otherwise run the MILP
        return max(allocator.max_wrench_exact(e), w_pinv)
    return max(float(d.scale[0]), w_pinv)
