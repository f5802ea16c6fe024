"""The integrators of the 6-DOF models, one copy each (Fossen 2021; PythonVehicleSimulator).

Plain functions on 1-D arrays (one vehicle's packed state), registered with numba so the CPU
and CUDA kernels compile the same source; they also run interpreted.  A model's ``step``
calls its derivative between the stages:

* RK4 — ``k1 = f(x)``; :func:`rk4_stage` (x + h/2·k1) → ``k2``; (x + h/2·k2) → ``k3``;
  (x + h·k3) → ``k4``; :func:`rk4_combine` x + h/6 (k1 + 2k2 + 2k3 + k4);
* semi-implicit (symplectic) Euler, PythonVehicleSimulator's loop — ν_{k+1} = ν_k + h ν̇(η_k,
  ν_k) with :func:`euler_update` on the ν part, then η_{k+1} = η_k + h η̇(η_k, ν_{k+1}) on the
  pose part;
* forward Euler of actuator lags and PythonVehicleSimulator's ``attitudeEuler`` — the same
  :func:`euler_update`.

Used by :mod:`marinesim.models.sixdof.generic` (and the vehicles built on it).
"""

from __future__ import annotations

import numpy as np
from numba.extending import register_jitable
from numpy.typing import NDArray

__all__ = ["euler_update", "rk4_combine", "rk4_stage"]

F64 = NDArray[np.float64]


@register_jitable
def rk4_stage(x: F64, k: F64, a: float, out: F64) -> None:
    """out = x + a·k: the state at which an RK4 stage evaluates the derivative (a = h/2, h)."""
    for j in range(x.shape[0]):
        out[j] = x[j] + a * k[j]


@register_jitable
def rk4_combine(x: F64, k1: F64, k2: F64, k3: F64, k4: F64, h: float, out: F64) -> None:
    """out = x + h/6 (k₁ + 2k₂ + 2k₃ + k₄), the classical RK4 update."""
    c = h / 6.0
    for j in range(x.shape[0]):
        out[j] = x[j] + c * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j])


@register_jitable
def euler_update(x: F64, dx: F64, h: float, out: F64, lo: int, hi: int) -> None:
    """out[j] = x[j] + h·dx[j] for lo ≤ j < hi (forward / semi-implicit Euler parts)."""
    for j in range(lo, hi):
        out[j] = x[j] + h * dx[j]
