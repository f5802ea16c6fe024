"""The ``rangefinder`` sensor on a ``fossen6dof`` vehicle in the generated tick.

The sensor's law is :func:`marinesim.engine.plugins.surftrak_laws.rangefinder_sense` (the one
copy, shared with the ``sitl_vertical`` harness): the delay line of the vehicle's height, the
shipped terrain profile under it and, on message ticks, one reading through
:func:`marinesim.sensors.rangefinder.inject` on the ``bus.rangefinder`` wire.  On a 6-DOF
vehicle its geometry — z up, the only column of ``truth.zva`` it reads — comes from the
motion's ``truth.x6`` wire at t_{k+1} (:func:`height_from_x6`, a sense law before it), as the
plugin's ``sense`` reads ``−truth.pos[:, 2]``.  Used by ``ardusub_sawtooth`` (the SITL engine
plant): ``sitl_servo`` (:mod:`marinesim.interop.sitl.laws`) takes the reading.
"""

from __future__ import annotations

from typing import Any

from numba.extending import register_jitable

from marinesim.engine.compiled.law import Law, Laws
from marinesim.engine.plugins.surftrak_laws import rangefinder_declaration

__all__ = ["height_from_x6", "sixdof_sensor_laws"]


@register_jitable
def height_from_x6(k, j, t, h, x6, zva):  # noqa: ANN001, ANN201
    """z up [m] of every row from the 6-DOF truth (NED position in ``x6[:, 0:3]``)."""
    for i in range(x6.shape[0]):
        zva[i, 0] = -x6[i, 2]
    return 0


def sixdof_sensor_laws(plugin: Any, slot: Any, sim: Any) -> Laws | str | None:
    """The ``rangefinder`` declaration on a ``fossen6dof`` block (its geometry:
    :func:`height_from_x6` on ``truth.x6``)."""
    return rangefinder_declaration(
        plugin, slot, sim, geometry=Law("sense", height_from_x6, ("truth.x6", "zva"))
    )
