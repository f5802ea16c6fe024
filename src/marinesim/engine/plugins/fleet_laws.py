"""The PythonVehicleSimulator fleet's compiled-capable laws and their declaration.

``fossen6dof`` with a fleet preset (``tanker``, ``torpedo``, ``supply`` … :mod:`marinesim.
models.sixdof.fleet`) joins the generated tick (:mod:`marinesim.engine.compiled`) through
:func:`fleet_laws`.  The plugin's substep runs the vehicle's own control system, then one
guarded PythonVehicleSimulator loop step; the law does the same with the same L1 functions
the plugin's Python route launches — :func:`marinesim.control.pvs_fleet.control_row` (the
constructor's ``controlSystem``: step input, PID / DP / REMUS autopilot, on the packed row
of :func:`marinesim.control.pvs_fleet.law`) and :func:`marinesim.models.sixdof.fleet.kernel.
step_one` (the vehicle's ``dynamics``, ``attitudeEuler`` and the divergence guard; its copy
made for the vehicle's kind, ``kernel.STEP_OF``, so that a tick compiles one kind's dynamics)
— over structure-of-arrays copies of the plugin's state.  The frame at t_{k+1} is
:func:`marinesim.engine.plugins.remus_laws.pvs_after` (the rows' pose and Euler angles, as
for REMUS 100) and the controller states the plugin logs as ``autopilot``.

A vehicle that received ``actuators/cmd`` uses the held command instead of its own control
system (which still runs, as in the plugin); those messages come from Python plugins, so the
route hands their ticks to the plugins.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numba.extending import register_jitable

from marinesim.control.pvs_fleet import STATE_SIZE, control_row, law
from marinesim.engine.compiled.frozen import FROZEN_SHARED, frozen_laws, load_held
from marinesim.engine.compiled.law import Law, Laws, Worlds, copy_log_cm, log_ticks
from marinesim.engine.plugins.remus_laws import (
    MAX_RATE,
    MAX_SPEED,
    cm,
    pvs_after,
    rows_commit,
    truth_frames,
    truth_wires,
)
from marinesim.models.sixdof.fleet.kernel import REMUS_CA_ZERO, STEP_OF

__all__ = ["SUBSTEP", "fleet_laws"]

_SRC = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------------------ laws
def _substep(step: Any, name: str) -> Any:
    """The substep law over one kind's :func:`~marinesim.models.sixdof.fleet.kernel.step_one`
    (``kernel.STEP_OF``: a generated tick compiles that kind's dynamics only)."""

    @register_jitable
    def law(k, j, s, t, h, nsub, kind, par, zero, code, cpar, table, commanded, cmd, u, ost, x, xb, xq, eta, nu, alive, status, size, tmodel):  # noqa: ANN001, ANN202, E501
        """The vehicles' own control system at ``t``, then one guarded loop step of each.

        The control system reads η and ν from arrays of their own (``eta``, ``nu``), as the
        plugin passes them: :func:`control_row` then has the argument types of the plugin's
        kernel and is compiled once for both."""
        n = x.shape[0]
        m = x.shape[1]
        w = u.shape[1]
        if s == nsub[0] - 1:  # the rows before the last substep (the truth's specific force)
            for i in range(n):
                for c in range(m):
                    xq[i, c] = x[i, c]
        for i in range(n):
            for c in range(6):
                eta[i, c] = x[i, c]
                nu[i, c] = x[i, 6 + c]
        for i in range(n):
            control_row(i, code[0], cpar, ost, eta, nu, t, h, table, 0, u)
        for i in range(n):
            if commanded[i]:  # a held actuators/cmd replaces the vehicle's own command
                for c in range(w):
                    u[i, c] = cmd[i, c]
        for i in range(n):
            step(i, kind[0], par, zero, x, u, h, MAX_SPEED, MAX_RATE, alive, xb, status, size)
            if status[i] != 0:
                return 1  # the guard stopped it: the plugins run this tick (event, non-finite)
        for i in range(n):
            for c in range(m):
                x[i, c] = xb[i, c]
        tmodel[0] = tmodel[0] + h
        return 0

    law.__name__ = law.__qualname__ = name  # the generated tick imports it by this name
    return law


#: The substep law of each vehicle kind (``fleet_substep_tanker`` ...), by kind.
SUBSTEP = {kd: _substep(fn, f"fleet_substep_{fn.__name__[5:]}") for kd, fn in STEP_OF.items()}
globals().update({fn.__name__: fn for fn in SUBSTEP.values()})


# ------------------------------------------------------------------------------ declaration
def fleet_laws(plugin: Any, slot: Any, sim: Any) -> Laws:
    """The ``fossen6dof`` declaration of a PythonVehicleSimulator fleet vehicle (any preset of
    the fleet, any ``control_system``; N vehicles of one preset)."""
    n = slot.block.n
    st = slot.ctx.state
    blk = slot.block
    v0 = plugin.motion.built
    h = float(sim.clock.h)
    code0, cpar0, names = law(v0, h)
    m = v0.m
    nx = 12 + m
    T = log_ticks(n, nx + 3 + STATE_SIZE)
    # the autopilot log's columns: the plugin logs the states in sorted name order
    cols = [names.index(key) for key in sorted(names)]
    rad = [i for i, unit in enumerate(v0.units) if unit == "rad"]
    a = {
        "nsub": np.array([int(sim.clock.substeps)], dtype=np.int64),
        "kind": np.array([v0.kind], dtype=np.int64), "par": np.array(v0.row, dtype=float),
        "zero": np.array(REMUS_CA_ZERO, dtype=np.int64),
        "code": np.array([code0], dtype=np.int64), "cpar": np.array(cpar0, dtype=float),
        "table": np.zeros((1, m)), "commanded": np.zeros(n, dtype=np.bool_),
        "cmd": np.zeros((n, m)), "u": np.zeros((n, m)), "ost": np.zeros((n, STATE_SIZE)),
        "x": np.zeros((n, nx)), "xb": np.zeros((n, nx)), "xq": np.zeros((n, nx)),
        "eta": np.zeros((n, 6)), "nu": np.zeros((n, 6)), "alive": np.ones(n, dtype=np.bool_), "status": np.zeros(n, dtype=np.int8),
        "size": np.zeros(n), "tmodel": np.zeros(1),
        "truth.eta": np.zeros((n, 6)), "truth.quat": np.zeros((n, 4)), "truth.nu": np.zeros((n, 6)),
        "xlog": np.zeros((nx, T, n)), "elog": np.zeros((3, T, n)),
        "slog": np.zeros((STATE_SIZE, T, n)),
    }  # fmt: skip
    hold = frozen_laws(a, ("truth.eta", "truth.quat", "truth.nu"))  # an ended world stays
    mname = plugin.name
    rows: dict[int, tuple[int, np.ndarray]] = {}

    def ready() -> bool:
        if "x" not in st or "still_water" not in st or "onboard" not in st:
            return False
        return not st["bad"].any() and bool(st["x"].alive.all())

    def load(k: int) -> None:
        # the plugin's model in the scenario's current (built at start) and its control row
        v = st["motion"].built
        if id(v) not in rows:
            rows.clear()
            c, p, _ = law(v, h)
            rows[id(v)] = (c, np.array(p, dtype=float))
        a["code"][0], a["cpar"][...] = rows[id(v)]
        if v.kind != v0.kind:  # (a preset's kind is fixed: never the case)
            raise RuntimeError(f"{mname}: the vehicle kind changed since the declaration")
        a["kind"][0], a["par"][...] = v.kind, v.row
        a["x"][...] = st["x"].x
        a["tmodel"][0] = st["x"].t
        a["cmd"][...] = st["cmd"]
        a["commanded"][...] = st["commanded"]
        ob = st["onboard"]
        a["ost"][...] = 0.0
        for c, key in enumerate(names):
            a["ost"][:, c] = ob[key]
        load_held(sim, blk, a, truth_wires)

    def commit(k: int, kstop: int, ticks: int) -> None:
        rows_commit(sim, blk, st, a, kstop)
        if names:
            st["onboard"] = {key: a["ost"][:, c].copy() for c, key in enumerate(names)}

    def finish(ticks: int) -> dict[str, np.ndarray]:
        xl, el = a["xlog"], a["elog"]
        act = xl[12:, :ticks].copy()
        for i in rad:
            act[i] = np.degrees(act[i])
        out = {
            **truth_frames(xl, el, ticks),
            f"{mname}.euler": np.degrees(el[:, :ticks]).transpose(1, 2, 0),
            f"{mname}.nu": cm(xl, 6, 12, ticks),
            f"{mname}.actuators": act.transpose(1, 2, 0),
            f"{mname}.command": np.broadcast_to(a["cmd"], (ticks, n, m)),  # held all along
        }
        if names:
            out[f"{mname}.autopilot"] = a["slog"][cols, :ticks].transpose(1, 2, 0)
        return out

    return Laws(
        laws=[
            Law("substep", SUBSTEP[v0.kind], (
                "nsub", "kind", "par", "zero", "code", "cpar", "table", "commanded", "cmd", "u",
                "ost", "x", "xb", "xq", "eta", "nu", "alive", "status", "size", "tmodel")),
            Law("after_physics", pvs_after, ("x", "truth.eta", "truth.quat", "truth.nu", "xlog",
                                             "elog")),
            Law("after_physics", copy_log_cm, ("ost", "slog")),
            *hold,
        ],
        arrays=a,
        state=("u", "ost", "x", "xb", "xq", "alive", "status", "size", "tmodel", "truth.eta",
               "truth.quat", "truth.nu"),
        logs=("xlog", "elog", "slog"), max_ticks=T,
        sources=(_SRC / "models" / "sixdof", _SRC / "models" / "sixdof" / "fleet", _SRC / "control" / "pvs_fleet.py",
                 _SRC / "control" / "autopilots.py", _SRC / "core" / "frames.py"),
        ready=ready, load=load, commit=commit, finish=finish,
        gpu=Worlds(n, slot.ctx.n_worlds,
                   shared=("nsub", "kind", "par", "zero", "code", "cpar", "table",
                           *FROZEN_SHARED),
                   world=("tmodel",)),
        holds=True,
    )  # fmt: skip
