"""One face for every 6-DOF motion model, chosen by registry name: init, step, pose.

The engine's motion adapter (``fossen6dof`` plugin) drives any model through this face and
never asks which model it is.  A model is picked by a vehicle preset's kind (``model:`` in
the preset file, :mod:`marinesim.models.presets`) from :data:`KINDS`:

``fossen6dof``
    The generic Fossen 6-DOF model (:mod:`marinesim.models.sixdof.fossen6dof`); input ``wrench/cmd``
    (N, 6) body wrench [N, N·m]; the water current enters every step (ν_r = ν − ν_c).
``pvs``
    PythonVehicleSimulator's REMUS 100 and Otter, exact (:mod:`marinesim.models.sixdof.pvs`); inputs
    ``fins/cmd`` (N, 2) [rad] + ``propeller/cmd`` (N,) [rpm] (REMUS 100) or
    ``actuators/cmd`` (N, 2) propeller speeds [rad/s] (Otter); a uniform current only, given
    to the constructor (``V_current``, ``beta_current``).
``pvs_fleet``
    The rest of PythonVehicleSimulator's fleet (:mod:`marinesim.models.sixdof.fleet`); input
    ``actuators/cmd`` (N, m) in the vehicle's units; its own control system (the constructor's
    ``controlSystem``) lives in :mod:`marinesim.control.pvs_fleet`.

Shapes: N vehicles; ``cmd`` is (N, m) with the inputs' columns side by side in the order of
:attr:`MotionModel.inputs`.  States are immutable; ``step`` returns a new one and the texts of
vehicles it stopped (non-finite or beyond the divergence bounds).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from marinesim.core.compile import SERIAL, lazy_kernels, walk_rows
from marinesim.core.errors import ConfigError
from marinesim.core.frames import (
    euler_from_quat,
    quat_from_euler,
    rotation_from_quat,
    rotation_quat_c,
)
from marinesim.core.jitable import register_jitable
from marinesim.models.sixdof.terms import cross3

__all__ = [
    "KINDS",
    "FleetMotion",
    "FossenMotion",
    "MotionModel",
    "PvsMotion",
    "RowsState",
    "Water",
    "motion_model",
    "specific_force_c",
]

F64 = NDArray[np.float64]


@dataclass(frozen=True)
class Water:
    """The water a step sees.

    Attributes
    ----------
    current : ndarray, shape (N, 3)
        Water velocity NED (towards) at each vehicle [m/s].
    density : float
        [kg/m³].
    gravity : float
        [m/s²].
    """

    current: F64
    density: float = 1026.0
    gravity: float = 9.81


@dataclass(frozen=True)
class RowsState:
    """State of N PythonVehicleSimulator vehicles as packed rows.

    Attributes
    ----------
    x : ndarray, shape (N, 12 + m)
        [η (6) [m, rad], ν (6) [m/s, rad/s], actuators (m)].
    alive : ndarray of bool, shape (N,)
    t : float
        [s].
    """

    x: F64
    alive: NDArray[np.bool_]
    t: float = 0.0


@dataclass(frozen=True)
class MotionModel:
    """Face of a motion model (see the module text).

    Attributes
    ----------
    name : str
        Registry name (preset name, or ``fossen6dof`` for inline parameters).
    built : object
        The model as its module builds it.
    inputs : tuple of (topic, type, width)
        Command topics and their columns in ``cmd``.
    input_is_wrench : bool
        True when ``cmd`` is a body wrench (N, 6) [N, N·m] (an actuator model may then feed it).
    current_in_constructor : bool
        True when the model takes a uniform current when built (:meth:`in_current`), not per
        step.
    """

    kind: ClassVar[str] = ""
    name: str
    built: Any = field(repr=False)
    inputs: tuple[tuple[str, str, int], ...] = ()
    current_in_constructor: ClassVar[bool] = False
    input_is_wrench: ClassVar[bool] = False

    @property
    def m(self) -> int:
        """Columns of ``cmd``."""
        return sum(w for _t, _k, w in self.inputs)

    def in_current(self, north: float, east: float) -> MotionModel:
        """The model in a uniform current [m/s] (itself for models taking it per step)."""
        return self

    def environment_warnings(self, density: float, gravity: float) -> list[str]:
        """Texts on a water the model's parameters were not identified for."""
        return []

    def init(self, pos: F64, quat: F64, nu: F64, t: float = 0.0) -> Any:
        """State of N vehicles at a pose.

        Parameters
        ----------
        pos : ndarray, shape (N, 3)
            Position NED [m].
        quat : ndarray, shape (N, 4)
            Attitude body (FRD) → NED, scalar first.
        nu : ndarray, shape (N, 6)
            Body velocity [u, v, w, p, q, r] [m/s, rad/s].
        t : float
            [s].
        """
        raise NotImplementedError

    def step(self, state: Any, cmd: F64, h: float, water: Water) -> tuple[Any, list[str]]:
        """Advance N vehicles by ``h`` [s] with ``cmd`` (N, m) held; (new state, event texts)."""
        raise NotImplementedError

    def pose(self, state: Any) -> tuple[F64, F64, F64, F64]:
        """Position (N, 3) [m], attitude quaternion (N, 4), ν linear (N, 3), angular (N, 3)."""
        raise NotImplementedError

    def alive(self, state: Any) -> NDArray[np.bool_]:
        """Vehicles still running (N,)."""
        return np.asarray(state.alive, dtype=bool)

    def nu(self, state: Any) -> F64:
        """ν = [u, v, w, p, q, r] (N, 6) [m/s, rad/s] (the pose's velocities, side by side)."""
        return np.concatenate(self.pose(state)[2:], axis=1)

    def down_body(self, state: Any, quat: F64 | None = None) -> F64:
        """(N, 3) the NED down axis in body axes, Rᵀ [0, 0, 1]: the last row of :meth:`rotation`.

        ``quat`` : the state's attitude quaternion (N, 4) when the caller has it (``pose``).
        """
        return self.rotation(state)[:, 2, :]

    def eta_nu(self, state: Any) -> tuple[F64, F64]:
        """η = [x, y, z, φ, θ, ψ] (N, 6) [m, rad] and ν (N, 6)."""
        pos, quat, vel, ang = self.pose(state)
        return np.concatenate([pos, euler_from_quat(quat)], axis=1), np.concatenate(
            [vel, ang], axis=1
        )

    def rotation(self, state: Any) -> F64:
        """Body → NED rotation matrices (N, 3, 3)."""
        return rotation_from_quat(self.pose(state)[1])

    def gravity(self, water_gravity: float) -> float:
        """Gravity the model integrates with [m/s²]."""
        return water_gravity

    def specific_force(
        self, nu0: F64, state1: Any, h: float, gravity: float, quat1: F64 | None = None
    ) -> F64:
        """Body specific force [m/s²]: v̇ + ω × v − Rᵀ g, finite difference over the step.

        Parameters
        ----------
        nu0 : ndarray, shape (N, 6)
            ν at the start of the step.
        state1 : state at the end of the step.
        h : float
            [s].
        gravity : float
            The water's gravity [m/s²] (a model with its own constant uses that).
        quat1 : ndarray, shape (N, 4), optional
            Attitude quaternion of ``state1`` (``pose(state1)[1]``) when the caller has it.
        """
        nu1 = np.ascontiguousarray(self.nu(state1), dtype=float)
        down = np.ascontiguousarray(self.down_body(state1, quat1), dtype=float)  # Rᵀ [0, 0, 1]
        nu0 = np.ascontiguousarray(nu0, dtype=float)
        out = np.empty((nu1.shape[0], 3))
        args = (nu1, nu0, down, float(h), float(self.gravity(gravity)), out)
        walk_rows(_sf_kernels, out.shape[0], args)
        return out

    def actuator_log(self, state: Any) -> tuple[F64, str, tuple[str, ...]] | None:
        """Actual actuator values to log: (values (N, m), unit text, labels), or None."""
        return None


def _euler_rotation(e: F64) -> F64:
    return rotation_from_quat(quat_from_euler(e[:, 0], e[:, 1], e[:, 2]))


# One vehicle: the same law functions on Python floats.  They use only +, − and ×, which round
# the same on floats as on arrays (no fused operations), so the bits are the batch path's.


@register_jitable
def specific_force_c(
    u: float, v: float, w: float, p: float, q: float, r: float, u0: float, v0: float,
    w0: float, h: float, g: float, d0: float, d1: float, d2: float,
) -> tuple[float, float, float]:  # fmt: skip
    """Body specific force of one vehicle [m/s²] over a step of ``h`` [s]: v̇ + ω × v − g d,
    with ν₁ = (u, v, w, p, q, r) at the step's end, (u0, v0, w0) at its start, and
    d = Rᵀ e_z the NED down axis in body axes (the last row of the rotation).  The one copy:
    :meth:`MotionModel.specific_force` walks it, the SITL reply's compiled builder calls it."""
    c0, c1, c2 = cross3(p, q, r, u, v, w)
    return (
        (u - u0) / h + c0 - g * d0,
        (v - v0) / h + c1 - g * d1,
        (w - w0) / h + c2 - g * d2,
    )


@register_jitable
def specific_force_rows(
    i: int, nu1: Any, nu0: Any, down: Any, h: float, g: float, out: Any
) -> int:  # fmt: skip
    """:func:`specific_force_c` of row ``i`` into ``out[i]``."""
    a, b, c = specific_force_c(
        nu1[i, 0], nu1[i, 1], nu1[i, 2], nu1[i, 3], nu1[i, 4], nu1[i, 5], nu0[i, 0], nu0[i, 1],
        nu0[i, 2], h, g, down[i, 0], down[i, 1], down[i, 2],
    )  # fmt: skip
    out[i, 0], out[i, 1], out[i, 2] = a, b, c
    return 0


#: The compiled loop of :func:`specific_force_rows` (built at the first call).
_sf_kernels = lazy_kernels(specific_force_rows, 0, error_model="numpy", parallel_min=SERIAL)


def _last_row(q: F64) -> F64:
    """``rotation_from_quat(q)[:, 2, :]`` (the same entries) without building the matrices."""
    if q.shape[0] == 1:
        return np.array([rotation_quat_c(*q[0].tolist())[6:9]])
    r = rotation_quat_c(q[:, 0], q[:, 1], q[:, 2], q[:, 3])
    out = np.empty((q.shape[0], 3))
    out[:, 0] = r[6]
    out[:, 1] = r[7]
    out[:, 2] = r[8]
    return out


@dataclass(frozen=True)
class FossenMotion(MotionModel):
    """The generic Fossen 6-DOF model; ``cmd`` = body wrench (N, 6) [N, N·m]."""

    kind: ClassVar[str] = "fossen6dof"
    input_is_wrench: ClassVar[bool] = True
    inputs: tuple[tuple[str, str, int], ...] = (("wrench/cmd", "array", 6),)

    def environment_warnings(self, density: float, gravity: float) -> list[str]:
        """Warnings of :func:`marinesim.models.sixdof.fossen6dof.check_environment`."""
        import warnings

        from marinesim.core.errors import ConfigWarning
        from marinesim.models.sixdof import fossen6dof

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConfigWarning)
            fossen6dof.check_environment(
                self.built, fossen6dof.Env(density=density, gravity=gravity)
            )
        return [str(w.message) for w in caught]

    def init(self, pos: F64, quat: F64, nu: F64, t: float = 0.0) -> Any:
        """:class:`marinesim.models.sixdof.fossen6dof.State` at the pose."""
        from marinesim.models.sixdof import fossen6dof

        att = quat.copy() if self.built.attitude == "quaternion" else euler_from_quat(quat)
        n = pos.shape[0]
        return fossen6dof.State(pos=pos.copy(), att=att, nu=nu, alive=np.ones(n, dtype=bool), t=t)

    def step(self, state: Any, cmd: F64, h: float, water: Water) -> tuple[Any, list[str]]:
        """One :func:`marinesim.models.sixdof.fossen6dof.step` in the water's current."""
        from marinesim.models.sixdof import fossen6dof

        env = fossen6dof.Env(current=water.current, density=water.density, gravity=water.gravity)
        x1 = fossen6dof.step(self.built, state, cmd, env, h)
        clean = fossen6dof.State(
            pos=x1.pos, att=x1.att, nu=x1.nu, alive=x1.alive, t=x1.t, events=()
        )
        return clean, list(x1.events)

    def nu(self, state: Any) -> F64:
        """ν (a copy of the state's)."""
        return state.nu.copy()

    def pose(self, state: Any) -> tuple[F64, F64, F64, F64]:
        """Pose of a fossen6dof State."""
        att = state.att
        quat = att if att.shape[1] == 4 else quat_from_euler(att[:, 0], att[:, 1], att[:, 2])
        return state.pos, quat, state.nu[:, :3], state.nu[:, 3:]

    def down_body(self, state: Any, quat: F64 | None = None) -> F64:
        """Last row of :meth:`rotation` (the same entries, through the attitude quaternion)."""
        att = state.att
        if self.built.attitude == "quaternion":
            return _last_row(att)
        if att.shape[1] != 3:
            return super().down_body(state)
        if quat is None:
            quat = quat_from_euler(att[:, 0], att[:, 1], att[:, 2])
        return _last_row(quat)

    def rotation(self, state: Any) -> F64:
        """Body → NED (N, 3, 3) from the model's own attitude."""
        if self.built.attitude == "quaternion":
            return rotation_from_quat(state.att)
        att = state.att
        return _euler_rotation(att if att.shape[1] == 3 else euler_from_quat(att))


@dataclass(frozen=True)
class _RowsMotion(MotionModel):
    """PythonVehicleSimulator models: packed rows, guarded step, g = 9.81 m/s² inside."""

    current_in_constructor: ClassVar[bool] = True
    args: dict[str, Any] = field(default_factory=dict)

    def _step_guarded(self, x: F64, cmd: F64, h: float, alive: Any, t: float) -> Any:
        raise NotImplementedError

    def _nu0(self) -> F64:
        return np.zeros(6)

    def init(self, pos: F64, quat: F64, nu: F64, t: float = 0.0) -> RowsState:
        """Rows [η, ν, actuators at rest]."""
        n = pos.shape[0]
        x = np.concatenate([pos, euler_from_quat(quat), nu, np.zeros((n, self.m))], axis=1)
        return RowsState(x=x, alive=np.ones(n, dtype=bool), t=t)

    def step(self, state: Any, cmd: F64, h: float, water: Water) -> tuple[Any, list[str]]:
        """One guarded PythonVehicleSimulator loop step (its forward/semi-implicit Euler)."""
        t1 = state.t + h
        x1, alive, events = self._step_guarded(state.x, cmd, h, state.alive, t1)
        return RowsState(x=x1, alive=alive, t=t1), list(events)

    def pose(self, state: Any) -> tuple[F64, F64, F64, F64]:
        """Pose from the rows (Euler angles → quaternion)."""
        x = state.x
        quat = quat_from_euler(x[:, 3], x[:, 4], x[:, 5])
        return x[:, 0:3], quat, x[:, 6:9], x[:, 9:12]

    def eta_nu(self, state: Any) -> tuple[F64, F64]:
        """η and ν straight from the rows."""
        return state.x[:, 0:6], state.x[:, 6:12]

    def nu(self, state: Any) -> F64:
        """ν (a copy of the rows' columns)."""
        return state.x[:, 6:12].copy()

    def down_body(self, state: Any, quat: F64 | None = None) -> F64:
        """Last row of the rotation of the rows' Euler angles (through their quaternion)."""
        if quat is None:
            e = state.x
            quat = quat_from_euler(e[:, 3], e[:, 4], e[:, 5])
        return _last_row(quat)

    def rotation(self, state: Any) -> F64:
        """Body → NED from the rows' Euler angles."""
        return _euler_rotation(state.x[:, 3:6])

    def gravity(self, water_gravity: float) -> float:
        """PythonVehicleSimulator's g = 9.81 m/s²."""
        return 9.81

    def _with(self, **args: Any) -> Any:
        raise NotImplementedError

    def in_current(self, north: float, east: float) -> MotionModel:
        """Rebuilt with ``V_current`` [m/s] and ``beta_current`` [deg] (towards, from north)."""
        speed = math.hypot(north, east)
        beta = math.degrees(math.atan2(east, north)) if speed > 0 else 0.0
        return self._with(V_current=speed, beta_current=beta)


@dataclass(frozen=True)
class PvsMotion(_RowsMotion):
    """PythonVehicleSimulator REMUS 100 / Otter (:mod:`marinesim.models.sixdof.pvs`)."""

    kind: ClassVar[str] = "pvs"

    def _with(self, **args: Any) -> PvsMotion:
        return _pvs(self.name, {**self.args, **args})

    def _step_guarded(self, x: F64, cmd: F64, h: float, alive: Any, t: float) -> Any:
        from marinesim.models.sixdof import pvs

        return pvs.step_guarded(self.built, x, cmd, h, alive, t)

    def actuator_log(self, state: Any) -> tuple[F64, str, tuple[str, ...]] | None:
        """REMUS 100: rudder, stern plane [deg] and propeller [rpm]; Otter: propellers [rad/s]."""
        act = state.x[:, 12:]
        if self.name == "remus100":
            vals = np.empty((act.shape[0], 3))
            vals[:, :2] = np.degrees(act[:, :2])
            vals[:, 2] = act[:, 2]
            return vals, "deg, deg, rpm", ("rudder_deg", "stern_deg", "propeller_rpm")
        return act, "rad/s", tuple(self.built.controls)


def _check_args(name: str, fn: Any, args: dict[str, Any]) -> None:
    """ConfigError naming an argument the constructor does not have, with the allowed ones."""
    import inspect

    allowed = [
        p.name
        for p in inspect.signature(fn).parameters.values()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]
    for key in args:
        if key not in allowed:
            raise ConfigError(
                f"{name} has no constructor argument {key!r}; allowed: {', '.join(allowed)}",
                param=key,
            )


def _pvs(name: str, args: dict[str, Any]) -> PvsMotion:
    from marinesim.models.sixdof import pvs

    fn = {"remus100": pvs.remus100, "otter": pvs.otter}[name]
    _check_args(name, fn, args)
    built = fn(**args)
    if name == "remus100":
        inputs = (("fins/cmd", "array", 2), ("propeller/cmd", "double", 1))
    else:
        inputs = (("actuators/cmd", "array", len(built.controls)),)
    return PvsMotion(name, built, inputs, dict(args))


@dataclass(frozen=True)
class FleetMotion(_RowsMotion):
    """A PythonVehicleSimulator fleet vehicle (:mod:`marinesim.models.sixdof.fleet`)."""

    kind: ClassVar[str] = "pvs_fleet"

    @property
    def takes_current(self) -> bool:
        """Whether the constructor has ``V_current`` / ``beta_current``."""
        from marinesim.models.sixdof.fleet import args as fa

        return "V_current" in fa.ARGS[self.built.vehicle].model_fields

    def in_current(self, north: float, east: float) -> MotionModel:
        """Rebuilt in the current where the vehicle takes one (else itself)."""
        if not self.takes_current or "V_current" in self.args:
            return self
        return super().in_current(north, east)

    def _with(self, **args: Any) -> FleetMotion:
        return _fleet(self.name, {**self.args, **args})

    def _step_guarded(self, x: F64, cmd: F64, h: float, alive: Any, t: float) -> Any:
        from marinesim.models.sixdof.fleet import kernel

        return kernel.step_guarded(self.built, x, cmd, h, alive, t)

    def init(self, pos: F64, quat: F64, nu: F64, t: float = 0.0) -> RowsState:
        """Rows at the pose; ν the given one (the constructor's ``nu0`` where ν is all zero)."""
        nu = np.where(np.all(nu == 0.0, axis=1, keepdims=True), self.built.nu0[None, :], nu)
        return super().init(pos, quat, nu, t)

    def actuator_log(self, state: Any) -> tuple[F64, str, tuple[str, ...]] | None:
        """Actual actuators, angles in degrees."""
        v = self.built
        act = state.x[:, 12:].copy()
        units = []
        labels = []
        for i, (c, u) in enumerate(zip(v.controls, v.units, strict=True)):
            if u == "rad":
                act[:, i] = np.degrees(act[:, i])
                units.append("deg")
                labels.append(f"{c}_deg")
            else:
                units.append(u)
                labels.append(c)
        return act, ", ".join(units), tuple(labels)


def _fleet(name: str, args: dict[str, Any]) -> FleetMotion:
    from marinesim.models import presets
    from marinesim.models.sixdof import fleet

    vehicle = str(presets.get(name).data["vehicle"])
    _check_args(name, fleet.info(vehicle).builder, args)
    built = fleet.build(vehicle, **args)
    return FleetMotion(name, built, (("actuators/cmd", "array", built.m),), dict(args))


def _fossen(name: str, params: Any) -> FossenMotion:
    from marinesim.models.sixdof import fossen6dof

    return FossenMotion(name, fossen6dof.build(params))


#: Preset kind → builder ``(preset name, parameters) -> MotionModel``.
KINDS: dict[str, Any] = {"fossen6dof": _fossen, "pvs": _pvs, "pvs_fleet": _fleet}


def motion_model(name: str, params: Any = None) -> MotionModel:
    """The motion model of a preset (or ``fossen6dof`` with inline parameters).

    Parameters
    ----------
    name : str
        Vehicle preset (``marinesim vehicles list``) or ``fossen6dof``.
    params : mapping or fossen6dof Params, optional
        ``fossen6dof`` presets: the full parameter set (the preset's, with overrides);
        PythonVehicleSimulator presets: constructor arguments (``control_system``, ``r``, ...).

    Raises
    ------
    UnknownNameError
        An unknown preset.
    ConfigError
        A preset kind without a motion model, or invalid arguments.
    """
    if name == "fossen6dof":
        return _fossen(name, params)
    from marinesim.models import presets

    kind = presets.get(name).model
    if kind not in KINDS:
        raise ConfigError(
            f"preset {name!r} has model kind {kind!r}, which has no motion model; "
            f"known kinds: {', '.join(sorted(KINDS))}",
            param="preset",
        )
    if kind == "fossen6dof" and params is None:
        params = presets.get(name).params
    return KINDS[kind](name, dict(params or {}) if kind != "fossen6dof" else params)
