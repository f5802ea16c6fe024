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

from marinesim.actuators.t200 import V_MAX, V_MIN, T200Cubic, check_voltage, u_from_pwm
from marinesim.actuators.t200_law import horner3
from marinesim.core.compile import lazy_kernels, walk_rows
from marinesim.core.jitable import register_jitable

__all__ = ["PlantStep", "T200Plant", "chain", "chain_row", "esc_command", "pwm_demand", "row_params", "step"]

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

    The law of each vehicle is :func:`chain_row` (the one copy; compiled over the vehicles
    when compiled laws are on, see :func:`marinesim.core.jitable.jit_enabled`).

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
    u = np.ascontiguousarray(u_cmd, dtype=float)
    n, k = u.shape
    v = np.ascontiguousarray(np.broadcast_to(np.asarray(voltage, dtype=float), (n,)))
    check_voltage(v)
    out = np.array(np.broadcast_to(np.asarray(rotor, dtype=float), (n, k)))
    thrust = np.empty((n, k))
    current = np.empty((n, k))
    wrench = np.empty((n, 6))
    args = (row_params(plant, h), u, v, out, thrust, current, wrench)
    walk_rows(_kernels, n, args)
    return out, thrust, current, wrench


def row_params(plant: T200Plant, h: float) -> F64:
    """The plant as the float row :func:`chain_row` reads (built per step size ``h``).

    [lag a = exp(−h/τ) (numpy's ``exp``, as the rotor dynamics), 1 if τ > 0, force unit,
    k, σ (k), B row-major (6·k), the u → force cubics' basis coefficients (forward, reverse;
    10 each), the u → current ones (10 each)].
    """
    cache = plant.__dict__.setdefault("_rows", {})
    row = cache.get(h)
    if row is None:
        tau = plant.rotor_time_constant
        a = float(np.exp(-h / tau)) if tau > 0 else 0.0
        m = plant.t200
        row = np.concatenate([
            [a, 1.0 if tau > 0 else 0.0, float(m._fscale), float(plant.k)],
            plant.sigma, plant.b.reshape(-1), m._u2f[0], m._u2f[1], m._u2i[0], m._u2i[1],
        ]).astype(float)  # fmt: skip
        cache[h] = row
    return row


@register_jitable
def pwm_demand(pwm: float, inverted: bool, enabled: bool) -> float:
    """Demanded ESC output of one thruster from its pulse [µs] (:func:`step`'s expressions for
    ``input: pwm``: (PWM − 1500)/400, negated for an inverted signal, clipped to [−1, 1];
    0 for a disabled thruster)."""
    if not enabled:
        return 0.0
    u = (pwm - 1500.0) / 400.0
    if inverted:
        u = -u
    return min(max(u, -1.0), 1.0)


@register_jitable
def _cubic_at(c: Any, o: int, v: float) -> tuple[float, float, float, float]:
    """(p0, p1, p2, p3) of the basis coefficients ``c[o:o+10]`` at V (``cubic_in_a``'s
    expressions, ``v**3`` included: ``pow`` on every path)."""
    return (
        c[o] + c[o + 2] * v + c[o + 5] * v * v + c[o + 9] * v**3.0,
        c[o + 1] + c[o + 4] * v + c[o + 8] * v * v,
        c[o + 3] + c[o + 7] * v,
        c[o + 6],
    )


@register_jitable
def chain_row(
    i: int, p: Any, u_cmd: Any, voltage: Any, rotor: Any, thrust: Any, current: Any, wrench: Any
) -> None:
    """Vehicle ``i``: rotor lag, T200 force and current at its voltage, body wrench.

    ``p`` from :func:`row_params`; ``rotor[i]`` is updated in place; ``thrust[i]``,
    ``current[i]`` and ``wrench[i]`` are written.  Element for element the expressions of
    :class:`~marinesim.actuators.t200.T200Cubic` (``u_to_force``, ``u_to_current``) and of
    the first-order rotor lag; the wrench B·f sums over the thrusters in index order.
    """
    a = p[0]
    lag = p[1] != 0.0
    fscale = p[2]
    k = int(p[3])
    o_b = 4 + k
    o_c = o_b + 6 * k
    v = voltage[i]
    fp0, fp1, fp2, fp3 = _cubic_at(p, o_c, v)
    fn0, fn1, fn2, fn3 = _cubic_at(p, o_c + 10, v)
    ip0, ip1, ip2, ip3 = _cubic_at(p, o_c + 20, v)
    in0, in1, in2, in3 = _cubic_at(p, o_c + 30, v)
    for j in range(k):
        u = rotor[i, j] * a + (1.0 - a) * u_cmd[i, j] if lag else u_cmd[i, j]
        rotor[i, j] = u
        if u > 0:
            f = horner3(fp0, fp1, fp2, fp3, u)
            c = horner3(ip0, ip1, ip2, ip3, u)
        else:
            f = horner3(fn0, fn1, fn2, fn3, u)
            c = horner3(in0, in1, in2, in3, u)
        f = (0.0 if u == 0 else f) * fscale
        # the fit may cross zero near u = 0: the force never opposes the spin direction
        f = max(f, 0.0) if u > 0 else min(f, 0.0)
        current[i, j] = 0.0 if u == 0 else max(c, 0.0)
        thrust[i, j] = f * p[4 + j]
    for c6 in range(6):
        acc = 0.0
        for j in range(k):
            acc += thrust[i, j] * p[o_b + c6 * k + j]
        wrench[i, c6] = acc


#: The compiled loop over vehicles (rows), cached on disk, built at the first call.
_kernels = lazy_kernels(chain_row, 1, error_model="numpy")


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
