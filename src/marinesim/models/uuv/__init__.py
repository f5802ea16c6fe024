"""UUV Simulator's hydrodynamic model (HMFossen): its wrench, to replay its reference cases.

The laws are the 6-DOF family's (:mod:`marinesim.models.sixdof.terms`); :mod:`.hmfossen`
maps the plugin's conventions onto them.

* ``UUV_HYDRO_VEHICLES`` — the vehicles' hydrodynamic tables as their plugin files give them;
* ``uuv_hydro_params(spec)`` — the parameter merging the plugin does;
* ``uuv_hydrodynamic_terms(prm, nu_r, acc_f)`` — damping, added-mass and Coriolis wrenches;
* ``uuv_matrix(values)`` — a 6 × 6 matrix from 6 or 36 numbers;
* ``uuv_wrench_replay(entry, columns)`` — the wrench of a recorded case, step by step.
"""

from marinesim.models.uuv.hmfossen import (
    UUV_HYDRO_VEHICLES,
    uuv_hydro_params,
    uuv_hydrodynamic_terms,
    uuv_matrix,
    uuv_wrench_replay,
)

__all__ = [
    "UUV_HYDRO_VEHICLES",
    "uuv_hydro_params",
    "uuv_hydrodynamic_terms",
    "uuv_matrix",
    "uuv_wrench_replay",
]
