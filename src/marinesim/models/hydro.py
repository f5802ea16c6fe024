"""Small pure, batched functions of marine-craft kinetics and kinematics.

Each function is named after the textbook symbol it computes and cites T. I. Fossen,
*Handbook of Marine Craft Hydrodynamics and Motion Control*, 2nd ed., Wiley 2021 ("Fossen
2021"), as PythonVehicleSimulator's ``lib/gnc.py`` does.  All work on a leading vehicle axis
N (one vehicle is N = 1) and return new arrays (no mutation).

Conventions: body frame FRD (x forward, y starboard, z down), world frame NED,
ν = [u, v, w, p, q, r] (m/s, rad/s), η = [x, y, z, φ, θ, ψ] (m, rad, zyx Euler angles),
τ = [X, Y, Z, K, M, N] (N, N·m) about the body origin CO.  Matrices of one vehicle are
(6, 6); batched matrices (N, 6, 6).  Vector forms (``*_times``) avoid building (N, 6, 6)
arrays in hot paths.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "HOERNER_TABLE",
    "NP",
    "PY",
    "FloatOps",
    "NumpyOps",
    "add_forms",
    "coriolis_c",
    "coriolis_form",
    "quad_form",
    "cross_c",
    "cross_flow_consts",
    "cross_flow_drag_c",
    "lift_drag_consts",
    "euler_kinematics_c",
    "euler_trig",
    "force_lift_drag_c",
    "g_vect_c",
    "mv",
    "sparse_rows",
    "c_entry",
    "c_rb_cg_times",
    "coriolis_times",
    "cross",
    "cross_flow_drag_pvs",
    "damping_times",
    "euler_kinematics",
    "force_lift_drag",
    "g_vect",
    "g_vect_rot",
    "hmtrx",
    "hoerner",
    "m2c",
    "m_rb",
    "quat_kinematics",
    "rzyx",
    "smtrx",
    "ssa",
    "tzyx",
    "UUV_HYDRO_VEHICLES",
    "uuv_hydro_params",
    "uuv_hydrodynamic_terms",
    "uuv_matrix",
    "uuv_wrench_replay",
]

F64 = NDArray[np.float64]


def ssa(angle: ArrayLike) -> F64:
    """Smallest signed angle in [−π, π) (Fossen 2021, eq. for ``ssa``).

    Parameters
    ----------
    angle : array_like
        Angle(s) [rad], any shape.

    Returns
    -------
    ndarray
        Same shape, [rad].
    """
    return np.mod(np.asarray(angle, dtype=float) + math.pi, 2.0 * math.pi) - math.pi


def cross(a: F64, b: F64) -> F64:
    """Row-wise cross product a × b (written out; faster than ``np.cross``).

    Parameters
    ----------
    a, b : ndarray, shape (..., 3)

    Returns
    -------
    ndarray, shape (..., 3)
    """
    return np.stack(
        (
            a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
            a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
            a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0],
        ),
        axis=-1,
    )


def smtrx(a: ArrayLike) -> F64:
    """Skew-symmetric matrix S(a) with S(a)b = a × b (Fossen 2021, Ch. 2).

    Parameters
    ----------
    a : array_like, shape (..., 3)

    Returns
    -------
    ndarray, shape (..., 3, 3)
    """
    a = np.asarray(a, dtype=float)
    z = np.zeros(a.shape[:-1])
    return np.stack(
        (
            np.stack((z, -a[..., 2], a[..., 1]), axis=-1),
            np.stack((a[..., 2], z, -a[..., 0]), axis=-1),
            np.stack((-a[..., 1], a[..., 0], z), axis=-1),
        ),
        axis=-2,
    )


def hmtrx(r: ArrayLike) -> F64:
    """System transformation matrix H(r) = [[I₃, S(r)ᵀ], [0, I₃]] (Fossen 2021, Ch. 3).

    Parameters
    ----------
    r : array_like, shape (..., 3)
        Point (e.g. the CG) relative to the CO, body axes [m].

    Returns
    -------
    ndarray, shape (..., 6, 6)
        M_CO = H(r)ᵀ M_CG H(r).
    """
    r = np.asarray(r, dtype=float)
    h = np.broadcast_to(np.eye(6), (*r.shape[:-1], 6, 6)).copy()
    h[..., 0:3, 3:6] = np.swapaxes(smtrx(r), -1, -2)
    return h


def m_rb(m: ArrayLike, r_g: ArrayLike, i_g: ArrayLike) -> F64:
    """Rigid-body mass matrix about the CO, M_RB = H(r_g)ᵀ diag(m I₃, I_g) H(r_g).

    Fossen 2021, rigid-body kinetics chapter.

    Parameters
    ----------
    m : float or array_like, shape (...)
        Mass [kg].
    r_g : array_like, shape (..., 3)
        CG relative to the CO, body axes [m].
    i_g : array_like, shape (..., 3, 3)
        Inertia about the CG, body axes [kg·m²].

    Returns
    -------
    ndarray, shape (..., 6, 6)
    """
    m = np.asarray(m, dtype=float)
    r_g = np.asarray(r_g, dtype=float)
    i_g = np.asarray(i_g, dtype=float)
    lead = np.broadcast_shapes(m.shape, r_g.shape[:-1], i_g.shape[:-2])
    mcg = np.zeros((*lead, 6, 6))
    mcg[..., 0:3, 0:3] = m[..., None, None] * np.eye(3)
    mcg[..., 3:6, 3:6] = i_g
    h = hmtrx(np.broadcast_to(r_g, (*lead, 3)))
    return np.swapaxes(h, -1, -2) @ mcg @ h


def m2c(mass: ArrayLike, nu: ArrayLike) -> F64:
    """Coriolis–centripetal matrix C(ν) from a 6×6 mass matrix (Fossen 2021, Ch. 3).

    The mass matrix is symmetrised first, C = [[0, −S(a₁)], [−S(a₁), −S(a₂)]] with
    [a₁; a₂] = M ν (the parametrisation PythonVehicleSimulator's ``m2c`` uses).

    Parameters
    ----------
    mass : array_like, shape (6, 6) or (N, 6, 6)
    nu : array_like, shape (N, 6)

    Returns
    -------
    ndarray, shape (N, 6, 6)
    """
    mass = np.asarray(mass, dtype=float)
    nu = np.asarray(nu, dtype=float)
    ms = 0.5 * (mass + np.swapaxes(mass, -1, -2))
    a = np.einsum("...ij,...j->...i", ms, nu)
    c = np.zeros((*nu.shape[:-1], 6, 6))
    s1 = -smtrx(a[..., 0:3])
    c[..., 0:3, 3:6] = s1
    c[..., 3:6, 0:3] = s1
    c[..., 3:6, 3:6] = -smtrx(a[..., 3:6])
    return c


def c_entry(a: F64, i: int, j: int) -> F64:
    """Entry (i, j) of :func:`m2c`'s C given a = M_sym ν (zero where structural).

    Parameters
    ----------
    a : ndarray, shape (N, 6)
        M_sym ν.
    i, j : int
        Row and column, 0-based.

    Returns
    -------
    ndarray, shape (N,)
    """
    if i < 3 and j < 3:
        return np.zeros(a.shape[:-1])
    if i < 3:  # upper right −S(a1)
        return -_skew_entry(a[..., 0:3], i, j - 3)
    if j < 3:  # lower left −S(a1)
        return -_skew_entry(a[..., 0:3], i - 3, j)
    return -_skew_entry(a[..., 3:6], i - 3, j - 3)


def _skew_entry(v: F64, i: int, j: int) -> F64:
    if i == j:
        return np.zeros(v.shape[:-1])
    # S(v) = [[0, -v2, v1], [v2, 0, -v0], [-v1, v0, 0]]
    table = {
        (0, 1): (2, -1.0),
        (0, 2): (1, 1.0),
        (1, 0): (2, 1.0),
        (1, 2): (0, -1.0),
        (2, 0): (1, -1.0),
        (2, 1): (0, 1.0),
    }
    k, s = table[(i, j)]
    return s * v[..., k]


def coriolis_times(
    mass: ArrayLike, nu: F64, zero: Sequence[tuple[int, int]] = (), *, symmetric: bool = False
) -> F64:
    """C(ν)ν for the :func:`m2c` parametrisation, without forming C (Fossen 2021, Ch. 3).

    C(ν)ν = [ν₂ × a₁ ; ν₁ × a₁ + ν₂ × a₂], [a₁; a₂] = M_sym ν.

    Parameters
    ----------
    mass : array_like, shape (6, 6) or (N, 6, 6)
        Mass matrix (symmetrised unless ``symmetric``).
    nu : ndarray, shape (N, 6)
        Velocity the matrix is formed with and applied to [m/s, rad/s].
    zero : sequence of (row, col)
        Entries of C set to zero before the product (PythonVehicleSimulator's neglected Munk
        terms; 0-based).
    symmetric : bool
        Skip the symmetrisation when the caller knows M is symmetric.

    Returns
    -------
    ndarray, shape (N, 6)
    """
    mass = np.asarray(mass, dtype=float)
    ms = mass if symmetric else 0.5 * (mass + np.swapaxes(mass, -1, -2))
    if ms.ndim == 2:
        a = nu @ ms.T
    else:
        a = np.einsum("nij,nj->ni", ms, nu)
    a1, a2 = a[:, 0:3], a[:, 3:6]
    n1, n2 = nu[:, 0:3], nu[:, 3:6]
    out = np.concatenate((cross(n2, a1), cross(n1, a1) + cross(n2, a2)), axis=1)
    for i, j in zero:
        out[:, i] -= c_entry(a, i, j) * nu[:, j]
    return out


def c_rb_cg_times(m: float, i_g: F64, r_g: F64, omega: F64, x: F64) -> F64:
    """C_RB(ν)x with C_RB = H(r_g)ᵀ [[m S(ω), 0], [0, −S(I_g ω)]] H(r_g).

    The parametrisation independent of linear velocity (Fossen 2021, rigid-body kinetics),
    used by PythonVehicleSimulator's Otter; ω is taken from the vehicle velocity ν while x
    may be another vector (the relative velocity ν_r).

    Parameters
    ----------
    m : float
        Mass [kg].
    i_g : ndarray, shape (3, 3)
        Inertia about the CG [kg·m²].
    r_g : ndarray, shape (3,)
        CG relative to the CO [m].
    omega : ndarray, shape (N, 3)
        Angular velocity (p, q, r) [rad/s].
    x : ndarray, shape (N, 6)

    Returns
    -------
    ndarray, shape (N, 6)
    """
    rg = np.broadcast_to(r_g, omega.shape)
    y1 = x[:, 0:3] - cross(rg, x[:, 3:6])  # H x: x1 + S(r)ᵀ x2 = x1 − r × x2
    z1 = m * cross(omega, y1)
    z2 = -cross(omega @ i_g.T, x[:, 3:6])
    return np.concatenate((z1, cross(rg, z1) + z2), axis=1)


def damping_times(d_l: F64, nu_r: F64, d_lf: F64 | None = None, d_q: F64 | None = None) -> F64:
    """D(ν_r)ν_r in the positive convention (Fossen 2021, damping chapter).

    D(ν_r) = D_L + u_r·D_LF + diag(D_Q,i |ν_r,i|).

    Parameters
    ----------
    d_l : ndarray, shape (6, 6) or (N, 6, 6)
        Linear damping [N·s/m, N·m·s/rad].
    nu_r : ndarray, shape (N, 6)
        Relative velocity.
    d_lf : ndarray, shape (6, 6) or (N, 6, 6), optional
        Damping linear in the forward speed u_r.
    d_q : ndarray, shape (6,) or (N, 6), optional
        Quadratic damping diagonal.

    Returns
    -------
    ndarray, shape (N, 6)
    """
    out = _mat_vec(d_l, nu_r)
    if d_lf is not None:
        out = out + nu_r[:, 0:1] * _mat_vec(d_lf, nu_r)
    if d_q is not None:
        out = out + d_q * np.abs(nu_r) * nu_r
    return out


def _mat_vec(mat: F64, vec: F64) -> F64:
    if mat.ndim == 2:
        return vec @ mat.T
    return np.einsum("nij,nj->ni", mat, vec)


class NumpyOps:
    """Backend for the component-wise kernels: each component is an (N,) array."""

    sqrt = staticmethod(np.sqrt)
    sin = staticmethod(np.sin)
    cos = staticmethod(np.cos)
    exp = staticmethod(np.exp)
    atan2 = staticmethod(np.arctan2)
    asin = staticmethod(np.arcsin)
    fabs = staticmethod(np.abs)
    sign = staticmethod(np.sign)
    where = staticmethod(np.where)

    @staticmethod
    def clip(x: F64, lo: float, hi: float) -> F64:
        """x limited to [lo, hi] (NaN stays NaN)."""
        out = np.maximum(x, lo)
        if isinstance(out, np.ndarray) and out.ndim:
            return np.minimum(out, hi, out=out)
        return np.minimum(out, hi)

    @staticmethod
    def cos_sin(x: F64) -> tuple[F64, F64]:
        """(cos x, sin x) from one tangent of the half angle, t = tan(x/2):
        cos = (1 − t²)/(1 + t²), sin = 2t/(1 + t²) (a few ulp; numpy's float64 tan costs about
        a third of sin + cos)."""
        if not isinstance(x, np.ndarray) or x.ndim == 0:  # a scalar: the plain formula
            ts = np.tan(0.5 * x)
            ts2 = ts * ts
            inv_s = 1.0 / (1.0 + ts2)
            return (1.0 - ts2) * inv_s, (2.0 * ts) * inv_s
        t = 0.5 * x
        np.tan(t, out=t)
        t2 = t * t
        inv = t2 + 1.0
        np.divide(1.0, inv, out=inv)  # 1 / (1 + t²)
        np.subtract(1.0, t2, out=t2)
        t2 *= inv  # cos = (1 − t²)·inv
        t *= 2.0
        t *= inv  # sin = (2t)·inv  (in place: same operations, fewer cold temporaries)
        return t2, t

    @staticmethod
    def div_or(a: F64, b: F64, default: float) -> F64:
        """a / b where b > 0, else ``default`` (b is a non-negative norm)."""
        out = np.full(np.shape(b), default)
        np.divide(a, b, out=out, where=b > 0)
        return out

    @staticmethod
    def quad(form: tuple, nu: tuple) -> tuple:
        """:func:`quad_form` as one BLAS product over the distinct pairs ν_j ν_k."""
        pairs, coef = _compiled_form(form)
        prods = np.empty((len(pairs), np.shape(nu[0])[0]))
        for idx, (j, k) in enumerate(pairs):
            np.multiply(nu[j], nu[k], out=prods[idx])
        return tuple(coef @ prods)

    @staticmethod
    def strip_sums(vr: F64, rr: F64, xl: F64) -> tuple[F64, F64]:
        """Σ_i |s_i| s_i and Σ_i x_i |s_i| s_i, s_i = v + x_i r, over sorted strips x_i.

        s_i changes sign at most once along the hull, so each sum is the sum over all strips
        of s_i² (resp. x_i s_i²) minus twice the part where s_i < 0, a closed form in the
        prefix sums of 1, x, x², x³ (no (N, strips) arrays).
        """
        p_hi, q_lo = _strip_tables(xl)
        m = xl.size
        # index of the first strip at or beyond the zero crossing x* = −v/r (uniform strips;
        # a strip within rounding of x* has s ≈ 0 and contributes nothing either way);
        # fmax/fmin send the NaN of v = r = 0 to 0 (k is not used when r = 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            kf = -vr
            kf /= rr
            kf -= xl[0]
            kf /= xl[1] - xl[0]
        np.ceil(kf, out=kf)
        np.fmax(kf, 0.0, out=kf)
        np.fmin(kf, float(m), out=kf)
        k = kf.astype(np.intp)
        pos_r, neg_r = rr > 0, rr < 0
        to_end = neg_r | ((rr == 0) & (vr < 0))  # the negative part runs to the last strip
        lo = k * neg_r
        hi = k * pos_r + m * to_end
        # Σ_all − 2·Σ_[lo, hi) of 1, x, x², x³ = (Σ_all − 2·C[hi]) + 2·C[lo], C the prefix sums
        # (one contiguous table per power: 1-D gathers are the fastest form measured)
        w0, w1, w2, w3 = (ph[hi] + ql[lo] for ph, ql in zip(p_hi, q_lo, strict=True))
        vr2 = 2.0 * vr
        vr2 *= rr
        v2, r2 = vr * vr, rr * rr
        sy = v2 * w0
        sy += vr2 * w1
        sy += r2 * w2
        sn = v2 * w1
        sn += vr2 * w2
        sn += r2 * w3
        return sy, sn


_FORMS: dict[int, tuple[tuple[tuple[int, int], ...], F64, tuple]] = {}


def _compiled_form(form: tuple) -> tuple[tuple[tuple[int, int], ...], F64]:
    hit = _FORMS.get(id(form))
    if hit is None or hit[2] is not form:
        pairs = tuple(sorted({(j, k) for terms in form for j, k, _ in terms}))
        coef = np.zeros((6, len(pairs)))
        for i, terms in enumerate(form):
            for j, k, c in terms:
                coef[i, pairs.index((j, k))] += c
        hit = (pairs, coef, form)
        _FORMS[id(form)] = hit
    return hit[0], hit[1]


_PREFIX: dict[int, tuple[F64, F64, F64, F64]] = {}


def _strip_prefix(xl: F64) -> tuple[F64, F64, F64, F64]:
    key = id(xl)
    if key not in _PREFIX:
        z = np.zeros(1)
        _PREFIX[key] = tuple(np.concatenate((z, np.cumsum(xl**p))) for p in range(4))  # type: ignore[assignment]
    return _PREFIX[key]


_TABLES: dict[int, tuple[tuple[F64, ...], tuple[F64, ...]]] = {}


def _strip_tables(xl: F64) -> tuple[tuple[F64, ...], tuple[F64, ...]]:
    """(Σ_all − 2·C[j], 2·C[j]) for the prefix sums C[j] of 1, x, x², x³ over the first j
    strips: two tuples of four (strips + 1,) tables, for :meth:`NumpyOps.strip_sums`."""
    key = id(xl)
    if key not in _TABLES:
        c = _strip_prefix(xl)
        _TABLES[key] = (tuple(ci[-1] - 2.0 * ci for ci in c), tuple(2.0 * ci for ci in c))
    return _TABLES[key]


def _py_sign(x: float) -> float:
    return 1.0 if x > 0 else (-1.0 if x < 0 else 0.0 * x)


class FloatOps:
    """Backend for the component-wise kernels on Python floats (one vehicle, N = 1).

    The same kernel source runs on either backend; this one avoids numpy's per-call overhead
    for a single vehicle.
    """

    sqrt = staticmethod(math.sqrt)
    sin = staticmethod(math.sin)
    cos = staticmethod(math.cos)
    exp = staticmethod(math.exp)
    atan2 = staticmethod(math.atan2)
    asin = staticmethod(math.asin)
    fabs = staticmethod(abs)
    sign = staticmethod(_py_sign)

    @staticmethod
    def where(c: bool, a: float, b: float) -> float:
        """a if c else b."""
        return a if c else b

    @staticmethod
    def clip(x: float, lo: float, hi: float) -> float:
        """x limited to [lo, hi]."""
        return hi if x > hi else (lo if x < lo else x)

    @staticmethod
    def cos_sin(x: float) -> tuple[float, float]:
        """(cos x, sin x)."""
        return math.cos(x), math.sin(x)

    @staticmethod
    def div_or(a: float, b: float, default: float) -> float:
        """a / b where b > 0, else ``default``."""
        return a / b if b > 0 else default

    @staticmethod
    def quad(form: tuple, nu: tuple) -> tuple:
        """:func:`quad_form` term by term."""
        return quad_form(form, nu)

    @staticmethod
    def strip_sums(vr: float, rr: float, xl: Sequence[float]) -> tuple[float, float]:
        """Strip sums as :meth:`NumpyOps.strip_sums`, accumulated in strip order."""
        sy = 0.0
        sn = 0.0
        for x in xl:
            s = vr + x * rr
            c = abs(s) * s
            sy += c
            sn += x * c
        return sy, sn


NP = NumpyOps
PY = FloatOps

Vec = tuple  # tuple of components (arrays (N,) or floats)


def sparse_rows(mat: ArrayLike) -> tuple[tuple[tuple[int, float], ...], ...]:
    """Non-zero entries of each row of a constant matrix, for :func:`mv`."""
    mat = np.asarray(mat, dtype=float)
    return tuple(
        tuple((j, float(mat[i, j])) for j in range(mat.shape[1]) if mat[i, j] != 0.0)
        for i in range(mat.shape[0])
    )


def mv(rows: tuple[tuple[tuple[int, float], ...], ...], vec: Vec) -> Vec:
    """Constant sparse matrix times a component vector (row sums in column order).

    Parameters
    ----------
    rows : tuple
        From :func:`sparse_rows`.
    vec : tuple
        Components, each an (N,) array or a float.

    Returns
    -------
    tuple
        One component per matrix row.
    """
    out = []
    if isinstance(vec[0], float):  # one vehicle on floats: the plain sums
        for row in rows:
            acc_f = 0.0
            for j, m in row:
                acc_f = acc_f + m * vec[j]
            out.append(acc_f)
        return tuple(out)
    for row in rows:
        acc: Any = 0.0
        for k, (j, m) in enumerate(row):
            term = m * vec[j]  # a fresh value: the in-place updates below touch nothing else
            if k == 0:
                term += 0.0  # the sum starts from 0.0 (sign of zero as in a plain sum)
                acc = term
            else:
                acc += term  # in place: at N ~ 1e4 numpy does not elide the temporary
        out.append(acc)
    return tuple(out)


def coriolis_form(
    mass: ArrayLike, zero: Sequence[tuple[int, int]] = (), *, symmetrise: bool = True
) -> tuple[tuple[tuple[int, int, float], ...], ...]:
    """C(ν)ν of :func:`m2c` as a precomputed quadratic form: out_i = Σ c·ν_j·ν_k.

    C_ij is linear in a = M ν, so C(ν)ν = T:νν with T_ijk = Σ_l ∂C_ij/∂a_l · M_lk; ``zero``
    entries of C are removed.  Forms of several matrices add with :func:`add_forms`.

    Returns
    -------
    tuple of 6 tuples of (j, k, coefficient), j ≤ k
    """
    ms = np.asarray(mass, dtype=float)
    if symmetrise:
        ms = 0.5 * (ms + ms.T)
    g = np.zeros((6, 6, 6))
    eye = np.eye(6)
    for i in range(6):
        for j in range(6):
            if (i, j) in zero:
                continue
            for el in range(6):
                g[i, j, el] = float(_c_entry_c(tuple(eye[el]), i, j))
    t = np.einsum("ijl,lk->ijk", g, ms)
    rows = []
    for i in range(6):
        terms = []
        for j in range(6):
            for k in range(j, 6):
                c = t[i, j, k] + (t[i, k, j] if k != j else 0.0)
                if c != 0.0:
                    terms.append((j, k, float(c)))
        rows.append(tuple(terms))
    return tuple(rows)


def add_forms(*forms: tuple) -> tuple:
    """Sum of quadratic forms from :func:`coriolis_form` (coefficients of equal terms added)."""
    out = []
    for i in range(6):
        acc: dict[tuple[int, int], float] = {}
        for f in forms:
            for j, k, c in f[i]:
                acc[(j, k)] = acc.get((j, k), 0.0) + c
        out.append(tuple((j, k, c) for (j, k), c in sorted(acc.items()) if c != 0.0))
    return tuple(out)


def quad_form(form: tuple, nu: Vec) -> Vec:
    """Evaluate a quadratic form from :func:`coriolis_form` on a component vector.

    Parameters
    ----------
    form : tuple
        From :func:`coriolis_form` / :func:`add_forms`.
    nu : tuple of 6 components
        (N,) arrays or floats [m/s, rad/s].

    Returns
    -------
    tuple of 6 components
        C(ν)ν [N, N·m].
    """
    out = []
    for terms in form:
        acc = 0.0
        for j, k, c in terms:
            acc = acc + c * nu[j] * nu[k]
        out.append(acc)
    return tuple(out)


def cross_c(a: Vec, b: Vec) -> Vec:
    """a × b on component tuples.

    Parameters
    ----------
    a, b : tuple of 3 components
        (N,) arrays or floats.

    Returns
    -------
    tuple of 3 components
    """
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def coriolis_c(rows_sym: tuple, nu: Vec, zero: Sequence[tuple[int, int]] = ()) -> Vec:
    """C(ν)ν of :func:`m2c` on component tuples.

    Parameters
    ----------
    rows_sym : tuple
        :func:`sparse_rows` of the symmetrised mass matrix.
    nu : tuple of 6 components
    zero : sequence of (row, col)
        Entries removed from C before the product.

    Returns
    -------
    tuple of 6 components
    """
    a = mv(rows_sym, nu)
    t1 = cross_c(nu[3:6], a[0:3])
    t2 = cross_c(nu[0:3], a[0:3])
    t3 = cross_c(nu[3:6], a[3:6])
    out = [t1[0], t1[1], t1[2], t2[0] + t3[0], t2[1] + t3[1], t2[2] + t3[2]]
    for i, j in zero:
        out[i] = out[i] - _c_entry_c(a, i, j) * nu[j]
    return tuple(out)


_SKEW = {
    (0, 1): (2, -1.0),
    (0, 2): (1, 1.0),
    (1, 0): (2, 1.0),
    (1, 2): (0, -1.0),
    (2, 0): (1, -1.0),
    (2, 1): (0, 1.0),
}


def _c_entry_c(a: Vec, i: int, j: int) -> Any:
    if i < 3 and j < 3:
        return 0.0
    if i >= 3 and j >= 3:
        base, ii, jj = 3, i - 3, j - 3
    else:
        base, ii, jj = 0, i % 3, j % 3
    if ii == jj:
        return 0.0
    k, s = _SKEW[(ii, jj)]
    return -s * a[base + k]


def g_vect_c(
    o: Any,
    w: Any,
    b: Any,
    theta: Any,
    phi: Any,
    r_bg: Sequence[float],
    r_bb: Sequence[float],
    trig: tuple | None = None,
) -> Vec:
    """Component form of :func:`g_vect` (Fossen 2021, Ch. 4) for backend ``o``.

    Parameters
    ----------
    o : NumpyOps or FloatOps
    w, b : float or ndarray, shape (N,)
        Weight and buoyancy [N].
    theta, phi : float or ndarray, shape (N,)
        Pitch and roll [rad].
    r_bg, r_bb : sequence of 3 floats
        CG and CB from the CO [m].
    trig : tuple, optional
        :func:`euler_trig` of the pose (saves recomputing cos/sin).

    Returns
    -------
    tuple of 6 components [N, N·m]
    """
    if trig is None:
        trig = euler_trig(o, (0.0, 0.0, 0.0, phi, theta, 0.0))
    cphi, sphi, cth, sth = trig[0:4]
    wb = w - b
    gx = r_bg[0] * w - r_bb[0] * b
    gy = r_bg[1] * w - r_bb[1] * b
    gz = r_bg[2] * w - r_bb[2] * b
    if all(isinstance(c, float) for c in (wb, gx, gy)) and wb == gx == gy == 0.0:
        # neutral, CG and CB on the z axis (e.g. REMUS 100): only the gz terms remain
        zero = 0.0 * sth
        return (zero, zero, zero, gz * cth * sphi, gz * sth, zero)
    return (
        wb * sth,
        -wb * cth * sphi,
        -wb * cth * cphi,
        -gy * cth * cphi + gz * cth * sphi,
        gz * sth + gx * cth * cphi,
        -gx * cth * sphi - gy * sth,
    )


def euler_trig(o: Any, eta: Vec) -> tuple:
    """(cos φ, sin φ, cos θ, sin θ, cos ψ, sin ψ) of a pose, for reuse within one step.

    Parameters
    ----------
    o : NumpyOps or FloatOps
    eta : tuple of 6 components
        [x, y, z, φ, θ, ψ] [m, rad].

    Returns
    -------
    tuple of 6 components
    """
    cphi, sphi = o.cos_sin(eta[3])
    cth, sth = o.cos_sin(eta[4])
    cpsi, spsi = o.cos_sin(eta[5])
    return cphi, sphi, cth, sth, cpsi, spsi


def euler_kinematics_c(o: Any, eta: Vec, nu: Vec, trig: tuple | None = None) -> Vec:
    """Component form of :func:`euler_kinematics` (Fossen 2021, Ch. 2).

    Parameters
    ----------
    o : NumpyOps or FloatOps
    eta : tuple of 6 components
        [x, y, z, φ, θ, ψ] [m, rad].
    nu : tuple of 6 components
        [u, v, w, p, q, r] [m/s, rad/s].
    trig : tuple, optional
        :func:`euler_trig` of the same ``eta``.

    Returns
    -------
    tuple of 6 components
        η̇ [m/s, rad/s].
    """
    cphi, sphi, cth, sth, cpsi, spsi = euler_trig(o, eta) if trig is None else trig
    u, v, w, p, q, r = nu
    # J(η)ν with the entries of Rzyx and Tzyx as upstream writes them; products shared and
    # "−a·b + c" written "c − a·b", which IEEE arithmetic evaluates to the same bits
    cpsi_cphi = cpsi * cphi
    sphi_sth = sphi * sth
    # every row is accumulated in place into a fresh temporary (same operations, same order)
    x_dot = cpsi * cth * u
    x_dot += (cpsi * sth * sphi - spsi * cphi) * v
    x_dot += (spsi * sphi + cpsi_cphi * sth) * w
    y_dot = spsi * cth * u
    y_dot += (cpsi_cphi + sphi_sth * spsi) * v
    y_dot += (sth * spsi * cphi - cpsi * sphi) * w
    z_dot = cth * sphi * v
    z_dot -= sth * u
    z_dot += cth * cphi * w
    phi_dot = sphi_sth / cth * q
    phi_dot += p  # p + a, then + b: addition is commutative bit for bit
    phi_dot += cphi * sth / cth * r
    theta_dot = cphi * q
    theta_dot -= sphi * r
    psi_dot = sphi / cth * q
    psi_dot += cphi / cth * r
    return x_dot, y_dot, z_dot, phi_dot, theta_dot, psi_dot


def cross_flow_consts(length: float, beam: float, draft: float, rho: float = 1026.0) -> tuple:
    """Strip positions and the coefficient ½ρ T C_D,2D dx of :func:`cross_flow_drag_c`."""
    xl = _strip_positions(length)
    k = 0.5 * rho * draft * hoerner(beam, draft) * (length / 20)
    return float(k), xl, tuple(xl.tolist())


def cross_flow_drag_c(o: Any, consts: tuple, vr: Any, rr: Any) -> tuple[Any, Any]:
    """Component form of :func:`cross_flow_drag_pvs`: returns (Y_h, N_h).

    ``consts`` from :func:`cross_flow_consts`.
    """
    k, xl, xl_list = consts
    sy, sn = o.strip_sums(vr, rr, xl if o is NP else xl_list)
    sy *= -k  # fresh sums, scaled in place (−k·s, same bits)
    sn *= -k
    return sy, sn


def lift_drag_consts(b: float, s: float, cd_0: float, rho: float = 1026.0) -> tuple:
    """Constants of :func:`force_lift_drag_c`: (C_Lα, π e AR, ½ρ, S, C_D0), e = 0.7."""
    e = 0.7
    ar = b**2 / s
    cl_alpha = math.pi * ar / (1 + math.sqrt(1 + (ar / 2) ** 2))
    return cl_alpha, math.pi * e * ar, 1 / 2 * rho, s, cd_0


def force_lift_drag_c(
    o: Any, consts: tuple, alpha: Any, u_r: Any, cs: tuple | None = None
) -> tuple[Any, Any]:
    """Component form of :func:`force_lift_drag`: returns (X, Z) in body axes.

    Parameters
    ----------
    o : NumpyOps or FloatOps
    consts : tuple
        From :func:`lift_drag_consts`.
    alpha : float or ndarray, shape (N,)
        Angle of attack [rad].
    u_r : float or ndarray, shape (N,)
        Relative speed [m/s].
    cs : tuple, optional
        (cos α, sin α) when the caller has them.

    Returns
    -------
    X, Z : float or ndarray, shape (N,)
        [N].
    """
    cl_alpha, pi_e_ar, half_rho, s, cd_0 = consts
    cl = cl_alpha * alpha
    cd = cl**2 / pi_e_ar
    cd += cd_0
    q = half_rho * u_r**2
    q *= s
    f_drag = q * cd
    f_lift = q * cl
    ca, sa = (o.cos(alpha), o.sin(alpha)) if cs is None else cs
    n_drag, n_lift = -f_drag, -f_lift
    x = ca * n_drag
    x -= sa * n_lift
    z = sa * n_drag
    z += ca * n_lift
    return x, z


def g_vect(
    w: ArrayLike, b: ArrayLike, theta: F64, phi: F64, r_bg: ArrayLike, r_bb: ArrayLike
) -> F64:
    """Restoring forces g(η) of a submerged body about the CO, Euler form (Fossen 2021, Ch. 4).

    Same arguments and formula as PythonVehicleSimulator's ``gvect``.

    Parameters
    ----------
    w, b : float or ndarray, shape (N,)
        Weight and buoyancy [N].
    theta, phi : ndarray, shape (N,)
        Pitch and roll [rad].
    r_bg, r_bb : array_like, shape (3,) or (N, 3)
        CG and CB relative to the CO [m].

    Returns
    -------
    ndarray, shape (N, 6)
    """
    r_bg = np.asarray(r_bg, dtype=float)
    r_bb = np.asarray(r_bb, dtype=float)
    return np.stack(g_vect_c(NP, w, b, theta, phi, r_bg.T, r_bb.T), axis=1)


def g_vect_rot(w: ArrayLike, b: ArrayLike, rot: F64, r_g: ArrayLike, r_b: ArrayLike) -> F64:
    """Representation-free restoring forces g = −[f_g + f_b ; r_g × f_g + r_b × f_b].

    f_g = Rᵀ[0, 0, W], f_b = −Rᵀ[0, 0, B] (Fossen 2021, hydrostatics chapter).

    Parameters
    ----------
    w, b : float or ndarray, shape (N,)
        Weight and buoyancy [N].
    rot : ndarray, shape (N, 3, 3)
        Body → NED rotation.
    r_g, r_b : array_like, shape (3,) or (N, 3)
        CG and CB relative to the CO [m].

    Returns
    -------
    ndarray, shape (N, 6)
    """
    k = rot[:, 2, :]  # third row of R = Rᵀ e_z
    w = np.asarray(w, dtype=float)
    b = np.asarray(b, dtype=float)
    f_g = np.reshape(w, (-1, 1)) * k
    f_b = -np.reshape(b, (-1, 1)) * k
    rg = np.broadcast_to(np.asarray(r_g, dtype=float), f_g.shape)
    rb = np.broadcast_to(np.asarray(r_b, dtype=float), f_g.shape)
    return -np.concatenate((f_g + f_b, cross(rg, f_g) + cross(rb, f_b)), axis=1)


def rzyx(phi: F64, theta: F64, psi: F64) -> F64:
    """Euler-angle rotation matrix R(Θ) = Rz(ψ)Ry(θ)Rx(φ), body → NED (Fossen 2021, Ch. 2).

    Parameters
    ----------
    phi, theta, psi : ndarray, shape (N,)

    Returns
    -------
    ndarray, shape (N, 3, 3)
    """
    cphi, sphi = np.cos(phi), np.sin(phi)
    cth, sth = np.cos(theta), np.sin(theta)
    cpsi, spsi = np.cos(psi), np.sin(psi)
    return np.stack(
        (
            np.stack(
                (cpsi * cth, -spsi * cphi + cpsi * sth * sphi, spsi * sphi + cpsi * cphi * sth), -1
            ),
            np.stack(
                (spsi * cth, cpsi * cphi + sphi * sth * spsi, -cpsi * sphi + sth * spsi * cphi), -1
            ),
            np.stack((-sth, cth * sphi, cth * cphi), -1),
        ),
        axis=-2,
    )


def tzyx(phi: F64, theta: F64) -> F64:
    """Euler-angle rate transformation T(Θ) (Fossen 2021, Ch. 2), singular at θ = ±90°.

    Parameters
    ----------
    phi, theta : ndarray, shape (N,)

    Returns
    -------
    ndarray, shape (N, 3, 3)
    """
    cphi, sphi = np.cos(phi), np.sin(phi)
    cth, sth = np.cos(theta), np.sin(theta)
    one, zero = np.ones_like(phi), np.zeros_like(phi)
    return np.stack(
        (
            np.stack((one, sphi * sth / cth, cphi * sth / cth), -1),
            np.stack((zero, cphi, -sphi), -1),
            np.stack((zero, sphi / cth, cphi / cth), -1),
        ),
        axis=-2,
    )


def euler_kinematics(eta: F64, nu: F64) -> F64:
    """η̇ = [R(Θ) ν₁ ; T(Θ) ν₂] for zyx Euler angles (Fossen 2021, Ch. 2).

    Written element by element (no (N, 3, 3) arrays), in the order PythonVehicleSimulator's
    ``attitudeEuler`` evaluates its matrix products.

    Parameters
    ----------
    eta : ndarray, shape (N, 6)
        [x, y, z, φ, θ, ψ] [m, rad].
    nu : ndarray, shape (N, 6)
        [u, v, w, p, q, r] [m/s, rad/s].

    Returns
    -------
    ndarray, shape (N, 6)
    """
    return np.stack(euler_kinematics_c(NP, tuple(eta.T), tuple(nu.T)), axis=1)


def quat_kinematics(quat: F64, omega: F64) -> F64:
    """q̇ = ½ [−εᵀ ; η I₃ + S(ε)] ω, unit quaternion q = [η, ε], scalar first (Fossen 2021).

    Parameters
    ----------
    quat : ndarray, shape (N, 4)
    omega : ndarray, shape (N, 3)
        Body angular velocity [rad/s].

    Returns
    -------
    ndarray, shape (N, 4)
    """
    eta = quat[:, 0:1]
    eps = quat[:, 1:4]
    d0 = -0.5 * np.sum(eps * omega, axis=1, keepdims=True)
    d1 = 0.5 * (eta * omega + cross(eps, omega))
    return np.concatenate((d0, d1), axis=1)


#: Hoerner's 2-D cross-flow drag coefficient, digitised: (B / 2T, C_D).  Fossen 2021, Ch. 6.
HOERNER_TABLE = (
    (
        0.0109,
        0.1766,
        0.3530,
        0.4519,
        0.4728,
        0.4929,
        0.4933,
        0.5585,
        0.6464,
        0.8336,
        0.9880,
        1.3081,
        1.6392,
        1.8600,
        2.3129,
        2.6000,
        3.0088,
        3.4508,
        3.7379,
        4.0031,
    ),
    (
        1.9661,
        1.9657,
        1.8976,
        1.7872,
        1.5837,
        1.2786,
        1.2108,
        1.0836,
        0.9986,
        0.8796,
        0.8284,
        0.7599,
        0.6914,
        0.6571,
        0.6307,
        0.5962,
        0.5868,
        0.5859,
        0.5599,
        0.5593,
    ),
)


def hoerner(beam: float, draft: float) -> float:
    """2-D cross-flow drag coefficient from Hoerner's curve, linear interpolation.

    Parameters
    ----------
    beam, draft : float
        Section beam and draft [m].

    Returns
    -------
    float
        C_D,2D [-].
    """
    return float(np.interp(beam / (2.0 * draft), HOERNER_TABLE[0], HOERNER_TABLE[1]))


def cross_flow_drag_pvs(
    length: float, beam: float, draft: float, nu_r: F64, rho: float = 1026.0
) -> F64:
    """Cross-flow drag by strip theory, as PythonVehicleSimulator's ``crossFlowDrag``.

    21 strips of width L/20 from x = −L/2 (spanning L + L/20), ρ = 1026 fixed upstream
    (Fossen 2021, Ch. 6).  Strip positions accumulate x += dx and the strip sums run in strip
    order, as upstream does.

    Parameters
    ----------
    length, beam, draft : float
        [m].
    nu_r : ndarray, shape (N, 6)
        Relative velocity.
    rho : float
        Water density [kg/m³] (upstream: 1026 always).

    Returns
    -------
    ndarray, shape (N, 6)
        [0, Y_h, 0, 0, 0, N_h].
    """
    yh, nh = cross_flow_drag_c(
        NP, cross_flow_consts(length, beam, draft, rho), nu_r[:, 1], nu_r[:, 5]
    )
    z = np.zeros_like(yh)
    return np.stack((z, yh, z, z, z, nh), axis=1)


_STRIPS: dict[float, F64] = {}


def _strip_positions(length: float) -> F64:
    if length not in _STRIPS:
        xs = []
        x = -length / 2
        dx = length / 20
        for _ in range(21):
            xs.append(x)
            x += dx
        _STRIPS[length] = np.array(xs)
    return _STRIPS[length]


def force_lift_drag(
    b: float, s: float, cd_0: float, alpha: F64, u_r: F64, rho: float = 1026.0
) -> F64:
    """Hull lift and drag of a submerged "wing", linear lift (Beard & McLain 2012; Fossen 2021).

    As PythonVehicleSimulator's ``forceLiftDrag`` with no stall blending (σ = 0), ρ = 1026.

    Parameters
    ----------
    b : float
        Span [m].
    s : float
        Area [m²].
    cd_0 : float
        Parasitic drag coefficient [-].
    alpha : ndarray, shape (N,)
        Angle of attack [rad].
    u_r : ndarray, shape (N,)
        Relative speed [m/s].
    rho : float
        Density [kg/m³].

    Returns
    -------
    ndarray, shape (N, 6)
        [X, 0, Z, 0, 0, 0] in body axes [N].
    """
    x, zf = force_lift_drag_c(NP, lift_drag_consts(b, s, cd_0, rho), alpha, u_r)
    z = np.zeros_like(x)
    return np.stack((x, z, zf, z, z, z), axis=1)


# ----------------------------------------------------------------------------------------
# UUV Simulator HydrodynamicModel (HMFossen) wrench, for replaying its reference cases
# ----------------------------------------------------------------------------------------

#: Hydrodynamic-plugin parameters of the UUV Simulator vehicles **as their files give them**
#: (spec actuators_6dof.md §5.1–5.3): added mass positive, damping SNAME-signed (negative),
#: body axes the plugin's internal "NED" (= FRD).  6 numbers are a diagonal, 36 row-major.
# fmt: off
UUV_HYDRO_VEHICLES: dict[str, dict[str, tuple[float, ...]]] = {
    "rexrov": {
        "added_mass": (
            779.79, -6.8773, -103.32, 8.5426, -165.54, -7.8033,
            -6.8773, 1222, 51.29, 409.44, -5.8488, 62.726,
            -103.32, 51.29, 3659.9, 6.1112, -386.42, 10.774,
            8.5426, 409.44, 6.1112, 534.9, -10.027, 21.019,
            -165.54, -5.8488, -386.42, -10.027, 842.69, -1.1162,
            -7.8033, 62.726, 10.775, 21.019, -1.1162, 224.32,
        ),
        "linear_damping": (-74.82, -69.48, -728.4, -268.8, -309.77, -105.0),
        "quadratic_damping": (-748.22, -992.53, -1821.01, -672.0, -774.44, -523.27),
    },
    "lauv": {
        "added_mass": (1.0, 16.0, 16.0, 0.005, 1.3, 1.3),
        "linear_damping": (
            -2.4, 0, 0, 0, 0, 0,
            0, -23, 0, 0, 0, 11.5,
            0, 0, -23, 0, -11.5, 0,
            0, 0, 0, -0.3, 0, 0,
            0, 0, 3.1, 0, -9.7, 0,
            0, -3.1, 0, 0, 0, -9.7,
        ),
        "quadratic_damping": (-2.4, -80.0, -80.0, -0.0006, -9.1, -9.1),
    },
    "eca_a9": {
        "added_mass": (4.0, 95.0, 75.0, 0.4, 27.0, 32.0),
        "linear_damping_forward_speed": (
            -8, 0, 0, 0, 0, 0,
            0, -162, 0, 0, 0, 150,
            0, 0, -108, 0, -100, 0,
            0, 0, 0, -13, 0, 0,
            0, 0, 37, 0, -20, 0,
            0, -34, 0, 0, 0, -32,
        ),
    },
    "desistek_saga": {
        "added_mass": (1.7182, 0.0, 5.468, 0.0, 1.2481, 0.4006),
        "linear_damping": (-11.7391, -20.0, -31.8678, -25.0, -44.9085, -5.0),
    },
}
# fmt: on

_UUV_ALIASES = (
    ("rexrov", "rexrov"),
    ("eca a9", "eca_a9"),
    ("eca_a9", "eca_a9"),
    ("ecaa9", "eca_a9"),
    ("a9", "eca_a9"),
    ("lauv", "lauv"),
    ("desistek", "desistek_saga"),
    ("saga", "desistek_saga"),
)

#: Parameter names accepted for a vehicle of a ``hydrodynamic_wrench`` case (normalised:
#: lower case, no separators) → UUV Simulator SDF tag.
_UUV_KEYS = {
    "addedmass": "added_mass",
    "ma": "added_mass",
    "lineardamping": "linear_damping",
    "dlin": "linear_damping",
    "lineardampingforwardspeed": "linear_damping_forward_speed",
    "dlinforwardspeed": "linear_damping_forward_speed",
    "quadraticdamping": "quadratic_damping",
    "dnonlin": "quadratic_damping",
    "scalingaddedmass": "scaling_added_mass",
    "offsetaddedmass": "offset_added_mass",
    "scalingdamping": "scaling_damping",
    "offsetlineardamping": "offset_linear_damping",
    "offsetlinforwardspeeddamping": "offset_lin_forward_speed_damping",
    "offsetnonlindamping": "offset_nonlin_damping",
}

_FLIP3 = np.array([1.0, -1.0, -1.0])


def uuv_matrix(values: Any, what: str = "matrix") -> F64:
    """A 6×6 matrix from UUV Simulator's 6 (diagonal) or 36 (row-major) numbers.

    Parameters
    ----------
    values : sequence of float or str
        6 or 36 numbers, or one whitespace/comma separated string of them; None → zeros.
    what : str
        Name used in the error message.

    Returns
    -------
    ndarray, shape (6, 6)

    Raises
    ------
    ValueError
        Not 6 or 36 finite numbers.
    """
    if values is None:
        return np.zeros((6, 6))
    if isinstance(values, str):
        values = [v for v in values.replace(",", " ").split() if v]
    arr = np.asarray(values, dtype=float).ravel()
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what}: non-finite value")
    if arr.size == 6:
        return np.diag(arr)
    if arr.size == 36:
        return arr.reshape(6, 6).copy()
    raise ValueError(f"{what}: expected 6 or 36 numbers, got {arr.size}")


def uuv_hydro_params(spec: Any) -> dict[str, Any]:
    """HMFossen parameters of one vehicle (UUV Simulator signs and body "NED" = FRD axes).

    Parameters
    ----------
    spec : str or mapping
        A known vehicle name (``rexrov``, ``lauv``, ``eca_a9``, ``desistek_saga``; a text
        mentioning one is accepted), or a mapping of SDF tags (``added_mass``,
        ``linear_damping``, ``linear_damping_forward_speed``, ``quadratic_damping``, the
        ``scaling_*`` / ``offset_*`` knobs; camelCase names such as ``DLin`` also work),
        optionally with ``name``/``vehicle`` naming a known vehicle whose values it overrides.

    Returns
    -------
    dict
        ``Ma``, ``DLin``, ``DLF``, ``DNonLin`` (6, 6) as UUV Simulator holds them (damping
        negative) and the float knobs ``s_a``, ``o_a``, ``s_d``, ``o_l``, ``o_lf``, ``o_q``.

    Raises
    ------
    ValueError
        Unknown vehicle name, malformed numbers.  Other tags of the plugin block (``volume``,
        ``center_of_buoyancy``, ``type`` ...) do not enter the wrench and are ignored.
    """
    given: dict[str, Any] = {}
    base: str | None = None
    if isinstance(spec, dict) or hasattr(spec, "items"):
        spec = _flatten(spec)
        for key, val in spec.items():
            norm = "".join(ch for ch in str(key).lower() if ch.isalnum())
            if norm in _UUV_KEYS:
                given[_UUV_KEYS[norm]] = val
            elif norm in ("name", "vehicle", "model", "source", "description", "file"):
                base = base or _uuv_vehicle_name(str(val))
        if not given and base is None:
            base = _uuv_vehicle_name(" ".join(str(v) for v in spec.values()))
    else:
        base = _uuv_vehicle_name(str(spec))
        if base is None:
            raise ValueError(
                f"unknown UUV Simulator vehicle {spec!r} (known: {', '.join(UUV_HYDRO_VEHICLES)})"
            )
    merged: dict[str, Any] = dict(UUV_HYDRO_VEHICLES.get(base or "", {}))
    merged.update(given)

    def knob(name: str, default: float) -> float:
        v = merged.get(name, default)
        return float(v if not isinstance(v, str) else v.strip() or default)

    return {
        "Ma": uuv_matrix(merged.get("added_mass"), "added_mass"),
        "DLin": uuv_matrix(merged.get("linear_damping"), "linear_damping"),
        "DLF": uuv_matrix(
            merged.get("linear_damping_forward_speed"), "linear_damping_forward_speed"
        ),
        "DNonLin": uuv_matrix(merged.get("quadratic_damping"), "quadratic_damping"),
        "s_a": knob("scaling_added_mass", 1.0),
        "o_a": knob("offset_added_mass", 0.0),
        "s_d": knob("scaling_damping", 1.0),
        "o_l": knob("offset_linear_damping", 0.0),
        "o_lf": knob("offset_lin_forward_speed_damping", 0.0),
        "o_q": knob("offset_nonlin_damping", 0.0),
    }


def _flatten(spec: Any) -> dict[str, Any]:
    """Nested mappings (e.g. a ``hydrodynamic_model`` block) merged into one level."""
    out: dict[str, Any] = {}
    for key, val in spec.items():
        if hasattr(val, "items"):
            for k2, v2 in _flatten(val).items():
                out.setdefault(k2, v2)
        else:
            out[key] = val
    return out


def _uuv_vehicle_name(text: str) -> str | None:
    low = text.lower().replace("-", " ")
    for alias, key in _UUV_ALIASES:
        if alias in low:
            return key
    return None


def uuv_hydrodynamic_terms(prm: dict[str, Any], nu_r: F64, acc_f: F64) -> tuple[F64, F64, F64]:
    """Damping, added-mass and added-Coriolis wrenches of UUV Simulator's ``HMFossen``.

    ``D = s_D·(−(D_L + o_L I) − u_r·(D_LF + o_LF I) − diag((D_Q,ii + o_Q)|ν_r,i|))`` with the
    plugin's SNAME-signed matrices, M_A' = s_A·(M_A + o_A I) used as given (not
    symmetrised), ``C_A`` of Fossen 2011 eq. 6.43; the three wrenches are
    −D ν_r, −M_A' a_f and −C_A(ν_r) ν_r (UUV Simulator ``ApplyHydrodynamicForces``).

    Parameters
    ----------
    prm : dict
        From :func:`uuv_hydro_params`.
    nu_r : ndarray, shape (N, 6)
        Relative velocity ν − ν_c in the plugin's body "NED" (FRD) axes [m/s, rad/s].
    acc_f : ndarray, shape (N, 6)
        Filtered relative acceleration [m/s², rad/s²].

    Returns
    -------
    damping, added, coriolis : ndarray, shape (N, 6)
        Wrenches [N, N·m] in FRD axes about the body origin.
    """
    eye = np.eye(6)
    ma = prm["s_a"] * (prm["Ma"] + prm["o_a"] * eye)
    d_const = -(prm["DLin"] + prm["o_l"] * eye)
    d_fwd = prm["DLF"] + prm["o_lf"] * eye
    q_diag = np.diag(prm["DNonLin"]) + prm["o_q"]
    d = d_const[None, :, :] - nu_r[:, 0, None, None] * d_fwd[None, :, :]
    idx = np.arange(6)
    d[:, idx, idx] += -q_diag[None, :] * np.abs(nu_r)
    d *= prm["s_d"]
    damping = -np.einsum("nij,nj->ni", d, nu_r)
    added = -(acc_f @ ma.T)
    ab = nu_r @ ma.T
    a1, a2 = ab[:, :3], ab[:, 3:]
    v, w = nu_r[:, :3], nu_r[:, 3:]
    # C_A = [[0, −S(a1)], [−S(a1), −S(a2)]]; −C_A ν_r = [a1 × ω ; a1 × v + a2 × ω]
    cor = np.concatenate([np.cross(a1, w), np.cross(a1, v) + np.cross(a2, w)], axis=1)
    return damping, added, cor


_SUFFIXES_6 = (
    ("u", "v", "w", "p", "q", "r"),
    ("x", "y", "z", "k", "m", "n"),
    ("fx", "fy", "fz", "mx", "my", "mz"),
    ("fx", "fy", "fz", "tx", "ty", "tz"),
    ("x", "y", "z", "roll", "pitch", "yaw"),
    ("x", "y", "z", "rx", "ry", "rz"),
    ("linx", "liny", "linz", "angx", "angy", "angz"),
    ("vx", "vy", "vz", "wx", "wy", "wz"),
    ("0", "1", "2", "3", "4", "5"),
    ("1", "2", "3", "4", "5", "6"),
    ("surge", "sway", "heave", "roll", "pitch", "yaw"),
)
_SUFFIXES_3 = (
    ("x", "y", "z"),
    ("u", "v", "w"),
    ("p", "q", "r"),
    ("roll", "pitch", "yaw"),
    ("0", "1", "2"),
    ("1", "2", "3"),
    ("e", "n", "u"),
)


def _uuv_suffix_index(prefix: str, names: list[str], size: int) -> list[int]:
    """Component index of each column ``prefix + suffix`` (known suffixes, else file order)."""
    sufs = ["".join(ch for ch in n[len(prefix) :].lower() if ch.isalnum()) for n in names]
    for conv in _SUFFIXES_6 if size == 6 else _SUFFIXES_3:
        if all(s in conv for s in sufs) and len(set(sufs)) == len(sufs):
            return [conv.index(s) for s in sufs]
    if len(names) > size:
        raise ValueError(f"{len(names)} columns {prefix}* for a {size}-vector")
    return list(range(len(names)))


def _uuv_vec_in(cols: dict[str, Any], prefix: str, n: int) -> F64:
    names = [c for c in cols if c.startswith(prefix)]
    out = np.zeros((n, 3))
    if not names:
        return out
    for name, i in zip(names, _uuv_suffix_index(prefix, names, 3), strict=True):
        out[:, i] = np.asarray(cols[name], dtype=float)
    return out


def _uuv_protocol(entry: Any) -> dict[str, float]:
    """dt, α, first-call time and initial previous time of the acceleration filter.

    Numbers given as keys (``dt``, ``dt_s``, ``alpha``, ``t0``, ``last_time`` ..., at the top
    of the entry or inside ``procedure``/``inputs``/``time_base``) win over ``dt = ...``
    written in the prose of those fields; defaults 0.01 s, 0.3, 0, 0.
    """
    out = {"dt": 0.01, "alpha": 0.3, "t0": 0.0, "last_time": 0.0}
    keys = {
        "dt": "dt",
        "dts": "dt",
        "timestep": "dt",
        "sampletime": "dt",
        "stepsize": "dt",
        "alpha": "alpha",
        "filteralpha": "alpha",
        "t0": "t0",
        "starttime": "t0",
        "firstcalltime": "t0",
        "lasttime": "last_time",
        "prevtime": "last_time",
        "initiallasttime": "last_time",
    }
    texts: list[str] = []
    found: dict[str, float] = {}

    def walk(obj: Any) -> None:
        if hasattr(obj, "items"):
            for k, v in obj.items():
                norm = "".join(ch for ch in str(k).lower() if ch.isalnum())
                if norm in keys and isinstance(v, int | float) and not isinstance(v, bool):
                    found[keys[norm]] = float(v)
                else:
                    walk(v)
        elif isinstance(obj, list | tuple):
            for v in obj:
                walk(v)
        elif isinstance(obj, str):
            texts.append(obj)

    top = {k: v for k, v in entry.items() if not isinstance(v, Sequence) or isinstance(v, str)}
    walk({k: v for k, v in top.items() if not isinstance(v, str)})
    texts.clear()
    walk({k: entry[k] for k in ("procedure", "inputs", "time_base") if k in entry})
    num = r"([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)"
    text = " ".join(texts)
    pats = (
        ("dt", r"(?:\bdt|Δt|\btime step|\bsample ?time)\s*(?:=|:|of)\s*" + num),
        ("alpha", r"\balpha\s*(?:=|:)\s*" + num),
        ("last_time", r"\b(?:lastTime|last_time|prevTime)\s*(?:=|:)\s*" + num),
        ("t0", r"(?:\bt_?0\s*=|first call (?:is )?at t\s*=|starting at t\s*=)\s*" + num),
    )
    for key, pat in pats:
        m = re.search(pat, text, flags=re.IGNORECASE)
        if m:
            out[key] = float(m.group(1))
    out.update(found)
    return out


def uuv_wrench_replay(entry: Any, columns: dict[str, Any]) -> dict[str, F64]:
    """Replay a ``hydrodynamic_wrench`` reference case (UUV Simulator ``HMFossen``).

    Inputs per row (reference README §2): ``vehicle``, ``case``, the link's body velocity
    ``lin_*`` and ``ang_*`` (Gazebo FLU, what ``RelativeLinearVel``/``RelativeAngularVel``
    return) and the flow velocity ``flow_*`` (world ENU; the link is held at identity
    orientation, so it equals the body flow).  Per row, as ``ApplyHydrodynamicForces`` does:
    ν_r = [T(lin − flow) ; T·ang] with T = diag(1, −1, −1) (FLU → the plugin's "NED" = FRD);
    the filtered acceleration a_f ← (1 − α)·a_f + α·(ν_r − ν_r,prev)/Δt when Δt > 0
    (α = 0.3); damping −Dν_r, added mass −M_A' a_f, added Coriolis −C_A(ν_r)ν_r, their sum
    τ (FRD) and the force and torque handed to Gazebo, T·τ (FLU).

    Rows of one (vehicle, case) are successive calls of one plugin instance, at t_k = t0 +
    k·dt (or the ``t``/``time`` column, or ``k``·dt); the plugin starts with a_f = 0,
    ν_r,prev = 0 and previous time 0 (upstream leaves it uninitialised; 0 is what a fresh
    object holds in practice), so a first call at t = 0 leaves a_f = 0.  dt (default
    0.01 s), α, t0 and the previous time are read from the entry when it gives them.

    Parameters
    ----------
    entry : mapping
        Manifest entry (``vehicles``: name → parameters, a name, or a description).
    columns : dict of str → ndarray
        CSV columns in file order.

    Returns
    -------
    dict of str → ndarray
        One array per output column the case has (``nuR_*``, ``accF_*``, ``damp_*``,
        ``addedmass_*``, ``coriolisA_*``, ``tauNED_*``, ``F*_gz``, ``M*_gz``).
    """
    n = len(next(iter(columns.values()))) if columns else 0
    if n == 0:
        raise ValueError("hydrodynamic_wrench case without rows")
    veh_col = columns.get("vehicle")
    case_col = columns.get("case")
    names = [str(v).strip() for v in (veh_col if veh_col is not None else [""] * n)]
    cases = [str(v).strip() for v in (case_col if case_col is not None else [""] * n)]
    vehicles = entry.get("vehicles")
    prms: dict[str, dict[str, Any]] = {}
    for name in dict.fromkeys(names):
        spec: Any = name
        if hasattr(vehicles, "items"):
            low = {str(k).strip().lower(): v for k, v in vehicles.items()}
            if name.lower() in low:
                spec = low[name.lower()]
                if isinstance(spec, str) and _uuv_vehicle_name(spec) is None:
                    spec = name
            elif len(low) == 1 and not name:
                spec = next(iter(low.values()))
        elif isinstance(vehicles, list | tuple):
            for item in vehicles:
                if hasattr(item, "items") and str(item.get("name", "")).lower() == name.lower():
                    spec = item
        elif isinstance(vehicles, str) and not name:
            spec = vehicles
        prms[name] = uuv_hydro_params(spec)

    lin = _uuv_vec_in(columns, "lin_", n)
    ang = _uuv_vec_in(columns, "ang_", n)
    flow = _uuv_vec_in(columns, "flow_", n)
    rot = _uuv_link_rotation(entry)
    if rot is not None:  # world flow into the link frame: R^T v (RotateVectorReverse)
        flow = flow @ rot
    nu_r = np.concatenate([(lin - flow) * _FLIP3, ang * _FLIP3], axis=1)

    proto = _uuv_protocol(entry)
    tcol = columns.get("t", columns.get("time", columns.get("time_s")))
    kcol = columns.get("k")
    acc_f = np.zeros((n, 6))
    state: dict[tuple[str, str], tuple[int, float, F64, F64]] = {}
    for i in range(n):
        key = (names[i], cases[i])
        k, last_t, last_v, filt = state.get(key, (0, proto["last_time"], np.zeros(6), np.zeros(6)))
        if tcol is not None and tcol.dtype != object:
            t = float(tcol[i])
        elif kcol is not None and kcol.dtype != object:
            t = proto["t0"] + float(kcol[i]) * proto["dt"]
        else:
            t = proto["t0"] + _gazebo_time(k, proto["dt"])
        dt = t - last_t
        if dt > 0.0:
            acc = (nu_r[i] - last_v) / dt
            filt = (1.0 - proto["alpha"]) * filt + proto["alpha"] * acc
            last_t, last_v = t, nu_r[i].copy()
        acc_f[i] = filt
        state[key] = (k + 1, last_t, last_v, filt)

    damping = np.empty((n, 6))
    added = np.empty((n, 6))
    cor = np.empty((n, 6))
    for name, prm in prms.items():
        rows = np.array([j for j in range(n) if names[j] == name])
        damping[rows], added[rows], cor[rows] = uuv_hydrodynamic_terms(prm, nu_r[rows], acc_f[rows])
    tau = damping + added + cor
    gz = np.concatenate([tau[:, :3] * _FLIP3, tau[:, 3:] * _FLIP3], axis=1)
    six = {
        "nuR_": nu_r,
        "accF_": acc_f,
        "damp_": damping,
        "addedmass_": added,
        "coriolisA_": cor,
        "tauNED_": tau,
    }
    out: dict[str, F64] = {}
    for prefix, arr in six.items():
        cols6 = [c for c in columns if c.startswith(prefix)]
        if cols6:
            for name, j in zip(cols6, _uuv_suffix_index(prefix, cols6, 6), strict=True):
                out[name] = arr[:, j]
    for col in columns:
        m = re.fullmatch(r"(f|m|t|force|torque|moment)_?([xyz])_?gz", col.lower())
        if m:
            j = "xyz".index(m.group(2)) + (0 if m.group(1) in ("f", "force") else 3)
            out[col] = gz[:, j]
    return out


def _uuv_link_rotation(entry: Any) -> F64 | None:
    """Link orientation R = Rz(yaw)·Ry(pitch)·Rx(roll) if the entry states one, else None.

    Read from a ``base_link``/``pose`` mapping (``rpy``) or from ``rpy (r, p, y)`` in the
    ``inputs``/``procedure``/``base_link`` text; identity orientation → None.
    """
    rpy: Any = None
    for key in ("base_link", "pose", "link_pose"):
        val = entry.get(key)
        if hasattr(val, "get") and val.get("rpy") is not None:
            rpy = val.get("rpy")
    if rpy is None:
        text = " ".join(str(entry.get(k, "")) for k in ("inputs", "procedure", "base_link", "pose"))
        m = re.search(r"rpy\s*[=:]?\s*[\(\[]([^\)\]]*)[\)\]]", text)
        if m:
            parts = [float(v) for v in re.split(r"[,\s]+", m.group(1).strip()) if v]
            if len(parts) == 3:
                rpy = parts
    if rpy is None:
        return None
    r, pch, y = (float(v) for v in rpy)
    if r == pch == y == 0.0:
        return None
    return rzyx(np.array([r]), np.array([pch]), np.array([y]))[0]


def _gazebo_time(k: int, dt: float) -> float:
    """t_k = k·dt as Gazebo's common::Time(sec, nsec).Double() holds it."""
    ns = k * round(dt * 1e9)
    return ns // 1_000_000_000 + (ns % 1_000_000_000) * 1e-9
