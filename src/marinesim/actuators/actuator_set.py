"""The actuators of one vehicle type: thrusters and fins (marinesim's own YAML format).

YAML (positions FRD about CO in m, angles in rad, "no limit" written ``null``)::

    thrusters:
      - name: thruster_0
        position: [-0.54, 0.0, 0.0]
        rpy: [0.0, 0.0, 3.141592653589793]     # or axis: [-1, 0, 0]
        dynamics: {type: first_order, time_constant: 0.05}
        conversion: {type: basic, rotor_constant: 0.0002}
        thrust_min: -50
        thrust_max: 50
    fins:
      - name: fin0
        position: [-0.4, 0.0, -0.04]
        rpy: [3.141592653589793, -0.0, -0.0]
        lower: -1.5707961
        upper: 1.5707961
        dynamics: {type: first_order, time_constant: 0.2}
        liftdrag: {type: quadratic, lift_constant: 9.8688, drag_constant: 6.513408}

:mod:`marinesim.interop.uuv` reads this format and UUV Simulator plugin XML into the same
:class:`ActuatorSet`.
"""

from __future__ import annotations

from marinesim.actuators.fins import FinBankParams, FinParams
from marinesim.actuators.thruster import ThrusterBankParams, ThrusterParams
from marinesim.core.params import ParamsBase, field

__all__ = ["ActuatorSet"]


class ActuatorSet(ParamsBase):
    """Thrusters and fins of one vehicle type (k_t thrusters, k_f fins)."""

    thrusters: tuple[ThrusterParams, ...] = field((), description="thrusters, in command order")
    fins: tuple[FinParams, ...] = field((), description="fins, in command order")

    def thruster_bank(self) -> ThrusterBankParams:
        """The thrusters as a batched chain (:mod:`marinesim.actuators.thruster`)."""
        return ThrusterBankParams(thrusters=self.thrusters)

    def fin_bank(self) -> FinBankParams:
        """The fins as a batched bank (:mod:`marinesim.actuators.fins`)."""
        return FinBankParams(fins=self.fins)
