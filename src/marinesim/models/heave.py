"""1-DOF vertical test vehicle ``sitl_vertical`` (SURFTRAK spec §10).

Behaves like ArduSub SITL's ``SIM_Submarine`` in heave: two vertical thrusters giving
2.5 m/s² each at full output, net buoyancy +0.19 m/s² (2 N on 10.5 kg, BlueROV2 Heavy), and
linear (9.81/3·v, older SITL revisions, default) or quadratic (11.5·v·|v|) drag.  z is up, 0 at
the water surface, metres; a hard seafloor stops the vehicle (on contact v = max(v, 0)).

Values are floats (N = 1) or arrays of shape (N,); the same code serves both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from marinesim.core.params import ParamsBase, field

__all__ = [
    "HeaveParams",
    "HeaveState",
    "accel_raw",
    "acceleration",
    "init",
    "step",
    "step_zv",
    "step_zv_raw",
]

Num = Any


class HeaveParams(ParamsBase):
    """Parameters of the vertical test vehicle (defaults: ``sitl_vertical``)."""

    thrust_accel: float = field(5.0, unit="m/s^2", description="accel at thrust 1 (2 x 2.5)", gt=0)
    buoyancy_accel: float = field(0.19, unit="m/s^2", description="net buoyancy accel (up +)")
    drag: Literal["linear", "quadratic"] = field("linear", description="drag law")
    linear_drag: float = field(9.81 / 3.0, unit="1/s", description="linear drag coefficient", ge=0)
    quadratic_drag: float = field(11.5, unit="1/m", description="quadratic drag coefficient", ge=0)
    baro_noise_m: float = field(0.0, unit="m", description="belief z noise (EKF/baro)", ge=0)
    height: float = field(0.25, unit="m", description="hull height (surface piercing)", gt=0)
    gravity: float = field(9.81, unit="m/s^2", description="gravity", gt=0)

    @property
    def hover_thrust(self) -> float:
        """Thrust (−1…1) that cancels the buoyancy at rest."""
        return -self.buoyancy_accel / self.thrust_accel

    @property
    def coefficients(self) -> tuple[float, ...]:
        """``(thrust_accel, buoyancy_accel, quadratic, linear_drag, quadratic_drag, height,
        gravity)`` for :func:`accel_raw` / :func:`step_zv_raw` (quadratic: 1.0 or 0.0)."""
        return (
            self.thrust_accel, self.buoyancy_accel, 0.0 if self.drag == "linear" else 1.0,
            self.linear_drag, self.quadratic_drag, self.height, self.gravity,
        )  # fmt: skip


@dataclass(frozen=True)
class HeaveState:
    """Vehicle state: ``z`` (m, up), ``v`` (m/s, up), ``a`` (m/s², last acceleration)."""

    z: Any
    v: Any
    a: Any


def acceleration(params: HeaveParams, v: Num, thrust: Num, z: Num = -1.0) -> Num:
    """Vertical acceleration (m/s², up +) for velocity ``v`` (m/s), thrust (−1…1), height z (m).

    Near the surface the buoyancy scales with the submerged fraction of the hull
    (height ``height`` centred on z): fully submerged below −height/2, none above +height/2,
    where only gravity is left (as in SITL's SIM_Submarine).
    """
    return accel_raw(params.coefficients, v, thrust, z)


def step_zv(
    params: HeaveParams, z: Num, v: Num, thrust: Num, floor_z: Num, dt: float
) -> tuple[Num, Num, Num]:
    """One semi-implicit Euler step.

    Parameters
    ----------
    params : HeaveParams
    z, v : float or ndarray (N,)
        Height (m, up) and climb rate (m/s).
    thrust : float or ndarray (N,)
        Vertical thrust −1…1 (positive up).
    floor_z : float or ndarray (N,)
        Seafloor height (m, up) under the vehicle.
    dt : float
        Step (s).

    Returns
    -------
    (z, v, a)
        New height (m), climb rate (m/s) and the acceleration applied (m/s²).
    """
    return step_zv_raw(params.coefficients, z, v, thrust, floor_z, dt)


def accel_raw(coef: tuple[float, ...], v: Num, thrust: Num, z: Num) -> Num:
    """:func:`acceleration` with the parameters as :attr:`HeaveParams.coefficients` (pure).

    Parameters
    ----------
    coef : tuple
        ``(thrust_accel, buoyancy_accel, quadratic (1.0/0.0), linear_drag, quadratic_drag,
        height, gravity)`` (m/s², m/s², -, 1/s, 1/m, m, m/s²).
    v, thrust, z : float or ndarray (N,)
        Climb rate (m/s), thrust (−1…1), height (m, up).

    Returns
    -------
    float or ndarray (N,)
        Acceleration (m/s², up +).
    """
    thrust_accel, buoyancy_accel, quadratic, linear_drag, quadratic_drag, h, gravity = coef
    if quadratic == 0.0:
        drag = linear_drag * v
    else:
        drag = quadratic_drag * v * abs(v)
    sub = 0.5 - z / h
    sub = sub + (1.0 - sub) * (sub > 1.0)
    sub = sub - sub * (sub < 0.0)
    lift = sub * (gravity + buoyancy_accel) - gravity
    return thrust_accel * thrust + lift - drag


def step_zv_raw(
    coef: tuple[float, ...], z: Num, v: Num, thrust: Num, floor_z: Num, dt: float
) -> tuple[Num, Num, Num]:
    """:func:`step_zv` with the parameters as :attr:`HeaveParams.coefficients` (pure).

    Returns the new height (m), climb rate (m/s) and the acceleration applied (m/s²).
    """
    a = accel_raw(coef, v, thrust, z)
    v = v + a * dt
    z = z + v * dt
    below = z < floor_z
    z = z + (floor_z - z) * below
    v = v - v * (below & (v < 0))
    return z, v, a


def init(params: HeaveParams, n: int, z: float = 0.0) -> HeaveState:
    """State of ``n`` vehicles at rest at height ``z`` (m); arrays of shape (n,)."""
    import numpy as np

    zeros = np.zeros(n)
    return HeaveState(z=zeros + z, v=zeros.copy(), a=zeros.copy())


def step(params: HeaveParams, state: HeaveState, cmd: Num, env: Any, dt: float) -> HeaveState:
    """Model-contract step: ``cmd`` = thrust (N,), ``env`` = seafloor z (N,) or None."""
    floor = -1e9 if env is None else env
    z, v, a = step_zv(params, state.z, state.v, cmd, floor, dt)
    return HeaveState(z=z, v=v, a=a)


#: Model-contract alias (architecture spec §3).
Params = HeaveParams
