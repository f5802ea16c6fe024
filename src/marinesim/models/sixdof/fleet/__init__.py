"""The PythonVehicleSimulator fleet on the shared 6-DOF core (PVS @ c717e07, package 1.0.1).

Eight vehicle classes beside REMUS 100 and Otter (:mod:`marinesim.models.sixdof.pvs`), each built as
its upstream constructor builds it and stepped as its ``dynamics()`` integrates it:

========================  =================================  ===============================
PVS class                 module                             degrees of freedom integrated
========================  =================================  ===============================
``DSRV``                  :mod:`.dsrv`                       w, q (u reset to U0)
``frigate``               :mod:`.nomoto_ships`               r (u = U constant)
``ROVzefakkel``           :mod:`.nomoto_ships`               r (u = U constant)
``shipClarke83``          :mod:`.clarke83`                   u, v, r
``tanker``                :mod:`.tanker`                     u, v, r
``semisub``               :mod:`.dp_vessels`                 6-DOF linear
``supply``                :mod:`.dp_vessels`                 u, v, r
``torpedo``               :mod:`.torpedo`                    6-DOF (REMUS 100 hull)
========================  =================================  ===============================

:data:`VEHICLES` maps the upstream class name to its builder and control modes; one compiled
step (:mod:`.kernel`) runs N vehicles of any kind; controllers live in
:mod:`marinesim.control.pvs_fleet`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from marinesim.core.errors import UnknownNameError
from marinesim.models.sixdof.fleet import clarke83, dp_vessels, dsrv, nomoto_ships, tanker, torpedo
from marinesim.models.sixdof.fleet.base import FleetVehicle

__all__ = ["VEHICLES", "FleetVehicle", "VehicleInfo", "build", "info"]


@dataclass(frozen=True)
class VehicleInfo:
    """Registry entry: builder, the control modes its constructor offers, source file."""

    builder: Callable[..., FleetVehicle]
    modes: tuple[str, ...]
    source: str


VEHICLES: dict[str, VehicleInfo] = {
    "DSRV": VehicleInfo(dsrv.build, ("stepInput", "depthAutopilot"), "vehicles/DSRV.py"),
    "frigate": VehicleInfo(
        nomoto_ships.frigate, ("stepInput", "headingAutopilot"), "vehicles/frigate.py"
    ),
    "ROVzefakkel": VehicleInfo(
        nomoto_ships.rovzefakkel, ("stepInput", "headingAutopilot"), "vehicles/ROVzefakkel.py"
    ),
    "semisub": VehicleInfo(dp_vessels.semisub, ("stepInput", "DPcontrol"), "vehicles/semisub.py"),
    "shipClarke83": VehicleInfo(
        clarke83.build, ("stepInput", "headingAutopilot"), "vehicles/shipClarke83.py"
    ),
    "supply": VehicleInfo(dp_vessels.supply, ("stepInput", "DPcontrol"), "vehicles/supply.py"),
    "tanker": VehicleInfo(tanker.build, ("stepInput", "headingAutopilot"), "vehicles/tanker.py"),
    "torpedo": VehicleInfo(
        torpedo.build, ("stepInput", "depthHeadingAutopilot"), "vehicles/torpedo.py"
    ),
}


def info(name: str) -> VehicleInfo:
    """Registry entry of the upstream class ``name`` (UnknownNameError listing the known)."""
    if name not in VEHICLES:
        raise UnknownNameError("PythonVehicleSimulator vehicle", name, VEHICLES, param="vehicle")
    return VEHICLES[name]


def build(name: str, *args: Any, **kwargs: Any) -> FleetVehicle:
    """Build ``name`` with the upstream constructor's positional/keyword arguments.

    ``controlSystem`` may be given as ``control_system``; the other keywords are the upstream
    names (``V_current``, ``beta_current``, ``depth``, ``rpm``, ``tau_X`` ...).
    """
    if "controlSystem" in kwargs:
        kwargs["control_system"] = kwargs.pop("controlSystem")
    return info(name).builder(*args, **kwargs)
