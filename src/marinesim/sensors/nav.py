"""Belief writers without a filter: ``noisy_state`` and ``simple_ins`` (engine spec §6.3, §6.4).

Both are pure functions over (N, …) arrays; random numbers are passed in with fixed
consumption.  Also :func:`cep50`, the exact circular error probable of 2-D Gaussian errors.

Covariance layout of the belief they produce: (N, 9, 9) over [position NED (m), body velocity
(m/s), roll/pitch/yaw perturbation (rad)].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import numpy as np
from numpy.typing import NDArray
from pydantic import Field

from marinesim.core.errors import ConfigError
from marinesim.core.params import ParamsBase, field
from marinesim.sensors.attitude import perturb_body

__all__ = [
    "InsState",
    "NoisyStateParams",
    "SimpleInsParams",
    "cep50",
    "noisy_state",
    "simple_ins_init",
    "simple_ins_step",
]

Finite = Annotated[float, Field(allow_inf_nan=False)]
Vec3 = tuple[Finite, Finite, Finite]


def _std3(name: str, unit: str, what: str) -> object:
    return field(..., unit=unit, description=f"{what} noise sigma per axis ({name})")


class NoisyStateParams(ParamsBase):
    """Noise of the ``noisy_state`` belief: every sigma and mean is required (SCRIMMAGE fixed)."""

    pos_std: Vec3 = _std3("north, east, down", "m", "position")  # type: ignore[assignment]
    pos_mean: Vec3 = field(..., unit="m", description="position noise mean (north, east, down)")
    vel_std: Vec3 = _std3("u, v, w", "m/s", "body velocity")  # type: ignore[assignment]
    vel_mean: Vec3 = field(..., unit="m/s", description="body velocity noise mean")
    att_std_deg: Vec3 = _std3("roll, pitch, yaw", "deg", "attitude")  # type: ignore[assignment]
    att_mean_deg: Vec3 = field(
        ..., unit="deg", description="attitude noise mean (roll, pitch, yaw)"
    )

    def model_post_init(self, __context: object) -> None:  # noqa: D102
        for name in ("pos_std", "vel_std", "att_std_deg"):
            if any(v < 0 for v in getattr(self, name)):
                raise ConfigError(
                    f"{name}: every sigma must be >= 0, got {getattr(self, name)}", param=name
                )

    def covariance(self) -> NDArray[np.float64]:
        """(9, 9) diag(σ²) over [pos, vel, rpy (rad)]."""
        s = np.concatenate([self.pos_std, self.vel_std, np.deg2rad(self.att_std_deg)])
        return np.diag(s**2)


def noisy_state(
    pos: NDArray[np.float64],
    quat: NDArray[np.float64],
    vel: NDArray[np.float64],
    normal: NDArray[np.float64],
    params: NoisyStateParams,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Perturbed copies of the truth and their covariance.

    Parameters
    ----------
    pos, vel : ndarray, shape (N, 3)
        True NED position [m] and body velocity [m/s].
    quat : ndarray, shape (N, 4)
        True attitude.
    normal : ndarray, shape (N, 9)
        Standard normals (position, velocity, attitude).
    params : NoisyStateParams

    Returns
    -------
    pos, quat, vel : ndarray
        Belief arrays, shapes (N, 3), (N, 4), (N, 3).
    cov : ndarray, shape (N, 9, 9)
    """
    nz = np.asarray(normal, dtype=float)
    p = pos + np.asarray(params.pos_mean) + np.asarray(params.pos_std) * nz[:, 0:3]
    v = vel + np.asarray(params.vel_mean) + np.asarray(params.vel_std) * nz[:, 3:6]
    ang = np.deg2rad(np.asarray(params.att_mean_deg) + np.asarray(params.att_std_deg) * nz[:, 6:9])
    q = perturb_body(quat, ang)
    cov = np.broadcast_to(params.covariance(), (pos.shape[0], 9, 9)).copy()
    return p, q, v, cov


class SimpleInsParams(ParamsBase):
    """SCRIMMAGE SimpleINS, dt-correct and seeded (engine spec §6.4)."""

    q_distance: float = field(
        ...,
        unit="m^2/m",
        description="position variance growth per metre travelled",
        ge=0,
        allow_inf_nan=False,
    )
    q_time: float = field(
        ...,
        unit="m^2/s",
        description="position variance growth per second",
        ge=0,
        allow_inf_nan=False,
    )
    vel_std: float = field(
        ...,
        unit="m/s",
        description="white velocity noise sigma per axis",
        ge=0,
        allow_inf_nan=False,
    )
    roll_std_deg: float = field(
        ..., unit="deg", description="roll noise sigma", ge=0, allow_inf_nan=False
    )
    pitch_std_deg: float = field(
        ..., unit="deg", description="pitch noise sigma", ge=0, allow_inf_nan=False
    )
    yaw_std_deg: float = field(
        ..., unit="deg", description="yaw noise sigma", ge=0, allow_inf_nan=False
    )
    gps_std: float = field(
        ...,
        unit="m",
        description="position error sigma after a GPS reset",
        ge=0,
        allow_inf_nan=False,
    )
    gps_max_depth: float = field(0.5, unit="m", description="GPS fix when depth <= this")
    surface_time_choices_s: tuple[float, ...] = field(
        (15.0, 30.0, 45.0, 60.0),
        unit="s",
        description="fix time needed before a reset, drawn at each surfacing",
        min_length=1,
    )
    sea_state: int = field(0, unit="", description="sea state; > 1 adds sea_state_extra_s", ge=0)
    sea_state_extra_s: float = field(
        60.0, unit="s", description="extra surface time in rough sea", ge=0
    )
    initial_pos_std: float = field(0.0, unit="m", description="initial position error sigma", ge=0)


@dataclass
class InsState:
    """Internal state of ``simple_ins`` (all (N, …))."""

    err: NDArray[np.float64]  # (N, 3) position error [m]
    var: NDArray[np.float64]  # (N,) position variance per axis [m²]
    fix_time: NDArray[np.float64]  # (N,) continuous fix time [s]
    surface_need: NDArray[np.float64]  # (N,) fix time needed for a reset [s]
    had_fix: NDArray[np.bool_]  # (N,)


def simple_ins_init(normal: NDArray[np.float64], params: SimpleInsParams) -> InsState:
    """Initial error state from (N, 3) normals."""
    n = normal.shape[0]
    return InsState(
        err=params.initial_pos_std * np.asarray(normal, dtype=float),
        var=np.full(n, params.initial_pos_std**2),
        fix_time=np.zeros(n),
        surface_need=np.full(n, np.inf),
        had_fix=np.zeros(n, dtype=bool),
    )


def simple_ins_step(
    st: InsState,
    speed_ned: NDArray[np.float64],
    depth: NDArray[np.float64],
    dt: float | NDArray[np.float64],
    normal: NDArray[np.float64],
    uniform: NDArray[np.float64],
    params: SimpleInsParams,
) -> tuple[InsState, NDArray[np.bool_], NDArray[np.bool_]]:
    """Advance the INS error by one update of length ``dt``.

    Parameters
    ----------
    st : InsState
    speed_ned : ndarray, shape (N,)
        |v_NED| [m/s] (distance travelled Δs = speed·dt).
    depth : ndarray, shape (N,)
        True depth [m] (GPS fix when ≤ gps_max_depth).
    dt : float or ndarray (N,)
        Update length [s].
    normal : ndarray, shape (N, 6)
        Normals: 3 for the random walk, 3 for a GPS reset (always drawn).
    uniform : ndarray, shape (N,)
        Surface-time choice (always drawn, used at a surfacing).
    params : SimpleInsParams

    Returns
    -------
    state : InsState
    fix : ndarray of bool, shape (N,)
        GPS fix available.
    reset : ndarray of bool, shape (N,)
        Position reset to the GPS error on this update.
    """
    nz = np.asarray(normal, dtype=float)
    dt_a = np.broadcast_to(np.asarray(dt, dtype=float), depth.shape)
    fix = np.asarray(depth) <= params.gps_max_depth
    choices = np.asarray(params.surface_time_choices_s, dtype=float)
    pick = np.minimum((np.asarray(uniform) * len(choices)).astype(int), len(choices) - 1)
    need_new = choices[pick] + (params.sea_state_extra_s if params.sea_state > 1 else 0.0)
    surfacing = fix & ~st.had_fix
    surface_need = np.where(surfacing, need_new, st.surface_need)
    fix_time = np.where(fix, st.fix_time + np.where(surfacing, 0.0, dt_a), 0.0)
    reset = fix & (fix_time >= surface_need)
    growth = params.q_distance * np.abs(speed_ned) * dt_a + params.q_time * dt_a
    err = st.err + np.sqrt(growth)[:, None] * nz[:, 0:3]
    var = st.var + growth
    err = np.where(reset[:, None], params.gps_std * nz[:, 3:6], err)
    var = np.where(reset, params.gps_std**2, var)
    return InsState(err, var, fix_time, surface_need, fix), fix, reset


def _eig2(
    a: NDArray[np.float64], b: NDArray[np.float64], d: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Eigenvalues (low, high) of the symmetric 2 × 2 matrices [[a, b], [b, d]], (N,) each.

    LAPACK's ``dlaev2`` formulas: the larger from the trace and the discriminant, the smaller
    as det/larger (no cancellation); a zero matrix gives (0, 0).
    """
    sm = a + d
    rt = np.hypot(a - d, 2.0 * b)
    hi = np.where(sm >= 0.0, 0.5 * (sm + rt), 0.5 * (sm - rt))
    big = np.where(np.abs(a) >= np.abs(d), a, d)
    small = np.where(np.abs(a) >= np.abs(d), d, a)
    safe = np.where(hi == 0.0, 1.0, hi)
    other = np.where(hi == 0.0, 0.0, (big / safe) * small - (b / safe) * b)
    return np.minimum(hi, other), np.maximum(hi, other)


def _pairwise(a: NDArray[np.float64]) -> NDArray[np.float64]:
    """Column sums of ``a`` (n, rows) in numpy's pairwise order, bit for bit.

    ``np.add.reduce`` of a contiguous row of n values sums them pairwise: below 8 values in
    turn, up to 128 in eight running sums combined as ((r₀+r₁)+(r₂+r₃))+((r₄+r₅)+(r₆+r₇))
    (then the rest in turn), beyond that the two halves (cut at a multiple of 8) recursively.
    Here every step runs over all the rows at once (the nodes on the first axis), instead of a
    reduction call per row of a few values.
    """
    n = a.shape[0]
    if n < 8:
        res = np.zeros(a.shape[1])
        for i in range(n):
            res = res + a[i]
        return res
    if n <= 128:
        r = a[0:8].copy()
        end = n - n % 8
        for i in range(8, end, 8):
            r += a[i : i + 8]
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for i in range(end, n):
            res = res + a[i]
        return res
    half = n // 2
    half -= half % 8
    return _pairwise(a[:half]) + _pairwise(a[half:])


def _unit_cep50(r2: NDArray[np.float64], n: int) -> NDArray[np.float64]:
    """CEP50 for σ₁ = 1 and σ₂ = ``r2`` (rows), ``n`` midpoint nodes on a quarter period.

    Newton from the circular guess; a row stops at its own convergence (|step| < 1e-14), and
    each row's sums run along its own nodes (numpy's pairwise order, :func:`_pairwise`), so a
    row's value is the same alone or in any batch.  The nodes run along the first axis (one
    vector operation per node over the rows) and the iterations over the rows still live.
    """
    th = (np.arange(n) + 0.5) * (0.5 * np.pi / n)
    q = (np.cos(th) ** 2)[:, None] + (np.sin(th) ** 2)[:, None] / (r2**2)[None, :]  # (n, rows)
    norm = 1.0 / (n * r2)  # (1/(2π σ₁σ₂))·4·(π/2)/n
    rad = 0.5887 * (1.0 + r2)
    live = np.arange(r2.shape[0])
    r = rad.copy()
    e = np.empty_like(q)  # work buffers, reused while no row converges
    w = np.empty_like(q)
    for _ in range(8):
        np.multiply(-0.5 * r[None, :] ** 2, q, out=e)
        np.exp(e, out=e)
        np.subtract(1.0, e, out=w)
        np.divide(w, q, out=w)
        prob = norm * _pairwise(w)
        dprob = norm * r * _pairwise(e)
        new = np.clip(r - (prob - 0.5) / dprob, 0.6744897501960817, 1.1774100225154747)
        step = np.abs(new - r)
        rad[live] = new
        going = ~(step < 1e-14)
        if not going.any():
            break
        if going.all():
            r = new
            continue
        live, q, norm, r = live[going], q[:, going], norm[going], new[going]
        e = np.empty_like(q)
        w = np.empty_like(q)
    return rad


def cep50(cov2: NDArray[np.float64], n_theta: int | None = None) -> NDArray[np.float64]:
    """Exact CEP50 radius [m] of zero-mean 2-D Gaussian errors.

    The radius r with P(‖x‖ ≤ r) = 1/2, from the angular integral
    P(r) = 1/(2π σ₁σ₂) ∫₀^{2π} (1 − exp(−r² q(θ)/2)) / q(θ) dθ, q(θ) = cos²θ/σ₁² + sin²θ/σ₂²
    (midpoint rule on a quarter period, spectrally accurate for this periodic integrand; the
    node count grows as σ₂/σ₁ shrinks: 8 for a circle, 4·σ₁/σ₂ otherwise), solved by vectorised Newton iterations from the
    circular-shortcut guess.  σ₂ = 0 gives the 1-D value 0.6745·σ₁.

    Parameters
    ----------
    cov2 : ndarray, shape (N, 2, 2) or (2, 2)
        Horizontal covariance [m²].
    n_theta : int, optional
        Quadrature nodes on a quarter period (default: chosen from the smallest axis ratio).

    Returns
    -------
    ndarray, shape (N,) (or () for one matrix)
    """
    c = np.asarray(cov2, dtype=float)
    single = c.ndim == 2
    if single:
        c = c[None]
    lo, hi = _eig2(c[:, 0, 0], 0.5 * (c[:, 0, 1] + c[:, 1, 0]), c[:, 1, 1])
    s1 = np.sqrt(np.maximum(hi, 0.0))
    s2 = np.sqrt(np.maximum(lo, 0.0))
    pos = s1 > 0
    ratio = np.where(pos, s2 / np.where(pos, s1, 1.0), 0.0)
    degenerate = ratio < 1e-4
    r2 = np.where(degenerate, 1.0, ratio)
    if n_theta is None:
        # the midpoint rule converges geometrically; 1.6/ratio nodes already give 2e-16
        # relative (ratios 0.02-1 against 20 000 nodes), 4/ratio keeps a margin.  Each row
        # gets its own count, rounded up to a power of two so that rows of like shape share a
        # pass: a vehicle's value never depends on the other rows of the batch.
        need = np.clip(np.ceil(4.0 / np.maximum(r2, 1e-4)), 8.0, 20000.0)
        nodes = np.minimum(2.0 ** np.ceil(np.log2(need)), 20000.0).astype(np.int64)
    else:
        nodes = np.full(r2.shape, int(n_theta), dtype=np.int64)
    rad = np.empty_like(r2)
    for n in np.unique(nodes):
        rows = np.flatnonzero(nodes == n)
        rad[rows] = _unit_cep50(r2[rows], int(n))
    rad = np.where(degenerate, 0.6744897501960817, rad)
    out = np.where(pos, rad * s1, 0.0)
    return out[0] if single else out
