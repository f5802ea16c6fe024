"""Lift and drag of a fin in its own frame: ``quadratic`` and ``two_lines``.

Behaviour follows UUV Simulator's ``LiftDragModel`` (``uuv_gazebo_plugins``, commit bfb40cb)
as specified in ``actuators_6dof.md`` §3.2–3.4, with the two upstream defects of
``two_lines`` below zero angle of attack corrected (lift odd in α, drag even and ≥ 0).

All functions are pure and vectorised over any leading axes: the velocity ``v_l`` has shape
``(..., 3)`` (m/s, fin frame) and the force returned has the same shape (N, fin frame).  The
geometry is frame-covariant: the same code gives correct results in a Gazebo FLU fin frame
and in a marinesim FRD-mounted fin frame.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from pydantic import Field, model_validator

from marinesim.core.params import ParamsBase, field

__all__ = [
    "QUADRATIC",
    "TWO_LINES",
    "LiftDragModel",
    "LiftDragParams",
    "Quadratic",
    "TwoLines",
    "compute",
    "fold_angle",
    "normalize",
]

#: Vectors not longer than this are returned unchanged by :func:`normalize` (ignition-math
#: ``Vector3::Normalize`` semantics: ``equal(length, 0)`` with its default 1e-6 tolerance).
NORMALIZE_EPS = 1e-6


class Quadratic(ParamsBase):
    """``quadratic`` lift/drag: lift = k_L·ψ·U², drag = k_D·ψ²·U² [upstream]."""

    type: Literal["quadratic"] = "quadratic"
    lift_constant: float = field(..., unit="N s^2/m^2/rad", description="k_L")
    drag_constant: float = field(..., unit="N s^2/m^2/rad^2", description="k_D")


class TwoLines(ParamsBase):
    """``two_lines`` lift/drag after Gazebo's LiftDragPlugin (symmetric, corrected form)."""

    type: Literal["two_lines"] = "two_lines"
    area: float = field(..., unit="m^2", description="fin area A")
    fluid_density: float = field(..., unit="kg/m^3", description="water density rho")
    a0: float = field(0.0, unit="rad", description="zero-lift angle offset")
    alpha_stall: float = field(..., unit="rad", description="stall angle alpha_s")
    cla: float = field(..., unit="1/rad", description="lift slope below stall")
    cla_stall: float = field(0.0, unit="1/rad", description="lift slope beyond stall")
    cda: float = field(0.0, unit="1/rad", description="drag slope below stall")
    cda_stall: float = field(0.0, unit="1/rad", description="drag slope beyond stall")

    @model_validator(mode="after")
    def _check(self) -> TwoLines:
        if self.area < 0:
            raise ValueError(f"area must be >= 0 m^2 (got {self.area})")
        if self.fluid_density <= 0:
            raise ValueError(f"fluid_density must be > 0 kg/m^3 (got {self.fluid_density})")
        if self.alpha_stall < 0:
            raise ValueError(f"alpha_stall must be >= 0 rad (got {self.alpha_stall})")
        return self


#: Discriminated union of the lift/drag parameter models (key ``type``).
LiftDragParams = Annotated[Quadratic | TwoLines, Field(discriminator="type")]


def normalize(v: ArrayLike) -> NDArray[np.float64]:
    """Unit vectors along ``v`` (..., 3); vectors of length ≤ 1e-6 are returned unchanged.

    Parameters
    ----------
    v : array_like, shape (..., 3)
        Vectors.

    Returns
    -------
    ndarray, shape (..., 3)
        ``v / |v|`` where ``|v| > 1e-6``, else ``v`` (ignition-math semantics).
    """
    v = np.asarray(v, dtype=float)
    n = np.sqrt(np.sum(v * v, axis=-1, keepdims=True))
    big = n > NORMALIZE_EPS
    return np.where(big, v / np.where(big, n, 1.0), v)


def fold_angle(angle: ArrayLike) -> NDArray[np.float64]:
    """Fold an angle in [−π, π] into [−π/2, π/2] by ±π (one step, as upstream).

    Parameters
    ----------
    angle : array_like
        Angles [rad], any shape.

    Returns
    -------
    ndarray
        ``angle − π`` where ``angle > π/2``, ``angle + π`` where ``angle < −π/2``.
    """
    a = np.asarray(angle, dtype=float)
    half = 0.5 * np.pi
    return np.where(a > half, a - np.pi, np.where(a < -half, a + np.pi, a))


def _fold_repeat(alpha: NDArray[np.float64]) -> NDArray[np.float64]:
    """Fold repeatedly by ±π until |α| ≤ π/2 (Gazebo's ``while`` loop)."""
    half = 0.5 * np.pi
    a = np.array(alpha, dtype=float, copy=True)
    for _ in range(64):  # bounded: |a0| is a small angle in every real file
        over = np.abs(a) > half
        if not np.any(over):
            break
        a = np.where(over, np.where(a > 0, a - np.pi, a + np.pi), a)
    return a


def _coefficients_two_lines(
    p: TwoLines, alpha: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Lift and drag coefficients (c_l, c_d) of the corrected two-lines model."""
    a = np.abs(alpha)
    s = np.where(alpha < 0, -1.0, 1.0)
    stall = a > p.alpha_stall
    diff = a - p.alpha_stall
    cl = np.where(stall, s * (p.cla * p.alpha_stall + p.cla_stall * diff), p.cla * alpha)
    cd = np.where(stall, p.cda * p.alpha_stall + p.cda_stall * diff, p.cda * a)
    return cl, np.maximum(cd, 0.0)


def compute(
    params: Quadratic | TwoLines, v_l: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Lift plus drag force on a fin, in the fin frame.

    Parameters
    ----------
    params : Quadratic or TwoLines
        Model parameters.
    v_l : array_like, shape (..., 3)
        Flow velocity relative to the fin in the fin frame [m/s] (normally projected on the
        fin plane, so ``v_l[..., 2] == 0``; a 3-D vector is accepted and its full length is
        the speed U, as upstream).

    Returns
    -------
    force : ndarray, shape (..., 3)
        Lift·e_L + drag·e_D [N] in the fin frame.
    angle_used : ndarray, shape (...)
        The folded flow angle ψ [rad] (``quadratic``) or the angle of attack α after the
        ``a0`` shift and folding (``two_lines``).
    """
    v = np.asarray(v_l, dtype=float)
    vx, vy = v[..., 0], v[..., 1]
    psi = fold_angle(np.arctan2(vy, vx))
    u = np.sqrt(np.sum(v * v, axis=-1))
    if isinstance(params, Quadratic):
        u2 = u * u
        du2 = psi * u2
        drag = psi * du2 * params.drag_constant
        lift = du2 * params.lift_constant
        angle_used = psi
    else:
        alpha = _fold_repeat(psi + params.a0)
        q = 0.5 * params.fluid_density * u * u
        cl, cd = _coefficients_two_lines(params, alpha)
        lift = cl * q * params.area
        drag = cd * q * params.area
        angle_used = alpha
    zero = np.zeros_like(vx)
    lift_dir = -normalize(np.stack([-vy, vx, zero], axis=-1))
    drag_dir = normalize(-v)
    force = lift[..., None] * lift_dir + drag[..., None] * drag_dir
    return force, angle_used


@dataclass(frozen=True)
class LiftDragModel:
    """A registered lift/drag variant: its ``Params`` model and :func:`compute`."""

    name: str
    Params: type[ParamsBase]
    compute: Callable[..., tuple[NDArray[np.float64], NDArray[np.float64]]] = compute


QUADRATIC = LiftDragModel("quadratic", Quadratic)
TWO_LINES = LiftDragModel("two_lines", TwoLines)
