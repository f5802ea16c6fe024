"""marinesim.actuators: UUV Simulator thrusters and fins, batched over vehicles × units.

Modules (spec ``actuators_6dof.md`` §2–3):

* :mod:`~marinesim.actuators.thruster_dynamics` — ``zero_order``, ``first_order``,
  ``yoerger``, ``bessa`` rotor (and fin joint) dynamics;
* :mod:`~marinesim.actuators.thrust_conversion` — ``basic``, ``dead_zone``,
  ``linear_interp``;
* :mod:`~marinesim.actuators.thruster` — the chain clamp → gain → dynamics → propeller
  efficiency → conversion → thrust efficiency → limits, and the thruster wrench;
* :mod:`~marinesim.actuators.lift_drag` — ``quadratic`` and ``two_lines`` (corrected form);
* :mod:`~marinesim.actuators.fins` — clamp, dynamics, one-step angle lag, relative flow;
* :mod:`~marinesim.actuators.uuv_names` — UUV Simulator tag names → marinesim parameters;
* ``t200`` — Blue Robotics T200 table plant (allocation area).
"""

from marinesim.actuators.fins import FinBankParams, FinParams, FinState
from marinesim.actuators.lift_drag import Quadratic, TwoLines
from marinesim.actuators.thrust_conversion import Basic, DeadZone, LinearInterp, convert
from marinesim.actuators.thruster import (
    ThrusterBankParams,
    ThrusterParams,
    ThrusterState,
    allocation_matrix,
)
from marinesim.actuators.thruster_dynamics import Bessa, FirstOrder, Yoerger, ZeroOrder

__all__ = [
    "Basic",
    "Bessa",
    "DeadZone",
    "FinBankParams",
    "FinParams",
    "FinState",
    "FirstOrder",
    "LinearInterp",
    "Quadratic",
    "ThrusterBankParams",
    "ThrusterParams",
    "ThrusterState",
    "TwoLines",
    "Yoerger",
    "ZeroOrder",
    "allocation_matrix",
    "convert",
]
