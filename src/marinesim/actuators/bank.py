"""The k units of an actuator bank (thrusters or fins) grouped by model variant.

A bank holds one model per unit (rotor or joint dynamics, thrust conversion, lift/drag); the
units that share a model (or a dynamics variant) are evaluated together on their columns of
the (N, k) arrays, so each variant runs once per step whatever k is.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

from marinesim.actuators import thruster_dynamics as td

__all__ = ["DynamicsGroups", "advance", "dynamics_groups", "group_indices"]

K = TypeVar("K", bound=Hashable)

#: (variant name, unit columns, coefficient name → per-unit values) per dynamics variant.
DynamicsGroups = tuple[tuple[str, NDArray[np.intp], dict[str, NDArray[np.float64]]], ...]


def group_indices(models: Sequence[K]) -> tuple[tuple[K, NDArray[np.intp]], ...]:
    """Equal models with the columns of the units that use them, in first-use order.

    Parameters
    ----------
    models : sequence of hashable, length k
        The model of each unit (e.g. frozen parameter objects).

    Returns
    -------
    tuple of (model, ndarray of intp)
        Each distinct model and its unit indices.
    """
    groups: dict[K, list[int]] = {}
    for j, m in enumerate(models):
        groups.setdefault(m, []).append(j)
    return tuple((m, np.array(i, dtype=np.intp)) for m, i in groups.items())


def dynamics_groups(dynamics: Sequence[td.AnyDynamics]) -> DynamicsGroups:
    """Units grouped by dynamics variant, coefficients stacked per unit of the group.

    Parameters
    ----------
    dynamics : sequence of ZeroOrder, FirstOrder, Yoerger or Bessa, length k
        The dynamics of each unit.

    Returns
    -------
    DynamicsGroups
        Per variant: its name, the unit columns and the coefficient arrays (one value per
        unit of the group), the form :func:`thruster_dynamics.update` takes with ``kind``.
    """
    out = []
    for kind, idx in group_indices([d.type for d in dynamics]):
        coefs: dict[str, list[float]] = {}
        for j in idx:
            for key, v in dynamics[j].model_dump(exclude={"type", "initial_state"}).items():
                coefs.setdefault(key, []).append(float(v))
        out.append((kind, idx, {c: np.array(v) for c, v in coefs.items()}))
    return tuple(out)


def advance(
    groups: DynamicsGroups, s: NDArray[np.float64], u: NDArray[np.float64], h: float
) -> NDArray[np.float64]:
    """One step ``s_new = D(s, u, h)`` of every unit with its own dynamics.

    Parameters
    ----------
    groups : DynamicsGroups
        From :func:`dynamics_groups`.
    s, u : ndarray, shape (N, k)
        States and inputs held over the step (broadcastable to each other).
    h : float
        Step length [s].

    Returns
    -------
    ndarray, shape (N, k)
        The states after the step.
    """
    out = np.empty(np.broadcast_shapes(s.shape, u.shape))
    for kind, idx, coef in groups:
        out[:, idx] = td.update(coef, s[:, idx], u[:, idx], h, kind=kind)
    return out
