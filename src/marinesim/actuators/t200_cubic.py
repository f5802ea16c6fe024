"""The T200 allocator model: bivariate cubic fits force ↔ ESC output ↔ current at V (§4.3–4.4).

:class:`T200Cubic` maps force [N], V → u; u, V → force [N]; u, V → current [A], and gives the
force limits at V (envelope, |u| ≤ 1, per-motor current).  :class:`CubicRay` evaluates forces
s_r·F0_r along one ray per vehicle fast, for the allocators' uniform scaling.  Conventions
and the fit: :mod:`marinesim.actuators.t200_fit`; the per-element law as a compiled function:
:mod:`marinesim.actuators.t200_law`.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from marinesim.actuators.t200_fit import (
    KGF,
    LIMIT_BISECT_STEPS,
    ZERO_FORCE,
    Array,
    check_voltage,
    envelope,
    load_fit,
)
from marinesim.actuators.t200_fit import cubic_in_a as _cubic_in_a
from marinesim.actuators.t200_fit import horner as _horner
from marinesim.core.errors import ConfigError, DataError

__all__ = ["CubicRay", "T200Cubic"]


class T200Cubic:
    """The T200 allocator model of ``specs/allocation.md`` §4.3–4.4 (bivariate cubics).

    Parameters
    ----------
    zero_force : float
        |F| below this gives u = 0 and no current [N] (default 0.0980665 N = 0.01 kgf).
    profile : {"default", "mrobosub"}
        ``"default"``: our fit of the full-precision data (forces in N).  ``"mrobosub"``: the
        MRoboSub parity constants (fitted in kgf; converted at this boundary, so the API is
        still in N).

    Notes
    -----
    Force → u (rules of §4.4): u = 0 for |F| < zero_force; else û = φ(F, V)·c_branch with the
    branch chosen by the sign of F, clamped at zero towards the other branch (forward
    u = max(û, 0), reverse u = min(û, 0)), **not** clipped at ±1 (|u| > 1 means not
    achievable at this voltage).  Current: 0 where u = 0, else max(0, φ(u, V)·c_I).
    """

    name = "cubic"

    def __init__(
        self, zero_force: float = ZERO_FORCE, profile: Literal["default", "mrobosub"] = "default"
    ) -> None:
        if not np.isfinite(zero_force) or zero_force < 0:
            raise ConfigError(
                f"zero_force must be finite and >= 0 (got {zero_force!r})", param="zero_force"
            )
        fit = load_fit()
        self.zero_force = float(zero_force)
        self.profile = profile
        if profile == "default":
            c = fit.coefficients
            self._f2u = (c["force_to_u_pos"], c["force_to_u_neg"])
            self._u2f = (c["u_to_force_pos"], c["u_to_force_neg"])
            self._u2i = (c["u_to_current_pos"], c["u_to_current_neg"])
            self._fscale = 1.0  # force unit of the fit, in N
        elif profile == "mrobosub":
            m = fit.mrobosub
            if not m:
                raise DataError(
                    "the shipped T200 fit has no mrobosub profile", file="t200_fit.json"
                )
            self._f2u = (m["POS_OUTPUT"], m["NEG_OUTPUT"])
            self._u2f = (m["POS_POWER"], m["NEG_POWER"])
            self._u2i = (m["POS_CURRENT"], m["NEG_CURRENT"])
            self._fscale = KGF
        else:
            raise ConfigError(
                f"unknown T200 profile {profile!r} (known: default, mrobosub)", param="t200_profile"
            )
        self._limit_cache: dict[tuple[float, float], tuple[float, float]] = {}
        self._coef_cache: dict[float, Array] = {}

    # -- per-voltage univariate coefficients --------------------------------------------------
    def _poly(self, which: tuple[Array, Array], v: Array) -> tuple[Array, Array]:
        return _cubic_in_a(which[0], v), _cubic_in_a(which[1], v)

    def force_to_u(self, force: ArrayLike, voltage: ArrayLike) -> Array:
        """ESC output u for a T200-frame force (§4.4 rules 2–3).

        Parameters
        ----------
        force : array_like
            Force [N], positive = T200 forward, shape (N, n) or broadcastable with V.
        voltage : array_like
            Supply voltage [V], shape (N, 1)/(N,)-compatible with ``force`` (10–20 V).

        Returns
        -------
        ndarray
            u [-], not clipped to [−1, 1]; shape of the broadcast.
        """
        f = np.asarray(force, dtype=float) / self._fscale
        v = check_voltage(voltage)
        f, v = np.broadcast_arrays(f, v)
        pp, pn = self._poly(self._f2u, v)
        up = np.maximum(_horner(pp, f), 0.0)
        un = np.minimum(_horner(pn, f), 0.0)
        u = np.where(f > 0, up, un)
        return np.where(np.abs(f) * self._fscale < self.zero_force, 0.0, u)

    def _of_u(
        self, which: tuple[Array, Array], u: ArrayLike, voltage: ArrayLike
    ) -> tuple[Array, Array]:
        """u broadcast with V, and the fit ``which`` at (u, V) on u's branch (forward: u > 0)."""
        u_ = np.asarray(u, dtype=float)
        v = check_voltage(voltage)
        u_, v = np.broadcast_arrays(u_, v)
        pp, pn = self._poly(which, v)
        return u_, np.where(u_ > 0, _horner(pp, u_), _horner(pn, u_))

    def u_to_force(self, u: ArrayLike, voltage: ArrayLike) -> Array:
        """Predicted force [N] for ESC output u (diagnostic forward model; 0 at u = 0).

        Parameters
        ----------
        u : array_like
            ESC output [-] (T200 frame), shape broadcastable with V.
        voltage : array_like
            Supply voltage [V].
        """
        u_, f = self._of_u(self._u2f, u, voltage)
        return np.where(u_ == 0, 0.0, f) * self._fscale

    def u_to_current(self, u: ArrayLike, voltage: ArrayLike) -> Array:
        """Supply current [A] for ESC output u (§4.4 rule 4: 0 at u = 0, never negative).

        Parameters
        ----------
        u : array_like
            ESC output [-] (T200 frame), shape broadcastable with V.
        voltage : array_like
            Supply voltage [V].
        """
        u_, i = self._of_u(self._u2i, u, voltage)
        return np.where(u_ == 0, 0.0, np.maximum(i, 0.0))

    def current(self, force: ArrayLike, voltage: ArrayLike) -> Array:
        """Supply current [A] drawn for a T200-frame force [N] at V (force → u → current)."""
        return self.u_to_current(self.force_to_u(force, voltage), voltage)

    # -- rays for the allocator's scaling (fixed branch per element) -----------------------------
    def ray(self, force: Array, voltage: Array) -> CubicRay:
        """Forces s_r·F_r along one ray per vehicle, for fast repeated current evaluation.

        Parameters
        ----------
        force : ndarray, shape (N, n)
            T200-frame forces at s = 1 [N].
        voltage : ndarray, shape (N,)
            Supply voltage per vehicle [V] (validated).
        """
        return CubicRay(self, force, voltage)

    def _coefficients_at(self, v: float) -> Array:
        """Cached cubic-in-a coefficients at one voltage: [map (u, I), branch (fwd, rev), 4]."""
        c = self._coef_cache.get(v)
        if c is None:
            va = np.array(v)
            c = np.array(
                [
                    [_cubic_in_a(self._f2u[0], va), _cubic_in_a(self._f2u[1], va)],
                    [_cubic_in_a(self._u2i[0], va), _cubic_in_a(self._u2i[1], va)],
                ]
            )
            if len(self._coef_cache) > 4096:
                self._coef_cache.clear()
            self._coef_cache[v] = c
        return c

    def force_limits(self, voltage: ArrayLike, max_current: float = np.inf) -> tuple[Array, Array]:
        """Largest forward and reverse force the allocator may command at V.

        The force range is the measured envelope at V, intersected with |u| ≤ 1 and with the
        per-motor current limit, each found by bisection on the monotone branch maps to 1e−12
        relative (cached per voltage).

        Parameters
        ----------
        voltage : array_like
            Supply voltage [V], any shape, 10–20 V.
        max_current : float
            Per-thruster current limit [A] (``inf`` = none).

        Returns
        -------
        fmax, fmin : ndarray
            Forward bound (> 0) and reverse bound (< 0) [N], shape of V.
        """
        v = check_voltage(voltage)
        flat = v.reshape(-1)
        uniq, inv = np.unique(flat, return_inverse=True)
        imax = float(max_current)
        if uniq.size > 64:  # many distinct voltages: one vectorised solve, no per-value cache
            out = self._solve_limits(uniq, imax)
        else:
            out = np.empty((uniq.size, 2))
            todo: list[int] = []
            for k, vv in enumerate(uniq):
                hit = self._limit_cache.get((float(vv), imax))
                if hit is None:
                    todo.append(k)
                else:
                    out[k] = hit
            if todo:
                out[todo] = self._solve_limits(uniq[todo], imax)
                if len(self._limit_cache) > 4096:
                    self._limit_cache.clear()
                for k in todo:
                    self._limit_cache[(float(uniq[k]), imax)] = (float(out[k, 0]), float(out[k, 1]))
        res_all = out[inv.reshape(-1)]
        return res_all[:, 0].reshape(v.shape), res_all[:, 1].reshape(v.shape)

    def _solve_limits(self, v: Array, max_current: float) -> Array:
        fmax, fmin = envelope(v)
        out = np.empty((v.size, 2))
        for col, edge, sgn in ((0, fmax, 1.0), (1, fmin, -1.0)):
            br = 0 if sgn > 0 else 1
            pu = _cubic_in_a(self._f2u[br], v)
            pi = _cubic_in_a(self._u2i[br], v)

            # feasible(F) = |u(F)| <= 1 and I(F) <= max_current, monotone in |F| on the branch
            def ok(mag: Array, sgn: float = sgn, pu: Array = pu, pi: Array = pi) -> Array:
                u = _horner(pu, sgn * mag / self._fscale)
                u = np.maximum(u, 0.0) if sgn > 0 else np.minimum(u, 0.0)
                i = np.maximum(_horner(pi, u), 0.0)
                return (np.abs(u) <= 1.0) & (i <= max_current)

            hi = np.abs(edge)
            res = hi.copy()
            need = np.nonzero(~ok(hi))[0]  # the envelope itself is not allowed: bisect
            if need.size:
                pu_n, pi_n = pu[need], pi[need]
                lo = np.zeros(need.size)
                top = hi[need].copy()
                for _ in range(LIMIT_BISECT_STEPS):
                    mid = 0.5 * (lo + top)
                    m_ok = ok(mid, sgn, pu_n, pi_n)
                    lo = np.where(m_ok, mid, lo)
                    top = np.where(m_ok, top, mid)
                res[need] = lo
            out[:, col] = sgn * res
        return out


_GRIDS: dict[tuple[int, int], tuple[NDArray[np.intp], NDArray[np.intp]]] = {}


def _horner_into(c: Array, x: Array, out: Array) -> Array:
    """``out`` ← ((c₃·x + c₂)·x + c₁)·x + c₀ in place (the order of :func:`~.t200_law.horner3`).

    ``c`` has the coefficients on its first axis, shape (4, E); ``x`` and ``out`` shape (E,).
    """
    np.multiply(x, c[3], out=out)
    out += c[2]
    out *= x
    out += c[1]
    out *= x
    out += c[0]
    return out


def _index_grids(n_rows: int, n_cols: int) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Row and column index of every element of a C-ordered (n_rows, n_cols) array (cached)."""
    key = (n_rows, n_cols)
    grids = _GRIDS.get(key)
    if grids is None:
        rows = np.repeat(np.arange(n_rows, dtype=np.intp), n_cols)
        cols = np.tile(np.arange(n_cols, dtype=np.intp), n_rows)
        rows.flags.writeable = False
        cols.flags.writeable = False
        if len(_GRIDS) > 16:
            _GRIDS.clear()
        grids = _GRIDS[key] = (rows, cols)
    return grids


class CubicRay:
    """Rays F = s_r·F0_r of the cubic model, evaluated on a flat list of non-zero elements.

    Elements are kept sorted by branch (forward first) so each branch's cubics run on one
    contiguous slice with scalar coefficients (one shared voltage) or per-element ones.
    """

    def __init__(
        self, model: T200Cubic, force: Array, voltage: Array, _parts: tuple | None = None
    ) -> None:
        self.model = model
        if _parts is not None:
            (self.n_rows, self.n_cols, self.row, self.col, self.f, self.split) = _parts[:6]
            self.cu, self.ci = _parts[6:]
            self.f_dead = model.zero_force / model._fscale
            self.flat_idx = None
            return
        n_rows, n_cols = force.shape
        flat = force.reshape(-1)
        fwd = np.flatnonzero(flat > 0)
        rev = np.flatnonzero(flat < 0)
        idx = np.concatenate([fwd, rev])
        self.n_rows, self.n_cols = n_rows, n_cols
        rows_grid, cols_grid = _index_grids(n_rows, n_cols)
        self.row, self.col = rows_grid[idx], cols_grid[idx]
        self.flat_idx: NDArray[np.intp] | None = idx
        self.f = flat[idx] / model._fscale
        self.split = fwd.size
        self.f_dead = model.zero_force / model._fscale  # |F| below: neutral (fit units)
        v = np.asarray(voltage, dtype=float).reshape(-1)
        if v.size == 1 or np.all(v == v[0]):
            c = model._coefficients_at(float(v[0]))
            self.cu: tuple[Array | float, ...] = (c[0, 0], c[0, 1])  # type: ignore[assignment]
            self.ci: tuple[Array | float, ...] = (c[1, 0], c[1, 1])  # type: ignore[assignment]
        else:
            vr = v[:, None]
            per = [
                np.stack(
                    [_cubic_in_a(model._f2u[b], vr)[:, 0], _cubic_in_a(model._u2i[b], vr)[:, 0]]
                )
                for b in (0, 1)
            ]  # each (2 maps, N, 4)
            rows_f, rows_r = self.row[: self.split], self.row[self.split :]
            self.cu = (per[0][0][rows_f].T, per[1][0][rows_r].T)  # (4, E_b)
            self.ci = (per[0][1][rows_f].T, per[1][1][rows_r].T)

    def _u_i(self, s: Array) -> tuple[Array, Array]:
        """Flat u and current of the elements at per-row scales s (in-place Horner)."""
        se = s[self.row]
        f = se * self.f
        k = self.split
        u = np.empty_like(f)
        cur = np.empty_like(f)
        for sl, cu, ci, fwd in (
            (slice(0, k), self.cu[0], self.ci[0], True),
            (slice(k, None), self.cu[1], self.ci[1], False),
        ):
            x = f[sl]
            if x.size == 0:
                continue
            uu = _horner_into(cu, x, u[sl])
            if fwd:
                np.maximum(uu, 0.0, out=uu)
            else:
                np.minimum(uu, 0.0, out=uu)
            _horner_into(ci, uu, cur[sl])
        np.maximum(cur, 0.0, out=cur)
        # rule 2 (|F| < zero_force → neutral) and rule 4 (u = 0 → no current)
        live = np.abs(f) >= self.f_dead
        live &= u != 0.0
        u *= live
        cur *= live
        return u, cur

    def total_current(self, s: Array) -> Array:
        """Σ_i I_i(s_r·F0_r,i) per row [A], shape (R,)."""
        _, cur = self._u_i(np.asarray(s, dtype=float))
        return np.bincount(self.row, weights=cur, minlength=self.n_rows)

    def evaluate(self, s: Array) -> tuple[Array, Array]:
        """ESC outputs u and currents [A] at scales s, each shape (R, n)."""
        u, cur = self._u_i(np.asarray(s, dtype=float))
        out_u = np.zeros(self.n_rows * self.n_cols)
        out_i = np.zeros(self.n_rows * self.n_cols)
        flat = self.row * self.n_cols + self.col if self.flat_idx is None else self.flat_idx
        out_u[flat] = u
        out_i[flat] = cur
        return out_u.reshape(self.n_rows, self.n_cols), out_i.reshape(self.n_rows, self.n_cols)

    def subset(self, rows: Array) -> CubicRay:
        """The rays of rows ``rows`` (ascending indices), renumbered 0..len(rows)−1."""
        mask = np.zeros(self.n_rows, dtype=bool)
        mask[rows] = True
        keep = mask[self.row]
        remap = np.cumsum(mask) - 1
        split = int(np.count_nonzero(keep[: self.split]))

        def cut(c: tuple[Array | float, ...]) -> tuple[Array | float, ...]:
            if np.ndim(c[0]) == 1:
                return c
            return (c[0][:, keep[: self.split]], c[1][:, keep[self.split :]])  # type: ignore[index]

        parts = (
            int(mask.sum()),
            self.n_cols,
            remap[self.row[keep]],
            self.col[keep],
            self.f[keep],
            split,
            cut(self.cu),
            cut(self.ci),
        )
        return CubicRay(self.model, np.empty((0, 0)), np.empty(0), _parts=parts)
