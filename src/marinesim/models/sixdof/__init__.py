"""The 6-DOF model family (Fossen 2021): one package holding every part of it.

Laws, written once as plain per-vehicle functions (``numba.extending.register_jitable``;
numba compiles the same source for the CPU, one ``prange`` iteration per vehicle, and as CUDA
device functions, one thread per vehicle):

* :mod:`.terms` — the textbook terms on floats: rigid-body and added-mass Coriolis, damping,
  restoring forces, current in the body frame;
* :mod:`.generic` — the generic Fossen 6-DOF vehicle composed from them;
* :mod:`.pvs_vehicles` — PythonVehicleSimulator's REMUS 100 and Otter: the same terms plus
  each vehicle's own force and actuator terms;
* :mod:`.fleet` — the rest of PythonVehicleSimulator's fleet (DSRV, frigate, tanker, …);
* :mod:`.guard` — the divergence guard every model applies after a step;
* :mod:`.integrate` — integrator stages (RK4, semi-implicit Euler).

Public faces:

* :mod:`.fossen6dof` — the generic model: ``Params``, ``build``, ``init``, ``step``, ``Env``;
* :mod:`.pvs` — PythonVehicleSimulator's REMUS 100 and Otter: ``remus100``, ``otter``,
  ``step_batch``, ``step_guarded``;
* :mod:`.motion` — one adapter over all of them for the engine: ``motion_model(name)``;
* :mod:`.backends` — ``cpu`` / ``python`` / ``cuda``: ``resolve``, ``kernels``;
* :mod:`.arrays` — the terms on arrays of N vehicles, named after the textbook symbols
  (each calls its law in :mod:`.terms`, :mod:`.pvs_vehicles` or :mod:`marinesim.core.frames`);
* :mod:`.setup` — set-up helpers: S(a), H(r), M_RB and Hoerner's C_D, built once from parameters.

Rotations and attitude kinematics come from :mod:`marinesim.core.frames`.  The submodules and
the names below load on first use (``from marinesim.models.sixdof import motion_model``).
"""

from __future__ import annotations

import importlib
from typing import Any

#: Names of the public face and the submodule each comes from.
_FACE = {
    "MotionModel": "motion",
    "Water": "motion",
    "motion_model": "motion",
    "resolve": "backends",
}

__all__ = ["MotionModel", "Water", "motion_model", "resolve"]


def __getattr__(name: str) -> Any:
    if name in _FACE:
        value = getattr(importlib.import_module(f"{__name__}.{_FACE[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
