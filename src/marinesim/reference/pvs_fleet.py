"""Replay of the PythonVehicleSimulator fleet (``marinesim verify``, kind ``pvs``; README §3.4).

DSRV, frigate, ROVzefakkel, semisub, shipClarke83, supply, tanker and torpedo (REMUS 100 and
Otter stay in :mod:`marinesim.reference.pvs`, which hands these over).  Each ``files`` entry
names the exact upstream ``constructor``; the vehicle is built by
:mod:`marinesim.models.sixdof.fleet`, run through the loop of ``loop_semantics`` (row k: η_k,
ν_k, the command of the vehicle's own control system, the actuator states, the controller
states after the call; then ν_{k+1}, u_{k+1} = dynamics(...), η_{k+1} = attitudeEuler(η_k,
ν_{k+1})) and every CSV column compared at the §3.3 tolerance.  The whole run is one launch
of the compiled closed loop (:mod:`marinesim.reference.pvs_fleet_loop`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from marinesim.core.errors import ConfigError, DataError
from marinesim.models.sixdof import fleet
from marinesim.reference import pvs as base
from marinesim.reference import pvs_fleet_loop as loop
from marinesim.reference.runner import CaseResult

__all__ = ["NAMES", "build", "handles", "simulate", "verify_file"]

F64 = NDArray[np.float64]
NAMES = tuple(fleet.VEHICLES)


def handles(constructor: str) -> bool:
    """True when the constructor string names a fleet vehicle."""
    try:
        name, _, _ = base.parse_constructor(constructor)
    except ConfigError:
        return False
    return name in fleet.VEHICLES


def build(constructor: str) -> fleet.FleetVehicle:
    """Build the fleet vehicle an upstream constructor string names (e.g.
    ``"tanker('headingAutopilot', -20, 0.5, 150, 20, 80)"``)."""
    name, args, kwargs = base.parse_constructor(constructor)
    try:
        return fleet.build(name, *args, **kwargs)
    except TypeError as exc:
        raise ConfigError(f"{constructor!r}: {exc}", param="constructor") from None


def simulate(
    vehicle: fleet.FleetVehicle | str,
    n_steps: int,
    h: float = 0.02,
    *,
    n_vehicles: int = 1,
    commands: F64 | None = None,
    backend: str | None = None,
) -> base.PvsRun:
    """Run PythonVehicleSimulator's loop for N identical vehicles at once (N = 1 included).

    Parameters
    ----------
    vehicle : FleetVehicle or constructor string
    n_steps : int
        Steps N (rows = N + 1).
    h : float
        Sample time [s].
    n_vehicles : int
        Vehicles in the batch.
    commands : ndarray, shape (rows, m), optional
        Open-loop commands (override the vehicle's control system).
    backend : str, optional
        ``cpu``, ``python`` or ``cuda``.

    Returns
    -------
    PvsRun
        Columns ``t``, η, ν, ``NAME_cmd``, ``NAME`` per actuator and the controller states,
        each (n_vehicles, rows).
    """
    v = build(vehicle) if isinstance(vehicle, str) else vehicle
    m, rows, nv = v.m, n_steps + 1, n_vehicles
    x = np.zeros((nv, 12 + m))
    x[:, 6:12] = v.nu0
    if commands is not None:
        commands = np.asarray(commands, dtype=float)
        if commands.shape != (rows, m):
            raise DataError(f"commands must have shape {(rows, m)}, got {commands.shape}")
    res = loop.run(v, x, n_steps, h, commands=commands, final=True, log=True, backend=backend)
    log, lst = res.log, res.log_state
    assert log is not None and lst is not None
    cols: dict[str, F64] = {}
    for i, name in enumerate(("x", "y", "z", "phi", "theta", "psi", "u", "v", "w", "p", "q", "r")):
        cols[name] = log[:, :, i]
    for i, name in enumerate(v.controls):
        cols[f"{name}_cmd"] = log[:, :, 12 + i]
        cols[name] = log[:, :, 12 + m + i]
    for i, key in enumerate(res.names):
        cols[key] = lst[:, :, i]
    t = np.arange(rows) * h
    cols["t"] = np.broadcast_to(t, (nv, rows))
    return base.PvsRun(t=t, columns=cols, events=res.events, alive=np.atleast_1d(res.alive))


def verify_file(path: Path, entry: dict[str, Any]) -> CaseResult:
    """Replay one fleet trajectory of a manifest entry and compare every column (§3.3)."""
    case = path.name.removesuffix(".gz").removesuffix(".csv")
    res = CaseResult("pvs", case, str(path))
    try:
        header, data, columns, h, n_steps = base.read_case(path, entry)
        v = build(str(entry["constructor"]))
        names = [f"{c}_cmd" for c in v.controls]
        commands = base.open_loop_commands(entry, header, data, names, path)
        run = simulate(v, n_steps, h, commands=commands)
    except (ConfigError, DataError, KeyError, ValueError) as exc:
        res.error = True
        res.message = f"{type(exc).__name__}: {exc}"
        return res
    return base.compare_run(res, entry, header, data, columns, run, f"{n_steps} steps of {h} s")
