"""PythonVehicleSimulator's closed loop for N fleet vehicles, k steps in one compiled launch.

Per vehicle and step: the vehicle's own control system (:func:`marinesim.control.pvs_fleet.
control_one`: step input, PID/DP/REMUS autopilot or a command table), then its ``dynamics``,
``attitudeEuler`` and the divergence guard (:func:`marinesim.models.sixdof.fleet.kernel.
step_one`).  The control laws (``control``) and the vehicle laws (``models``) are independent
layers; this module, a layer above both, composes them into one per-vehicle function compiled
by :mod:`marinesim.models.sixdof.backends` (numba CPU serial or ``prange``, CUDA, or interpreted), so
Python is out of both the vehicle loop and the time loop.  Each vehicle runs the same
instructions whatever N is: N = 1 and every N give bit-identical rows.

Row k of a logged run (upstream ``loop_semantics``): η_k, ν_k, the command of step k, the
actuator states, the controller states right after the control call; then ν_{k+1},
actuators_{k+1} = dynamics(...), η_{k+1} = attitudeEuler(η_k, ν_{k+1}).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numba.extending import register_jitable
from numpy.typing import NDArray

from marinesim.control import pvs_fleet as ctl
from marinesim.models.sixdof import backends, guard, terms
from marinesim.models.sixdof.fleet import base, kernel

__all__ = ["LoopResult", "run"]

F64 = NDArray[np.float64]


@register_jitable
def loop_one(
    i: int, kind: int, par: Any, zero: Any, code: int, cpar: Any, st: Any, x: Any, y: Any,
    u: Any, table: Any, k0: int, steps: int, final: int, h: float, max_speed: float,
    max_rate: float, alive: Any, status: Any, size: Any, ev_code: Any, ev_size: Any,
    ev_step: Any, dolog: int, log: Any, logst: Any,
) -> None:  # fmt: skip
    """Vehicle ``i``: ``steps`` loop steps (control, dynamics, ``attitudeEuler``, guard) from
    step ``k0``, then the control call of one more row if ``final``; rows logged if ``dolog``."""
    xi, yi, ui, si = x[i], y[i], u[i], st[i]
    cp = cpar[terms.row_index(cpar, i)]
    nx, m, ns = xi.shape[0], ui.shape[0], si.shape[0]
    ev_step[i] = -1
    for j in range(steps + final):
        k = k0 + j
        ctl.control_one(code, cp, si, xi[0:6], xi[6:12], k * h, h, table, k, ui)
        if dolog != 0:
            for c in range(12):
                log[i, j, c] = xi[c]
            for c in range(m):
                log[i, j, 12 + c] = ui[c]
            for c in range(12, nx):
                log[i, j, m + c] = xi[c]
            for c in range(ns):
                logst[i, j, c] = si[c]
        if j < steps:
            kernel.step_one(
                i, kind, par, zero, x, u, h, max_speed, max_rate, alive, y, status, size
            )
            if status[i] != 0 and ev_step[i] < 0:
                ev_code[i] = status[i]
                ev_size[i] = size[i]
                ev_step[i] = k + 1
            for c in range(nx):
                xi[c] = yi[c]


_SRC = Path(__file__).resolve().parents[1]
#: Kernels of :func:`loop_one` (args[7] is the state (N, 12 + m)); the cache key covers the
#: fleet's vehicle laws and the control laws too.
LOOP = backends.kernels(
    loop_one,
    7,
    (
        _SRC / "models" / "sixdof" / "fleet",
        _SRC / "control" / "pvs_fleet.py",
        _SRC / "control" / "autopilots.py",
    ),
)


@dataclass(frozen=True)
class LoopResult:
    """What :func:`run` returns.

    Attributes
    ----------
    x : ndarray, shape (N, 12 + m)
        State after the last step (η, ν, actuators).
    state : ndarray, shape (N, STATE_SIZE)
        Controller states after the last control call.
    u : ndarray, shape (N, m)
        Last command.
    alive : ndarray of bool, shape (N,)
    events : tuple of str
        NumericalError texts of the vehicles the guard stopped, in step then vehicle order.
    log : ndarray, shape (N, rows, 12 + 2m) or None
        Rows [η, ν, command, actuators] per step (``log=True``).
    log_state : ndarray, shape (N, rows, STATE_SIZE) or None
        Controller states per row (``log=True``).
    names : tuple of str
        Names of the controller-state columns.
    """

    x: F64
    state: F64
    u: F64
    alive: NDArray[np.bool_]
    events: tuple[str, ...]
    log: F64 | None
    log_state: F64 | None
    names: tuple[str, ...]


def run(
    v: base.FleetVehicle, x: F64, steps: int, h: float = 0.02, *,
    state: F64 | None = None, alive: NDArray[np.bool_] | None = None, k0: int = 0,
    commands: F64 | None = None, final: bool = False, log: bool = False,
    par: F64 | None = None, max_speed: float = 50.0, max_rate: float = 50.0,
    backend: str | None = None,
) -> LoopResult:  # fmt: skip
    """Advance N vehicles ``steps`` closed-loop steps in one kernel launch (N = 1 included).

    Parameters
    ----------
    v : FleetVehicle
        The vehicle; its own control system (``v.control_mode``) closes the loop.
    x : ndarray, shape (N, 12 + m)
        Initial rows [η (6) [m, rad], ν (6) [m/s, rad/s], actuators (units of ``v.units``)].
    steps : int
        Loop steps (time k0·h → (k0 + steps)·h).
    h : float
        Sample time [s].
    state : ndarray, shape (N, STATE_SIZE), optional
        Controller states (default zeros, upstream's initial state).
    alive : ndarray of bool, shape (N,), optional
        Vehicles still running (default all).
    k0 : int
        Index of the first step (step inputs read t = k·h).
    commands : ndarray, shape (rows, m), optional
        Open-loop commands of steps 0 … rows − 1 for every vehicle (replace the control
        system; rows ≥ k0 + steps + final).
    final : bool
        Also run the control call (and log row) of step k0 + steps, without a dynamics step.
    log : bool
        Keep every row (see :class:`LoopResult`).
    par : ndarray, shape (N, size), optional
        Per-vehicle parameter rows (default ``v.row``).
    max_speed, max_rate : float
        Divergence bounds on |ν₁| [m/s] and |ω| [rad/s].
    backend : str, optional
        ``cpu`` (default), ``python`` or ``cuda``.

    Returns
    -------
    LoopResult
    """
    name = backends.resolve(backend)
    xs = np.array(x, dtype=float, order="C")
    n, m = xs.shape[0], v.m
    code, cpar, names = ctl.law(v, h)
    if commands is not None:
        code, names = ctl.TABLE, ()
        table = np.ascontiguousarray(commands, dtype=float).reshape(-1, m)
    else:
        table = np.zeros((1, m))
    st = np.zeros((n, ctl.STATE_SIZE)) if state is None else np.array(state, dtype=float)
    al = np.ones(n, dtype=bool) if alive is None else np.array(alive, dtype=bool).reshape(n)
    pr = np.ascontiguousarray(v.row if par is None else par, dtype=float)
    rows = steps + int(final)
    lg = np.empty((n, rows, 12 + 2 * m)) if log else np.empty((1, 1, 1))
    lst = np.empty((n, rows, ctl.STATE_SIZE)) if log else np.empty((1, 1, 1))
    y, u = np.empty_like(xs), np.zeros((n, m))
    status, size = np.zeros(n, dtype=np.int8), np.zeros(n)
    ev_code, ev_size, ev_step = np.zeros(n, dtype=np.int8), np.zeros(n), np.zeros(n, np.int64)
    args = (
        v.kind, pr, kernel.REMUS_CA_ZERO, code, cpar, st, xs, y, u, table, int(k0), int(steps),
        int(final), float(h), float(max_speed), float(max_rate), al, status, size, ev_code,
        ev_size, ev_step, int(log), lg, lst,
    )  # fmt: skip
    outs = {5: st, 6: xs, 8: u, 16: al, 19: ev_code, 20: ev_size, 21: ev_step, 23: lg, 24: lst}
    with np.errstate(all="ignore"):
        LOOP.launch(name, args, outs)
    events: list[str] = []
    stopped = np.flatnonzero(ev_step >= 0)
    for k in np.unique(ev_step[stopped]):
        code_k = np.where(ev_step == k, ev_code, np.int8(0))
        events.extend(guard.events(code_k, ev_size, int(k) * h, max_speed, max_rate))
    return LoopResult(
        xs, st, u, al, tuple(events), lg if log else None, lst if log else None, names
    )
