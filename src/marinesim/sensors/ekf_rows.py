"""``nav_ekf``'s prediction and update as per-vehicle laws, compiled over the vehicles.

:mod:`marinesim.sensors.estimation` states the filter as stacked (N, 9, 9) numpy algebra (the
readable reference, and the route with ``MARINESIM_JIT=0``).  Stacked numpy pays per small
matrix and per temporary: at N = 1000 one prediction and one update cost milliseconds.  Here
the same two steps are written for one vehicle ``i`` on its rows of the (N, ...) arrays,
registered with ``register_jitable`` (so a compiled tick can call them) and run by a compiled
loop over the vehicles (:func:`marinesim.core.compile.kernels`, serial, disk-cached).

The laws use the structure of the matrices instead of full 9 × 9 products:

* prediction: F = [[I, dt·I, −½dt²·R̂], [0, I, −dt·R̂], [0, 0, I]], so F·P·Fᵀ needs only R̂
  times a 3 × 9 block on each side; Q is added on its diagonal blocks;
* update (Joseph form, H of m ≤ 3 rows): U = P·Hᵀ, S = H·U + R, K = U·S⁻¹ (S⁻¹ from the
  adjugate), A = (I − K·H)·P = P − K·Uᵀ, then (I − K·H)·P·(I − K·H)ᵀ + K·R·Kᵀ =
  A + (K·R − A·Hᵀ)·Kᵀ, symmetrised as the reference does; sums over H's columns run over
  its non-zero ones only (position for GPS and depth, velocity for the DVL).

They are the reference's operations in another order, so results agree with it to rounding
(≈ 1e-15 relative per step; tests/sensors/test_ekf_rows.py bounds a whole run at 1e-12), not
bit for bit.  Both routes are deterministic: the same seed gives the same log on each.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
from numpy.typing import NDArray

from marinesim.core.jitable import jit_enabled, register_jitable

__all__ = ["compiled_ok", "predict", "predict_row", "update", "update_law"]

Arr = NDArray[np.float64]


@register_jitable
def predict_row(
    i: int,
    x: Arr,
    P: Arr,
    f: Arr,
    rot: Arr,
    dt: float,
    q: Arr,
    g: float,
    xo: Arr,
    Po: Arr,
) -> None:
    """One strapdown prediction of vehicle ``i`` (see :func:`~.estimation.ekf_predict`).

    ``q`` = (σ_a²·dt⁴/4, σ_a²·dt³/2, σ_a²·dt², σ_ba²·dt), the diagonal blocks of Q.
    Writes ``xo[i]`` and ``Po[i]``; reads ``x``, ``P`` (unchanged).
    """
    # a = R̂ (f − b) + g e_down
    fb0 = f[i, 0] - x[i, 6]
    fb1 = f[i, 1] - x[i, 7]
    fb2 = f[i, 2] - x[i, 8]
    hdt2 = 0.5 * dt * dt
    for r in range(3):
        a = rot[i, r, 0] * fb0 + rot[i, r, 1] * fb1 + rot[i, r, 2] * fb2
        if r == 2:
            a += g
        xo[i, r] = x[i, r] + x[i, 3 + r] * dt + 0.5 * a * dt * dt
        xo[i, 3 + r] = x[i, 3 + r] + a * dt
        xo[i, 6 + r] = x[i, 6 + r]
    out = Po[i]
    # T = F·P, row blocks: T_p = P_p + dt·P_v − ½dt²·R̂·P_b, T_v = P_v − dt·R̂·P_b, T_b = P_b
    for c in range(9):
        for r in range(3):
            rp = rot[i, r, 0] * P[i, 6, c] + rot[i, r, 1] * P[i, 7, c] + rot[i, r, 2] * P[i, 8, c]
            out[r, c] = P[i, r, c] + dt * P[i, 3 + r, c] - hdt2 * rp
            out[3 + r, c] = P[i, 3 + r, c] - dt * rp
            out[6 + r, c] = P[i, 6 + r, c]
    # F·P·Fᵀ = T·Fᵀ, column blocks, one row of T at a time (in place: a row needs only itself)
    for r in range(9):
        t6 = out[r, 6]
        t7 = out[r, 7]
        t8 = out[r, 8]
        for c in range(3):
            tr = t6 * rot[i, c, 0] + t7 * rot[i, c, 1] + t8 * rot[i, c, 2]
            out[r, c] = out[r, c] + dt * out[r, 3 + c] - hdt2 * tr
            out[r, 3 + c] = out[r, 3 + c] - dt * tr
    for k in range(3):
        out[k, k] += q[0]
        out[k, 3 + k] += q[1]
        out[3 + k, k] += q[1]
        out[3 + k, 3 + k] += q[2]
        out[6 + k, 6 + k] += q[3]
    for r in range(9):
        for c in range(r + 1, 9):
            s = 0.5 * (out[r, c] + out[c, r])
            out[r, c] = s
            out[c, r] = s


@register_jitable
def _inverse(S: Arr, m: int, Si: Arr) -> None:
    """S⁻¹ of the leading m × m block (m ≤ 3) into ``Si``, from the adjugate."""
    if m == 1:
        Si[0, 0] = 1.0 / S[0, 0]
    elif m == 2:
        det = S[0, 0] * S[1, 1] - S[0, 1] * S[1, 0]
        Si[0, 0] = S[1, 1] / det
        Si[0, 1] = -S[0, 1] / det
        Si[1, 0] = -S[1, 0] / det
        Si[1, 1] = S[0, 0] / det
    else:
        c00 = S[1, 1] * S[2, 2] - S[1, 2] * S[2, 1]
        c01 = S[1, 2] * S[2, 0] - S[1, 0] * S[2, 2]
        c02 = S[1, 0] * S[2, 1] - S[1, 1] * S[2, 0]
        det = S[0, 0] * c00 + S[0, 1] * c01 + S[0, 2] * c02
        Si[0, 0] = c00 / det
        Si[1, 0] = c01 / det
        Si[2, 0] = c02 / det
        Si[0, 1] = (S[0, 2] * S[2, 1] - S[0, 1] * S[2, 2]) / det
        Si[1, 1] = (S[0, 0] * S[2, 2] - S[0, 2] * S[2, 0]) / det
        Si[2, 1] = (S[0, 1] * S[2, 0] - S[0, 0] * S[2, 1]) / det
        Si[0, 2] = (S[0, 1] * S[1, 2] - S[0, 2] * S[1, 1]) / det
        Si[1, 2] = (S[0, 2] * S[1, 0] - S[0, 0] * S[1, 2]) / det
        Si[2, 2] = (S[0, 0] * S[1, 1] - S[0, 1] * S[1, 0]) / det


def update_law(m: int, k0: int, k1: int, tag: str = "") -> Any:
    """The update law of vehicle ``i`` for ``m`` measurement rows whose H is non-zero only in
    columns ``k0:k1`` (constants of the compiled code: the loops unroll); ``tag`` ends its
    name (a second copy compiled elsewhere, e.g. into a generated tick, names itself apart).

    Returns ``update_row(i, x, P, y, H, R, mask, gate, xo, Po, acc, nis, work)``.
    """

    def update_row(
        i: int,
        x: Arr,
        P: Arr,
        y: Arr,
        H: Arr,
        R: Arr,
        mask: Any,
        gate: float,
        xo: Arr,
        Po: Arr,
        acc: Any,
        nis: Arr,
        work: Arr,
    ) -> None:
        """Joseph-form update of vehicle ``i`` with innovation ``y[i]`` (m ≤ 3), χ² gate.

        ``H`` (N, m, 9) is zero outside its columns ``k0:k1``; ``R`` (m, m).  Writes ``xo[i]``,
        ``Po[i]``, ``acc[i]``, ``nis[i]`` (NaN without a measurement); ``work`` (N, 9, 15) is
        scratch.  Rows without a measurement, or whose NIS exceeds ``gate``, keep x and the
        symmetrised P.
        """
        out = Po[i]
        w = work[i]  # columns 0:3 U = P·Hᵀ, 3:6 K, 6:9 K·R − A·Hᵀ, 9:12 S, 12:15 S⁻¹ (rows 0:m)
        for k in range(9):
            xo[i, k] = x[i, k]
        nis[i] = np.nan
        acc[i] = False
        ok = False
        if mask[i]:
            for r in range(9):
                for j in range(m):
                    s = 0.0
                    for k in range(k0, k1):
                        s += P[i, r, k] * H[i, j, k]
                    w[r, j] = s
            for a in range(m):
                for b in range(m):
                    s = R[a, b]
                    for k in range(k0, k1):
                        s += H[i, a, k] * w[k, b]
                    w[a, 9 + b] = s
            _inverse(w[:, 9:12], m, w[:, 12:15])
            v = 0.0
            for a in range(m):
                for b in range(m):
                    v += y[i, a] * w[a, 12 + b] * y[i, b]
            nis[i] = v
            ok = v <= gate
            acc[i] = ok
        if not ok:
            for r in range(9):
                for c in range(9):
                    out[r, c] = 0.5 * (P[i, r, c] + P[i, c, r])
            return
        for r in range(9):  # K = U·S⁻¹, x += K·y
            s = 0.0
            for j in range(m):
                kk = 0.0
                for b in range(m):
                    kk += w[r, b] * w[b, 12 + j]
                w[r, 3 + j] = kk
                s += kk * y[i, j]
            xo[i, r] = x[i, r] + s
        for r in range(9):  # A = P − K·Uᵀ (= (I − K·H)·P, P symmetric)
            for c in range(9):
                s = P[i, r, c]
                for j in range(m):
                    s -= w[r, 3 + j] * w[c, j]
                out[r, c] = s
        for r in range(9):  # K·R − A·Hᵀ
            for j in range(m):
                s = 0.0
                for b in range(m):
                    s += w[r, 3 + b] * R[b, j]
                for k in range(k0, k1):
                    s -= out[r, k] * H[i, j, k]
                w[r, 6 + j] = s
        for r in range(9):  # A − (A·Hᵀ)·Kᵀ + K·R·Kᵀ = A + (K·R − A·Hᵀ)·Kᵀ, symmetrised
            for c in range(9):
                s = out[r, c]
                for j in range(m):
                    s += w[r, 6 + j] * w[c, 3 + j]
                out[r, c] = s
        for r in range(9):
            for c in range(r + 1, 9):
                s = 0.5 * (out[r, c] + out[c, r])
                out[r, c] = s
                out[c, r] = s

    # a name of its own per law: numba's symbol of a compiled function is its qualified name
    # plus a counter of the compiling process, so laws of one name cached by different
    # processes could resolve to each other's code when loaded together (a wrong kernel)
    update_row.__name__ = update_row.__qualname__ = f"update_row_m{m}_k{k0}_{k1}{tag}"
    return register_jitable(update_row)


_KERNELS: dict[str, Any] = {}


def compiled_ok() -> bool:
    """True when the compiled laws may run: numba importable and ``MARINESIM_JIT`` not 0."""
    return jit_enabled()


def _kernels(name: str) -> Any:
    if name not in _KERNELS:
        from marinesim.core import compile as cc

        if name == "predict":
            one = predict_row
        else:  # "update m k0 k1"
            one = update_law(*(int(v) for v in name.split()[1:]))
        # the law's constants go into the stamp: it keys numba's disk cache of the loops
        stamp = cc.source_stamp(predict_row) + name.replace(" ", "-")
        # serial: per row a few hundred flops; threads cost more than they save here
        _KERNELS[name] = cc.kernels(one, 1, stamp=stamp, error_model="numpy", parallel_min=2**62)
    return _KERNELS[name]


_SCRATCH = threading.local()  # per thread: kernels of two threads never share scratch rows


def _scratch(n: int) -> Arr:
    """The update laws' scratch rows (N, 9, 15), kept between calls (written before read)."""
    w = getattr(_SCRATCH, "rows", None)
    if w is None or w.shape[0] < n:
        w = _SCRATCH.rows = np.empty((n, 9, 15))
    return w[:n]


def predict(
    x: Arr, P: Arr, f: Arr, rot: Arr, dt: float, sigma_a: float, sigma_ba: float, g: float
) -> tuple[Arr, Arr]:
    """The compiled :func:`~.estimation.ekf_predict` (same arguments and results)."""
    n = x.shape[0]
    s2 = sigma_a * sigma_a
    q = np.array([s2 * dt**4 / 4, s2 * dt**3 / 2, s2 * dt * dt, sigma_ba * sigma_ba * dt])
    xo = np.empty((n, 9))
    Po = np.empty((n, 9, 9))
    args = (
        np.ascontiguousarray(x, dtype=np.float64),
        np.ascontiguousarray(P, dtype=np.float64),
        np.ascontiguousarray(f, dtype=np.float64),
        np.ascontiguousarray(rot, dtype=np.float64),
        float(dt),
        q,
        float(g),
        xo,
        Po,
    )
    _kernels("predict").launch("cpu", args)
    return xo, Po


def update(
    x: Arr,
    P: Arr,
    z: Arr,
    zhat: Arr,
    H: Arr,
    R: Arr,
    mask: NDArray[np.bool_],
    gate: float,
    cols: tuple[int, int] | None = None,
) -> tuple[Arr, Arr, NDArray[np.bool_], Arr]:
    """The compiled :func:`~.estimation.ekf_update` (same arguments and results).

    ``cols`` = (k0, k1): H is zero outside columns k0:k1 (found from H when not given).
    """
    n = x.shape[0]
    m = z.shape[1]
    y = np.where(mask[:, None], z - zhat, 0.0)
    Hn = np.ascontiguousarray(np.broadcast_to(H, (n, m, 9)), dtype=np.float64)
    if cols is None:
        nz = np.flatnonzero(np.any(np.reshape(H, (-1, 9)) != 0.0, axis=0))
        cols = (int(nz[0]), int(nz[-1]) + 1) if nz.size else (0, 0)
    k0, k1 = cols
    xo = np.empty((n, 9))
    Po = np.empty((n, 9, 9))
    acc = np.zeros(n, dtype=np.bool_)
    nis = np.empty(n)
    args = (
        np.ascontiguousarray(x, dtype=np.float64),
        np.ascontiguousarray(P, dtype=np.float64),
        np.ascontiguousarray(y, dtype=np.float64),
        Hn,
        np.ascontiguousarray(np.broadcast_to(R, (m, m)), dtype=np.float64),
        np.ascontiguousarray(mask, dtype=np.bool_),
        float(gate),
        xo,
        Po,
        acc,
        nis,
        _scratch(n),
    )
    _kernels(f"update {m} {k0} {k1}").launch("cpu", args)
    return xo, Po, acc, nis
