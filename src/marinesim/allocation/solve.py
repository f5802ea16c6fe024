"""Thruster allocation that respects the T200's limits (``specs/allocation.md`` §5–6).

Modes:

* ``pinv`` (:func:`allocate_pinv`) — f₀ = B⁺τ, then the **exact** largest uniform scale
  s* ∈ [0, 1] keeping every thruster inside its voltage-dependent force range (T200 envelope,
  |u| ≤ 1, per-motor current limit: closed form per thruster) and the total current under its
  limit (safeguarded log–log secant of all vehicles together with a bisection fallback,
  |Δs| ≤ 5e−7, keeping the feasible end).  Fully vectorised over N vehicles.  Never silently all-zero: s* < 1e−6 with τ ≠ 0 is
  status ``infeasible``.
* ``redistributed_pinv`` (:func:`allocate_redistributed`) — weighted B⁺ with saturated
  thrusters fixed at their bounds and the rest re-solved, at most n rounds (vectorised).
* ``qp`` (:func:`allocate_qp`) — minimise ‖W_τ(Bf − τ)‖² + ε‖f‖² subject to the asymmetric
  per-thruster bounds (batched primal active set, :func:`box_qp`; SciPy ``lsq_linear``
  ``bvls`` per vehicle as the reference), then the uniform total-current scale.  DOF
  priorities through W_τ; failed thrusters fixed at 0.
* ``direct`` (:func:`allocate_direct`) — Durham's direct allocation: maximise α ∈ [0, 1] with
  Bf = ατ inside the bounds and Σ I ≤ limit, the current as tangent cuts of the convex hull of
  the current model; second stage minimises the summed current at α*·(1 − 1e−9) (SciPy
  HiGHS ``linprog``, one LP per vehicle; an analysis tool and test oracle).

Every mode returns an :class:`AllocationResult` with forces, ESC outputs, PWM, currents, the
achieved wrench B·f and the unmet part τ − B·f (for controllers' anti-windup), the scale or α,
saturation flags, the binding constraint and a status per vehicle.

Shapes: wrench demands τ (N, 6) or (6,) [N, N·m] (rows X, Y, Z, K, M, N, FRD); voltage a
scalar or (N,) [V]; forces (N, n) [N] along each thruster's direction d_i.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from marinesim.actuators.t200 import ZERO_FORCE, T200Cubic, T200Table, check_voltage, pwm_from_u
from marinesim.allocation.tam import Geometry
from marinesim.core.errors import ConfigError, NumericalError
from marinesim.core.params import ParamsBase, field

__all__ = [
    "BINDING",
    "box_qp",
    "STATUS",
    "AllocationResult",
    "Allocator",
    "AllocatorLimits",
    "allocate_direct",
    "allocate_pinv",
    "allocate_qp",
    "allocate_redistributed",
    "max_axis_wrench",
]

Array = NDArray[np.float64]
#: binding constraint codes → names
BINDING = ("none", "envelope", "motor_current", "total_current")
#: status codes → names
STATUS = ("ok", "scaled", "infeasible", "zero", "current_limit_exceeded")
BISECT_STEPS = 24  #: fallback bisection steps of the total-current scale (2⁻²⁴ < 6e−8)
SECANT_STEPS = 12  #: log–log secant steps before the bisection fallback
S_TOL = 5e-7  #: bracket width at which the total-current scale is accepted (spec: ≤ 1e−6)


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


# ----------------------------------------------------------------------------------------------
# The allocator object (geometry + limits + T200 model, per-voltage bounds cached)
# ----------------------------------------------------------------------------------------------


class Allocator:
    """Geometry, limits and T200 model bundled; the allocation modes as methods.

    Parameters
    ----------
    geometry : Geometry
        Thruster geometry (B, B⁺, T200 sides, failed thrusters).
    limits : AllocatorLimits, optional
        Voltage, current limits, model choices (defaults: 16 V, 15 A, 50 A, cubic).
    table : T200Table, optional
        Required when ``limits.t200_model == "table"``.
    dof_weights : array_like, shape (6,), optional
        W_τ diagonal for ``qp`` (default: the layout's ``dof_weights``).

    Raises
    ------
    ConfigError
        Table model without a table; bad voltage; bad weights.
    """

    def __init__(
        self,
        geometry: Geometry,
        limits: AllocatorLimits | None = None,
        *,
        table: T200Table | None = None,
        dof_weights: ArrayLike | None = None,
    ) -> None:
        self.geometry = geometry
        self.limits = limits or AllocatorLimits()
        check_voltage(self.limits.voltage)
        self.model: T200Model
        if self.limits.t200_model == "table":
            if table is None:
                raise ConfigError(
                    "t200_model 'table' needs the measured T200 table (T200Table from the data "
                    "path, e.g. ../shared/data/t200/t200_performance_10-20V.csv)",
                    param="t200_model",
                )
            if table.zero_force != self.limits.zero_force:
                table = copy.copy(table)  # never mutate the caller's plant
                table.zero_force = self.limits.zero_force
            self.model = table
        else:
            self.model = T200Cubic(self.limits.zero_force, self.limits.t200_profile)
        w = np.asarray(
            geometry.layout.dof_weights if dof_weights is None else dof_weights, dtype=float
        )
        if w.shape != (6,) or not np.all(np.isfinite(w)) or np.any(w <= 0):
            raise ConfigError("dof_weights must be 6 finite positive numbers", param="dof_weights")
        self.dof_weights = w
        self._bounds_cache: dict[float, tuple[Array, Array, Array, Array]] = {}

    # -- inputs -------------------------------------------------------------------------------
    def _inputs(self, tau: ArrayLike, voltage: ArrayLike | None) -> tuple[Array, Array]:
        t = np.asarray(tau, dtype=float)
        if t.ndim == 1:
            t = t[None, :]
        if t.ndim != 2 or t.shape[1] != 6:
            raise ConfigError(
                f"wrench demand must have shape (N, 6) or (6,), got {np.shape(tau)}", param="tau"
            )
        if not np.all(np.isfinite(t)):
            raise ConfigError("wrench demand must be finite", param="tau")
        v = np.asarray(self.limits.voltage if voltage is None else voltage, dtype=float)
        try:
            v = np.broadcast_to(v, (t.shape[0],)).copy()
        except ValueError:
            raise ConfigError(
                f"voltage must be a scalar or one value per vehicle ({t.shape[0]}), "
                f"got shape {v.shape}",
                param="voltage",
            ) from None
        return t, check_voltage(v)

    # -- bounds -------------------------------------------------------------------------------
    def bounds(self, voltage: ArrayLike | None = None) -> tuple[Array, Array, Array, Array]:
        """Per-thruster force bounds along d_i at the voltage(s).

        Parameters
        ----------
        voltage : float or array_like, shape (N,), optional
            Supply voltage [V] (default ``limits.voltage``).

        Returns
        -------
        lo, hi : ndarray, shape (N, n)
            Bounds with the per-motor current limit [N] (lo ≤ 0 ≤ hi; 0 for failed thrusters).
        lo_env, hi_env : ndarray, shape (N, n)
            Bounds from the envelope and |u| ≤ 1 alone [N].
        """
        v = check_voltage(
            np.atleast_1d(
                np.asarray(self.limits.voltage if voltage is None else voltage, dtype=float)
            )
        )
        if v.size > 1 and np.all(v == v[0]):
            one = self.bounds(v[:1])
            return tuple(np.broadcast_to(x, (v.size, x.shape[1])) for x in one)  # type: ignore[return-value]
        if v.size == 1 and float(v[0]) in self._bounds_cache:
            return self._bounds_cache[float(v[0])]
        imax = self.limits.max_current_per_thruster
        fmax_e, fmin_e = self.model.force_limits(v)
        fmax, fmin = self.model.force_limits(v, math.inf if imax is None else imax)
        out = []
        for fx, fn in ((fmax, fmin), (fmax_e, fmin_e)):
            if self.limits.symmetric_bounds:
                sym = np.minimum(fx, -fn)
                fx, fn = sym, -sym
            sig = self.geometry.sigma[None, :]
            hi = np.where(sig > 0, fx[:, None], -fn[:, None])
            lo = np.where(sig > 0, fn[:, None], -fx[:, None])
            en = self.geometry.enabled[None, :]
            out += [np.where(en, lo, 0.0), np.where(en, hi, 0.0)]
        res = (out[0], out[1], out[2], out[3])
        if v.size == 1:
            for x in res:
                x.flags.writeable = False
            if len(self._bounds_cache) > 4096:
                self._bounds_cache.clear()
            self._bounds_cache[float(v[0])] = res
        return res

    def currents(self, force: Array, voltage: Array) -> Array:
        """Model current [A] of allocated forces (N, n) at voltages (N,)."""
        return self.model.current(force * self.geometry.sigma[None, :], voltage[:, None])

    def _finish(
        self,
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
        g = self.geometry
        if u_cur is None:
            u, cur = self.model.ray(g.sigma[None, :] * f, v).evaluate(np.ones(f.shape[0]))
        else:
            u, cur = u_cur
        achieved = f @ g.b_active.T
        if saturated is None:
            tol = 1e-9 * np.maximum(1.0, np.abs(hi - lo))
            sat = (
                g.enabled[None, :] & ((np.abs(f - hi) <= tol) | (np.abs(f - lo) <= tol)) & (f != 0)
            )
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

    def _total_scale(
        self, f0: Array, v: Array, s_hi: Array, ray: Any = None
    ) -> tuple[Array, Array]:
        """Largest s ∈ [0, s_hi] with Σ I(s·f0) ≤ limit (feasible end, |Δs| ≤ S_TOL); and a mask."""
        imax = self.limits.max_current_total
        s = s_hi.copy()
        bound = np.zeros(s.shape, dtype=bool)
        if imax is None:
            return s, bound
        if ray is None:
            ray = self.model.ray(f0 * self.geometry.sigma[None, :], v)
        tot = ray.total_current(s_hi)
        over = tot > imax
        if not np.any(over):
            return s, bound
        idx = np.nonzero(over)[0]
        s[idx] = self._solve_total(ray.subset(idx), s_hi[idx], tot[idx] - imax, imax)
        bound[idx] = True
        return s, bound

    @staticmethod
    def _solve_total(ray: Any, s_hi: Array, g_hi: Array, imax: float) -> Array:
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

    # -- modes --------------------------------------------------------------------------------
    def pinv(self, tau: ArrayLike, voltage: ArrayLike | None = None) -> AllocationResult:
        """Pseudo-inverse allocation with the exact uniform scale (§5.2), vectorised.

        Parameters
        ----------
        tau : array_like, shape (N, 6) or (6,)
            Wrench demand [N, N·m].
        voltage : float or array_like, shape (N,), optional
            Supply voltage per vehicle [V] (default ``limits.voltage``).

        Returns
        -------
        AllocationResult
            ``scale`` = s*; ``binding`` names the limiting constraint.
        """
        t, v = self._inputs(tau, voltage)
        lo, hi, lo_e, hi_e = (_compact(x) for x in self.bounds(v))
        f0 = t @ self.geometry.b_pinv.T
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
        sig = self.geometry.sigma
        big0 = f0 if np.all(sig == 1.0) else f0 * sig[None, :]
        # outputs at s_hi; rows over the total current limit are re-solved and re-evaluated
        ray = self.model.ray(big0, v)
        u, cur = ray.evaluate(s_hi)
        s = s_hi.copy()
        by_total = np.zeros(s.shape, dtype=bool)
        imax = self.limits.max_current_total
        if imax is not None:
            tot = cur.sum(axis=1)
            idx = np.nonzero(tot > imax)[0]
            if idx.size:
                sub = ray.subset(idx)
                s[idx] = self._solve_total(sub, s_hi[idx], tot[idx] - imax, imax)
                u[idx], cur[idx] = sub.evaluate(s[idx])
                by_total[idx] = True
        binding = np.where(by_total, 3, binding)
        zero = ~np.any(t != 0, axis=1)
        status = np.where(zero, 3, np.where(s >= 1.0, 0, np.where(s < 1e-6, 2, 1)))
        # thrusters at their bound: those whose closed-form scale is the one applied
        sat_t = sit <= s_hi * (1.0 + 1e-12)
        sat_t &= (s_hi < 1.0) & ~by_total
        sat = sat_t.T
        return self._finish(
            "pinv", t, v, s[:, None] * f0, s, lo, hi, binding, status, (u, cur), sat
        )

    def qp(
        self,
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
        t, v = self._inputs(tau, voltage)
        w = self.dof_weights if dof_weights is None else np.asarray(dof_weights, dtype=float)
        if w.shape != (6,) or np.any(~np.isfinite(w)) or np.any(w <= 0):
            raise ConfigError("dof_weights must be 6 finite positive numbers", param="dof_weights")
        lo, hi, _, _ = self.bounds(v)
        lo, hi = np.array(lo), np.array(hi)  # writeable (N, n)
        g = self.geometry
        rate = self._rate_window(f_prev, dt, t.shape[0])
        if rate is not None:
            lo_env, hi_env = lo, hi
            lo = np.minimum(np.maximum(lo_env, rate[0]), hi_env)
            hi = np.maximum(np.minimum(hi_env, rate[1]), lo_env)
        if solver == "scipy":
            f = self._qp_scipy(t, w, lo, hi)
        elif solver == "batched":
            wb = w[:, None] * g.b_active
            h = wb.T @ wb + self.limits.eps * np.eye(g.n)
            grad0 = (w[None, :] * t) @ wb  # Aᵀb per vehicle, (N, n)
            f = box_qp(h, grad0, lo, hi)
            f = _polish_batched(f, t, g.b_active, lo, hi)
        else:
            raise ConfigError(
                f"unknown qp solver {solver!r} (known: batched, scipy)", param="solver"
            )
        s, by_total = self._total_scale(f, v, np.ones(t.shape[0]))
        f = s[:, None] * f
        exceeded = np.zeros(t.shape[0], dtype=bool)
        if rate is not None and np.any(by_total):
            # the scaled forces may leave the rate window (0 need not lie in it): rate wins
            clipped = np.clip(f, lo, hi)
            moved = np.any(clipped != f, axis=1)
            f = clipped
            imax = self.limits.max_current_total
            if imax is not None and np.any(moved):
                tot = self.currents(f, v).sum(axis=1)
                exceeded = moved & (tot > imax * (1 + 1e-12))
        zero = ~np.any(np.abs(t) > 0, axis=1)
        achieved = f @ g.b_active.T
        met = np.all(np.abs(achieved - t) <= 1e-6 * (1 + np.abs(t)), axis=1)
        binding = np.where(by_total, 3, np.where(met, 0, 1))
        status = np.where(zero, 3, np.where(by_total | ~met, 1, 0))
        status = np.where((s < 1e-6) & ~zero, 2, status)
        status = np.where(exceeded, 4, status)
        return self._finish("qp", t, v, f, s, lo, hi, binding, status)

    def _rate_window(
        self, f_prev: ArrayLike | None, dt: float | None, n_rows: int
    ) -> tuple[Array, Array] | None:
        """[f_prev − Δ·dt, f_prev + Δ·dt] per thruster, or None when no rate limit applies."""
        rate = self.limits.max_force_rate
        if rate is None or f_prev is None:
            return None
        if dt is None or not (math.isfinite(dt) and dt > 0):
            raise ConfigError(f"dt must be a positive time in s (got {dt})", param="dt")
        fp = np.asarray(f_prev, dtype=float)
        try:
            fp = np.broadcast_to(fp, (n_rows, self.geometry.n))
        except ValueError:
            raise ConfigError(
                f"f_prev must have shape ({n_rows}, {self.geometry.n}) or "
                f"({self.geometry.n},), got {fp.shape}",
                param="f_prev",
            ) from None
        if not np.all(np.isfinite(fp)):
            raise ConfigError("f_prev must be finite", param="f_prev")
        return fp - rate * dt, fp + rate * dt

    def _qp_scipy(self, t: Array, w: Array, lo: Array, hi: Array) -> Array:
        """Per-vehicle SciPy ``lsq_linear`` (bvls) solution of the ``qp`` problem, polished."""
        from scipy.optimize import lsq_linear

        g = self.geometry
        act = np.nonzero(g.enabled)[0]
        a = np.vstack([w[:, None] * g.b[:, act], math.sqrt(self.limits.eps) * np.eye(act.size)])
        f = np.zeros((t.shape[0], g.n))
        rhs = np.zeros(6 + act.size)
        for j in range(t.shape[0]):
            rhs[:6] = w * t[j]
            res = lsq_linear(
                a, rhs, bounds=(lo[j, act], hi[j, act]), method="bvls", tol=1e-14, lsmr_tol=None
            )
            f[j, act] = self._polish(
                np.clip(res.x, lo[j, act], hi[j, act]), t[j], g.b[:, act], lo[j, act], hi[j, act]
            )
        return f

    def redistributed_pinv(
        self,
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
        t, v = self._inputs(tau, voltage)
        g = self.geometry
        w = np.ones(g.n) if thruster_weights is None else np.asarray(thruster_weights, dtype=float)
        if w.shape != (g.n,) or np.any(~np.isfinite(w)) or np.any(w <= 0):
            raise ConfigError(
                "thruster_weights must be n finite positive numbers", param="thruster_weights"
            )
        lo, hi, _, _ = self.bounds(v)
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
            x = np.einsum(
                "rkn,rk->rn", bw, (np.linalg.pinv(gram, rcond=1e-10) @ r[:, :, None])[..., 0]
            )
            fn = np.where(fr, x, f[open_rows])
            over = fr & ((fn > hi[open_rows]) | (fn < lo[open_rows]))
            f[open_rows] = np.clip(fn, lo[open_rows], hi[open_rows])
            fixed[open_rows] |= over
            open_rows = open_rows[np.any(over, axis=1) & np.any(~fixed[open_rows], axis=1)]
        s, by_total = self._total_scale(f, v, np.ones(n_rows))
        zero = ~np.any(t != 0, axis=1)
        achieved = f @ g.b_active.T
        met = np.all(np.abs(achieved - t) <= 1e-6 * (1 + np.abs(t)), axis=1)
        binding = np.where(by_total, 3, np.where(met, 0, 1))
        status = np.where(zero, 3, np.where(by_total | ~met, 1, 0))
        return self._finish("redistributed_pinv", t, v, s[:, None] * f, s, lo, hi, binding, status)

    @staticmethod
    def _polish(x: Array, tau: Array, b: Array, lo: Array, hi: Array) -> Array:
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

    def direct(
        self,
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

        t, v = self._inputs(tau, voltage)
        lo, hi, _, _ = self.bounds(v)
        g = self.geometry
        n = g.n
        imax = self.limits.max_current_total
        f = np.zeros((t.shape[0], n))
        alpha = np.zeros(t.shape[0])
        for j in range(t.shape[0]):
            if not np.any(t[j] != 0):
                continue
            cut_rows, cut_rhs = (
                self._current_cuts(lo[j], hi[j], float(v[j]), cuts)
                if imax is not None
                else ([], [])
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
        s, by_total = self._total_scale(f, v, np.ones(t.shape[0]))
        f = s[:, None] * f
        alpha = alpha * s
        if np.any(by_total) and alpha_max <= 1.0:
            # the hull is a relaxation of a non-convex current curve: after scaling back, the
            # (direction-preserving) pseudo-inverse may reach further; keep the better one
            p = self.pinv(t[by_total], v[by_total])
            better = p.scale > alpha[by_total]
            idx = np.nonzero(by_total)[0][better]
            f[idx] = p.force[better]
            alpha[idx] = p.scale[better]
        zero = ~np.any(np.abs(t) > 0, axis=1)
        binding = np.where(by_total, 3, np.where(alpha < 1.0 - 1e-9, 1, 0))
        status = np.where(zero, 3, np.where(alpha >= 1.0 - 1e-9, 0, np.where(alpha < 1e-6, 2, 1)))
        return self._finish("direct", t, v, f, alpha, lo, hi, binding, status)

    def _breakpoints(self, i: int, lo: float, hi: float, v: float, samples: int) -> Array:
        """Allocation-frame forces at which thruster i's current model is evaluated (sorted)."""
        sig = self.geometry.sigma[i]
        pts: list[Array] = [np.array([lo, 0.0, hi])]
        bp = getattr(self.model, "breakpoints", None)
        if bp is not None:
            fwd, rev = bp(v)
            pts += [sig * fwd, -sig * rev]
            zf = self.limits.zero_force
            pts.append(np.array([zf, -zf]) * (1 + 1e-12))
        else:
            pts += [np.linspace(lo, 0.0, samples), np.linspace(0.0, hi, samples)]
        x = np.unique(np.concatenate(pts))
        return x[(x >= lo) & (x <= hi)]

    def max_wrench_exact(
        self, tau: ArrayLike, voltage: float | None = None, *, samples: int = 96
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

        t, v = self._inputs(tau, voltage)
        if t.shape[0] != 1:
            raise ConfigError("max_wrench_exact takes one wrench direction", param="tau")
        lo, hi, _, _ = self.bounds(v)
        g = self.geometry
        xs = [self._breakpoints(i, lo[0, i], hi[0, i], float(v[0]), samples) for i in range(g.n)]
        cur = [self.model.current(g.sigma[i] * x, np.full(x.shape, v[0])) for i, x in enumerate(xs)]
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
        if self.limits.max_current_total is not None:
            row = np.zeros(nv)
            for i in range(g.n):
                row[off_l[i] : off_l[i] + nl[i]] = cur[i]
            rows.append(row)
            lb.append(-np.inf)
            ub.append(self.limits.max_current_total)
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

    def _current_cuts(
        self, lo: Array, hi: Array, v: float, samples: int
    ) -> tuple[list[Array], list[float]]:
        """Rows a·f_i − t_i ≤ −b of the lower convex hull of I(f_i) on [lo_i, hi_i], per thruster."""
        n = self.geometry.n
        nv = 2 * n + 1
        rows: list[Array] = []
        rhs: list[float] = []
        for i in range(n):
            if lo[i] == hi[i]:
                continue
            # the table's own breakpoints (with the bounds and 0) make the hull a true
            # relaxation of the piecewise-linear current; the cubic model is sampled
            grid = self._breakpoints(i, float(lo[i]), float(hi[i]), v, samples)
            cur = self.model.current(self.geometry.sigma[i] * grid, np.full(grid.shape, v))
            for x0, y0, x1, y1 in _lower_hull_segments(grid, cur):
                a = (y1 - y0) / (x1 - x0)
                b = y0 - a * x0
                row = np.zeros(nv)
                row[i] = a
                row[n + i] = -1.0
                rows.append(row)
                rhs.append(-b)
        return rows, rhs


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


def _polish_batched(f: Array, tau: Array, b: Array, lo: Array, hi: Array) -> Array:
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


def _compact(x: Array) -> Array:
    """A (N, n) array broadcast from one row → that row as (1, n) (cheaper to broadcast)."""
    return x[:1] if x.ndim == 2 and x.shape[0] > 1 and x.strides[0] == 0 else x


def _lower_hull_segments(x: Array, y: Array) -> list[tuple[float, float, float, float]]:
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


# ----------------------------------------------------------------------------------------------
# Functional API and analysis
# ----------------------------------------------------------------------------------------------


def allocate_pinv(
    geometry: Geometry,
    tau: ArrayLike,
    limits: AllocatorLimits | None = None,
    voltage: ArrayLike | None = None,
) -> AllocationResult:
    """Pseudo-inverse allocation with exact uniform scaling; see :meth:`Allocator.pinv`."""
    return Allocator(geometry, limits).pinv(tau, voltage)


def allocate_redistributed(
    geometry: Geometry,
    tau: ArrayLike,
    limits: AllocatorLimits | None = None,
    voltage: ArrayLike | None = None,
) -> AllocationResult:
    """Redistributed pseudo-inverse allocation; see :meth:`Allocator.redistributed_pinv`."""
    return Allocator(geometry, limits).redistributed_pinv(tau, voltage)


def allocate_qp(
    geometry: Geometry,
    tau: ArrayLike,
    limits: AllocatorLimits | None = None,
    voltage: ArrayLike | None = None,
) -> AllocationResult:
    """Bounded least-squares allocation with priorities; see :meth:`Allocator.qp`."""
    return Allocator(geometry, limits).qp(tau, voltage)


def allocate_direct(
    geometry: Geometry,
    tau: ArrayLike,
    limits: AllocatorLimits | None = None,
    voltage: ArrayLike | None = None,
) -> AllocationResult:
    """Direct (LP) allocation with current constraints; see :meth:`Allocator.direct`."""
    return Allocator(geometry, limits).direct(tau, voltage)


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
