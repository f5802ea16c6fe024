"""Thruster allocation that respects the T200's limits (``specs/allocation.md`` §5–6).

:class:`Allocator` bundles geometry, limits and the T200 model (per-voltage bounds cached)
and offers the modes as methods; each mode lives in its own module:

* ``pinv`` — :mod:`marinesim.allocation.pinv`: f₀ = B⁺τ with the exact current-limited
  uniform scale; a compiled per-vehicle kernel (:mod:`marinesim.allocation.kernels`).
* ``qp`` and ``redistributed_pinv`` — :mod:`marinesim.allocation.qp`: the batched
  bounded least squares with DOF priorities, failed thrusters and force-rate limits.
* ``direct`` — :mod:`marinesim.allocation.direct`: Durham's direct allocation as an LP, and
  the wrench-envelope analysis (:func:`max_axis_wrench`, :meth:`Allocator.max_wrench_exact`).
* Shared limit handling and the result type — :mod:`marinesim.allocation.limits`.

Every mode returns an :class:`AllocationResult` with forces, ESC outputs, PWM, currents, the
achieved wrench B·f and the unmet part τ − B·f (for controllers' anti-windup), the scale or α,
saturation flags, the binding constraint and a status per vehicle.

Shapes: wrench demands τ (N, 6) or (6,) [N, N·m] (rows X, Y, Z, K, M, N, FRD); voltage a
scalar or (N,) [V]; forces (N, n) [N] along each thruster's direction d_i.
"""

from __future__ import annotations

import copy
import math

import numpy as np
from numpy.typing import ArrayLike

from marinesim.actuators.t200 import T200Cubic, T200Table, check_voltage
from marinesim.allocation import direct as _direct
from marinesim.allocation import pinv as _pinv
from marinesim.allocation import qp as _qp
from marinesim.allocation.direct import max_axis_wrench
from marinesim.allocation.kernels import BISECT_STEPS, S_TOL, SECANT_STEPS
from marinesim.allocation.limits import (
    BINDING,
    STATUS,
    AllocationResult,
    AllocatorLimits,
    Array,
    T200Model,
    finish,
    solve_total,
    total_scale,
)
from marinesim.allocation.qp import box_qp
from marinesim.allocation.tam import Geometry
from marinesim.core.errors import ConfigError

__all__ = [
    "BINDING",
    "BISECT_STEPS",
    "SECANT_STEPS",
    "STATUS",
    "S_TOL",
    "AllocationResult",
    "Allocator",
    "AllocatorLimits",
    "T200Model",
    "allocate_direct",
    "allocate_pinv",
    "allocate_qp",
    "allocate_redistributed",
    "box_qp",
    "max_axis_wrench",
]


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

    # -- shared limit handling (see marinesim.allocation.limits) ------------------------------
    def _finish(
        self, mode: str, tau: Array, v: Array, f: Array, *args: object, **kw: object
    ) -> AllocationResult:
        return finish(self, mode, tau, v, f, *args, **kw)  # type: ignore[arg-type]

    def _total_scale(
        self, f0: Array, v: Array, s_hi: Array, ray: object = None
    ) -> tuple[Array, Array]:
        return total_scale(self, f0, v, s_hi, ray)

    _solve_total = staticmethod(solve_total)

    # -- modes: each is a function of its module taking the allocator first -----------------
    pinv = _pinv.pinv
    qp = _qp.qp
    redistributed_pinv = _qp.redistributed_pinv
    direct = _direct.direct
    max_wrench_exact = _direct.max_wrench_exact


# ----------------------------------------------------------------------------------------------
# Functional API (the registry's ``allocator`` entries)
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
