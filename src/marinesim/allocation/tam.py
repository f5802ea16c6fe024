"""Thruster geometry → thruster allocation matrix (TAM), pseudo-inverses and conditioning.

Conventions (``specs/allocation.md`` §1–3): body frame FRD (x forward, y starboard, z down);
wrench τ = [X, Y, Z, K, M, N] in N and N·m, moments about the dynamics reference point
r_ref (the CO of the 6-DOF model; default the body origin).  Column i of B ∈ ℝ^{6×n} is
[d_i ; (r_i − r_ref) × d_i] for the unit direction d_i of a positive allocated force f_i, so
τ = B f.  The pseudo-inverse is the SVD Moore–Penrose inverse with singular values below
1e−10·σ_max treated as zero.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from pydantic import model_validator

from marinesim.core.errors import ConfigError, ConfigWarning, suggest
from marinesim.core.params import ParamsBase, field

__all__ = [
    "RCOND",
    "Conditioning",
    "Geometry",
    "Thruster",
    "ThrusterLayout",
    "conditioning",
    "direction_from_angles",
    "pinv",
    "tam",
    "weighted_pinv",
]

RCOND = 1e-10  #: relative singular-value cut-off of the pseudo-inverse
Array = NDArray[np.float64]
DOF = ("X", "Y", "Z", "K", "M", "N")


def direction_from_angles(yaw: ArrayLike, pitch: ArrayLike) -> Array:
    """Unit thrust direction from yaw ψ and pitch θ [rad] (MRoboSub's convention).

    d = (cos ψ cos θ, sin ψ cos θ, −sin θ): the first column of Rz(ψ)·Ry(θ); θ = +90° points
    up (−z in FRD).

    Parameters
    ----------
    yaw, pitch : array_like
        Angles [rad], broadcastable shapes S.

    Returns
    -------
    ndarray, shape S + (3,)
    """
    y = np.asarray(yaw, dtype=float)
    p = np.asarray(pitch, dtype=float)
    d = np.stack(
        np.broadcast_arrays(np.cos(y) * np.cos(p), np.sin(y) * np.cos(p), -np.sin(p)), axis=-1
    )
    return np.where(np.abs(d) < 1e-15, 0.0, d)


def tam(
    positions: ArrayLike, directions: ArrayLike, reference: ArrayLike = (0.0, 0.0, 0.0)
) -> Array:
    """Thruster allocation matrix B with columns [d_i ; (r_i − r_ref) × d_i].

    Parameters
    ----------
    positions : array_like, shape (..., n, 3)
        Thruster positions r_i [m], body frame.
    directions : array_like, shape (..., n, 3)
        Unit thrust directions d_i [-], same frame.
    reference : array_like, shape (..., 3)
        Moment reference point r_ref [m] (the dynamics model's CO).

    Returns
    -------
    ndarray, shape (..., 6, n)
        Rows X, Y, Z [N per N] and K, M, N [N·m per N].
    """
    r = np.asarray(positions, dtype=float)
    d = np.asarray(directions, dtype=float)
    ref = np.asarray(reference, dtype=float)[..., None, :]
    m = np.cross(r - ref, d)
    return np.swapaxes(np.concatenate([d, m], axis=-1), -1, -2)


def pinv(b: ArrayLike, rcond: float = RCOND) -> Array:
    """Moore–Penrose pseudo-inverse B⁺ by SVD (singular values < rcond·σ_max treated as zero).

    Parameters
    ----------
    b : array_like, shape (..., 6, n)
        Allocation matrix (stacks allowed).

    Returns
    -------
    ndarray, shape (..., n, 6)
        Minimum-norm exact inverse: f = B⁺τ.
    """
    return np.linalg.pinv(np.asarray(b, dtype=float), rcond=rcond)


def weighted_pinv(b: ArrayLike, w: ArrayLike) -> Array:
    """Weighted pseudo-inverse B_W⁺ = W⁻¹Bᵀ(BW⁻¹Bᵀ)⁺ (minimises fᵀWf subject to Bf = τ).

    Parameters
    ----------
    b : array_like, shape (6, n)
        Allocation matrix.
    w : array_like, shape (n,)
        Positive thruster weights (W = diag(w)); a large weight discourages a thruster.

    Returns
    -------
    ndarray, shape (n, 6)
    """
    b_ = np.asarray(b, dtype=float)
    w_ = np.asarray(w, dtype=float)
    if w_.shape != (b_.shape[-1],) or np.any(~np.isfinite(w_)) or np.any(w_ <= 0):
        raise ConfigError(
            "thruster weights must be finite, positive, one per thruster", param="weights"
        )
    winv_bt = b_.T / w_[:, None]
    return winv_bt @ pinv(b_ @ winv_bt)


@dataclass(frozen=True)
class Conditioning:
    """Rank and conditioning of B (``specs/allocation.md`` §2.3).

    Attributes
    ----------
    singular_values : ndarray, shape (6,)
        Of B, descending (N and N·m mixed).
    rank : int
        Number of singular values ≥ 1e−10·σ_max.
    condition : float
        σ_max/σ_min of B (raw, unit-dependent; ``inf`` if rank < 6).
    singular_values_scaled : ndarray, shape (6,)
        Of diag(1, 1, 1, 1/L, 1/L, 1/L)·B.
    condition_scaled : float
        Condition number of the scaled matrix.
    length : float
        Characteristic length L [m].
    """

    singular_values: Array
    rank: int
    condition: float
    singular_values_scaled: Array
    condition_scaled: float
    length: float


def conditioning(b: ArrayLike, length: float = 0.2) -> Conditioning:
    """Singular values, rank and condition numbers (raw and torque rows scaled by 1/L).

    Parameters
    ----------
    b : array_like, shape (6, n)
        Allocation matrix.
    length : float
        Characteristic length L [m] (default 0.2 m, BlueROV2-sized).
    """
    if not (math.isfinite(length) and length > 0):
        raise ConfigError(
            f"characteristic length must be > 0 (got {length!r})", param="characteristic_length"
        )
    b_ = np.asarray(b, dtype=float)
    s = np.linalg.svd(b_, compute_uv=False)
    scale = np.array([1.0, 1.0, 1.0, 1 / length, 1 / length, 1 / length])
    ss = np.linalg.svd(scale[:, None] * b_, compute_uv=False)
    rank = int(np.sum(s >= RCOND * s[0])) if s.size else 0

    def cond(sv: Array) -> float:
        return float(sv[0] / sv[-1]) if sv.size == 6 and sv[-1] >= RCOND * sv[0] else math.inf

    return Conditioning(s, rank, cond(s), ss, cond(ss), float(length))


# ----------------------------------------------------------------------------------------------
# Thruster description
# ----------------------------------------------------------------------------------------------


class Thruster(ParamsBase):
    """One thruster (``specs/allocation.md`` §2.1).  Give ``direction`` or ``yaw``/``pitch``."""

    name: str = field(description="unique thruster name")
    position: tuple[float, float, float] = field(unit="m", description="position r_i, body FRD")
    direction: tuple[float, float, float] | None = field(
        None, description="unit body direction of the thrust of a positive allocated force (FRD)"
    )
    yaw: float | None = field(None, unit="rad", description="direction yaw ψ (with pitch)")
    pitch: float | None = field(None, unit="rad", description="direction pitch θ; +90° points up")
    t200_forward: Literal[1, -1] = field(
        1, description="+1: thrust along d is the T200's forward (stronger) side; -1: reverse side"
    )
    signal_inverted: bool = field(False, description="ESC receives the negated output (wiring)")
    enabled: bool = field(True, description="false = failed thruster (bounds [0, 0])")

    @model_validator(mode="after")
    def _check_direction(self) -> Thruster:
        if self.direction is None and (self.yaw is None or self.pitch is None):
            raise ValueError("give either 'direction' or both 'yaw' and 'pitch'")
        if self.direction is not None and (self.yaw is not None or self.pitch is not None):
            raise ValueError("give either 'direction' or 'yaw'/'pitch', not both")
        if self.direction is not None and not np.linalg.norm(self.direction) > 0:
            raise ValueError("direction must be a non-zero vector")
        return self

    def unit_direction(self) -> Array:
        """Unit direction d_i (normalised with a ConfigWarning if |d| deviates by > 1e−9)."""
        if self.direction is None:
            return direction_from_angles(float(self.yaw or 0.0), float(self.pitch or 0.0))
        d = np.asarray(self.direction, dtype=float)
        norm = float(np.linalg.norm(d))
        if abs(norm - 1.0) > 1e-9:
            warnings.warn(
                ConfigWarning(
                    f"direction of thruster {self.name!r} has norm {norm:.6g}; normalised"
                ),
                stacklevel=2,
            )
        return d / norm


class ThrusterLayout(ParamsBase):
    """A vehicle's thruster set (positions FRD about the body origin)."""

    name: str = field("vehicle", description="vehicle name")
    thrusters: list[Thruster] = field(description="thrusters, in output order")
    reference_point: tuple[float, float, float] = field(
        (0.0, 0.0, 0.0), unit="m", description="moment reference point (the dynamics model's CO)"
    )
    characteristic_length: float = field(
        0.2,
        unit="m",
        description="L for the scaled condition number diag(1,1,1,1/L,1/L,1/L)·B",
        gt=0,
    )
    dof_weights: tuple[float, float, float, float, float, float] = field(
        (1.0, 1.0, 1.0, 1.0, 1.0, 1.0), description="default DOF priority weights w (X..N)"
    )
    notes: str = field("", description="sources and flags")

    @model_validator(mode="after")
    def _check(self) -> ThrusterLayout:
        names = [t.name for t in self.thrusters]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"duplicate thruster names: {', '.join(dup)}")
        if len(self.thrusters) < 6:
            raise ValueError(
                f"6-DOF allocation needs at least 6 thrusters (got {len(self.thrusters)})"
            )
        if any(w <= 0 for w in self.dof_weights):
            raise ValueError("dof_weights must be > 0")
        return self


class Geometry:
    """Allocation-ready geometry: B, B⁺ (of the enabled thrusters) and per-thruster flags.

    Parameters
    ----------
    layout : ThrusterLayout
        The thruster set.
    failed : iterable of int or str, optional
        Thrusters to mark failed (0-based index or name), in addition to ``enabled = false``.

    Attributes
    ----------
    b : ndarray, shape (6, n)
        Full TAM (failed thrusters included).
    b_active : ndarray, shape (6, n)
        TAM with failed columns zeroed.
    b_pinv : ndarray, shape (n, 6)
        Pseudo-inverse of ``b_active`` (zero rows for failed thrusters).
    sigma : ndarray, shape (n,)
        ``t200_forward`` per thruster (+1/−1).
    signal_inverted, enabled : ndarray of bool, shape (n,)

    Raises
    ------
    ConfigError
        If the active TAM has rank < 6, or a failed thruster is unknown.
    """

    def __init__(
        self, layout: ThrusterLayout, failed: tuple[int | str, ...] | list[int | str] = ()
    ) -> None:
        self.layout = layout
        self.names = [t.name for t in layout.thrusters]
        n = len(self.names)
        self.positions = np.array([t.position for t in layout.thrusters], dtype=float)
        self.directions = np.array([t.unit_direction() for t in layout.thrusters])
        self.sigma = np.array([float(t.t200_forward) for t in layout.thrusters])
        self.signal_inverted = np.array([t.signal_inverted for t in layout.thrusters], dtype=bool)
        enabled = np.array([t.enabled for t in layout.thrusters], dtype=bool)
        for k in failed:
            enabled[self.index(k)] = False
        self.enabled = enabled
        self.b = tam(self.positions, self.directions, layout.reference_point)
        self.b_active = self.b * enabled[None, :].astype(float)
        info = conditioning(self.b_active, layout.characteristic_length)
        if info.rank < 6:
            lost = [self.names[i] for i in range(n) if not enabled[i]]
            raise ConfigError(
                f"allocation matrix of {layout.name!r} has rank {info.rank} < 6"
                + (f" with failed thrusters {', '.join(lost)}" if lost else "")
                + "; 6-DOF allocation is impossible",
                param="thrusters",
            )
        self.info = info
        self.b_pinv = pinv(self.b_active)
        self.b_pinv[~enabled] = 0.0  # exact zeros for failed thrusters

    @property
    def n(self) -> int:
        """Number of thrusters."""
        return len(self.names)

    def index(self, key: int | str) -> int:
        """0-based index of a thruster given by index or name."""
        if isinstance(key, str):
            if key in self.names:
                return self.names.index(key)
            close = suggest(key, self.names)
            hint = f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""
            raise ConfigError(
                f"unknown thruster {key!r}; {hint}(known: {', '.join(self.names)})",
                param="failed",
            )
        if not 0 <= int(key) < self.n:
            raise ConfigError(f"thruster index {key} out of range 0..{self.n - 1}", param="failed")
        return int(key)

    def with_failed(self, *keys: int | str) -> Geometry:
        """A copy with more thrusters marked failed (B⁺ recomputed without them)."""
        already = [i for i in range(self.n) if not self.enabled[i]]
        return Geometry(self.layout, [*already, *keys])
