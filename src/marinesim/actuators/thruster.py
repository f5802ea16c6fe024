"""The thruster chain (spec ``actuators_6dof.md`` §2.1–2.2, §2.5), batched over (N, k).

Per physics step of length h and per thruster, in this order [upstream, reproduced]:

1. input clamp ``c_cl = min(max(c, clamp_min), clamp_max)`` (thruster enabled);
2. gain ``u = gain·c_cl`` (2'. a disabled thruster gets u = 0, no clamp, no gain);
3. rotor dynamics ``s ← D(s, u, h)``;
4. propeller efficiency ``ω = η_prop·s`` (the stored state is never scaled);
5. thrust conversion ``F = F_conv(ω)``;
6. thrust efficiency ``T = η_thrust·F``;
7. thrust limits ``T = min(max(T, thrust_min), thrust_max)``;
8. wrench ``τ_j = [T·d_j ; p_j × T·d_j]`` about CO, body FRD.

Parameter rules (§2.2), applied by :func:`effective` and reported by :func:`warnings_for`
(never silently; see :func:`check`): ``clamp_min ≥ clamp_max`` → no input clamp,
``thrust_min ≥ thrust_max`` → no thrust limit, an efficiency outside [0, 1] → 1.0.  In
marinesim's own files "no limit" is written ``null``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike, NDArray
from pydantic import model_validator

from marinesim.actuators import thrust_conversion as tc
from marinesim.actuators import thruster_dynamics as td
from marinesim.actuators.bank import DynamicsGroups, advance, dynamics_groups, group_indices
from marinesim.core.errors import ConfigError, ConfigWarning, NumericalError
from marinesim.core.frames import rotation_from_euler
from marinesim.core.params import Marks, ParamsBase, field

__all__ = [
    "Params",
    "ThrusterBankParams",
    "ThrusterParams",
    "ThrusterState",
    "allocation_matrix",
    "check",
    "effective",
    "init",
    "step",
    "thrust_direction",
    "warnings_for",
    "wrench",
]

Vec3 = tuple[float, float, float]


class ThrusterParams(ParamsBase):
    """One thruster: chain knobs, rotor dynamics, conversion and mounting (FRD, about CO)."""

    name: str = field("", description="label used in logs and errors")
    dynamics: td.Params = field(..., description="rotor dynamics (type: zero_order, ...)")
    conversion: tc.Params = field(..., description="thrust conversion (type: basic, ...)")
    clamp_min: float | None = field(None, unit="", description="input clamp low (null: none)")
    clamp_max: float | None = field(None, unit="", description="input clamp high (null: none)")
    thrust_min: float | None = field(None, unit="N", description="thrust limit low (null: none)")
    thrust_max: float | None = field(None, unit="N", description="thrust limit high (null: none)")
    gain: float = field(1.0, unit="", description="command gain (negative allowed)")
    thrust_efficiency: float = field(1.0, unit="", description="in [0, 1]; else 1.0")
    propeller_efficiency: float = field(1.0, unit="", description="in [0, 1]; else 1.0")
    enabled: bool = field(True, description="false: u = 0, the rotor decays")
    position: Vec3 = field((0.0, 0.0, 0.0), unit="m", description="p_j, FRD from CO")
    axis: Vec3 | None = field(None, unit="", description="thrust direction d_j (FRD unit vector)")
    rpy: Vec3 | None = field(None, unit="rad", description="mount rotation; d_j = R(rpy) e_x")

    @model_validator(mode="after")
    def _check(self) -> ThrusterParams:
        if self.axis is not None and self.rpy is not None:
            raise ValueError("give either axis or rpy, not both")
        if self.axis is not None and np.linalg.norm(self.axis) == 0:
            raise ValueError("axis must be a non-zero vector")
        return self


def thrust_direction(params: ThrusterParams) -> NDArray[np.float64]:
    """Unit thrust axis d_j (FRD), shape (3,): ``axis`` normalised, or R(rpy)·e_x, or e_x."""
    if params.axis is not None:
        a = np.asarray(params.axis, dtype=float)
        return a / np.linalg.norm(a)
    if params.rpy is not None:
        r = rotation_from_euler(*params.rpy)
        return np.asarray(r[:, 0], dtype=float)
    return np.array([1.0, 0.0, 0.0])


@dataclass(frozen=True)
class Effective:
    """The knobs after UUV Simulator's replacement rules (±inf = no limit)."""

    clamp_min: float
    clamp_max: float
    thrust_min: float
    thrust_max: float
    thrust_efficiency: float
    propeller_efficiency: float


def _pair(lo: float | None, hi: float | None) -> tuple[float, float]:
    lo_v = -np.inf if lo is None else float(lo)
    hi_v = np.inf if hi is None else float(hi)
    if lo_v >= hi_v:
        return -np.inf, np.inf
    return lo_v, hi_v


def _eff(v: float) -> float:
    return float(v) if 0.0 <= v <= 1.0 else 1.0


def effective(params: ThrusterParams) -> Effective:
    """Apply the §2.2 rules: min ≥ max → unlimited; efficiency outside [0, 1] → 1.

    Parameters
    ----------
    params : ThrusterParams
        As written.

    Returns
    -------
    Effective
        Values the chain uses.
    """
    c0, c1 = _pair(params.clamp_min, params.clamp_max)
    t0, t1 = _pair(params.thrust_min, params.thrust_max)
    return Effective(
        c0, c1, t0, t1, _eff(params.thrust_efficiency), _eff(params.propeller_efficiency)
    )


def warnings_for(params: ThrusterParams, dt: float | None = None) -> list[tuple[str, str]]:
    """Every replacement :func:`effective` makes and other surprises, as (param, message).

    Parameters
    ----------
    params : ThrusterParams
        As written.
    dt : float, optional
        Physics step [s]; when given, the explicit-Euler stability bound of ``yoerger`` and
        ``bessa`` is checked at the steady state of the largest finite command.

    Returns
    -------
    list of (str, str)
        Relative parameter name and message.
    """
    out: list[tuple[str, str]] = []
    for lo, hi, what in (
        ("clamp_min", "clamp_max", "input clamp"),
        ("thrust_min", "thrust_max", "thrust limit"),
    ):
        a, b = getattr(params, lo), getattr(params, hi)
        if a is not None and b is not None and a >= b:
            out.append(
                (lo, f"{lo} ({a:g}) >= {hi} ({b:g}): {what} disabled (UUV Simulator semantics)")
            )
    for name in ("thrust_efficiency", "propeller_efficiency"):
        v = getattr(params, name)
        if not 0.0 <= v <= 1.0:
            out.append(
                (name, f"{name} ({v:g}) outside [0, 1]: 1.0 assumed (UUV Simulator semantics)")
            )
    out.extend((f"conversion.{p}", m) for p, m in tc.warnings_for(params.conversion))
    # explicit-Euler stability at the steady state of the largest finite command (§2.3)
    eff = effective(params)
    if (
        dt is not None
        and isinstance(params.dynamics, td.Yoerger | td.Bessa)
        and np.isfinite(eff.clamp_min)
        and np.isfinite(eff.clamp_max)
    ):
        u_big = max(abs(eff.clamp_min), abs(eff.clamp_max)) * abs(params.gain)
        s_star = abs(td.steady_state(params.dynamics, u_big))
        h_max = td.stability_limit(params.dynamics, s_star)
        if dt >= h_max:
            out.append(
                (
                    "dynamics",
                    f"explicit-Euler {params.dynamics.type} is unstable for h = {dt:g} s at the "
                    f"steady state |s| = {s_star:.6g} of the largest command (needs h < {h_max:.6g} s)",
                )
            )
    return out


def check(
    params: ThrusterParams,
    *,
    file: str | Path | None = None,
    marks: Marks | None = None,
    prefix: str = "",
    strict: bool = False,
    dt: float | None = None,
) -> ThrusterParams:
    """Emit each :func:`warnings_for` item as a located ConfigWarning (ConfigError if strict).

    Parameters
    ----------
    params : ThrusterParams
        Validated parameters.
    file : str or Path, optional
        Source file for the messages.
    marks : mapping, optional
        Dotted path → (line, column).
    prefix : str
        Dotted path of this thruster in the file, e.g. ``"thrusters.0"``.
    strict : bool
        Raise :class:`ConfigError` instead of warning.
    dt : float, optional
        Physics step [s] for the stability check.

    Returns
    -------
    ThrusterParams
        ``params`` unchanged.
    """
    for rel, msg in warnings_for(params, dt):
        path = f"{prefix}.{rel}" if prefix else rel
        line = col = None
        if marks:
            probe = path
            while probe and probe not in marks:
                probe = probe.rsplit(".", 1)[0] if "." in probe else ""
            if probe:
                line, col = marks[probe]
        if strict:
            raise ConfigError(msg + " (strict mode)", file=file, line=line, column=col, param=path)
        warnings.warn(
            ConfigWarning(msg, file=file, line=line, column=col, param=path), stacklevel=2
        )
    return params


class ThrusterBankParams(ParamsBase):
    """All thrusters of one vehicle type (k thrusters; the same for every vehicle of N)."""

    thrusters: tuple[ThrusterParams, ...] = field(..., description="the k thrusters")

    @cached_property
    def _packed(self) -> _Packed:
        return _pack(self.thrusters)


Params = ThrusterBankParams


@dataclass(frozen=True)
class _Packed:
    k: int
    clamp_lo: NDArray[np.float64]
    clamp_hi: NDArray[np.float64]
    gain: NDArray[np.float64]
    enabled: NDArray[np.bool_]
    eta_prop: NDArray[np.float64]
    eta_thrust: NDArray[np.float64]
    thrust_lo: NDArray[np.float64]
    thrust_hi: NDArray[np.float64]
    s0: NDArray[np.float64]
    dyn_groups: DynamicsGroups
    conv_groups: tuple[tuple[tc.AnyConversion, NDArray[np.intp]], ...]
    positions: NDArray[np.float64]
    directions: NDArray[np.float64]


def _pack(thrusters: Sequence[ThrusterParams]) -> _Packed:
    effs = [effective(t) for t in thrusters]
    k = len(thrusters)
    return _Packed(
        k=k,
        clamp_lo=np.array([e.clamp_min for e in effs], dtype=float),
        clamp_hi=np.array([e.clamp_max for e in effs], dtype=float),
        gain=np.array([t.gain for t in thrusters], dtype=float),
        enabled=np.array([t.enabled for t in thrusters], dtype=bool),
        eta_prop=np.array([e.propeller_efficiency for e in effs], dtype=float),
        eta_thrust=np.array([e.thrust_efficiency for e in effs], dtype=float),
        thrust_lo=np.array([e.thrust_min for e in effs], dtype=float),
        thrust_hi=np.array([e.thrust_max for e in effs], dtype=float),
        s0=np.array([t.dynamics.initial_state for t in thrusters], dtype=float),
        dyn_groups=dynamics_groups([t.dynamics for t in thrusters]),
        conv_groups=group_indices([t.conversion for t in thrusters]),
        positions=np.array([t.position for t in thrusters], dtype=float).reshape(k, 3),
        directions=np.array([thrust_direction(t) for t in thrusters], dtype=float).reshape(k, 3),
    )


@dataclass(frozen=True)
class ThrusterState:
    """State and published outputs of k thrusters on N vehicles (all arrays (N, k)).

    Attributes
    ----------
    rotor : ndarray
        Rotor state s (never scaled by the propeller efficiency).
    dynamics_input : ndarray
        u = gain·clamp(c) of the last step (0 for a disabled thruster).
    omega : ndarray
        ω = η_prop·s, the input of the conversion (also the joint velocity upstream).
    thrust : ndarray
        T [N] after efficiency and limits.
    clamp_saturated, thrust_saturated : ndarray of bool
        Whether step 1 / step 7 changed the value.
    """

    rotor: NDArray[np.float64]
    dynamics_input: NDArray[np.float64]
    omega: NDArray[np.float64]
    thrust: NDArray[np.float64]
    clamp_saturated: NDArray[np.bool_]
    thrust_saturated: NDArray[np.bool_]


def init(params: ThrusterBankParams, n: int) -> ThrusterState:
    """Initial state of ``n`` vehicles: rotors at s0, outputs from s0 (no step taken).

    Parameters
    ----------
    params : ThrusterBankParams
        The k thrusters.
    n : int
        Number of vehicles N.

    Returns
    -------
    ThrusterState
        Arrays of shape (n, k).
    """
    pk = params._packed
    rotor = np.broadcast_to(pk.s0, (n, pk.k)).copy()
    omega, thrust, tsat = _outputs(pk, rotor)
    zeros = np.zeros((n, pk.k))
    return ThrusterState(rotor, zeros, omega, thrust, np.zeros((n, pk.k), dtype=bool), tsat)


def _outputs(
    pk: _Packed, rotor: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
    omega = pk.eta_prop * rotor
    force = np.empty_like(omega)
    for conv, idx in pk.conv_groups:
        force[:, idx] = tc.convert(conv, omega[:, idx])
    raw = pk.eta_thrust * force
    thrust = np.minimum(np.maximum(raw, pk.thrust_lo), pk.thrust_hi)
    return omega, thrust, thrust != raw


def dynamics_input(
    params: ThrusterBankParams, cmd: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Steps 1–2 (and 2'): u = gain·clamp(c) for enabled thrusters, 0 for disabled ones.

    Parameters
    ----------
    params : ThrusterBankParams
        The k thrusters.
    cmd : array_like, shape (N, k)
        Commands c.

    Returns
    -------
    u : ndarray, shape (N, k)
        Input of the rotor dynamics.
    saturated : ndarray of bool, shape (N, k)
        Whether the input clamp changed the command.
    """
    pk = params._packed
    c = np.asarray(cmd, dtype=float)
    clamped = np.maximum(np.minimum(c, pk.clamp_hi), pk.clamp_lo)
    u = np.where(pk.enabled, pk.gain * clamped, 0.0)
    return u, np.where(pk.enabled, clamped != c, False)


def advance_rotor(
    params: ThrusterBankParams, rotor: ArrayLike, u: ArrayLike, dt: float
) -> NDArray[np.float64]:
    """Step 3: the rotor dynamics of every thruster (grouped by variant), shape (N, k)."""
    return advance(
        params._packed.dyn_groups, np.asarray(rotor, dtype=float), np.asarray(u, dtype=float), dt
    )


def step(
    params: ThrusterBankParams,
    state: ThrusterState,
    cmd: ArrayLike,
    env: object,
    dt: float,
) -> ThrusterState:
    """One physics step of the chain for N vehicles × k thrusters ("update, then apply").

    Parameters
    ----------
    params : ThrusterBankParams
        The k thrusters.
    state : ThrusterState
        State before the step, arrays (N, k).
    cmd : array_like, shape (N, k)
        Latest commands c (held; nothing resets them).
    env : object
        Environment sample; if it has a ``t`` attribute or key [s] it is used in error
        messages.  Otherwise unused.
    dt : float
        Step length h [s].

    Returns
    -------
    ThrusterState
        New rotor state and the thrust to apply over the whole step.

    Raises
    ------
    NumericalError
        If a rotor state became non-finite (names vehicle, thruster and time).
    """
    pk = params._packed
    u, csat = dynamics_input(params, cmd)
    with np.errstate(over="ignore", invalid="ignore"):
        rotor = advance_rotor(params, state.rotor, u, dt)
        omega, thrust, tsat = _outputs(pk, rotor)
    for what, arr in (("rotor state", rotor), ("thrust", thrust)):
        if not np.all(np.isfinite(arr)):
            i, j = (int(v[0]) for v in np.nonzero(~np.isfinite(arr)))
            t = env.get("t") if isinstance(env, Mapping) else getattr(env, "t", None)
            name = params.thrusters[j].name or f"thrusters[{j}]"
            raise NumericalError(
                f"{what} of {name} became {arr[i, j]} (explicit-Euler step h = {dt:g} s "
                "beyond the stability bound?)",
                entity=f"vehicle[{i}]",
                t=t,
            )
    return ThrusterState(rotor, u, omega, thrust, csat, tsat)


def allocation_matrix(positions: ArrayLike, directions: ArrayLike) -> NDArray[np.float64]:
    """Thruster allocation matrix B, column j = [d_j ; p_j × d_j].

    Parameters
    ----------
    positions : array_like, shape (k, 3)
        Thruster positions p_j [m] (body frame, about CO).
    directions : array_like, shape (k, 3)
        Unit thrust axes d_j.

    Returns
    -------
    ndarray, shape (6, k)
        τ = B·T for thrusts T (k,) [N] gives the wrench [N, N·m].
    """
    p = np.asarray(positions, dtype=float).reshape(-1, 3)
    d = np.asarray(directions, dtype=float).reshape(-1, 3)
    return np.concatenate([d, np.cross(p, d)], axis=1).T


def wrench(params: ThrusterBankParams, thrust: ArrayLike) -> NDArray[np.float64]:
    """Step 8: summed wrench of k thrusters on N vehicles.

    Parameters
    ----------
    params : ThrusterBankParams
        The k thrusters (positions and axes, FRD).
    thrust : array_like, shape (N, k)
        Thrusts T [N].

    Returns
    -------
    ndarray, shape (N, 6)
        τ = Σ_j [T_j d_j ; p_j × T_j d_j] [N, N·m] about CO, body FRD.
    """
    pk = params._packed
    b = allocation_matrix(pk.positions, pk.directions)
    return np.asarray(thrust, dtype=float) @ b.T
