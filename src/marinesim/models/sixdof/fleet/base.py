"""The built form of a fleet vehicle: constants, packed parameter row, initial state.

Every constructor of the fleet (:mod:`.dsrv`, :mod:`.nomoto_ships`, :mod:`.clarke83`,
:mod:`.tanker`, :mod:`.dp_vessels`, :mod:`.torpedo`) returns one frozen :class:`FleetVehicle`;
the compiled step (:mod:`.kernel`) reads only ``kind`` and ``row``, the controllers
(:mod:`marinesim.control.pvs_fleet`) read ``consts``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["CLARKE83", "DP_VESSEL", "DSRV", "NOMOTO", "TANKER", "TORPEDO", "FleetVehicle"]

F64 = NDArray[np.float64]

#: Kernel kinds (one equation family each).
DSRV, NOMOTO, CLARKE83, TANKER, DP_VESSEL, TORPEDO = 0, 1, 2, 3, 4, 5


@dataclass(frozen=True)
class FleetVehicle:
    """One PythonVehicleSimulator vehicle as its constructor builds it.

    Attributes
    ----------
    vehicle : str
        Upstream class name (``"frigate"``).
    kind : int
        Kernel kind (:data:`DSRV` ... :data:`TORPEDO`).
    control_mode : str
        ``stepInput``, ``depthAutopilot``, ``headingAutopilot``, ``depthHeadingAutopilot`` or
        ``DPcontrol``.
    args : dict
        Validated constructor arguments (units as :mod:`.args`).
    consts : dict
        Constants under the upstream attribute names (SI; angles rad unless named ``ref``).
    row : ndarray, shape (1, size)
        Packed kernel parameters.
    nu0 : ndarray, shape (6,)
        Initial ν [m/s, rad/s] (upstream ``vehicle.nu``).
    controls : tuple of str
        Actuator names (the log columns): ``delta``, ``delta_r``, ``n1`` ...
    labels : tuple of str
        Upstream ``controls`` texts.
    units : tuple of str
        Unit of each actuator (``rad``, ``rpm``).
    dof : str
        The degrees of freedom the model integrates, in words.
    constructor : str
        The upstream call that builds the same vehicle.
    """

    vehicle: str
    kind: int
    control_mode: str
    args: dict[str, Any]
    consts: dict[str, Any]
    row: F64 = field(repr=False)
    nu0: F64 = field(repr=False)
    controls: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    units: tuple[str, ...] = ()
    dof: str = ""
    constructor: str = ""

    @property
    def m(self) -> int:
        """Number of actuators."""
        return len(self.controls)

    @property
    def name(self) -> str:
        """Upstream class name (as :attr:`vehicle`)."""
        return self.vehicle

    def constants(self) -> dict[str, Any]:
        """Numeric constants under their upstream attribute names."""
        return {
            k: v
            for k, v in self.consts.items()
            if not k.startswith("_")
            and (
                isinstance(v, np.ndarray) or isinstance(v, (int, float)) and not isinstance(v, bool)
            )
        }
