"""What every allocator shares: limits, the result type and the limit handling (``specs/allocation.md`` §5–6).

* :class:`AllocatorLimits` — supply voltage, per-motor and total current limits, T200 model
  choice, QP regularisation and the optional force-rate limit.
* :class:`AllocationResult` — forces, ESC outputs, PWM, currents, the achieved and unmet
  wrench, the scale, saturation and the binding/status codes (:data:`BINDING`,
  :data:`STATUS`).
* :func:`finish` — builds the result from allocated forces (model outputs at the forces).
* :func:`total_scale` — the largest uniform scale s ∈ [0, s_hi] keeping the total current
  under its limit: compiled kernel for the cubic model
  (:func:`marinesim.allocation.kernels.total_scale_one`), the batched secant
  :func:`solve_total` for the measured-table model.
* :func:`rate_window` — the per-thruster window |f − f_prev| ≤ Δ·dt of the rate limit.

Shapes: wrench demands τ (N, 6) [N, N·m]; voltage (N,) [V]; forces (N, n) [N] along d_i.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from marinesim.actuators.t200 import ZERO_FORCE, T200Cubic, pwm_from_u
from marinesim.allocation import kernels
from marinesim.allocation.kernels import BISECT_STEPS, S_TOL, SECANT_STEPS
from marinesim.core.errors import ConfigError
from marinesim.core.params import ParamsBase, field

if TYPE_CHECKING:
    from marinesim.allocation.solve import Allocator

__all__ = [
    "BINDING",
    "STATUS",
    "AllocationResult",
    "AllocatorLimits",
    "T200Model",
    "compact",
    "cubic_kernel_args",
    "finish",
    "kernels_coef",
    "rate_window",
    "solve_total",
    "total_scale",
]

Array = NDArray[np.float64]
#: binding constraint codes → names
BINDING = ("none", "envelope", "motor_current", "total_current")
#: status codes → names
STATUS = ("ok", "scaled", "infeasible", "zero", "current_limit_exceeded")


class T200Model(Protocol):
    """What the allocator needs from a T200 model (:class:`T200Cubic` or :class:`T200Table`)."""

    def force_to_u(self, force: ArrayLike, voltage: ArrayLike) -> Array:
        """ESC output u [-] of T200-frame forces [N] at supply voltages [V]."""
        ...

    def current(self, force: ArrayLike, voltage: ArrayLike) -> Array:
        """Supply current [A] of T200-frame forces [N] at supply voltages [V]."""
        ...

    def force_limits(self, voltage: ArrayLike, max_current: float = ...) -> tuple[Array, Array]:
        """Forward (> 0) and reverse (< 0) force bounds [N] at V under a per-motor current limit."""
        ...

    def ray(self, force: Array, voltage: Array) -> Any:
        """Rays s·F0 per vehicle with ``total_current``, ``evaluate`` and ``subset``."""
        ...


class AllocatorLimits(ParamsBase):
    """Limits and model choices of the allocators."""

    voltage: float = field(16.0, unit="V", description="supply voltage at the ESCs (10–20 V)")
    max_current_per_thruster: float | None = field(
        15.0, unit="A", description="per-motor current limit (null = none)", gt=0
    )
    max_current_total: float | None = field(
        50.0, unit="A", description="total current limit of all thrusters (null = none)", gt=0
    )
    zero_force: float = field(
        ZERO_FORCE, unit="N", description="|F| below this → neutral output", ge=0
    )
    t200_model: Literal["cubic", "table"] = field(
        "cubic",
        description="allocator model: cubic fits (shipped) or the measured table (needs data)",
    )
    t200_profile: Literal["default", "mrobosub"] = field(
        "default", description="cubic coefficient set: our fit or MRoboSub's constants"
    )
    symmetric_bounds: bool = field(
        False, description="use the weaker (reverse) T200 limit on both sides (conservative)"
    )
    eps: float = field(1e-6, description="QP regularisation ε on ‖f‖²", gt=0)
    max_force_rate: float | None = field(
        None,
        unit="N/s",
        description="qp: per-thruster rate limit |f − f_prev| ≤ rate·dt (null = none)",
        gt=0,
    )


@dataclass(frozen=True)
class AllocationResult:
    """Output of an allocator for N vehicles with n thrusters.

    Attributes
    ----------
    mode : str
        ``pinv``, ``qp`` or ``direct``.
    force : ndarray, shape (N, n)
        Allocated forces along d_i [N].
    u : ndarray, shape (N, n)
        ESC outputs in the T200 frame [-] (|u| ≤ 1 when feasible).
    pwm : ndarray, shape (N, n)
        ESC pulse widths [µs] (signal inversion applied).
    current : ndarray, shape (N, n)
        Model current per thruster [A].
    current_total : ndarray, shape (N,)
        Summed current [A].
    scale : ndarray, shape (N,)
        Uniform scale s* (``pinv``, and the current scale of ``qp``) or α* (``direct``) [-].
    demand, achieved, unmet : ndarray, shape (N, 6)
        τ_d, B·f and τ_d − B·f [N, N·m].
    saturated : ndarray of bool, shape (N, n)
        Thruster at a bound (envelope or per-motor current).
    binding_code, status_code : ndarray of int, shape (N,)
        Indices into :data:`BINDING` and :data:`STATUS`.
    """

    mode: str
    force: Array
    u: Array
    pwm: Array
    current: Array
    current_total: Array
    scale: Array
    demand: Array
    achieved: Array
    unmet: Array
    saturated: NDArray[np.bool_]
    binding_code: NDArray[np.int8]
    status_code: NDArray[np.int8]

    @property
    def binding(self) -> NDArray[np.str_]:
        """Binding constraint per vehicle: none, envelope, motor_current, total_current."""
        return np.asarray(BINDING)[self.binding_code]

    @property
    def status(self) -> NDArray[np.str_]:
        """Status per vehicle: ok, scaled, infeasible, zero, current_limit_exceeded."""
        return np.asarray(STATUS)[self.status_code]


def compact(x: Array) -> Array:
    """A (N, n) array broadcast from one row → that row as (1, n) (cheaper to broadcast)."""
    return x[:1] if x.ndim == 2 and x.shape[0] > 1 and x.strides[0] == 0 else x


def cubic_kernel_args(model: T200Cubic) -> tuple[Array, float, float]:
    """Raw coefficients (2, 2, 10), force unit [N] and dead band (fit units) for the kernels."""
    craw = getattr(model, "_kernel_craw", None)
    if craw is None:
        craw = np.array([[model._f2u[0], model._f2u[1]], [model._u2i[0], model._u2i[1]]])
        craw.flags.writeable = False
        model._kernel_craw = craw  # type: ignore[attr-defined]
    return craw, float(model._fscale), float(model.zero_force / model._fscale)


def kernels_coef(alloc: Allocator, craw: Array, v: Array) -> Array:
    """The kernels' ``coef`` input: shared cubics (1, 2, 2, 4) (cached) or per-vehicle scratch."""
    if v.size > 1 and not np.all(v == v[0]):
        return np.empty((v.size, 2, 2, 4))
    cache = alloc.__dict__.setdefault("_kernel_coef", {})
    c = cache.get(float(v[0]))
    if c is None:
        if len(cache) > 4096:
            cache.clear()
        c = cache[float(v[0])] = kernels.shared_coefficients(craw, float(v[0]))
    return c


def finish(
    alloc: Allocator,
    mode: str,
    tau: Array,
    v: Array,
    f: Array,
    scale: Array,
    lo: Array,
    hi: Array,
    binding: Array,
    status: Array,
    u_cur: tuple[Array, Array] | None = None,
    saturated: NDArray[np.bool_] | None = None,
) -> AllocationResult:
    """The :class:`AllocationResult` of forces f (N, n) [N] with the model's outputs at f."""
    g = alloc.geometry
    if u_cur is None:
        u, cur = alloc.model.ray(g.sigma[None, :] * f, v).evaluate(np.ones(f.shape[0]))
    else:
        u, cur = u_cur
    achieved = f @ g.b_active.T
    if saturated is None:
        tol = 1e-9 * np.maximum(1.0, np.abs(hi - lo))
        sat = g.enabled[None, :] & ((np.abs(f - hi) <= tol) | (np.abs(f - lo) <= tol)) & (f != 0)
    else:
        sat = saturated
    return AllocationResult(
        mode=mode,
        force=f,
        u=u,
        pwm=pwm_from_u(u, g.signal_inverted[None, :]),
        current=cur,
        current_total=cur.sum(axis=1),
        scale=scale,
        demand=tau,
        achieved=achieved,
        unmet=tau - achieved,
        saturated=sat,
        binding_code=binding.astype(np.int8),
        status_code=status.astype(np.int8),
    )


def total_scale(
    alloc: Allocator, f0: Array, v: Array, s_hi: Array, ray: Any = None, backend: str | None = None
) -> tuple[Array, Array]:
    """Largest s ∈ [0, s_hi] with Σ I(s·f0) ≤ limit (feasible end, |Δs| ≤ S_TOL); and a mask.

    The cubic model with s_hi = 1 runs the compiled kernel; otherwise the batched secant
    :func:`solve_total` on the model's rays.
    """
    imax = alloc.limits.max_current_total
    s = s_hi.copy()
    bound = np.zeros(s.shape, dtype=bool)
    if imax is None:
        return s, bound
    if isinstance(alloc.model, T200Cubic) and ray is None and np.all(s_hi == 1.0):
        craw, fscale, x_dead = cubic_kernel_args(alloc.model)
        f = np.ascontiguousarray(f0, dtype=float)
        n_rows, n = f.shape
        ins = (
            f,
            np.ascontiguousarray(v, dtype=float),
            alloc.geometry.sigma.astype(float),
            craw,
            kernels_coef(alloc, craw, np.asarray(v, dtype=float).reshape(-1)),
            fscale,
            x_dead,
            float(imax),
        )
        scratch = (np.empty((n_rows, n)), np.empty((n_rows, n)), np.empty((n_rows, n)))
        kernels.launch("total_scale", backend, ins, (*scratch, s, bound))
        return s, bound
    if ray is None:
        ray = alloc.model.ray(f0 * alloc.geometry.sigma[None, :], v)
    tot = ray.total_current(s_hi)
    over = tot > imax
    if not np.any(over):
        return s, bound
    idx = np.nonzero(over)[0]
    s[idx] = solve_total(ray.subset(idx), s_hi[idx], tot[idx] - imax, imax)
    bound[idx] = True
    return s, bound


def solve_total(ray: Any, s_hi: Array, g_hi: Array, imax: float) -> Array:
    """Root of Σ I(s·F0) = imax on [0, s_hi] per row, returning the feasible end.

    The total current along a ray is close to a power law c·s^p (T200 current ≈ |F|^1.5),
    so each step is a secant in log–log coordinates through the two latest points (the
    first from p = 1.5), nudged 0.45·S_TOL past the estimate so an accurate estimate
    closes the bracket (Dekker).  Steps leaving the bracket [lo, hi] (Σ I(lo) ≤ imax <
    Σ I(hi)) fall back to bisection, and rows leave the working set once
    hi − lo ≤ S_TOL.  The bracket holds at every step: the result is always feasible and
    within S_TOL of the exact scale.
    """
    m = s_hi.size
    lo = np.zeros(m)
    hi = s_hi.copy()
    side = np.zeros(m, dtype=np.int8)  # which end moved last: −1 lo, +1 hi
    s_a = s_hi.copy()  # latest evaluated point and its total current
    t_a = g_hi + imax
    s_b = np.full(m, np.nan)  # the point before (none yet)
    t_b = np.full(m, np.nan)
    work = np.arange(m)  # rows still open; ``ray`` holds exactly these rows
    w1 = np.full(m, np.inf)  # bracket width one and two steps back (progress check)
    w2 = np.full(m, np.inf)
    for step in range(SECANT_STEPS + BISECT_STEPS):
        open_ = (hi[work] - lo[work]) > S_TOL
        if not np.any(open_):
            break
        if open_.sum() < 0.6 * work.size:
            keep = np.nonzero(open_)[0]
            work, ray = work[keep], ray.subset(keep)
            open_ = np.ones(work.size, dtype=bool)
        a_lo, a_hi, sd = lo[work], hi[work], side[work]
        sa, ta, sb, tb = s_a[work], t_a[work], s_b[work], t_b[work]
        width = a_hi - a_lo
        if step < SECANT_STEPS:
            with np.errstate(divide="ignore", invalid="ignore"):
                p = np.where(np.isnan(sb), 1.5, np.log(ta / tb) / np.log(sa / sb))
                sv = sa * (imax / ta) ** (1.0 / p)
            sv = sv + np.where(sd == -1, 0.45, -0.45) * S_TOL
            # bisect where the secant left the bracket or the bracket stopped shrinking
            inside = np.isfinite(sv) & (sv > a_lo) & (sv < a_hi) & (p > 0)
            inside &= width <= 0.5 * w2[work]
            sv = np.where(inside, sv, 0.5 * (a_lo + a_hi))
        else:
            sv = 0.5 * (a_lo + a_hi)
        margin = 0.1 * S_TOL  # open rows have width > S_TOL
        sv = np.clip(sv, a_lo + margin, a_hi - margin)
        w2[work] = w1[work]
        w1[work] = np.where(step >= 2, width, np.inf)
        tv = ray.total_current(sv)
        ok = (tv <= imax) & open_
        bad = (tv > imax) & open_
        lo[work] = np.where(ok, sv, a_lo)
        hi[work] = np.where(bad, sv, a_hi)
        side[work] = np.where(ok, -1, np.where(bad, 1, sd))
        s_b[work], t_b[work] = sa, ta
        s_a[work], t_a[work] = sv, tv
    return lo


def rate_window(
    alloc: Allocator, f_prev: ArrayLike | None, dt: float | None, n_rows: int
) -> tuple[Array, float] | None:
    """f_prev (N, n) [N] and Δ·dt [N] of the window |f − f_prev| ≤ Δ·dt per thruster, or None
    when no rate limit applies (checked: dt > 0, f_prev finite and of the vehicles' shape)."""
    rate = alloc.limits.max_force_rate
    if rate is None or f_prev is None:
        return None
    if dt is None or not (math.isfinite(dt) and dt > 0):
        raise ConfigError(f"dt must be a positive time in s (got {dt})", param="dt")
    fp = np.asarray(f_prev, dtype=float)
    try:
        fp = np.broadcast_to(fp, (n_rows, alloc.geometry.n))
    except ValueError:
        raise ConfigError(
            f"f_prev must have shape ({n_rows}, {alloc.geometry.n}) or "
            f"({alloc.geometry.n},), got {fp.shape}",
            param="f_prev",
        ) from None
    if not np.all(np.isfinite(fp)):
        raise ConfigError("f_prev must be finite", param="f_prev")
    return fp, rate * dt
