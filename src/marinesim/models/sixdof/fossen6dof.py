"""Fossen 6-DOF rigid-body vehicle model, batched (``marinesim.models.sixdof.fossen6dof``).

Equations (T. I. Fossen, *Handbook of Marine Craft Hydrodynamics and Motion Control*, 2nd
ed., Wiley 2021; spec ``actuators_6dof.md`` §4)::

    M ν̇_r + C(ν_r) ν_r + D(ν_r) ν_r + g(η) = τ          ν_r = ν − ν_c
    ν̇ = ν̇_r + [−ω × ν_c,lin ; 0]                         η̇ = J(η) ν

M = M_RB + M_A (added mass in the mass matrix), C = C_RB (linear-velocity-independent
parametrisation, so the current enters exactly) + C_A (M_A as given), damping
D = s_D [(D_L + o_L I) + u_r (D_LF + o_LF I) + diag((D_Q + o_Q)|ν_r|)], restoring forces
from W, B, CG and CB with a continuous surface clip.  Attitude as a unit quaternion (default)
or zyx Euler angles.  Integrators: ``rk4`` (default) or ``semi_implicit_euler``
(PythonVehicleSimulator's scheme).

Contract (architecture §3): ``Params``; :func:`build` (validation, derived matrices);
:func:`init` ``(model, n) -> State``; :func:`step` ``(model, state, cmd, env, dt) -> State``.
Every array has a leading vehicle axis N; one vehicle is N = 1.  Matrices are (6, 6) when
every vehicle shares them, (N, 6, 6) when built with :func:`build_batch`.

Divergence: a vehicle whose state becomes non-finite or whose speed exceeds the physical
bound (``max_speed``, ``max_rate``) is stopped (``alive`` false, state frozen at its last
finite value) and reported in ``State.events`` with a :class:`NumericalError` text naming
its index and the time; the other vehicles go on.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from pydantic import field_validator, model_validator

from marinesim.core.errors import ConfigError, ConfigWarning
from marinesim.core.frames import euler_from_quat, quat_from_euler
from marinesim.core.params import ParamsBase
from marinesim.core.params import field as pfield
from marinesim.models.sixdof import generic, setup
from marinesim.models.sixdof.guard import events

__all__ = [
    "Env",
    "Fossen6Dof",
    "Params",
    "State",
    "build",
    "build_batch",
    "check_environment",
    "derivative",
    "euler_angles",
    "init",
    "kinetic_energy",
    "step",
]

F64 = NDArray[np.float64]


class Params(ParamsBase):
    """Parameters of one Fossen 6-DOF vehicle (SI units, body FRD about the CO).

    Damping is in the positive convention (force −D ν_r); UUV Simulator's SNAME-signed
    values must be negated.
    """

    mass: float = pfield(..., unit="kg", description="rigid-body mass m", gt=0)
    r_g: tuple[float, float, float] = pfield(
        (0.0, 0.0, 0.0), unit="m", description="CG from the CO (FRD)"
    )
    inertia: tuple[tuple[float, float, float], ...] = pfield(
        ..., unit="kg m^2", description="3x3 inertia tensor, body axes"
    )
    inertia_frame: Literal["cg", "co"] = pfield(
        "cg", description="inertia given about the CG or the CO"
    )
    added_mass: tuple[float, ...] = pfield(
        (0.0,) * 6, unit="SI", description="M_A: 6 (diagonal) or 36 (row-major) numbers, positive"
    )
    scaling_added_mass: float = pfield(1.0, description="s_A in M_A' = s_A (M_A + o_A I)")
    offset_added_mass: float = pfield(0.0, unit="SI", description="o_A")
    symmetrise_added_mass: bool = pfield(
        False, description="use (M_A + M_Aᵀ)/2 in C_A (PythonVehicleSimulator)"
    )
    zero_munk_terms: tuple[tuple[int, int], ...] = pfield(
        (), description="(row, col) of C_A set to 0"
    )
    linear_damping: tuple[float, ...] = pfield(
        (0.0,) * 6, unit="SI", description="D_L: 6 or 36 numbers"
    )
    linear_forward_speed_damping: tuple[float, ...] = pfield(
        (0.0,) * 6, unit="SI", description="D_LF (per unit surge speed): 6 or 36 numbers"
    )
    quadratic_damping: tuple[float, float, float, float, float, float] = pfield(
        (0.0,) * 6, unit="SI", description="D_Q diagonal"
    )
    scaling_damping: float = pfield(1.0, description="s_D")
    offset_linear_damping: float = pfield(0.0, unit="SI", description="o_L")
    offset_lin_forward_speed_damping: float = pfield(0.0, unit="SI", description="o_LF")
    offset_nonlin_damping: float = pfield(0.0, unit="SI", description="o_Q")
    volume: float | None = pfield(None, unit="m^3", description="displaced volume ∇", ge=0)
    scaling_volume: float = pfield(1.0, description="s_V")
    offset_volume: float = pfield(0.0, unit="m^3", description="o_V")
    neutrally_buoyant: bool = pfield(False, description="B = W when fully submerged")
    r_b: tuple[float, float, float] = pfield(
        (0.0, 0.0, 0.0), unit="m", description="CB from the CO (FRD)"
    )
    height: float | None = pfield(
        None, unit="m", description="bounding-box height for the continuous surface clip", gt=0
    )
    restoring_matrix: tuple[float, ...] | None = pfield(
        None,
        unit="SI",
        description="surface craft: G (36 numbers, about the CO), g(η) = G η + g₀ replaces W/B",
    )
    restoring_offset: tuple[float, float, float, float, float, float] = pfield(
        (0.0,) * 6, unit="SI", description="g₀ of the linear hydrostatics (trim, payload)"
    )
    attitude: Literal["quaternion", "euler"] = pfield(
        "quaternion", description="attitude representation"
    )
    integrator: Literal["rk4", "semi_implicit_euler"] = pfield(
        "rk4", description="integration scheme"
    )
    reference_density: float = pfield(
        1028.0, unit="kg/m^3", description="density the source assumed", gt=0
    )
    reference_gravity: float = pfield(
        9.81, unit="m/s^2", description="gravity the source assumed", gt=0
    )
    max_speed: float = pfield(50.0, unit="m/s", description="|ν_lin| beyond this = diverged", gt=0)
    max_rate: float = pfield(50.0, unit="rad/s", description="|ω| beyond this = diverged", gt=0)

    @field_validator("inertia")
    @classmethod
    def _inertia_3x3(cls, v: tuple) -> tuple:
        if len(v) != 3 or any(len(r) != 3 for r in v):
            raise ValueError("inertia must be 3 rows of 3 numbers")
        return v

    @field_validator("added_mass", "linear_damping", "linear_forward_speed_damping")
    @classmethod
    def _six_or_36(cls, v: tuple) -> tuple:
        if len(v) not in (6, 36):
            raise ValueError(f"give 6 (diagonal) or 36 (row-major) numbers, got {len(v)}")
        return v

    @field_validator("restoring_matrix")
    @classmethod
    def _g36(cls, v: tuple | None) -> tuple | None:
        if v is not None and len(v) != 36:
            raise ValueError(f"give 36 numbers (row-major 6x6), got {len(v)}")
        return v

    @field_validator("zero_munk_terms")
    @classmethod
    def _indices(cls, v: tuple) -> tuple:
        for i, j in v:
            if not (0 <= i < 6 and 0 <= j < 6):
                raise ValueError(f"index ({i}, {j}) outside 0..5")
        return v

    @model_validator(mode="after")
    def _physics(self) -> Params:
        dq = np.asarray(self.quadratic_damping)
        if np.any(dq < 0):
            raise ValueError(
                "quadratic_damping must be >= 0 element-wise; SNAME-signed (negative) damping? "
                "negate it, or import with `format: uuv`"
            )
        dl = _mat6(self.linear_damping)
        if np.min(np.linalg.eigvalsh(0.5 * (dl + dl.T))) < -1e-9 * max(
            1.0, float(np.max(np.abs(dl)))
        ):
            raise ValueError(
                "linear_damping: symmetric part must be positive semi-definite; SNAME-signed "
                "(negative) damping? negate it, or import with `format: uuv`"
            )
        return self


def _mat6(v: Sequence[float]) -> F64:
    a = np.asarray(v, dtype=float)
    return np.diag(a) if a.size == 6 else a.reshape(6, 6)


@dataclass(frozen=True)
class Env:
    """Environment sample the engine passes to :func:`step` (SI).

    Attributes
    ----------
    current : ndarray, shape (3,) or (N, 3)
        Water velocity in NED [m/s] (towards), constant over the step.
    density : float
        Water density [kg/m³].
    gravity : float
        [m/s²].
    """

    current: F64 = field(default_factory=lambda: np.zeros(3))
    density: float = 1028.0
    gravity: float = 9.81


@dataclass(frozen=True)
class Fossen6Dof:
    """A built model: derived matrices for N vehicles (shared (6, 6) or stacked (N, 6, 6))."""

    params: tuple[Params, ...]
    mass: F64  # (N,) or ()
    r_g: F64  # (3,) or (N, 3)
    r_b: F64
    i_g: F64  # (3, 3) or (N, 3, 3)
    m_a: F64  # M_A' (6, 6) or (N, 6, 6)
    m: F64
    m_inv: F64
    d_l: F64
    d_lf: F64
    d_q: F64  # (6,) or (N, 6)
    volume: F64  # ∇' [m³], NaN when neutrally buoyant
    neutral: F64  # bool
    height: F64  # NaN when no clip
    g_lin: F64  # G of the linear hydrostatics (6, 6) or (N, 6, 6)
    g_0: F64  # (6,) or (N, 6)
    linear_hydrostatics: bool
    zero_munk: tuple[tuple[int, int], ...]
    symmetrise_ma: bool
    attitude: str
    integrator: str
    max_speed: float
    max_rate: float

    @property
    def batched(self) -> bool:
        """True when matrices are stacked per vehicle."""
        return self.m.ndim == 3


@dataclass(frozen=True)
class State:
    """State of N vehicles.

    Attributes
    ----------
    pos : ndarray, shape (N, 3)
        NED position [m].
    att : ndarray, shape (N, 4) or (N, 3)
        Unit quaternion [q0, q1, q2, q3] (scalar first) or Euler angles [φ, θ, ψ] [rad].
    nu : ndarray, shape (N, 6)
        Body velocity [u, v, w, p, q, r] [m/s, rad/s].
    alive : ndarray of bool, shape (N,)
        False once a vehicle diverged (its state is frozen).
    t : float
        Time [s].
    events : tuple of str
        NumericalError texts of vehicles that diverged in the last step.
    """

    pos: F64
    att: F64
    nu: F64
    alive: NDArray[np.bool_]
    t: float = 0.0
    events: tuple[str, ...] = ()

    @property
    def n(self) -> int:
        """Number of vehicles N."""
        return self.pos.shape[0]


def _prepare(p: Params) -> dict[str, Any]:
    rg = np.asarray(p.r_g, dtype=float)
    i_in = np.asarray(p.inertia, dtype=float)
    s_rg = setup.smtrx(rg)
    i_g = i_in + p.mass * s_rg @ s_rg if p.inertia_frame == "co" else i_in
    if not np.allclose(i_g, i_g.T, rtol=1e-9, atol=1e-12):
        raise ConfigError("inertia must be symmetric", param="inertia")
    ev = np.linalg.eigvalsh(i_g)
    if ev[0] <= 0:
        raise ConfigError(
            f"inertia must be positive definite (smallest eigenvalue {ev[0]:.6g})", param="inertia"
        )
    ix, iy, iz = np.sort(ev)
    if ix + iy < iz * (1 - 1e-9):
        raise ConfigError("principal inertias violate the triangle inequality", param="inertia")
    m_a = p.scaling_added_mass * (_mat6(p.added_mass) + p.offset_added_mass * np.eye(6))
    sym = 0.5 * (m_a + m_a.T)
    if np.min(np.linalg.eigvalsh(sym)) < -1e-9 * max(1.0, float(np.max(np.abs(m_a)))):
        raise ConfigError("symmetric part must be positive semi-definite", param="added_mass")
    asym = float(np.max(np.abs(m_a - m_a.T)))
    if asym > 1e-3 * max(1e-12, float(np.max(np.abs(m_a)))):
        warnings.warn(
            ConfigWarning(
                f"added_mass is asymmetric by {asym:.3g} (used as given)", param="added_mass"
            ),
            stacklevel=3,
        )
    m_rb = setup.m_rb(p.mass, rg, i_g)
    m = m_rb + m_a
    try:
        np.linalg.cholesky(0.5 * (m + m.T))
    except np.linalg.LinAlgError:
        lam = float(np.min(np.linalg.eigvalsh(0.5 * (m + m.T))))
        raise ConfigError(
            f"M = M_RB + M_A is not positive definite (smallest eigenvalue {lam:.6g})",
            param="added_mass",
        ) from None
    s_d = p.scaling_damping
    vol = np.nan
    if p.volume is not None:
        vol = max(0.0, p.scaling_volume * (p.volume + p.offset_volume))
    elif not p.neutrally_buoyant and p.restoring_matrix is None:
        raise ConfigError(
            "give volume, neutrally_buoyant: true or restoring_matrix", param="volume"
        )
    if p.volume is not None and not p.neutrally_buoyant and p.restoring_matrix is None:
        w = p.mass * p.reference_gravity
        b = p.reference_density * p.reference_gravity * vol
        if abs(w - b) / w > 0.1:
            warnings.warn(
                ConfigWarning(
                    f"weight {w:.4g} N and buoyancy {b:.4g} N differ by more than 10 % "
                    "(dry mass where wet mass was meant?)",
                    param="volume",
                ),
                stacklevel=3,
            )
    return {
        "mass": float(p.mass),
        "r_g": rg,
        "r_b": np.asarray(p.r_b, dtype=float),
        "i_g": i_g,
        "m_a": m_a,
        "m": m,
        "m_inv": np.linalg.inv(m),
        "d_l": s_d * (_mat6(p.linear_damping) + p.offset_linear_damping * np.eye(6)),
        "d_lf": s_d
        * (_mat6(p.linear_forward_speed_damping) + p.offset_lin_forward_speed_damping * np.eye(6)),
        "d_q": s_d * (np.asarray(p.quadratic_damping, dtype=float) + p.offset_nonlin_damping),
        "volume": vol,
        "neutral": bool(p.neutrally_buoyant),
        "height": np.nan if p.height is None else float(p.height),
        "g_lin": np.zeros((6, 6)) if p.restoring_matrix is None else _mat6(p.restoring_matrix),
        "g_0": np.asarray(p.restoring_offset, dtype=float),
    }


_SHARED = (
    "zero_munk_terms",
    "symmetrise_added_mass",
    "attitude",
    "integrator",
    "linear_hydrostatics",
)


def build(params: Params | dict[str, Any]) -> Fossen6Dof:
    """Validate ``params`` and derive the model matrices (shared by every vehicle).

    Parameters
    ----------
    params : Params or dict
        A dict is validated into :class:`Params` (ConfigError on bad input).

    Returns
    -------
    Fossen6Dof

    Raises
    ------
    ConfigError
        Non-physical parameters (M not positive definite, negative damping, ...).
    """
    return build_batch([params], stacked=False)


def _shared_value(p: Params, name: str) -> Any:
    if name == "linear_hydrostatics":
        return p.restoring_matrix is not None
    return getattr(p, name)


def build_batch(params: Sequence[Params | dict[str, Any]], *, stacked: bool = True) -> Fossen6Dof:
    """Build N vehicles that differ in their parameters: matrices stacked (N, 6, 6).

    Parameters
    ----------
    params : sequence of Params or dict
        One per vehicle; ``attitude``, ``integrator``, ``zero_munk_terms`` and
        ``symmetrise_added_mass`` must agree.
    stacked : bool
        False only for a single shared parameter set (used by :func:`build`).

    Returns
    -------
    Fossen6Dof
    """
    from marinesim.core.params import validate

    ps = tuple(p if isinstance(p, Params) else validate(Params, p) for p in params)
    if not ps:
        raise ConfigError("no vehicle parameters given")
    for name in _SHARED:
        vals = {_shared_value(p, name) for p in ps}
        if len(vals) > 1:
            raise ConfigError(f"all vehicles of one batch must share {name}", param=name)
    parts = [_prepare(p) for p in ps]
    if stacked:
        arr = {k: np.stack([np.asarray(d[k], dtype=float) for d in parts]) for k in parts[0]}
    else:
        arr = {k: np.asarray(v, dtype=float) for k, v in parts[0].items()}
    p0 = ps[0]
    return Fossen6Dof(
        params=ps,
        mass=arr["mass"],
        r_g=arr["r_g"],
        r_b=arr["r_b"],
        i_g=arr["i_g"],
        m_a=arr["m_a"],
        m=arr["m"],
        m_inv=arr["m_inv"],
        d_l=arr["d_l"],
        d_lf=arr["d_lf"],
        d_q=arr["d_q"],
        volume=arr["volume"],
        neutral=arr["neutral"].astype(bool),
        height=arr["height"],
        g_lin=arr["g_lin"],
        g_0=arr["g_0"],
        linear_hydrostatics=p0.restoring_matrix is not None,
        zero_munk=tuple(p0.zero_munk_terms),
        symmetrise_ma=p0.symmetrise_added_mass,
        attitude=p0.attitude,
        integrator=p0.integrator,
        max_speed=min(p.max_speed for p in ps),
        max_rate=min(p.max_rate for p in ps),
    )


_BUILT: dict[Params, Fossen6Dof] = {}


def _as_model(model: Fossen6Dof | Params | dict[str, Any]) -> Fossen6Dof:
    """Accept a built model, or Params / a dict (built once and cached per Params)."""
    if isinstance(model, Fossen6Dof):
        return model
    from marinesim.core.params import validate

    p = model if isinstance(model, Params) else validate(Params, model)
    if p not in _BUILT:
        if len(_BUILT) > 64:
            _BUILT.clear()
        _BUILT[p] = build(p)
    return _BUILT[p]


def init(
    model: Fossen6Dof | Params | dict[str, Any],
    n: int,
    *,
    pos: ArrayLike | None = None,
    euler: ArrayLike | None = None,
    nu: ArrayLike | None = None,
) -> State:
    """Initial state of N vehicles (at rest at the origin unless given).

    Parameters
    ----------
    model : Fossen6Dof or Params or dict
        A built model (Params are built and cached, the architecture's ``init(params, n)``).
    n : int
        Number of vehicles (must equal the batch size of a stacked model).
    pos : array_like, shape (N, 3) or (3,), optional
        NED position [m].
    euler : array_like, shape (N, 3) or (3,), optional
        Roll, pitch, yaw [rad].
    nu : array_like, shape (N, 6) or (6,), optional
        Body velocity.

    Returns
    -------
    State
    """
    model = _as_model(model)
    if model.batched and model.m.shape[0] != n:
        raise ConfigError(f"model was built for {model.m.shape[0]} vehicles, not {n}")
    p = np.broadcast_to(np.zeros(3) if pos is None else np.asarray(pos, float), (n, 3)).copy()
    e = np.broadcast_to(np.zeros(3) if euler is None else np.asarray(euler, float), (n, 3)).copy()
    v = np.broadcast_to(np.zeros(6) if nu is None else np.asarray(nu, float), (n, 6)).copy()
    if model.attitude == "quaternion":
        att = np.asarray(quat_from_euler(e[:, 0], e[:, 1], e[:, 2]), dtype=float).reshape(n, 4)
    else:
        att = e
    return State(pos=p, att=att, nu=v, alive=np.ones(n, dtype=bool), t=0.0)


def _kernel_params(model: Fossen6Dof) -> tuple[F64, NDArray[np.int64]]:
    """Packed parameter rows and C_A zero entries of ``model`` (built once per model)."""
    k = model.__dict__.get("_kernel_params")
    if k is None:
        zero = np.array(model.zero_munk, dtype=np.int64).reshape(-1, 2)
        k = (generic.pack(model), zero)
        model.__dict__["_kernel_params"] = k
    return k


def _env_rows(env: Env, n: int) -> F64:
    cur = np.asarray(env.current, dtype=float)
    return np.ascontiguousarray(cur.reshape(-1, 3) if cur.ndim > 1 else cur.reshape(1, 3))


def derivative(
    model: Fossen6Dof, pos: F64, att: F64, nu: F64, tau: F64, env: Env
) -> tuple[F64, F64, F64]:
    """Time derivatives (ṗ, atṫ, ν̇) of N vehicles with the wrench and current held.

    The right-hand side :func:`marinesim.models.sixdof.generic.derivative` (the one copy of
    the equations) evaluated for every vehicle.

    Parameters
    ----------
    model : Fossen6Dof
    pos : ndarray, shape (N, 3)
    att : ndarray, shape (N, 4) or (N, 3)
    nu : ndarray, shape (N, 6)
    tau : ndarray, shape (N, 6)
        Body wrench about the CO [N, N·m] (thrusters, fins, external).
    env : Env

    Returns
    -------
    pos_dot : ndarray, shape (N, 3)
    att_dot : ndarray, shape (N, 4) or (N, 3)
    nu_dot : ndarray, shape (N, 6)
    """
    par, zero = _kernel_params(model)
    x = np.ascontiguousarray(np.concatenate((pos, att, nu), axis=1), dtype=float)
    n, ka = x.shape[0], att.shape[1]
    t = np.ascontiguousarray(np.broadcast_to(np.asarray(tau, dtype=float), (n, 6)))
    with np.errstate(all="ignore"):
        d = generic.derivatives(
            par, zero, x, t, _env_rows(env, n), env.density, env.gravity,
            quat=model.attitude == "quaternion",
        )  # fmt: skip
    return d[:, 0:3], d[:, 3 : 3 + ka], d[:, 3 + ka :]


def step(
    model: Fossen6Dof | Params,
    state: State,
    cmd: ArrayLike | None,
    env: Env | None,
    dt: float,
    *,
    backend: str | None = None,
) -> State:
    """Advance N vehicles by ``dt`` with the body wrench ``cmd`` held over the step.

    Every vehicle runs :func:`marinesim.models.sixdof.generic.step_one`; N = 1 is the batch
    path and gives the same bits as any N.

    Parameters
    ----------
    model : Fossen6Dof or Params
        Built model (Params are built once and cached).
    state : State
    cmd : array_like, shape (N, 6) or (6,), optional
        Body wrench τ about the CO [N, N·m]; None = zero.
    env : Env, optional
        Current, density and gravity (default: still water, 1028 kg/m³, 9.81 m/s²).
    dt : float
        Step [s].
    backend : str, optional
        ``cpu`` (default), ``python`` or ``cuda`` (:mod:`marinesim.models.sixdof.backends`).

    Returns
    -------
    State
        New state; vehicles that diverged in this step are frozen, ``alive`` false, and
        named in ``events``.
    """
    model = _as_model(model)
    env = env or Env()
    n = state.n
    if model.batched and model.m.shape[0] != n:
        raise ConfigError(f"model was built for {model.m.shape[0]} vehicles, not {n}")
    par, zero = _kernel_params(model)
    tau = np.zeros((1, 6)) if cmd is None else np.asarray(cmd, dtype=float).reshape(-1, 6)
    if tau.shape[0] not in (1, n):
        raise ConfigError(f"cmd has {tau.shape[0]} rows for {n} vehicles", param="cmd")
    x = np.ascontiguousarray(np.concatenate((state.pos, state.att, state.nu), axis=1), float)
    ka = state.att.shape[1]
    alive = np.array(state.alive, dtype=bool)
    with np.errstate(all="ignore"):
        y, status, size = generic.run(
            par, zero, x, np.ascontiguousarray(tau), _env_rows(env, n), env.density,
            env.gravity, dt, quat=model.attitude == "quaternion",
            use_rk4=model.integrator == "rk4", alive=alive, max_speed=model.max_speed,
            max_rate=model.max_rate, backend=backend,
        )  # fmt: skip
    t = state.t + dt
    ev = events(status, size, t, model.max_speed, model.max_rate) if status.any() else []
    return State(
        pos=y[:, 0:3], att=y[:, 3 : 3 + ka], nu=y[:, 3 + ka :], alive=alive, t=t, events=tuple(ev)
    )


def check_environment(model: Fossen6Dof, env: Env) -> list[str]:
    """Warn (ConfigWarning) where the environment differs from what the parameters assumed.

    The environment's density is what the model uses; a preset records the density its
    source assumed (``reference_density``).  A difference above 0.5 % is reported.

    Parameters
    ----------
    model : Fossen6Dof
    env : Env

    Returns
    -------
    list of str
        The warning texts (also issued as ConfigWarning).
    """
    out = []
    for i, p in enumerate(model.params):
        rel = abs(env.density - p.reference_density) / p.reference_density
        if rel > 0.005:
            out.append(
                f"vehicle {i}: water density {env.density:g} kg/m³ differs by {100 * rel:.2g} % "
                f"from the {p.reference_density:g} kg/m³ its parameters assume"
            )
    for text in out:
        warnings.warn(ConfigWarning(text, param="reference_density"), stacklevel=2)
    return out


def euler_angles(model: Fossen6Dof, state: State) -> F64:
    """Roll, pitch, yaw of N vehicles.

    Parameters
    ----------
    model : Fossen6Dof
    state : State

    Returns
    -------
    ndarray, shape (N, 3)
        [φ, θ, ψ] [rad].
    """
    if model.attitude == "euler":
        return state.att.copy()
    return euler_from_quat(state.att)


def kinetic_energy(model: Fossen6Dof, nu: F64) -> F64:
    """Kinetic energy ½ νᵀ M ν (rigid body + added mass) per vehicle.

    Parameters
    ----------
    model : Fossen6Dof
    nu : ndarray, shape (N, 6)

    Returns
    -------
    ndarray, shape (N,)
        [J].
    """
    if model.batched:
        mv = np.einsum("nij,nj->ni", 0.5 * (model.m + np.swapaxes(model.m, 1, 2)), nu)
    else:
        mv = nu @ (0.5 * (model.m + model.m.T)).T
    return 0.5 * np.sum(nu * mv, axis=1)


def with_state(state: State, **changes: Any) -> State:
    """Copy of ``state`` with fields replaced (convenience for callers and tests)."""
    return replace(state, **changes)
