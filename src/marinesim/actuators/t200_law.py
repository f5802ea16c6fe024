"""The T200 cubic allocator model for one thruster, as plain functions (compiled by numba).

These are the per-element laws of :class:`~marinesim.actuators.t200_cubic.T200Cubic`
(``specs/allocation.md`` §4.3–4.4) written on floats, registered with
``numba.extending.register_jitable`` so the same source runs interpreted and inside the
compiled CPU kernels of ``marinesim.allocation.kernels``.

Coefficient layout ``cf``: a float array of shape (R, 2, 2, 4) — row r (a vehicle) × map
(0 = force → u, 1 = u → current) × branch (0 = forward, 1 = reverse) × univariate cubic
coefficients (p0, p1, p2, p3) at the row's supply voltage (:func:`cubic_at_voltage`).  Forces
are in the fit's own unit (N for the default profile, kgf for ``mrobosub``).  The functions
take whole arrays and row indices.  Products are written out (no ``**``), so the interpreted
and the compiled functions give the same bits.
"""

from __future__ import annotations

from typing import Any

from numba.extending import register_jitable

__all__ = ["branch_current", "branch_u", "cubic_at_voltage", "horner3", "thruster_u_current"]


@register_jitable
def horner3(p0: float, p1: float, p2: float, p3: float, a: float) -> float:
    """p0 + p1·a + p2·a² + p3·a³, evaluated as ((p3·a + p2)·a + p1)·a + p0."""
    return ((a * p3 + p2) * a + p1) * a + p0


@register_jitable
def cubic_at_voltage(c: Any, m: int, b: int, v: float, out: Any, r: int) -> None:
    """Univariate cubic in a at supply voltage V from the bivariate basis coefficients.

    Parameters
    ----------
    c : ndarray, shape (2, 2, 10)
        Coefficients of φ(a, V) = [1, a, V, a², aV, V², a³, a²V, aV², V³] per map and branch;
        ``c[m, b]`` is used.
    v : float
        Supply voltage [V].
    out : ndarray, shape (R, 2, 2, 4)
        Receives (p0, p1, p2, p3) at ``out[r, m, b]``.
    """
    # no ``**``: numba turns a constant power into multiplications, the interpreter calls pow()
    v2 = v * v
    out[r, m, b, 0] = c[m, b, 0] + c[m, b, 2] * v + c[m, b, 5] * v2 + c[m, b, 9] * (v2 * v)
    out[r, m, b, 1] = c[m, b, 1] + c[m, b, 4] * v + c[m, b, 8] * v2
    out[r, m, b, 2] = c[m, b, 3] + c[m, b, 7] * v
    out[r, m, b, 3] = c[m, b, 6]


@register_jitable
def branch_u(x: float, cf: Any, r: int, b: int) -> float:
    """ESC output on branch b at force x (fit units): clamped at 0 towards the other branch."""
    u = horner3(cf[r, 0, b, 0], cf[r, 0, b, 1], cf[r, 0, b, 2], cf[r, 0, b, 3], x)
    if b == 0:
        return max(u, 0.0)
    return min(u, 0.0)


@register_jitable
def branch_current(u: float, cf: Any, r: int, b: int) -> float:
    """Supply current [A] on branch b at ESC output u, never negative."""
    return max(horner3(cf[r, 1, b, 0], cf[r, 1, b, 1], cf[r, 1, b, 2], cf[r, 1, b, 3], u), 0.0)


@register_jitable
def thruster_u_current(x: float, cf: Any, r: int, x_dead: float) -> tuple[float, float]:
    """ESC output u [-] and supply current [A] of one T200 at force x (fit units, T200 frame).

    Rules of §4.4: the branch is chosen by the sign of x; u is clamped at zero towards the
    other branch and not clipped at ±1; |x| < x_dead or u = 0 gives u = 0 and no current;
    the current is never negative.  ``cf[r]`` holds the cubics at this thruster's voltage.
    """
    if x == 0.0:
        return 0.0, 0.0
    b = 0 if x > 0.0 else 1
    u = branch_u(x, cf, r, b)
    if abs(x) < x_dead or u == 0.0:
        return 0.0, 0.0
    return u, branch_current(u, cf, r, b)
