"""One guarded PythonVehicleSimulator loop step for N fleet vehicles, on every backend.

The step of vehicle i: its own ``dynamics`` (ν_{k+1} and the actuator states by forward Euler,
:mod:`.dsrv` … :mod:`.torpedo`), then ``attitudeEuler`` (η_{k+1} = η_k + h J(η_k) ν_{k+1},
:func:`marinesim.models.sixdof.pvs_vehicles.attitude_euler_row`), then the divergence guard
(:mod:`marinesim.models.sixdof.guard`).  One source compiled for the CPU (serial or ``prange``)
and CUDA, or interpreted (``python``), chosen by :mod:`marinesim.models.backends`.
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
from marinesim.models import backends
from marinesim.models.sixdof import guard, terms
from marinesim.models.sixdof import pvs_vehicles as pv
from marinesim.models.sixdof.fleet import base
from marinesim.models.sixdof.fleet.clarke83 import clarke83_step
from marinesim.models.sixdof.fleet.dp_vessels import dp_step
from marinesim.models.sixdof.fleet.dsrv import dsrv_step
from marinesim.models.sixdof.fleet.nomoto_ships import nomoto_step
from marinesim.models.sixdof.fleet.tanker import tanker_step
from marinesim.models.sixdof.fleet.torpedo import torpedo_step
from marinesim.models.sixdof.pvs_vehicles import attitude_euler_row

__all__ = ["REMUS_CA_ZERO", "run", "step_guarded", "step_one"]

F64 = NDArray[np.float64]

#: C_A entries the torpedo (REMUS 100 hull) removes.
REMUS_CA_ZERO = np.array(
    ((4, 0), (0, 4), (4, 2), (2, 4), (5, 0), (0, 5), (5, 1), (1, 5)), dtype=np.int64
)


@register_jitable
def step_one(
    i: int, kind: int, par: Any, zero: Any, state: Any, cmd: Any, h: float,
    max_speed: float, max_rate: float, alive: Any, out: Any, status: Any, size: Any,
) -> None:  # fmt: skip
    """One loop step of vehicle ``i``: ``out[i]`` from ``state[i]``, ``cmd[i]`` (or its only row)."""
    x = state[i]
    c = terms.row(cmd, i)
    pr = terms.row(par, i)
    y = out[i]
    cphi, sphi = math.cos(x[3]), math.sin(x[3])
    cth, sth = math.cos(x[4]), math.sin(x[4])
    cpsi, spsi = math.cos(x[5]), math.sin(x[5])
    trig = (cphi, sphi, cth, sth, cpsi, spsi)
    rot = frames.rotation_zyx_c(cphi, sphi, cth, sth, cpsi, spsi)
    if kind == base.DSRV:
        dsrv_step(pr, x, c, h, y)
    elif kind == base.NOMOTO:
        nomoto_step(pr, x, c, h, y)
    elif kind == base.CLARKE83:
        clarke83_step(pr, x, c, h, y)
    elif kind == base.TANKER:
        tanker_step(pr, x, c, h, y)
    elif kind == base.DP_VESSEL:
        dp_step(pr, x, c, h, y)
    else:
        torpedo_step(pr, zero, x, c, h, y, trig, rot)
    attitude_euler_row(x, y, h, trig, rot)
    code, mag = guard.check_one(y, 6, max_speed, max_rate)
    guard.apply_one(i, code, mag, x, y, alive, status, size)


STEP = backends.kernels(step_one, 3)  # args[3] is the state (N, 12 + m)


def run(
    kind: int, par: F64, state: F64, cmd: F64, h: float, alive: NDArray[np.bool_],
    max_speed: float = 50.0, max_rate: float = 50.0, backend: str | None = None,
) -> tuple[F64, NDArray[np.int8], F64]:  # fmt: skip
    """One guarded loop step of N vehicles of one kind.

    Parameters
    ----------
    kind : int
        :data:`.base.DSRV` … :data:`.base.TORPEDO`.
    par : ndarray, shape (1, size) or (N, size)
        Packed parameters (shared or per vehicle).
    state : ndarray, shape (N, 12 + m)
    cmd : ndarray, shape (1, m) or (N, m)
    h : float
        Sample time [s].
    alive : ndarray of bool, shape (N,)
        Updated in place.
    max_speed, max_rate : float
        Divergence bounds [m/s], [rad/s].
    backend : str, optional
        ``cpu`` (default), ``python`` or ``cuda``.

    Returns
    -------
    out : ndarray, shape (N, 12 + m)
    status, size : ndarray, shape (N,)
        Guard codes and magnitudes of the vehicles stopped in this step.
    """
    return pv.launch(
        STEP, kind, par, REMUS_CA_ZERO, state, cmd, h, alive, max_speed, max_rate, backend
    )


def step_guarded(
    v: base.FleetVehicle, x: F64, cmd: F64, h: float, alive: NDArray[np.bool_], t: float, *,
    backend: str | None = None, max_speed: float = 50.0, max_rate: float = 50.0,
    par: F64 | None = None,
) -> tuple[F64, NDArray[np.bool_], list[str]]:  # fmt: skip
    """One guarded loop step of N vehicles on packed rows (N = 1 included).

    Parameters
    ----------
    v : FleetVehicle
    x : ndarray, shape (N, 12 + m)
    cmd : ndarray, shape (N, m) or (1, m)
        Commanded actuator values (units of ``v.units``).
    h : float
        Sample time [s].
    alive : ndarray of bool, shape (N,)
        Vehicles still running (not modified).
    t : float
        Time of the new state [s] (for the event texts).
    backend : str, optional
    max_speed, max_rate : float
        Divergence bounds on |ν₁| [m/s] and |ω| [rad/s].
    par : ndarray, shape (N, size), optional
        Per-vehicle parameter rows (default: ``v.row`` for all).

    Returns
    -------
    x_next : ndarray, shape (N, 12 + m)
    alive : ndarray of bool, shape (N,)
    events : list of str
    """
    xs = np.ascontiguousarray(x, dtype=float)
    cs = np.ascontiguousarray(np.asarray(cmd, dtype=float).reshape(-1, xs.shape[1] - 12))
    al = np.array(alive, dtype=bool).reshape(xs.shape[0])
    pr = np.ascontiguousarray(v.row if par is None else par, dtype=float)
    with np.errstate(all="ignore"):
        y, status, size = run(v.kind, pr, xs, cs, h, al, max_speed, max_rate, backend)
    ev = guard.events(status, size, t, max_speed, max_rate) if status.any() else []
    return y, al, ev
