"""One guarded PythonVehicleSimulator loop step for N fleet vehicles, on every backend.

The step of vehicle i: its own ``dynamics`` (ν_{k+1} and the actuator states by forward Euler,
:mod:`.dsrv` … :mod:`.torpedo`), then ``attitudeEuler`` (η_{k+1} = η_k + h J(η_k) ν_{k+1},
:func:`marinesim.models.sixdof.pvs_vehicles.attitude_euler_row`), then the divergence guard
(:mod:`marinesim.models.sixdof.guard`).  One source compiled for the CPU (serial or ``prange``)
and CUDA, or interpreted (``python``), chosen by :mod:`marinesim.models.sixdof.backends`.
:func:`step_one` is also the dynamics half of the compiled closed loop
(:mod:`marinesim.reference.pvs_fleet_loop`, which adds the control laws of
:mod:`marinesim.control.pvs_fleet` and runs k steps per launch).

State rows are [η (6) [m, rad], ν (6) [m/s, rad/s], actuators (m)]; parameters one packed row
per vehicle or one shared row (``FleetVehicle.row``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba.extending import register_jitable
from numpy.typing import NDArray

from marinesim.core import frames
from marinesim.models.sixdof import backends, guard, terms
from marinesim.models.sixdof import pvs_vehicles as pv
from marinesim.models.sixdof.fleet import base
from marinesim.models.sixdof.fleet.clarke83 import clarke83_step
from marinesim.models.sixdof.fleet.dp_vessels import dp_step
from marinesim.models.sixdof.fleet.dsrv import dsrv_step
from marinesim.models.sixdof.fleet.nomoto_ships import nomoto_step
from marinesim.models.sixdof.fleet.tanker import tanker_step
from marinesim.models.sixdof.fleet.torpedo import torpedo_step
from marinesim.models.sixdof.pvs_vehicles import attitude_euler_row

__all__ = ["REMUS_CA_ZERO", "STEP", "STEP_OF", "kind_kernels", "step_guarded", "step_one"]

F64 = NDArray[np.float64]

#: C_A entries the torpedo (REMUS 100 hull) removes.
REMUS_CA_ZERO = np.array(
    ((4, 0), (0, 4), (4, 2), (2, 4), (5, 0), (0, 5), (5, 1), (1, 5)), dtype=np.int64
)


# the kinds as module constants: a step made for one kind compares constants, which numba
# folds before typing (the other kinds' dynamics are not compiled into it)
_DSRV, _NOMOTO, _CLARKE83 = base.DSRV, base.NOMOTO, base.CLARKE83
_TANKER, _DP_VESSEL, _TORPEDO = base.TANKER, base.DP_VESSEL, base.TORPEDO


def _stepper(fixed: int, name: str) -> Any:
    """:func:`step_one` (``fixed`` = −1: the kind read from the argument) or its copy made for
    one kind ``fixed`` (the ``kind`` argument is then ignored): one body, two uses."""

    @register_jitable
    def step(
        i: int, kind: int, par: Any, zero: Any, state: Any, cmd: Any, h: float,
        max_speed: float, max_rate: float, alive: Any, out: Any, status: Any, size: Any,
    ) -> None:  # fmt: skip
        """One loop step of vehicle ``i``: ``out[i]`` from ``state[i]``, ``cmd[i]`` (or its
        only row)."""
        x = state[i]
        c = cmd[terms.row_index(cmd, i)]
        pr = par[terms.row_index(par, i)]
        y = out[i]
        cphi, sphi = math.cos(x[3]), math.sin(x[3])
        cth, sth = math.cos(x[4]), math.sin(x[4])
        cpsi, spsi = math.cos(x[5]), math.sin(x[5])
        trig = (cphi, sphi, cth, sth, cpsi, spsi)
        rot = frames.rotation_zyx_c(cphi, sphi, cth, sth, cpsi, spsi)
        if (fixed < 0 and kind == _DSRV) or fixed == _DSRV:
            dsrv_step(pr, x, c, h, y)
        elif (fixed < 0 and kind == _NOMOTO) or fixed == _NOMOTO:
            nomoto_step(pr, x, c, h, y)
        elif (fixed < 0 and kind == _CLARKE83) or fixed == _CLARKE83:
            clarke83_step(pr, x, c, h, y)
        elif (fixed < 0 and kind == _TANKER) or fixed == _TANKER:
            tanker_step(pr, x, c, h, y)
        elif (fixed < 0 and kind == _DP_VESSEL) or fixed == _DP_VESSEL:
            dp_step(pr, x, c, h, y)
        else:
            torpedo_step(pr, zero, x, c, h, y, trig, rot)
        attitude_euler_row(x, y, h, trig, rot)
        code, mag = guard.check_one(y, 6, max_speed, max_rate)
        guard.apply_one(i, code, mag, x, y, alive, status, size)

    step.__name__ = step.__qualname__ = name  # importable (and picklable) by its name
    return step


#: One loop step of vehicle ``i`` of any kind (the ``kind`` argument).
step_one = _stepper(-1, "step_one")
#: :func:`step_one` made for one kind each (a smaller compiled tick: the engine's laws).
step_dsrv = _stepper(_DSRV, "step_dsrv")
step_nomoto = _stepper(_NOMOTO, "step_nomoto")
step_clarke83 = _stepper(_CLARKE83, "step_clarke83")
step_tanker = _stepper(_TANKER, "step_tanker")
step_dp_vessel = _stepper(_DP_VESSEL, "step_dp_vessel")
step_torpedo = _stepper(_TORPEDO, "step_torpedo")
#: Kind → its own step.
STEP_OF = {
    _DSRV: step_dsrv, _NOMOTO: step_nomoto, _CLARKE83: step_clarke83, _TANKER: step_tanker,
    _DP_VESSEL: step_dp_vessel, _TORPEDO: step_torpedo,
}  # fmt: skip


STEP = backends.kernels(step_one, 3)  # args[3] is the state (N, 12 + m)
#: The kernels of each kind's own step, made at first use (:func:`kind_kernels`).
_KIND_KERNELS: dict[int, backends.Kernels] = {}


def kind_kernels(kind: int) -> backends.Kernels:
    """The kernels of kind ``kind``'s own step (``STEP_OF``), made at its first use.

    :func:`step_guarded` runs them, as the engine's generated tick runs that kind's step
    only: a process compiles the dynamics of the kinds it runs (a tanker's first run
    compiled all six kinds' dynamics, about 10 s of its 20 s), and the tick then finds its
    step compiled.
    """
    k = _KIND_KERNELS.get(kind)
    if k is None:
        k = _KIND_KERNELS[kind] = backends.kernels(STEP_OF[kind], 3)
    return k


def step_guarded(
    v: base.FleetVehicle, x: F64, cmd: F64, h: float, alive: NDArray[np.bool_], t: float, *,
    backend: str | None = None, max_speed: float = 50.0, max_rate: float = 50.0,
    par: F64 | None = None,
) -> tuple[F64, NDArray[np.bool_], list[str]]:  # fmt: skip
    """One guarded loop step of N fleet vehicles of one kind (N = 1 included).

    :func:`marinesim.models.sixdof.pvs_vehicles.step_guarded` with this module's kernel, the
    kind and parameter rows of ``v`` (or ``par``, shape (N, size), one row per vehicle), and
    commands in the units of ``v.units``; returns (x_next, alive, events) as it does.
    """
    pr = np.ascontiguousarray(v.row if par is None else par, dtype=float)
    return pv.step_guarded(
        kind_kernels(v.kind), v.kind, pr, REMUS_CA_ZERO, x, cmd, h, alive, t, backend=backend,
        max_speed=max_speed, max_rate=max_rate,
    )  # fmt: skip
