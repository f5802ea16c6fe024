"""The REMUS 100 block's compiled-capable laws and their declarations.

``depth_heading_autopilot`` and ``fossen6dof`` with a PythonVehicleSimulator REMUS 100 preset
join the generated tick (:mod:`marinesim.engine.compiled`) through these declarations; the
laws call the same L1 functions the plugins' Python hooks call —
:func:`marinesim.control.pvs_fleet.remus_law` (the autopilot) and
:func:`marinesim.models.sixdof.pvs_vehicles.step_one` (the model's step with its divergence
guard) — over structure-of-arrays copies of the plugins' state.

Wires: the autopilot writes ``bus.fins_cmd`` (N, 2) and ``bus.propeller_cmd`` (N,) — the
``fins/cmd`` / ``propeller/cmd`` topics, held by the motion between messages — and reads
``truth.eta`` / ``truth.nu`` (N, 6), which the motion writes after its substeps (the pose and
the Euler angles of the truth quaternion, the expressions of
:func:`marinesim.core.frames.euler_from_quat`), and ``bus.desired`` (N, 3: the last
``DESIRED_HEADING``, ``DESIRED_SPEED``, ``DESIRED_DEPTH``), which a compiled ``waypoints``
of the block writes (:func:`marinesim.engine.plugins.usm_laws.waypoints_laws`, reading the
position from ``truth.eta``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
from numba.extending import register_jitable

from marinesim.control.autopilots import RemusDepthHeadingState
from marinesim.control.pvs_fleet import remus_law, remus_row
from marinesim.core.compile import PARALLEL_MIN
from marinesim.core.frames import (
    angle360,
    euler_from_quat,
    euler_from_quat_c,
    quat_from_euler_c,
    wrap_pi_c,
)
from marinesim.core.state import VehicleState
from marinesim.engine.compiled.frozen import FROZEN_SHARED, frozen_laws, load_held
from marinesim.engine.compiled.law import Law, Laws, Worlds, log_ticks, on_cuda
from marinesim.models.sixdof.pvs_vehicles import STEP, step_one

__all__ = [
    "autopilot_laws", "autopilot_log", "autopilot_tick", "cm", "pvs_after", "pvs_laws", "pvs_substep",
    "pvs_substep_threads", "rows_commit", "truth_frames",
]  # fmt: skip

#: The plugin route's ``prange`` kernel of the model's step (its threads from
#: :data:`PARALLEL_MIN` vehicles on, as in the plugin route).
_STEP_PAR = STEP.parallel
#: The model's divergence bounds in the plugin route (pvs.step_guarded's defaults) [m/s, rad/s].
MAX_SPEED = 50.0
MAX_RATE = 50.0
_D2R = math.pi / 180
_R2D = 180.0 / math.pi
_SRC = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------------------ laws
@register_jitable
def autopilot_tick(k, j, t, h, prow, wnz, sp, tprev, ap, desired, eta, nu, u5, fins, prop):  # noqa: ANN001, ANN201
    """One ``depth_heading_autopilot`` control call of every vehicle at ``t``.

    Its set-points are the last ``DESIRED_HEADING`` [deg] and ``DESIRED_DEPTH`` [m] in
    ``desired`` (N, 3: heading, speed, depth; a compiled ``waypoints`` of the block writes it,
    or it holds the plugin's set-points from the load): the depth clipped to 0–100 m as the
    plugin takes a message, both kept in ``sp`` (depth, heading) for the log and the commit."""
    n = ap.shape[0]
    hc = max(t - tprev[0], 1e-12)
    e0 = math.exp(-hc * wnz[0])
    for i in range(n):
        p = prow[i]
        z = desired[i, 2]
        z = 0.0 if z < 0.0 else (100.0 if z > 100.0 else z)  # np.clip (NaN passes)
        hd = desired[i, 0]
        sp[i, 0] = z
        sp[i, 1] = hd
        p[2] = z  # ref_z
        p[0] = e0
        p[1] = 1 - math.exp(-hc * wnz[0])
        psi_d = ap[i, 4]
        psi_ref = psi_d + wrap_pi_c(hd * _D2R - psi_d)  # np.radians: x · (π/180)
        p[21] = (psi_ref * _R2D) * _D2R  # the set-point in degrees, as the plugin's gains
        remus_law(p, ap[i], eta[i], nu[i], hc, u5[i])
        # the torpedo's [δ_r, −δ_r, δ_s, −δ_s, n] → REMUS 100's fins [δ_r, −δ_s], propeller n
        fins[i, 0] = u5[i, 0]
        fins[i, 1] = u5[i, 3]
        prop[i] = u5[i, 4]
    tprev[0] = t
    return 0


@register_jitable
def autopilot_log(k, j, t, h, fins, prop, sp, log_cmd, log_sp):  # noqa: ANN001, ANN201
    """The command and set-points the frame at t_{k+1} holds: the last ones (every tick), in
    component-major logs (c, ticks, N), the recorder's layout."""
    for i in range(fins.shape[0]):
        log_cmd[0, j, i] = fins[i, 0]
        log_cmd[1, j, i] = fins[i, 1]
        log_cmd[2, j, i] = prop[i]
        log_sp[0, j, i] = sp[i, 0]
        log_sp[1, j, i] = sp[i, 1]
    return 0


@register_jitable
def _held_commands(s, nsub, fins, prop, cmd, x, xq):  # noqa: ANN001, ANN202
    """Before a substep: the held fin/propeller commands at the first, and at the last the
    rows before it (the truth's specific force)."""
    n = x.shape[0]
    if s == 0:
        for i in range(n):
            cmd[i, 0] = fins[i, 0]
            cmd[i, 1] = fins[i, 1]
            cmd[i, 2] = prop[i]
    if s == nsub[0] - 1:
        for i in range(n):
            for c in range(x.shape[1]):
                xq[i, c] = x[i, c]


@register_jitable
def _stepped(h, x, xb, tmodel):  # noqa: ANN001, ANN202
    """After a substep every vehicle passed: the new rows become the state."""
    for i in range(x.shape[0]):
        for c in range(x.shape[1]):
            x[i, c] = xb[i, c]
    tmodel[0] = tmodel[0] + h


@register_jitable
def pvs_substep(
    k, j, s, t, h, nsub, kind, par, zero, fins, prop, cmd, x, xb, xq, alive, status, size, tmodel
):  # noqa: ANN001, ANN201
    """One guarded PythonVehicleSimulator step of every vehicle (held fin/propeller commands)."""
    _held_commands(s, nsub, fins, prop, cmd, x, xq)
    for i in range(x.shape[0]):
        step_one(i, kind[0], par, zero, x, cmd, h, MAX_SPEED, MAX_RATE, alive, xb, status, size)
        if status[i] != 0:
            return 1  # the guard stopped it: the plugins run this tick (event, non-finite)
    _stepped(h, x, xb, tmodel)
    return 0


@register_jitable
def pvs_substep_threads(
    k, j, s, t, h, nsub, kind, par, zero, fins, prop, cmd, x, xb, xq, alive, status, size, tmodel
):  # noqa: ANN001, ANN201
    """:func:`pvs_substep` with the vehicles' steps on every core: the plugin route's own
    ``prange`` kernel of :func:`step_one` (``pvs_vehicles.STEP``), for blocks of at least
    :data:`~marinesim.core.compile.PARALLEL_MIN` vehicles.  Each vehicle's step is the same
    code on the same row (the same bits); a vehicle the guard stops hands the tick back as
    before (the rows of the others are then computed again by the plugins)."""
    _held_commands(s, nsub, fins, prop, cmd, x, xq)
    _STEP_PAR(
        x.shape[0], kind[0], par, zero, x, cmd, h, MAX_SPEED, MAX_RATE, alive, xb, status, size
    )
    for i in range(x.shape[0]):
        if status[i] != 0:
            return 1
    _stepped(h, x, xb, tmodel)
    return 0


@register_jitable
def pvs_after(k, j, t, h, x, eta, quat, nu, xlog, elog):  # noqa: ANN001, ANN201
    """The truth at t_{k+1}: pose, attitude quaternion, velocities and the Euler angles of its
    quaternion, logged component-major (c, ticks, N: the recorder's layout, one contiguous
    block per column)."""
    n = x.shape[0]
    for i in range(n):
        for c in range(x.shape[1]):
            xlog[c, j, i] = x[i, c]
        # quat_from_euler, then euler_from_quat (the plugin's route)
        q0, q1, q2, q3 = quat_from_euler_c(x[i, 3], x[i, 4], x[i, 5])
        quat[i, 0], quat[i, 1], quat[i, 2], quat[i, 3] = q0, q1, q2, q3
        roll, pitch, yaw = euler_from_quat_c(q0, q1, q2, q3)
        eta[i, 0], eta[i, 1], eta[i, 2] = x[i, 0], x[i, 1], x[i, 2]
        eta[i, 3], eta[i, 4], eta[i, 5] = roll, pitch, yaw
        elog[0, j, i], elog[1, j, i], elog[2, j, i] = roll, pitch, yaw
        for c in range(6):
            nu[i, c] = x[i, 6 + c]
    return 0


def cm(log: np.ndarray, c0: int, c1: int, ticks: int) -> np.ndarray:
    """Columns ``c0:c1`` of the first ``ticks`` rows of a component-major log, as the
    recorder's (ticks, N, c) view."""
    return log[c0:c1, :ticks].transpose(1, 2, 0)


def truth_frames(xlog: np.ndarray, elog: np.ndarray, ticks: int) -> dict[str, np.ndarray]:
    """The truth signals of :func:`pvs_after`'s logs (the recorder's names and units)."""
    return {
        "truth.pos": cm(xlog, 0, 3, ticks),
        "truth.heading": angle360(np.degrees(elog[2:3, :ticks])).transpose(1, 2, 0),
        "truth.speed": cm(xlog, 6, 7, ticks),
    }


# ------------------------------------------------------------------------------ declarations
def truth_wires(tr: VehicleState) -> dict[str, np.ndarray]:
    """The truth wires (``truth.eta``, ``truth.quat``, ``truth.nu``) of a truth state: what an
    ended world's rows hold (:func:`~marinesim.engine.compiled.frozen.load_held`)."""
    return {
        "truth.eta": np.concatenate([tr.pos, euler_from_quat(tr.quat)], axis=1),
        "truth.quat": tr.quat,
        "truth.nu": np.concatenate([tr.vel, tr.ang_vel], axis=1),
    }


def rows_commit(sim: Any, blk: Any, st: dict[str, Any], a: dict[str, np.ndarray], kstop: int) -> None:
    """The model's rows, specific force and truth at tick ``kstop`` (what the plugin's last
    substep leaves): ``a["x"]`` the rows, ``a["xq"]`` those before the last substep,
    ``a["tmodel"]`` the model's time (PythonVehicleSimulator models, REMUS 100 and fleet)."""
    from marinesim.models.sixdof.motion import RowsState

    clock = sim.clock
    motion = st["motion"]
    n = a["x"].shape[0]
    x1 = RowsState(x=a["x"].copy(), alive=np.ones(n, dtype=bool), t=float(a["tmodel"][0]))
    st["x"] = x1
    pos, quat, vel, ang = motion.pose(x1)
    xp = RowsState(x=a["xq"].copy(), alive=np.ones(n, dtype=bool))
    st["accel"] = motion.specific_force(motion.nu(xp), x1, clock.h, sim.env.gravity, quat)
    t_stop = clock.start + kstop * clock.dt
    blk.truth = VehicleState(
        pos.copy(), quat.copy(), vel.copy(), ang.copy(), st["accel"].copy(), t_stop
    )
    blk._truth_ro = None


def autopilot_laws(plugin: Any, slot: Any, sim: Any) -> Laws:
    """The ``depth_heading_autopilot`` declaration (any rate; the motion owns the wires)."""
    from marinesim.engine.plugins.wrench import autopilot_gains

    n = slot.block.n
    cp: Any = plugin.params
    st = slot.ctx.state
    row = remus_row(autopilot_gains(cp, 0.0, 0.0, 0.0), sim.clock.dt)
    T = log_ticks(n, 5)
    a = {
        "prow": np.repeat(row, n, axis=0), "wnz": np.array([float(cp.wn_d_z)]),
        "sp": np.zeros((n, 2)), "tprev": np.zeros(1), "ap": np.zeros((n, 8)),
        "bus.desired": np.zeros((n, 3)), "u5": np.zeros((n, 5)),
        "log_cmd": np.zeros((3, T, n)), "log_sp": np.zeros((2, T, n)),
    }  # fmt: skip
    fields = tuple(RemusDepthHeadingState.__dataclass_fields__)

    def load(k: int) -> None:
        ap = st["ap"]
        for c, name in enumerate(fields):
            a["ap"][:, c] = getattr(ap, name)
        a["tprev"][0] = st["t_prev"]
        a["prow"][:, 9] = st["rpm"]  # ref_n
        # the set-points held (ref_z, the heading: the law takes them from here each tick)
        a["bus.desired"][:, 0] = st["heading"]
        a["bus.desired"][:, 1] = 0.0  # (DESIRED_SPEED: the rpm stays; see waypoints_laws)
        a["bus.desired"][:, 2] = st["depth"]
        a["sp"][:, 0] = st["depth"]  # (logged on the ticks the autopilot skips: held)
        a["sp"][:, 1] = st["heading"]

    def commit(k: int, kstop: int, ticks: int) -> None:
        st["ap"] = RemusDepthHeadingState(*a["ap"].T.copy())
        st["t_prev"] = float(a["tprev"][0])
        st["depth"] = a["sp"][:, 0].copy()
        st["heading"] = a["sp"][:, 1].copy()

    def finish(ticks: int) -> dict[str, np.ndarray]:
        ul = a["log_cmd"][:, :ticks]
        com = np.empty_like(ul)
        com[:2] = np.degrees(ul[:2])
        com[2] = ul[2]
        return {
            f"{plugin.name}.command": com.transpose(1, 2, 0),
            f"{plugin.name}.desired": cm(a["log_sp"], 0, 2, ticks),
        }

    return Laws(
        laws=[
            Law("control", autopilot_tick, (
                "prow", "wnz", "sp", "tprev", "ap", "bus.desired", "truth.eta", "truth.nu",
                "u5", "bus.fins_cmd", "bus.propeller_cmd")),
            Law("after_physics", autopilot_log, (
                "bus.fins_cmd", "bus.propeller_cmd", "sp", "log_cmd", "log_sp")),
        ],
        arrays=a, state=("ap", "tprev", "sp", "bus.desired"), logs=("log_cmd", "log_sp"), max_ticks=T,
        publishes=("fins/cmd", "propeller/cmd"),
        sources=(_SRC / "control" / "pvs_fleet.py", _SRC / "core" / "frames.py"),
        ready=lambda: "ap" in st and math.isfinite(st.get("t_prev", math.nan)),
        load=load, commit=commit, finish=finish,
        gpu=Worlds(n, slot.ctx.n_worlds, shared=("wnz",), world=("tprev",)),
    )  # fmt: skip


def pvs_laws(plugin: Any, slot: Any, sim: Any) -> Laws | str | None:
    """The ``fossen6dof`` (PythonVehicleSimulator REMUS 100) declaration; the reason for
    another PythonVehicleSimulator model or a current field (they run tick by tick); None for
    a model that is not PythonVehicleSimulator's."""
    from marinesim.models.sixdof.motion import PvsMotion
    from marinesim.models.sixdof.pvs import _kernel_params

    if not isinstance(plugin.motion, PvsMotion):
        return None
    if plugin.motion.name != "remus100":
        return f"the {plugin.motion.name} (PythonVehicleSimulator) model has no compiled laws"
    if sim.env.current_field is not None:
        return "a current field (REMUS 100's compiled laws take a uniform current)"

    n = slot.block.n
    st = slot.ctx.state
    blk = slot.block
    kind, par, zero = _kernel_params(plugin.motion.built)  # shapes; values at load
    par, zero = np.array(par), np.array(zero)
    m = 15
    T = log_ticks(n, m + 3)
    a = {
        "nsub": np.array([int(sim.clock.substeps)], dtype=np.int64),
        "kind": np.array([kind], dtype=np.int64), "par": par, "zero": zero,
        "bus.fins_cmd": np.zeros((n, 2)), "bus.propeller_cmd": np.zeros(n),
        "cmd": np.zeros((n, 3)), "x": np.zeros((n, m)), "xb": np.zeros((n, m)),
        "xq": np.zeros((n, m)), "alive": np.ones(n, dtype=np.bool_),
        "status": np.zeros(n, dtype=np.int8), "size": np.zeros(n), "tmodel": np.zeros(1),
        "truth.eta": np.zeros((n, 6)), "truth.quat": np.zeros((n, 4)), "truth.nu": np.zeros((n, 6)),
        "xlog": np.zeros((m, T, n)), "elog": np.zeros((3, T, n)),
    }  # fmt: skip
    hold = frozen_laws(a, ("truth.eta", "truth.quat", "truth.nu"))  # an ended world stays
    mname = plugin.name

    def ready() -> bool:
        if "x" not in st or "still_water" not in st:
            return False
        return not st["bad"].any() and bool(st["x"].alive.all())

    def load(k: int) -> None:
        # the plugin's model in the scenario's current (built at start)
        kind1, par1, zero1 = _kernel_params(st["motion"].built)
        a["kind"][0], a["par"][...], a["zero"][...] = kind1, par1, zero1
        a["x"][...] = st["x"].x
        a["tmodel"][0] = st["x"].t
        a["cmd"][...] = st["cmd"]
        a["bus.fins_cmd"][...] = st["cmd"][:, :2]
        a["bus.propeller_cmd"][...] = st["cmd"][:, 2]
        tr = blk.truth
        a["truth.eta"][:, :3] = a["x"][:, :3]
        a["truth.eta"][:, 3:] = euler_from_quat(tr.quat)  # the autopilot's belief at t_k
        a["truth.nu"][...] = a["x"][:, 6:12]
        load_held(sim, blk, a, truth_wires)

    def commit(k: int, kstop: int, ticks: int) -> None:
        rows_commit(sim, blk, st, a, kstop)
        st["cmd"] = a["cmd"].copy()
        st["commanded"] = st["commanded"] | True

    def finish(ticks: int) -> dict[str, np.ndarray]:
        xl, el = a["xlog"], a["elog"]
        act = np.empty((3, ticks, n))
        act[:2] = np.degrees(xl[12:14, :ticks])
        act[2] = xl[14, :ticks]
        return {
            **truth_frames(xl, el, ticks),
            f"{mname}.euler": np.degrees(el[:, :ticks]).transpose(1, 2, 0),
            f"{mname}.nu": cm(xl, 6, 12, ticks),
            f"{mname}.actuators": act.transpose(1, 2, 0),
        }

    return Laws(
        laws=[
            # (on CUDA each world's thread steps its own vehicles: pvs_substep)
            Law("substep", pvs_substep_threads if n >= PARALLEL_MIN and not on_cuda() else pvs_substep, (
                "nsub", "kind", "par", "zero", "bus.fins_cmd", "bus.propeller_cmd", "cmd", "x",
                "xb", "xq", "alive", "status", "size", "tmodel")),
            Law("after_physics", pvs_after, ("x", "truth.eta", "truth.quat", "truth.nu", "xlog",
                                             "elog")),
            *hold,
        ],
        arrays=a,
        state=("bus.fins_cmd", "bus.propeller_cmd", "cmd", "x", "xq", "alive", "status",
               "size", "tmodel", "truth.eta", "truth.quat", "truth.nu"),
        logs=("xlog", "elog"), max_ticks=T, sources=(_SRC / "models" / "sixdof", _SRC / "core" / "frames.py"),
        ready=ready, load=load, commit=commit, finish=finish,
        gpu=Worlds(n, slot.ctx.n_worlds, shared=("nsub", "kind", "par", "zero", *FROZEN_SHARED),
                   world=("tmodel",)),
        holds=True,
    )  # fmt: skip
