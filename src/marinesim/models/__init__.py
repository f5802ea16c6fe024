"""The models (layer L1): one package or module per model, and :func:`make_model`.

* :mod:`marinesim.models.usm` — uSimMarine's kinematic model (``usm``, ``usm_v22``): state,
  mail, propagate, publish, configuration, thrust map, MOOS arithmetic;
* :mod:`marinesim.models.sixdof` — the 6-DOF family: the textbook terms once, the generic
  Fossen model (``fossen6dof``), PythonVehicleSimulator's vehicles (``pvs``) and fleet,
  the motion-model adapter, integrator stages and backends;
* :mod:`marinesim.models.uuv` — UUV Simulator's HMFossen wrench, to replay its cases;
* :mod:`marinesim.models.heave` — the vertical model of ArduSub SITL (SURFTRAK);
* :mod:`marinesim.models.battery` — the battery model;
* :mod:`marinesim.models.presets` — vehicle parameter sets (YAML data).

Module paths of the flat layout (``marinesim.models.kinematic``, ``.fossen6dof``, ``.pvs``,
``.hydro``, ``.usm_config``, …) still import for one release, with a
:class:`DeprecationWarning` naming the new path (:data:`MOVED`).

``marinesim.make_model(name, **params)``: any model by name, with ``init`` and ``step``.

The models-layer API: one object per model with the architecture's contract
``init(n, ...) -> state`` and ``step(state, cmd, dt, env=None) -> state``, whatever the model
is underneath.  Names:

``"usm"``, ``"usm_v22"``
    uSimMarine (:mod:`marinesim.models.usm`); ``params`` as a scenario's ``params:``
    mapping (e.g. ``max_speed=3.0``).  ``cmd``: mapping of ``DESIRED_THRUST`` /
    ``DESIRED_RUDDER`` / ``DESIRED_ELEVATOR`` [%] to values (N,); ``env``: ``drift_x``/``drift_y``.
``"fossen6dof"``
    The generic Fossen 6-DOF model; ``params`` as :class:`marinesim.models.sixdof.fossen6dof.Params`.
    ``cmd``: body wrench τ (N, 6) [N, N·m]; ``env``: :class:`~marinesim.models.sixdof.fossen6dof.Env`.
a vehicle preset (``marinesim vehicles list``: ``bluerov2_heavy``, ``rexrov``, ``remus100``,
``otter``, PythonVehicleSimulator's fleet …)
    ``params`` override the preset (fossen6dof parameters, or the PythonVehicleSimulator
    constructor's arguments).  PythonVehicleSimulator vehicles step their exact loop:
    ``cmd`` the commanded actuators (N, m) in the vehicle's units, ``dt`` its sample time.

Every model steps N vehicles at once; N = 1 is the same path.  ``backend`` picks
``cpu`` / ``python`` / ``cuda`` for the compiled 6-DOF models
(:mod:`marinesim.models.sixdof.backends`).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from marinesim.core.errors import ConfigError, UnknownNameError

__all__ = ["Model", "RowState", "make_model", "model_names"]

F64 = NDArray[np.float64]


@dataclass(frozen=True)
class RowState:
    """State of N PythonVehicleSimulator vehicles.

    Attributes
    ----------
    x : ndarray, shape (N, 12 + m)
        Rows [η (6) [m, rad], ν (6) [m/s, rad/s], actuators (m)].
    alive : ndarray of bool, shape (N,)
    t : float
        Time [s].
    events : tuple of str
        NumericalError texts of vehicles stopped in the last step.
    """

    x: F64
    alive: NDArray[np.bool_]
    t: float = 0.0
    events: tuple[str, ...] = ()

    @property
    def eta(self) -> F64:
        """Pose [x, y, z, φ, θ, ψ] (N, 6) [m, rad]."""
        return self.x[:, 0:6]

    @property
    def nu(self) -> F64:
        """Body velocity [u, v, w, p, q, r] (N, 6) [m/s, rad/s]."""
        return self.x[:, 6:12]

    @property
    def actuators(self) -> F64:
        """Actual actuator values (N, m)."""
        return self.x[:, 12:]


@dataclass(frozen=True)
class Model:
    """A model chosen by name (:func:`make_model`).

    Attributes
    ----------
    name : str
    family : str
        ``usm``, ``fossen6dof``, ``pvs`` or ``pvs_fleet``.
    params : object
        The built parameters (UsmConfig, Fossen6Dof, PythonVehicleSimulator parameters).
    backend : str or None
    """

    name: str
    family: str
    params: Any = field(repr=False)
    backend: str | None = None

    def init(self, n: int = 1, **initial: Any) -> Any:
        """Initial state of N vehicles.

        Parameters
        ----------
        n : int
            Number of vehicles (≥ 1).
        **initial
            ``usm``: ``moos_time``, ``datum``; ``fossen6dof``: ``pos`` (N, 3) [m],
            ``euler`` (N, 3) [rad], ``nu`` (N, 6); PythonVehicleSimulator vehicles: ``eta``
            (N, 6), ``nu`` (N, 6) (default: the constructor's initial velocity).
        """
        if int(n) < 1:
            raise ConfigError(f"number of vehicles must be >= 1, got {n}", param="n")
        if self.family == "usm":
            from marinesim.models import usm

            return usm.init(self.params, int(n), **initial)
        if self.family == "fossen6dof":
            from marinesim.models.sixdof import fossen6dof

            return fossen6dof.init(self.params, int(n), **initial)
        unknown = set(initial) - {"eta", "nu"}
        if unknown:
            raise ConfigError(f"unknown initial values {sorted(unknown)}; use eta, nu")
        m = len(self.params.controls)
        nu0 = getattr(self.params, "nu0", np.zeros(6))
        x = np.zeros((int(n), 12 + m))
        x[:, 0:6] = np.asarray(initial.get("eta", np.zeros(6)), dtype=float)
        x[:, 6:12] = np.asarray(initial.get("nu", nu0), dtype=float)
        return RowState(x=x, alive=np.ones(int(n), dtype=bool))

    def step(self, state: Any, cmd: Any = None, dt: float = 0.1, env: Any = None) -> Any:
        """Advance N vehicles by ``dt`` [s] with ``cmd`` held (units in the module text)."""
        if self.family == "usm":
            from marinesim.models import usm

            return usm.step(self.params, state, cmd, env, dt)
        if self.family == "fossen6dof":
            from marinesim.models.sixdof import fossen6dof

            return fossen6dof.step(self.params, state, cmd, env, dt, backend=self.backend)
        if env is not None:
            raise ConfigError(
                "PythonVehicleSimulator vehicles take their current from the constructor "
                "(V_current, beta_current), not env",
                param="env",
            )
        m = state.x.shape[1] - 12
        u = np.zeros((1, m)) if cmd is None else np.asarray(cmd, dtype=float).reshape(-1, m)
        t = state.t + dt
        if self.family == "pvs":
            from marinesim.models.sixdof import pvs

            x, alive, ev = pvs.step_guarded(
                self.params, state.x, u, dt, state.alive, t, backend=self.backend
            )
        else:
            from marinesim.models.sixdof.fleet import kernel

            x, alive, ev = kernel.step_guarded(
                self.params, state.x, u, dt, state.alive, t, backend=self.backend
            )
        return RowState(x=x, alive=alive, t=t, events=tuple(ev))


_OWN = ("usm", "usm_v22", "fossen6dof")


def model_names() -> list[str]:
    """Every name :func:`make_model` accepts (models and vehicle presets)."""
    from marinesim.models import presets

    return sorted({*_OWN, *presets.names()})


def make_model(name: str, *, backend: str | None = None, **params: Any) -> Model:
    """A model by name with ``init(n, ...)`` and ``step(state, cmd, dt, env=None)``.

    Parameters
    ----------
    name : str
        ``usm``, ``usm_v22``, ``fossen6dof`` or a vehicle preset (:func:`model_names`).
    backend : str, optional
        ``cpu`` (default), ``python`` or ``cuda`` for the compiled 6-DOF models.
    **params
        Model parameters (see the module text); unknown names raise ConfigError.

    Returns
    -------
    Model

    Raises
    ------
    UnknownNameError
        An unknown model name (with close matches).
    ConfigError
        Invalid parameters, or a backend that cannot run here.
    """
    from marinesim.models.sixdof import backends

    if backend is not None:
        backends.resolve(backend)
    if name in ("usm", "usm_v22"):
        from marinesim.models.usm.config import config_from_mapping

        config, _warnings = config_from_mapping(params, variant=name)  # type: ignore[arg-type]
        return Model(name, "usm", config, backend)
    if name == "fossen6dof":
        from marinesim.models.sixdof import fossen6dof

        return Model(name, "fossen6dof", fossen6dof.build(params), backend)
    from marinesim.models import presets

    if name not in presets.names(include_aliases=True):
        raise UnknownNameError("model", name, model_names())
    built = presets.build(name, **params)
    family = presets.get(name).model
    return Model(name, family, built, backend)


# --------------------------------------------------------------------------------------
# old module paths (one release, with a DeprecationWarning)
# --------------------------------------------------------------------------------------

#: Old module path → the module it now is (several, comma-separated, where it was split).
MOVED: dict[str, str] = {
    "marinesim.models.kinematic": "marinesim.models.usm",
    "marinesim.models.usm_config": "marinesim.models.usm.config",
    "marinesim.models.thrustmap": "marinesim.models.usm.thrustmap",
    "marinesim.models.fossen6dof": "marinesim.models.sixdof.fossen6dof",
    "marinesim.models.pvs": "marinesim.models.sixdof.pvs",
    "marinesim.models.motion": "marinesim.models.sixdof.motion",
    "marinesim.models.integrate": "marinesim.models.sixdof.integrate",
    "marinesim.models.backends": "marinesim.models.sixdof.backends",
    "marinesim.models.hydro": (
        "marinesim.models.sixdof.arrays, marinesim.models.sixdof.setup, marinesim.models.uuv"
    ),
    "marinesim.models.uuv_hydro": "marinesim.models.uuv",
    "marinesim.models.api": "marinesim.models",
    "marinesim.models.sixdof.throughput": "marinesim.cli.bench_sixdof",
}


def _moved(old: str) -> Any:
    new = MOVED[old]
    warnings.warn(
        f"{old} moved to {new}; the old path goes in the next release",
        DeprecationWarning,
        stacklevel=3,  # the importer (import machinery frames are skipped)
    )
    parts = [importlib.import_module(m.strip()) for m in new.split(",")]
    module = parts[0] if len(parts) == 1 else _split_module(old, parts)
    sys.modules[old] = module
    return module


def _split_module(old: str, parts: list[ModuleType]) -> ModuleType:
    """A module named ``old`` whose names are those of ``parts`` (a module that was split)."""
    module = ModuleType(old, f"Deprecated: the names of {', '.join(p.__name__ for p in parts)}.")
    names = [n for p in parts for n in getattr(p, "__all__", ())]
    module.__all__ = names  # type: ignore[attr-defined]
    for part in parts:
        for n in getattr(part, "__all__", ()):
            setattr(module, n, getattr(part, n))
    return module


class _MovedLoader(importlib.abc.Loader):
    """Loads an old path as the module it now is (``sys.modules[old]`` is the new module)."""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        sys.modules[module.__name__] = _moved(module.__name__)


class _MovedFinder(importlib.abc.MetaPathFinder):
    """Finds the old paths of :data:`MOVED` (``import marinesim.models.kinematic``)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(name, _MovedLoader())


if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
    sys.meta_path.insert(0, _MovedFinder())


def __getattr__(name: str) -> Any:
    """``from marinesim.models import kinematic`` and other old names, with a warning."""
    old = f"{__name__}.{name}"
    if old in MOVED:
        module = _moved(old)
        globals()[name] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
