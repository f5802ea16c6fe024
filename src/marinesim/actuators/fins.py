"""Fins (spec ``actuators_6dof.md`` §3.1), batched over N vehicles × k fins.

Per physics step h with command c, for each fin (UUV Simulator ``FinPlugin``, reproduced):

1. clamp c to the joint limits [lower, upper] (the clamped value replaces the command);
2. dynamics δ_new = D(δ, c, h) (§2.3; all shipped fins use ``first_order``);
3. one-step angle lag: this step's force uses δ_prev (the angle before the update), fin frame
   R_fin = R_m·Rz(δ_prev);
4. velocity of the fin relative to the water, v_f = v + ω × p_f − ν_c (body frame), in the
   fin frame v_F = R_finᵀ v_f;
5. projection on the fin plane v_L = v_F − (v_F·e_z) e_z;
6. lift/drag F_L = LD(v_L) (:mod:`marinesim.actuators.lift_drag`);
7. wrench F_b = R_fin F_L at p_f, τ = [F_b ; p_f × F_b];
8. store δ ← δ_new (δ_prev is published as the angle used).

The computation is frame-covariant: given FLU poses and velocities it returns FLU forces,
which is how the UUV Simulator reference series are replayed.  A fin's joint axis is the fin
frame's z; the UUV importer keeps the Gazebo fin-link frame as the fin frame (mount rotation
``T·R_FLU``) so that joint angles keep their UUV Simulator sign.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from pydantic import model_validator

from marinesim.actuators import lift_drag as ld
from marinesim.actuators import thruster_dynamics as td
from marinesim.actuators.bank import DynamicsGroups, advance, dynamics_groups, group_indices
from marinesim.core.frames import rotation_from_euler
from marinesim.core.params import ParamsBase, field

__all__ = [
    "FinBankParams",
    "FinParams",
    "FinState",
    "Params",
    "fin_forces",
    "init",
    "mount_rotation",
    "step",
]

Vec3 = tuple[float, float, float]
Mat3 = tuple[Vec3, Vec3, Vec3]


class FinParams(ParamsBase):
    """One fin: mount pose (FRD, about CO), joint limits, dynamics and lift/drag model."""

    name: str = field("", description="label used in logs and errors")
    position: Vec3 = field((0.0, 0.0, 0.0), unit="m", description="p_f, FRD from CO")
    rpy: Vec3 | None = field(None, unit="rad", description="mount rotation R_m = R(rpy)")
    rotation: Mat3 | None = field(None, description="mount rotation matrix R_m (rows)")
    lower: float = field(..., unit="rad", description="joint lower limit")
    upper: float = field(..., unit="rad", description="joint upper limit")
    dynamics: td.Params = field(..., description="fin joint dynamics (type: first_order, ...)")
    liftdrag: ld.LiftDragParams = field(..., description="lift/drag (type: quadratic, two_lines)")

    @model_validator(mode="after")
    def _check(self) -> FinParams:
        if not self.lower < self.upper:
            raise ValueError(f"joint limits need lower < upper (got {self.lower}, {self.upper})")
        if self.rpy is not None and self.rotation is not None:
            raise ValueError("give either rpy or rotation, not both")
        if self.rotation is not None:
            r = np.asarray(self.rotation, dtype=float)
            if not np.allclose(r @ r.T, np.eye(3), atol=1e-9) or np.linalg.det(r) < 0:
                raise ValueError("rotation must be a proper rotation matrix")
        return self


def mount_rotation(params: FinParams) -> NDArray[np.float64]:
    """Mount rotation R_m (3, 3): ``rotation``, or Rz(y)·Ry(p)·Rx(r) of ``rpy``, or I."""
    if params.rotation is not None:
        return np.asarray(params.rotation, dtype=float)
    if params.rpy is not None:
        return np.asarray(rotation_from_euler(*params.rpy), dtype=float)
    return np.eye(3)


class FinBankParams(ParamsBase):
    """All fins of one vehicle type (k fins)."""

    fins: tuple[FinParams, ...] = field(..., description="the k fins")

    @cached_property
    def _packed(self) -> _Packed:
        return _pack(self.fins)


Params = FinBankParams


@dataclass(frozen=True)
class _Packed:
    k: int
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    s0: NDArray[np.float64]
    positions: NDArray[np.float64]
    mounts: NDArray[np.float64]
    dyn_groups: DynamicsGroups
    ld_groups: tuple[tuple[Any, NDArray[np.intp]], ...]


def _pack(fins: Sequence[FinParams]) -> _Packed:
    k = len(fins)
    return _Packed(
        k=k,
        lower=np.array([f.lower for f in fins], dtype=float),
        upper=np.array([f.upper for f in fins], dtype=float),
        s0=np.array([f.dynamics.initial_state for f in fins], dtype=float),
        positions=np.array([f.position for f in fins], dtype=float).reshape(k, 3),
        mounts=np.array([mount_rotation(f) for f in fins], dtype=float).reshape(k, 3, 3),
        dyn_groups=dynamics_groups([f.dynamics for f in fins]),
        ld_groups=group_indices([f.liftdrag for f in fins]),
    )


@dataclass(frozen=True)
class FinState:
    """State and published outputs of k fins on N vehicles.

    Attributes
    ----------
    angle : ndarray, shape (N, k)
        Fin angle δ [rad] after the last step.
    cmd_clamped : ndarray, shape (N, k)
        The stored (clamped) command [rad].
    angle_used : ndarray, shape (N, k)
        δ_prev, the angle the last step's force used [rad].
    v_fin : ndarray, shape (N, k, 3)
        v_L, the in-plane flow velocity in the fin frame [m/s].
    attack : ndarray, shape (N, k)
        Flow angle ψ / angle of attack α the lift/drag model used [rad].
    force_fin : ndarray, shape (N, k, 3)
        F_L in the fin frame [N].
    force_body : ndarray, shape (N, k, 3)
        F_b in the body frame [N].
    moment_body : ndarray, shape (N, k, 3)
        p_f × F_b [N·m].
    """

    angle: NDArray[np.float64]
    cmd_clamped: NDArray[np.float64]
    angle_used: NDArray[np.float64]
    v_fin: NDArray[np.float64]
    attack: NDArray[np.float64]
    force_fin: NDArray[np.float64]
    force_body: NDArray[np.float64]
    moment_body: NDArray[np.float64]

    def wrench(self) -> NDArray[np.float64]:
        """Summed fin wrench per vehicle, shape (N, 6) [N, N·m], body frame about CO."""
        return np.concatenate([self.force_body.sum(axis=1), self.moment_body.sum(axis=1)], axis=1)


def init(params: FinBankParams, n: int) -> FinState:
    """Initial state of ``n`` vehicles: angles at s0, zero forces.

    Parameters
    ----------
    params : FinBankParams
        The k fins.
    n : int
        Number of vehicles N.

    Returns
    -------
    FinState
        Arrays with leading shape (n, k).
    """
    pk = params._packed
    a = np.broadcast_to(pk.s0, (n, pk.k)).copy()
    z3 = np.zeros((n, pk.k, 3))
    return FinState(a, a.copy(), a.copy(), z3, np.zeros((n, pk.k)), z3, z3, z3)


def _rz(angle: NDArray[np.float64]) -> NDArray[np.float64]:
    c, s = np.cos(angle), np.sin(angle)
    z, o = np.zeros_like(angle), np.ones_like(angle)
    return np.stack(
        [np.stack([c, -s, z], -1), np.stack([s, c, z], -1), np.stack([z, z, o], -1)], -2
    )


def fin_forces(
    params: FinBankParams,
    angle_used: ArrayLike,
    nu: ArrayLike,
    current_body: ArrayLike | None = None,
) -> tuple[
    NDArray[np.float64],
    NDArray[np.float64],
    NDArray[np.float64],
    NDArray[np.float64],
    NDArray[np.float64],
]:
    """Steps 3–7 for given fin angles: forces of k fins on N vehicles.

    Parameters
    ----------
    params : FinBankParams
        The k fins.
    angle_used : array_like, shape (N, k)
        Fin angles δ_prev [rad].
    nu : array_like, shape (N, 6)
        Vehicle velocity [u, v, w, p, q, r] (m/s, rad/s), body frame.
    current_body : array_like, shape (N, 3), optional
        Water current velocity in body axes [m/s] (default 0).

    Returns
    -------
    v_l : ndarray, shape (N, k, 3)
        In-plane relative flow velocity in the fin frame [m/s].
    attack : ndarray, shape (N, k)
        Angle used by the lift/drag model [rad].
    force_fin : ndarray, shape (N, k, 3)
        F_L, fin frame [N].
    force_body : ndarray, shape (N, k, 3)
        F_b, body frame [N].
    moment_body : ndarray, shape (N, k, 3)
        p_f × F_b [N·m].
    """
    pk = params._packed
    nu = np.asarray(nu, dtype=float).reshape(-1, 6)
    n = nu.shape[0]
    cur = (
        np.zeros((n, 3))
        if current_body is None
        else np.asarray(current_body, dtype=float).reshape(-1, 3)
    )
    delta = np.broadcast_to(np.asarray(angle_used, dtype=float), (n, pk.k))
    r_fin = pk.mounts[None, :, :, :] @ _rz(delta)  # (N, k, 3, 3)
    v_f = nu[:, None, :3] + np.cross(nu[:, None, 3:], pk.positions[None, :, :]) - cur[:, None, :]
    v_fin = np.einsum("nkji,nkj->nki", r_fin, v_f)  # R^T v
    v_l = v_fin.copy()
    v_l[..., 2] = 0.0
    force = np.empty_like(v_l)
    attack = np.empty((n, pk.k))
    for p, idx in pk.ld_groups:
        f, a = ld.compute(p, v_l[:, idx, :])
        force[:, idx, :] = f
        attack[:, idx] = a
    f_b = np.einsum("nkij,nkj->nki", r_fin, force)
    m_b = np.cross(pk.positions[None, :, :], f_b)
    return v_l, attack, force, f_b, m_b


def step(
    params: FinBankParams,
    state: FinState,
    cmd: ArrayLike,
    env: object,
    dt: float,
    nu: ArrayLike | None = None,
) -> FinState:
    """One physics step of k fins on N vehicles (clamp, dynamics, lagged-angle forces).

    Parameters
    ----------
    params : FinBankParams
        The k fins.
    state : FinState
        State before the step.
    cmd : array_like, shape (N, k)
        Fin angle commands [rad].
    env : mapping or object, optional
        Environment sample; its ``current_body`` (N, 3) [m/s] — the current in body axes —
        is used when present (key or attribute), else no current.
    dt : float
        Step length h [s].
    nu : array_like, shape (N, 6), optional
        Vehicle body velocity (default: at rest).

    Returns
    -------
    FinState
        New angles and the forces to apply over this step.
    """
    pk = params._packed
    n = state.angle.shape[0]
    c = np.maximum(np.minimum(np.asarray(cmd, dtype=float), pk.upper), pk.lower)
    c = np.broadcast_to(c, (n, pk.k))
    new = advance(pk.dyn_groups, state.angle, c, dt)
    if isinstance(env, Mapping):
        cur = env.get("current_body")
    else:
        cur = getattr(env, "current_body", None)
    nu_arr = np.zeros((n, 6)) if nu is None else nu
    v_l, attack, f_l, f_b, m_b = fin_forces(params, state.angle, nu_arr, cur)
    return FinState(new, c.copy(), state.angle.copy(), v_l, attack, f_l, f_b, m_b)
