"""Integrators of the 6-DOF models: PythonVehicleSimulator's semi-implicit Euler and RK4.

Both are pure and batched over a leading vehicle axis N.  The derivative callables are
supplied by the model (:mod:`marinesim.models.fossen6dof`, :mod:`marinesim.models.pvs`).

* :func:`semi_implicit_euler` — ν_{k+1} = ν_k + h·ν̇(η_k, ν_k), then
  η_{k+1} = η_k + h·J(η_k)·ν_{k+1} (symplectic Euler, as PythonVehicleSimulator's loop).
* :func:`rk4` — classical fourth-order Runge–Kutta on a packed state vector.
* :func:`pvs_step` — one step of PythonVehicleSimulator's ``simulate()`` loop given the
  vehicle's ``dynamics`` (which already integrates ν and the actuators by forward Euler).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from marinesim.models import hydro

__all__ = ["pvs_step", "rk4", "semi_implicit_euler"]

F64 = NDArray[np.float64]


def rk4(f: Callable[[F64], F64], x: F64, h: float) -> F64:
    """One classical RK4 step x_{k+1} = x_k + h/6 (k₁ + 2k₂ + 2k₃ + k₄).

    Parameters
    ----------
    f : callable
        Derivative ``f(x) -> ẋ`` with the same shape as x (inputs held over the step).
    x : ndarray, shape (N, k)
        Packed state.
    h : float
        Step [s].

    Returns
    -------
    ndarray, shape (N, k)
    """
    k1 = f(x)
    k2 = f(x + (0.5 * h) * k1)
    k3 = f(x + (0.5 * h) * k2)
    k4 = f(x + h * k3)
    return x + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def semi_implicit_euler(
    nu_dot: Callable[[F64, F64], F64],
    eta_dot: Callable[[F64, F64], F64],
    eta: F64,
    nu: F64,
    h: float,
) -> tuple[F64, F64]:
    """Symplectic Euler: ν_{k+1} = ν_k + h ν̇(η_k, ν_k); η_{k+1} = η_k + h η̇(η_k, ν_{k+1}).

    Parameters
    ----------
    nu_dot : callable
        ``nu_dot(eta, nu) -> (N, 6)`` body accelerations.
    eta_dot : callable
        ``eta_dot(eta, nu) -> d eta/dt`` (same shape as eta).
    eta : ndarray, shape (N, k)
        Pose (k = 6 Euler, 7 quaternion).
    nu : ndarray, shape (N, 6)
    h : float
        Step [s].

    Returns
    -------
    eta_next, nu_next : ndarray
    """
    nu_next = nu + h * nu_dot(eta, nu)
    eta_next = eta + h * eta_dot(eta, nu_next)
    return eta_next, nu_next


def pvs_step(
    dynamics: Callable[..., tuple[F64, F64]],
    params: object,
    eta: F64,
    nu: F64,
    u_actual: F64,
    u_control: F64,
    h: float,
) -> tuple[F64, F64, F64]:
    """One step of PythonVehicleSimulator's loop after the command was computed and logged.

    ``nu, u_actual = dynamics(eta, nu, u_actual, u_control, h)`` then
    ``eta = attitudeEuler(eta, nu, h)`` with the new ν.

    Parameters
    ----------
    dynamics : callable
        ``dynamics(params, eta, nu, u_actual, u_control, h) -> (nu_next, u_actual_next)``.
    params : object
        The vehicle parameters.
    eta, nu : ndarray, shape (N, 6)
    u_actual, u_control : ndarray, shape (N, m)
    h : float
        Sample time [s].

    Returns
    -------
    eta_next, nu_next, u_actual_next : ndarray
    """
    nu_next, u_next = dynamics(params, eta, nu, u_actual, u_control, h)
    eta_next = eta + h * hydro.euler_kinematics(eta, nu_next)
    return eta_next, nu_next, u_next
