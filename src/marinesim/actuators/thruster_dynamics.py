"""Rotor (and fin joint) dynamics: ``zero_order``, ``first_order``, ``yoerger``, ``bessa``.

Spec ``actuators_6dof.md`` §2.3 (UUV Simulator ``Dynamics.cc``, per-step-dt form).  Every
model is a pure, batched update ``s_new = D(s, u, h)`` over arrays of any shape — in the
thruster chain ``(N, k)`` (vehicles × thrusters).  The step length h is always the engine's;
UUV Simulator's first-call latch and the never-advanced previous time of its Yoerger and
Bessa models are **not** reproduced (the reference replay in
:mod:`marinesim.reference.actuators` emulates the latch at k = 0 only).

Model-module contract: :data:`Params` (discriminated union on ``type``), :func:`init`,
:func:`step`; each variant is also registered under its name (registry kind
``thruster_dynamics``) as a :class:`DynamicsModel`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from pydantic import Field, model_validator

from marinesim.core.params import ParamsBase, field

__all__ = [
    "BESSA",
    "FIRST_ORDER",
    "YOERGER",
    "ZERO_ORDER",
    "Bessa",
    "DynamicsModel",
    "FirstOrder",
    "Params",
    "Yoerger",
    "ZeroOrder",
    "init",
    "stability_limit",
    "step",
    "update",
]


class ZeroOrder(ParamsBase):
    """``zero_order``: s_new = u."""

    type: Literal["zero_order"] = "zero_order"
    initial_state: float = field(0.0, unit="", description="s0, state before the first step")


class FirstOrder(ParamsBase):
    """``first_order``: exact discretisation of τ·ṡ = u − s with u held over the step."""

    type: Literal["first_order"] = "first_order"
    time_constant: float = field(..., unit="s", description="tau > 0")
    initial_state: float = field(0.0, unit="", description="s0, state before the first step")

    @model_validator(mode="after")
    def _check(self) -> FirstOrder:
        if not self.time_constant > 0:
            raise ValueError(f"time_constant must be > 0 s (got {self.time_constant})")
        return self


class Yoerger(ParamsBase):
    """``yoerger``: s_new = s + h·(β·u − α·s·|s|) (explicit Euler)."""

    type: Literal["yoerger"] = "yoerger"
    alpha: float = field(..., unit="", description="alpha (quadratic rotor damping)")
    beta: float = field(..., unit="", description="beta (input gain)")
    initial_state: float = field(0.0, unit="", description="s0, state before the first step")


class Bessa(ParamsBase):
    """``bessa``: s_new = s + h·(u·K_t/R_m − K_v1·s − K_v2·s·|s|)/J_msp (explicit Euler).

    The whole bracket is divided by J_msp, as UUV Simulator's code does (its documentation
    divides only the K_v2 term).
    """

    type: Literal["bessa"] = "bessa"
    jmsp: float = field(..., unit="kg m^2", description="J_msp, rotor inertia")
    kv1: float = field(..., unit="", description="K_v1, linear damping")
    kv2: float = field(..., unit="", description="K_v2, quadratic damping")
    kt: float = field(..., unit="", description="K_t, torque constant")
    rm: float = field(..., unit="ohm", description="R_m, motor resistance")
    initial_state: float = field(0.0, unit="", description="s0, state before the first step")

    @model_validator(mode="after")
    def _check(self) -> Bessa:
        if self.jmsp == 0:
            raise ValueError("jmsp must be non-zero (it divides the update)")
        if self.rm == 0:
            raise ValueError("rm must be non-zero (it divides the input term)")
        return self


#: Discriminated union of the dynamics parameter models (key ``type``).
Params = Annotated[ZeroOrder | FirstOrder | Yoerger | Bessa, Field(discriminator="type")]

AnyDynamics = ZeroOrder | FirstOrder | Yoerger | Bessa


def _arr(x: ArrayLike) -> NDArray[np.float64]:
    return np.asarray(x, dtype=float)


def update(
    params: AnyDynamics | dict[str, NDArray[np.float64]],
    s: ArrayLike,
    u: ArrayLike,
    h: ArrayLike,
    kind: str | None = None,
) -> NDArray[np.float64]:
    """One step of the dynamics, batched: ``s_new = D(s, u, h)``.

    Parameters
    ----------
    params : ZeroOrder, FirstOrder, Yoerger, Bessa or dict
        The model parameters, or a dict of coefficient arrays broadcastable to ``s``
        (``time_constant``; ``alpha``, ``beta``; ``jmsp``, ``kv1``, ``kv2``, ``kt``, ``rm``)
        together with ``kind`` — the form the thruster bank uses for per-thruster values.
    s : array_like, shape (...)
        State before the step (rotor speed in the conversion's input unit, or fin angle
        [rad]).
    u : array_like, shape (...)
        Input held over the step, same unit as ``s``.
    h : array_like
        Step length [s], broadcastable to ``s``.
    kind : str, optional
        Variant name when ``params`` is a dict.

    Returns
    -------
    ndarray, shape of ``s`` broadcast with ``u``
        The state after the step.
    """
    if not isinstance(params, dict):
        kind = params.type
        coef: dict[str, Any] = params.model_dump(exclude={"type", "initial_state"})
    else:
        coef = params
    s = _arr(s)
    u = _arr(u)
    h = _arr(h)
    if kind == "zero_order":
        return np.broadcast_to(u, np.broadcast_shapes(s.shape, u.shape)).astype(float)
    if kind == "first_order":
        a = np.exp(-h / coef["time_constant"])
        return s * a + (1.0 - a) * u
    if kind == "yoerger":
        return s + h * (coef["beta"] * u - coef["alpha"] * s * np.abs(s))
    if kind == "bessa":
        return (
            s
            + h
            * (u * coef["kt"] / coef["rm"] - coef["kv1"] * s - coef["kv2"] * s * np.abs(s))
            / coef["jmsp"]
        )
    raise ValueError(f"unknown dynamics kind {kind!r}")


def init(params: AnyDynamics, n: int, k: int = 1) -> NDArray[np.float64]:
    """Initial state of ``n`` vehicles × ``k`` units.

    Parameters
    ----------
    params : ZeroOrder, FirstOrder, Yoerger or Bessa
        Model parameters (``initial_state`` s0).
    n : int
        Number of vehicles N.
    k : int
        Number of thrusters (or fins) per vehicle.

    Returns
    -------
    ndarray, shape (n, k)
        Filled with s0.
    """
    return np.full((n, k), float(params.initial_state))


def step(
    params: AnyDynamics, state: ArrayLike, cmd: ArrayLike, env: object, dt: float
) -> NDArray[np.float64]:
    """Model-module step: advance the state by ``dt`` with ``cmd`` held.

    Parameters
    ----------
    params : ZeroOrder, FirstOrder, Yoerger or Bessa
        Model parameters.
    state : array_like, shape (N, k)
        State s.
    cmd : array_like, shape (N, k)
        Input u (after clamp and gain in a thruster).
    env : object
        Environment sample (unused by rotor dynamics; part of the common signature).
    dt : float
        Step length h [s].

    Returns
    -------
    ndarray, shape (N, k)
        New state.
    """
    del env
    return update(params, state, cmd, dt)


def stability_limit(params: AnyDynamics, s_abs: float) -> float:
    """Largest explicit-Euler step that is stable around the speed ``|s| = s_abs``.

    Parameters
    ----------
    params : ZeroOrder, FirstOrder, Yoerger or Bessa
        Model parameters.
    s_abs : float
        Rotor speed magnitude at which the local slope is evaluated.

    Returns
    -------
    float
        h_max [s] such that h·|∂f/∂s| < 2 (inf for the exact zero- and first-order models
        and where the slope is zero).
    """
    if isinstance(params, Yoerger):
        slope = 2.0 * abs(params.alpha) * s_abs
    elif isinstance(params, Bessa):
        slope = (params.kv1 + 2.0 * params.kv2 * s_abs) / abs(params.jmsp)
    else:
        return float("inf")
    return float("inf") if slope <= 0 else 2.0 / slope


def steady_state(params: AnyDynamics, u: float) -> float:
    """Steady state s* for a constant input u (|s*| used by the stability check).

    Parameters
    ----------
    params : ZeroOrder, FirstOrder, Yoerger or Bessa
        Model parameters.
    u : float
        Constant input.

    Returns
    -------
    float
        s* with f(s*, u) = 0 (u itself for zero/first order).
    """
    if isinstance(params, Yoerger):
        if params.alpha == 0:
            return float("inf")
        r = params.beta * u / params.alpha
        return float(np.sign(r) * np.sqrt(abs(r)))
    if isinstance(params, Bessa):
        b = u * params.kt / params.rm
        # kv2 s|s| + kv1 s - b = 0, solve for s with sign of b
        sg = 1.0 if b >= 0 else -1.0
        a2, a1, a0 = params.kv2, params.kv1, -abs(b)
        if a2 == 0:
            return sg * abs(b) / a1 if a1 != 0 else float("inf")
        disc = a1 * a1 - 4 * a2 * a0
        return sg * (-a1 + np.sqrt(max(disc, 0.0))) / (2 * a2)
    return float(u)


@dataclass(frozen=True)
class DynamicsModel:
    """A registered dynamics variant: its ``Params`` model and the shared ``init``/``step``."""

    name: str
    Params: type[ParamsBase]
    init: Callable[..., NDArray[np.float64]] = init
    step: Callable[..., NDArray[np.float64]] = step


ZERO_ORDER = DynamicsModel("zero_order", ZeroOrder)
FIRST_ORDER = DynamicsModel("first_order", FirstOrder)
YOERGER = DynamicsModel("yoerger", Yoerger)
BESSA = DynamicsModel("bessa", Bessa)
