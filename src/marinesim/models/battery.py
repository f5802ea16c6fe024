"""Internal-resistance battery, batched and pure (``marinesim.models.battery``).

Model (one equivalent cell string per vehicle)::

    V_oc(q) = V_empty + (V_full − V_empty) · q            open-circuit voltage, linear in charge
    V(q, I) = V_oc(q) − R · I                              terminal voltage under load I ≥ 0
    q̇       = −I / (3600 · C)                              state of charge, C in A·h

The state of charge q ∈ [0, 1] is clipped at 0.  An empty battery (q = 0) is cut off, as a
battery management system does: it delivers no current (:func:`cut_off` is the mask the
thruster plant uses to stop its motors and raise its ``battery`` event), so the load current,
the sag and the discharge all stop, and the terminal voltage rests at V_empty.
Every function takes a leading vehicle axis N (one vehicle is N = 1) and returns new arrays.

Contract (architecture §3): :class:`Params`; :func:`init` ``(params, n) -> State``;
:func:`step` ``(params, state, current, dt) -> State``; :func:`voltage`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from pydantic import model_validator

from marinesim.core.jitable import register_jitable
from marinesim.core.params import ParamsBase, field

__all__ = [
    "Params",
    "State",
    "battery_row",
    "cut_off",
    "discharged_c",
    "init",
    "open_circuit_c",
    "open_circuit_voltage",
    "row_params",
    "step",
    "voltage",
]

F64 = NDArray[np.float64]


class Params(ParamsBase):
    """Battery parameters (defaults: a BlueROV2 4S lithium-ion pack, 18 A·h [assumption])."""

    capacity_ah: float = field(18.0, unit="A h", description="capacity C", gt=0)
    v_full: float = field(16.8, unit="V", description="open-circuit voltage when full", gt=0)
    v_empty: float = field(12.8, unit="V", description="open-circuit voltage when empty", gt=0)
    internal_resistance: float = field(
        0.05, unit="ohm", description="internal resistance R (voltage sag R·I)", ge=0
    )
    initial_soc: float = field(1.0, unit="", description="state of charge at start", ge=0, le=1)

    @model_validator(mode="after")
    def _order(self) -> Params:
        if self.v_empty > self.v_full:
            raise ValueError(f"v_empty ({self.v_empty} V) must not exceed v_full ({self.v_full} V)")
        return self


@dataclass(frozen=True)
class State:
    """Battery state of N vehicles.

    Attributes
    ----------
    soc : ndarray, shape (N,)
        State of charge [-], 0 … 1.
    """

    soc: F64


def init(params: Params, n: int) -> State:
    """State of N batteries at ``initial_soc``.

    Parameters
    ----------
    params : Params
    n : int
        Number of vehicles N.

    Returns
    -------
    State
    """
    return State(np.full(n, float(params.initial_soc)))


def open_circuit_voltage(params: Params, soc: ArrayLike) -> F64:
    """Open-circuit voltage [V] of charge ``soc`` (N,) (linear between v_empty and v_full)."""
    q = np.clip(np.asarray(soc, dtype=float), 0.0, 1.0)
    return open_circuit_c(params.v_empty, params.v_full, q)


def voltage(params: Params, state: State, current: ArrayLike) -> F64:
    """Terminal voltage [V] under a load current.

    Parameters
    ----------
    params : Params
    state : State
    current : array_like, shape (N,)
        Current drawn [A] (≥ 0; a negative value would charge and raise the voltage).

    Returns
    -------
    ndarray, shape (N,)
        V_oc(q) − R·I [V]; an empty (cut-off) battery carries no load: V_empty.
    """
    i = np.broadcast_to(np.asarray(current, dtype=float), state.soc.shape)
    i = np.where(cut_off(params, state), np.minimum(i, 0.0), i)
    return open_circuit_voltage(params, state.soc) - params.internal_resistance * i


def cut_off(params: Params, state: State) -> NDArray[np.bool_]:
    """Which batteries are empty and cut off (deliver no current), shape (N,)."""
    return state.soc <= 0.0


def step(params: Params, state: State, current: ArrayLike, dt: float) -> State:
    """Discharge by ``current`` held over ``dt``.

    Parameters
    ----------
    params : Params
    state : State
    current : array_like, shape (N,)
        Current drawn [A].
    dt : float
        Step [s].

    Returns
    -------
    State
        q − I·dt / (3600 C), clipped to [0, 1]; an empty (cut-off) battery stays empty.
    """
    i = np.broadcast_to(np.asarray(current, dtype=float), state.soc.shape)
    i = np.where(cut_off(params, state), np.minimum(i, 0.0), i)  # no discharge once cut off
    soc = discharged_c(state.soc, i, dt, params.capacity_ah)
    return State(np.clip(soc, 0.0, 1.0))


# the laws on floats (and arrays), the same source for numpy, interpreted rows and compiled code
@register_jitable
def open_circuit_c(v_empty: Any, v_full: Any, q: Any) -> Any:
    """V_oc of a charge q already within [0, 1] [V]."""
    return v_empty + (v_full - v_empty) * q


@register_jitable
def discharged_c(soc: Any, current: Any, dt: Any, capacity_ah: Any) -> Any:
    """q − I·dt / (3600 C), before clipping."""
    return soc - current * dt / (3600.0 * capacity_ah)


def row_params(params: Params) -> F64:
    """[C, v_full, v_empty, R]: the float row :func:`battery_row` reads."""
    return np.array(
        [params.capacity_ah, params.v_full, params.v_empty, params.internal_resistance], float
    )


@register_jitable
def battery_row(i: int, bp: Any, soc: Any, total: Any, dt: float, volt: Any) -> None:
    """Battery ``i``: :func:`step` by ``total[i]`` over ``dt``, then :func:`voltage` under it.

    ``bp`` from :func:`row_params`; ``soc[i]`` is updated and ``volt[i]`` written.
    """
    cur = total[i]
    if soc[i] <= 0.0:  # no discharge once cut off
        cur = min(cur, 0.0)
    q = discharged_c(soc[i], cur, dt, bp[0])
    q = min(max(q, 0.0), 1.0)
    soc[i] = q
    cur = total[i]
    if q <= 0.0:
        cur = min(cur, 0.0)
    volt[i] = open_circuit_c(bp[2], bp[1], min(max(q, 0.0), 1.0)) - bp[3] * cur
