"""The terms of the 6-DOF equations of motion, one plain function each (Fossen 2021).

    M ν̇_r + C_RB(ν) ν_r + C_A(ν_r) ν_r + D(ν_r) ν_r + g(η) = τ

Every function works on one vehicle: floats, tuples of floats and rows of parameter arrays
(``par`` is a 1-D float array, ``o`` the offset of a block in it).  They are registered with
``numba.extending.register_jitable``, so the same source runs interpreted, compiled for the CPU
and compiled as CUDA device functions.  Sums run left to right in the written order.
"""

from __future__ import annotations

from typing import Any

from numba.extending import register_jitable

from marinesim.core import frames
from marinesim.core.jitable import INLINE

__all__ = [
    "added_mass_coriolis",
    "row_index",
    "c_entry",
    "cross3",
    "current_in_body",
    "damping",
    "hydrostatic_restoring",
    "linear_restoring",
    "mat6_times",
    "rigid_body_coriolis",
]

Vec = tuple


@register_jitable
def row_index(a: Any, i: int) -> int:
    """Which row of a per-vehicle array vehicle i reads: i, or 0 when the array has one row
    (shared by all vehicles).  Callers index with it (``a[row_index(a, i)]``) rather than
    take a view from a function: a CUDA device function cannot return one.
    """
    return i if a.shape[0] > 1 else i - i  # (0 of i's own type: prange's i is unsigned)


@register_jitable(inline=INLINE)
def cross3(a0: float, a1: float, a2: float, b0: float, b1: float, b2: float) -> tuple:
    """a × b of two 3-vectors given by components."""
    return (a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0)


@register_jitable(inline=INLINE)
def mat6_times(par: Any, o: int, x: Vec) -> Vec:
    """M x for the row-major 6×6 block ``par[o:o + 36]`` (rows summed j = 0 … 5)."""
    x0, x1, x2, x3, x4, x5 = x
    return (
        par[o] * x0 + par[o + 1] * x1 + par[o + 2] * x2
        + par[o + 3] * x3 + par[o + 4] * x4 + par[o + 5] * x5,
        par[o + 6] * x0 + par[o + 7] * x1 + par[o + 8] * x2
        + par[o + 9] * x3 + par[o + 10] * x4 + par[o + 11] * x5,
        par[o + 12] * x0 + par[o + 13] * x1 + par[o + 14] * x2
        + par[o + 15] * x3 + par[o + 16] * x4 + par[o + 17] * x5,
        par[o + 18] * x0 + par[o + 19] * x1 + par[o + 20] * x2
        + par[o + 21] * x3 + par[o + 22] * x4 + par[o + 23] * x5,
        par[o + 24] * x0 + par[o + 25] * x1 + par[o + 26] * x2
        + par[o + 27] * x3 + par[o + 28] * x4 + par[o + 29] * x5,
        par[o + 30] * x0 + par[o + 31] * x1 + par[o + 32] * x2
        + par[o + 33] * x3 + par[o + 34] * x4 + par[o + 35] * x5,
    )  # fmt: skip


@register_jitable
def c_entry(a: Vec, i: int, j: int) -> float:
    """Entry (i, j) of C = [[0, −S(a₁)], [−S(a₁), −S(a₂)]] given a = [a₁; a₂] = M ν."""
    if i < 3 and j < 3:
        return 0.0
    base = 3 if (i >= 3 and j >= 3) else 0
    ii = i % 3
    jj = j % 3
    # −S(v) with S(v) = [[0, −v2, v1], [v2, 0, −v0], [−v1, v0, 0]]
    if ii == 0 and jj == 1:
        return a[base + 2]
    if ii == 0 and jj == 2:
        return -a[base + 1]
    if ii == 1 and jj == 0:
        return -a[base + 2]
    if ii == 1 and jj == 2:
        return a[base]
    if ii == 2 and jj == 0:
        return a[base + 1]
    if ii == 2 and jj == 1:
        return -a[base]
    return 0.0


@register_jitable
def added_mass_coriolis(par: Any, o: int, nu: Vec, zero: Any) -> Vec:
    """C(ν)ν of a 6×6 mass matrix in the ``m2c`` parametrisation (Fossen 2021, eq. 6.43).

    C(ν)ν = [ν₂ × a₁ ; ν₁ × a₁ + ν₂ × a₂], [a₁; a₂] = M ν, M = ``par[o:o + 36]`` as given
    (symmetrise it when building the parameters).  Used for the added mass M_A and, in
    PythonVehicleSimulator's REMUS 100, for M_RB.

    Parameters
    ----------
    par : ndarray, 1-D
        Parameter row.
    o : int
        Offset of M in ``par``.
    nu : tuple of 6 floats
        Velocity the matrix is formed with and applied to [m/s, rad/s].
    zero : ndarray of int, shape (K, 2)
        Entries (row, column) of C removed (neglected Munk terms); K may be 0.

    Returns
    -------
    tuple of 6 floats [N, N·m]
    """
    a = mat6_times(par, o, nu)
    t1 = cross3(nu[3], nu[4], nu[5], a[0], a[1], a[2])
    t2 = cross3(nu[0], nu[1], nu[2], a[0], a[1], a[2])
    t3 = cross3(nu[3], nu[4], nu[5], a[3], a[4], a[5])
    c0, c1, c2 = t1
    c3 = t2[0] + t3[0]
    c4 = t2[1] + t3[1]
    c5 = t2[2] + t3[2]
    for k in range(zero.shape[0]):
        i = zero[k, 0]
        j = zero[k, 1]
        d = c_entry(a, i, j) * nu[j]
        if i == 0:
            c0 -= d
        elif i == 1:
            c1 -= d
        elif i == 2:
            c2 -= d
        elif i == 3:
            c3 -= d
        elif i == 4:
            c4 -= d
        else:
            c5 -= d
    return (c0, c1, c2, c3, c4, c5)


@register_jitable
def rigid_body_coriolis(m: float, r_g: Vec, par: Any, o_ig: int, omega: Vec, x: Vec) -> Vec:
    """C_RB(ν) x, C_RB = H(r_g)ᵀ [[m S(ω), 0], [0, −S(I_g ω)]] H(r_g) (Fossen 2021, eq. 3.63).

    The parametrisation independent of linear velocity: the current enters exactly when x is
    the relative velocity ν_r while ω is the vehicle's angular velocity.

    Parameters
    ----------
    m : float
        Mass [kg].
    r_g : tuple of 3 floats
        CG from the CO [m].
    par : ndarray, 1-D
        Parameter row holding I_g (row-major 3×3 about the CG [kg·m²]) at ``o_ig``.
    omega : tuple of 3 floats
        (p, q, r) [rad/s].
    x : tuple of 6 floats

    Returns
    -------
    tuple of 6 floats [N, N·m]
    """
    p, q, r = omega
    rx = cross3(r_g[0], r_g[1], r_g[2], x[3], x[4], x[5])
    y0 = x[0] - rx[0]
    y1 = x[1] - rx[1]
    y2 = x[2] - rx[2]
    w = cross3(p, q, r, y0, y1, y2)
    z0 = m * w[0]
    z1 = m * w[1]
    z2 = m * w[2]
    ig_w0 = par[o_ig] * p + par[o_ig + 1] * q + par[o_ig + 2] * r
    ig_w1 = par[o_ig + 3] * p + par[o_ig + 4] * q + par[o_ig + 5] * r
    ig_w2 = par[o_ig + 6] * p + par[o_ig + 7] * q + par[o_ig + 8] * r
    s = cross3(x[3], x[4], x[5], ig_w0, ig_w1, ig_w2)
    rz = cross3(r_g[0], r_g[1], r_g[2], z0, z1, z2)
    return (z0, z1, z2, rz[0] + s[0], rz[1] + s[1], rz[2] + s[2])


@register_jitable
def damping(par: Any, o_dl: int, o_dlf: int, o_dq: int, nu_r: Vec) -> Vec:
    """D(ν_r)ν_r = D_L ν_r + u_r D_LF ν_r + diag(D_Q)|ν_r|ν_r (positive convention).

    ``o_dlf < 0`` leaves out the forward-speed term.
    """
    d = mat6_times(par, o_dl, nu_r)
    if o_dlf >= 0:
        f = mat6_times(par, o_dlf, nu_r)
        u = nu_r[0]
        d = (
            d[0] + u * f[0],
            d[1] + u * f[1],
            d[2] + u * f[2],
            d[3] + u * f[3],
            d[4] + u * f[4],
            d[5] + u * f[5],
        )
    return (
        d[0] + par[o_dq] * abs(nu_r[0]) * nu_r[0],
        d[1] + par[o_dq + 1] * abs(nu_r[1]) * nu_r[1],
        d[2] + par[o_dq + 2] * abs(nu_r[2]) * nu_r[2],
        d[3] + par[o_dq + 3] * abs(nu_r[3]) * nu_r[3],
        d[4] + par[o_dq + 4] * abs(nu_r[4]) * nu_r[4],
        d[5] + par[o_dq + 5] * abs(nu_r[5]) * nu_r[5],
    )


@register_jitable
def hydrostatic_restoring(
    w: float, b: float, r_g: Vec, r_b: Vec, r20: float, r21: float, r22: float
) -> Vec:
    """Gravity and buoyancy on the body, −g(η) (Fossen 2021, eq. 4.6), from R's third row.

    f_g = W Rᵀ e_z, f_b = −B Rᵀ e_z; moments r_g × f_g + r_b × f_b.  Add it to τ.
    """
    fg0, fg1, fg2 = w * r20, w * r21, w * r22
    fb0, fb1, fb2 = -b * r20, -b * r21, -b * r22
    mg = cross3(r_g[0], r_g[1], r_g[2], fg0, fg1, fg2)
    mb = cross3(r_b[0], r_b[1], r_b[2], fb0, fb1, fb2)
    return (fg0 + fb0, fg1 + fb1, fg2 + fb2, mg[0] + mb[0], mg[1] + mb[1], mg[2] + mb[2])


@register_jitable
def linear_restoring(par: Any, o_g: int, o_g0: int, eta: Vec) -> Vec:
    """−(G η + g₀): linear hydrostatics about an equilibrium (Fossen 2021, eq. 4.20)."""
    gl = mat6_times(par, o_g, eta)
    return (
        -(gl[0] + par[o_g0]),
        -(gl[1] + par[o_g0 + 1]),
        -(gl[2] + par[o_g0 + 2]),
        -(gl[3] + par[o_g0 + 3]),
        -(gl[4] + par[o_g0 + 4]),
        -(gl[5] + par[o_g0 + 5]),
    )


@register_jitable
def current_in_body(rot: Vec, c0: float, c1: float, c2: float) -> Vec:
    """Rᵀ v_c: a NED current [m/s] in body axes, R given by its 9 row-major entries."""
    return frames.rotate_t_c(rot, c0, c1, c2)
