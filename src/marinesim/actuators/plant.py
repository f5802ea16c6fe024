"""The T200 thruster plant of a 6-DOF vehicle, batched over vehicles × thrusters.

One chain, used by the engine's ``fossen6dof`` motion plugin and the Gymnasium BlueROV2
environment alike::

    ESC command (PWM [µs] or force [N]) → ESC output u ∈ [−1, 1]
      → rotor dynamics (first-order lag of u, :mod:`marinesim.actuators.thruster_dynamics`)
      → T200 force and current at the supply voltage (:class:`marinesim.actuators.t200.T200Cubic`)
      → body wrench τ = B · (σ ∘ f)

The battery that supplies the voltage (and is discharged by the current returned here) is a
model of its own (:mod:`marinesim.models.battery`); the caller steps it.  Thruster geometry
enters as plain arrays (``sigma``, ``b``, ``signal_inverted``, as
:class:`marinesim.allocation.tam.Geometry` holds them), so this layer does not depend on the
allocation layer.

Shapes: N vehicles, k thrusters.  N = 1 is the same path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from marinesim.actuators import thruster_dynamics
from marinesim.actuators.t200 import V_MAX, V_MIN, T200Cubic, u_from_pwm

__all__ = ["PlantStep", "T200Plant", "chain", "esc_command", "step"]

F64 = NDArray[np.float64]


@dataclass(frozen=True)
class T200Plant:
    """Fixed description of a bank of k T200 thrusters.

    Attributes
    ----------
    sigma : ndarray, shape (k,)
        +1 where the thruster's positive force points along its axis, −1 where it points
        against (the side the layout uses).
    b : ndarray, shape (6, k)
        Thrust allocation matrix: body wrench [N, N·m] per unit force along each axis [N].
    signal_inverted : ndarray of bool, shape (k,)
        ESC signal inverted (a pulse above 1500 µs spins the propeller backwards).
    t200 : T200Cubic
        Force and current of the T200 at a voltage.
    input : {"pwm", "force"}
        Unit of the commands: ESC pulse width [µs] or force along the axis [N].
    rotor_time_constant : float
        First-order lag of the ESC output [s]; 0 = none.
    """

    sigma: F64
    b: F64
    signal_inverted: NDArray[np.bool_]
    t200: T200Cubic
    input: Literal["pwm", "force"] = "pwm"
    rotor_time_constant: float = 0.1

    @classmethod
    def from_geometry(
        cls,
        geometry: Any,
        *,
        t200: T200Cubic | None = None,
        input: Literal["pwm", "force"] = "pwm",
        rotor_time_constant: float = 0.1,
    ) -> T200Plant:
        """Plant of a thruster geometry (any object with ``sigma``, ``b``, ``signal_inverted``)."""
        return cls(
            sigma=np.asarray(geometry.sigma, dtype=float),
            b=np.asarray(geometry.b, dtype=float),
            signal_inverted=np.asarray(geometry.signal_inverted, dtype=bool),
            t200=t200 if t200 is not None else T200Cubic(),
            input=input,
            rotor_time_constant=float(rotor_time_constant),
        )

    @property
    def k(self) -> int:
        """Number of thrusters."""
        return int(self.sigma.shape[0])

    @property
    def neutral(self) -> float:
        """The command that stops a thruster (1500 µs or 0 N)."""
        return 1500.0 if self.input == "pwm" else 0.0


@dataclass(frozen=True)
class PlantStep:
    """Result of one plant step.

    Attributes
    ----------
    rotor : ndarray, shape (N, k)
        ESC output after the rotor lag [-].
    thrust : ndarray, shape (N, k)
        Force of each thruster, signed along its axis [N].
    current : ndarray, shape (N, k)
        Supply current of each motor [A].
    wrench : ndarray, shape (N, 6)
        Body wrench [X, Y, Z, K, M, N] [N, N·m].
    voltage_clamped : ndarray of bool, shape (N,)
        Vehicles whose supply voltage lay outside the T200 data (``V_MIN``–``V_MAX``) and was
        clamped to it.
    """

    rotor: F64
    thrust: F64
    current: F64
    wrench: F64
    voltage_clamped: NDArray[np.bool_]


def _col(voltage: ArrayLike) -> Any:
    """Voltage broadcastable against (N, k): (N,) → (N, 1); a scalar stays a scalar."""
    v = np.asarray(voltage, dtype=float)
    return v[:, None] if v.ndim == 1 else voltage


def esc_command(plant: T200Plant, cmd: F64, voltage: ArrayLike) -> F64:
    """ESC output u demanded by the commands (not clipped).

    Parameters
    ----------
    plant : T200Plant
    cmd : ndarray, shape (N, k)
        PWM [µs] or force along each axis [N] (``plant.input``).
    voltage : float or ndarray, shape (N,)
        Supply voltage [V] (used by the force input).

    Returns
    -------
    ndarray, shape (N, k)
    """
    if plant.input == "pwm":
        u_esc = u_from_pwm(cmd)
        return np.where(plant.signal_inverted[None, :], -u_esc, u_esc)
    return plant.t200.force_to_u(cmd * plant.sigma[None, :], _col(voltage))


def chain(
    plant: T200Plant, rotor: F64, u_cmd: F64, voltage: ArrayLike, h: float
) -> tuple[F64, F64, F64, F64]:
    """Rotor lag → T200 force and current at ``voltage`` → body wrench, over one step ``h``.

    Parameters
    ----------
    plant : T200Plant
    rotor : ndarray, shape (N, k)
        ESC output after the lag at the start of the step [-].
    u_cmd : ndarray, shape (N, k)
        Demanded ESC output in [−1, 1] (disabled thrusters: 0).
    voltage : float or ndarray, shape (N,)
        Supply voltage inside the T200 data range [V].
    h : float
        Step [s].

    Returns
    -------
    rotor : ndarray, shape (N, k)
    thrust : ndarray, shape (N, k)
        Signed force along each axis [N].
    current : ndarray, shape (N, k)
        Motor currents [A].
    wrench : ndarray, shape (N, 6)
        Body wrench [N, N·m].
    """
    if plant.rotor_time_constant > 0:
        rotor = thruster_dynamics.update(
            {"time_constant": plant.rotor_time_constant}, rotor, u_cmd, h, "first_order"
        )
    else:
        rotor = u_cmd
    v = _col(voltage)
    f = plant.t200.u_to_force(rotor, v)
    # the fit may cross zero near u = 0: the force never opposes the spin direction
    f = np.where(rotor > 0, np.maximum(f, 0.0), np.minimum(f, 0.0))
    current = plant.t200.u_to_current(rotor, v)
    thrust = f * plant.sigma[None, :]
    return rotor, thrust, current, thrust @ plant.b.T


def step(
    plant: T200Plant,
    rotor: F64,
    cmd: F64,
    voltage: F64,
    enabled: NDArray[np.bool_],
    h: float,
) -> PlantStep:
    """One plant step of N vehicles: commands at the battery voltage → thrust, current, wrench.

    Parameters
    ----------
    plant : T200Plant
    rotor : ndarray, shape (N, k)
        ESC outputs after the lag [-].
    cmd : ndarray, shape (N, k)
        Held commands (PWM [µs] or force [N]).
    voltage : ndarray, shape (N,)
        Battery terminal voltage [V] (clamped to the T200 data, ``voltage_clamped`` says where).
    enabled : ndarray of bool, shape (N, k)
        Thrusters that run (failed ones and those of an empty battery: False, neutral command).
    h : float
        Step [s].

    Returns
    -------
    PlantStep
    """
    v = np.clip(voltage, V_MIN, V_MAX)
    u_cmd = esc_command(plant, cmd, v)
    u_cmd = np.where(enabled, np.clip(u_cmd, -1.0, 1.0), 0.0)
    rotor1, thrust, current, wrench = chain(plant, rotor, u_cmd, v, h)
    return PlantStep(rotor1, thrust, current, wrench, v != voltage)
