"""Replay of PythonVehicleSimulator trajectories (``marinesim verify``, kind ``pvs``).

A case folder holds ``manifest.json`` (with ``loop_semantics``) and one gzip CSV per
trajectory (``../shared/reference/README.md`` §3).  Each ``files`` entry names the exact
PythonVehicleSimulator ``constructor``; the vehicle is built with
:func:`marinesim.models.sixdof.pvs.remus100` / :func:`~marinesim.models.sixdof.pvs.otter`, run through the
loop of ``loop_semantics`` for ``N`` steps of ``sampleTime`` and every CSV column is compared:
max |replay − expected| ≤ 1e-6 · (max − min) of the expected column, or 1e-6 · max(1, |v|) for
a constant column.

Commands: the vehicle's own control system (``stepInput`` or its autopilot).  An entry with a
``control_sequence`` (or a ``meaning`` saying "open loop": an externally driven run) is
replayed with the commands the CSV logs in its ``*_cmd`` columns; so is a case whose logged
commands are not the constructor's control system while it logs no controller state (the case
message says "replayed from the CSV").  Controller states are
logged after the controller call of each row under the upstream attribute names (REMUS:
``z_d``, ``z_int``, ``theta_int``, ``e_psi_int``, ``psi_d``, ``r_d``, ``a_d``, plus
``theta_d``; Otter: ``e_int``, ``psi_d``, ``r_d``, ``a_d``, plus ``tau_N``).
"""

from __future__ import annotations

import ast
import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from marinesim.control import autopilots as ap
from marinesim.core.errors import ConfigError, DataError
from marinesim.models.sixdof import pvs
from marinesim.reference.manifest import manifest_files
from marinesim.reference.runner import CaseResult, ColumnResult

__all__ = ["PvsRun", "build", "parse_constructor", "simulate", "verify_file", "verify_path"]

F64 = NDArray[np.float64]
REL_TOL = 1e-6

_CMD_NAMES = {"remus100": ("delta_r", "delta_s", "n"), "otter": ("n1", "n2")}


def parse_constructor(text: str) -> tuple[str, list[Any], dict[str, Any]]:
    """Parse ``"remus100('depthHeadingAutopilot', 30, 50, 1525, 0.5, 170)  # note"``.

    Returns
    -------
    name, args, kwargs
        Vehicle function name and literal arguments.

    Raises
    ------
    ConfigError
        When the text is not a call with literal arguments.
    """
    code = text.split("#", 1)[0].strip()
    try:
        node = ast.parse(code, mode="eval").body
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            raise ValueError("not a function call")
        args = [ast.literal_eval(a) for a in node.args]
        kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
    except (SyntaxError, ValueError) as exc:
        raise ConfigError(f"cannot read constructor {text!r}: {exc}", param="constructor") from None
    return node.func.id, args, kwargs


_KW_REMUS = {
    "controlSystem": "control_system",
    "V_current": "V_current",
    "beta_current": "beta_current",
}
_KW_OTTER = {"controlSystem": "control_system"}


def build(constructor: str) -> pvs.Remus100Params | pvs.OtterParams:
    """Build the vehicle a PythonVehicleSimulator constructor string names.

    Parameters
    ----------
    constructor : str
        E.g. ``"otter('headingAutopilot', 100.0, 0.3, -30.0, 200.0)"``.

    Returns
    -------
    Remus100Params or OtterParams
    """
    name, args, kwargs = parse_constructor(constructor)
    if name == "remus100":
        fn: Callable[..., Any] = pvs.remus100
        kw = {_KW_REMUS.get(k, k): v for k, v in kwargs.items()}
    elif name == "otter":
        fn = pvs.otter
        kw = {_KW_OTTER.get(k, k): v for k, v in kwargs.items()}
    else:
        from marinesim.core.errors import UnknownNameError
        from marinesim.reference import pvs_fleet

        raise UnknownNameError(
            "PythonVehicleSimulator vehicle", name, ["otter", "remus100", *pvs_fleet.NAMES],
            param="constructor",
        )  # fmt: skip
    try:
        return fn(*args, **kw)
    except TypeError as exc:
        raise ConfigError(f"{constructor!r}: {exc}", param="constructor") from None


@dataclass(frozen=True)
class PvsRun:
    """Logged run: ``columns`` maps a signal name to an (N_vehicles, rows) array.

    ``events`` holds a NumericalError text per vehicle that diverged (it is frozen from then
    on; the others go on); ``alive`` is the final mask.
    """

    t: F64
    columns: dict[str, F64]
    events: tuple[str, ...] = ()
    alive: Any = None


def simulate(
    vehicle: pvs.Remus100Params | pvs.OtterParams | str,
    n_steps: int,
    h: float = 0.02,
    *,
    n_vehicles: int = 1,
    commands: F64 | None = None,
) -> PvsRun:
    """Run PythonVehicleSimulator's loop (``loop_semantics``) for N vehicles at once.

    Row k holds η_k, ν_k, u_control,k (from the vehicle's control system at η_k, ν_k, or
    ``commands[k]``), u_actual,k and the controller states after the call; then
    ν_{k+1}, u_{k+1} = dynamics(η_k, ν_k, u_k, u_c,k, h) and η_{k+1} = attitudeEuler(η_k, ν_{k+1}).

    Parameters
    ----------
    vehicle : Remus100Params, OtterParams or constructor string
    n_steps : int
        Steps N (rows = N + 1).
    h : float
        Sample time [s].
    n_vehicles : int
        Identical vehicles run as one batch.
    commands : ndarray, shape (rows, m), optional
        Open-loop commands, one row per logged row (overrides the control system).

    Returns
    -------
    PvsRun
    """
    p = build(vehicle) if isinstance(vehicle, str) else vehicle
    kind = p.kind
    cmd_names = _CMD_NAMES[kind]
    m = len(cmd_names)
    rows = n_steps + 1
    nv = n_vehicles
    eta = np.zeros((nv, 6))
    nu = np.zeros((nv, 6))
    u_act = np.zeros((nv, m))
    log_eta = np.empty((rows, nv, 6))
    log_nu = np.empty((rows, nv, 6))
    log_cmd = np.empty((rows, nv, m))
    log_act = np.empty((rows, nv, m))
    state_log: dict[str, F64] = {}

    controller, state = _controller(p, nv)
    if commands is not None:
        commands = np.asarray(commands, dtype=float)
        if commands.shape != (rows, m):
            raise DataError(f"commands must have shape {(rows, m)}, got {commands.shape}")
        controller = None
    # every N (one vehicle included) runs the same compiled kernel on rows [η, ν, actuators]
    x = np.concatenate((eta, nu, u_act), axis=1)
    alive: Any = np.ones(nv, dtype=bool)
    events: list[str] = []
    for k in range(rows):
        t = k * h
        if commands is not None:
            u_arr = np.broadcast_to(commands[k], (nv, m))
        elif controller is None:
            u_arr = ap.remus_step_input(t, nv) if kind == "remus100" else ap.otter_step_input(t, nv)
        else:
            u_arr, state = controller(state, x[:, 0:6], x[:, 6:12], h)
            for key, val in vars(state).items():
                state_log.setdefault(key, np.empty((rows, nv)))[k] = val
        log_eta[k] = x[:, 0:6]
        log_nu[k] = x[:, 6:12]
        log_cmd[k] = u_arr
        log_act[k] = x[:, 12:]
        if k < rows - 1:
            x, alive, ev = pvs.step_guarded(p, x, u_arr, h, alive, (k + 1) * h)
            events.extend(ev)
    cols: dict[str, F64] = {}
    for i, name in enumerate(("x", "y", "z", "phi", "theta", "psi")):
        cols[name] = log_eta[:, :, i].T
    for i, name in enumerate(("u", "v", "w", "p", "q", "r")):
        cols[name] = log_nu[:, :, i].T
    for i, name in enumerate(cmd_names):
        cols[f"{name}_cmd"] = log_cmd[:, :, i].T
        cols[name] = log_act[:, :, i].T
    for key, val in state_log.items():
        cols[key] = val.T
    t_arr = np.arange(rows) * h
    cols["t"] = np.broadcast_to(t_arr, (nv, rows))
    return PvsRun(t=t_arr, columns=cols, events=tuple(events), alive=np.atleast_1d(alive))


def _controller(p: pvs.Remus100Params | pvs.OtterParams, nv: int) -> tuple[Callable | None, Any]:
    if isinstance(p, pvs.Remus100Params):
        if p.control_mode != "depthHeadingAutopilot":
            return None, None
        gains = ap.RemusDepthHeadingGains(
            ref_z=p.ref_z,
            ref_psi=p.ref_psi,
            ref_n=p.ref_n,
            K_nomoto=p.K_nomoto,
            T_nomoto=p.T_nomoto,
        )
        return (
            lambda s, e, v, h: ap.remus_depth_heading_autopilot(gains, s, e, v, h),
            ap.RemusDepthHeadingState.zeros(nv),
        )
    if p.control_mode != "headingAutopilot":
        return None, None
    og = ap.OtterHeadingGains(binv=p.Binv, ref=p.ref, tauX=p.tauX)
    return (
        lambda s, e, v, h: ap.otter_heading_autopilot(og, s, e, v, h),
        ap.OtterHeadingState.zeros(nv),
    )


_ALIASES = {
    "e_z_int": "z_int",
    "e_theta_int": "theta_int",
    "e_psi_int": "e_psi_int",
    "tau_n": "tau_N",
}


def _norm(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def _signal_for(column: str, signals: dict[str, Any]) -> str | None:
    """The logged signal a CSV column names: exact, alias, or the same name up to case,
    separators and a prefix such as ``ctrl_`` (e.g. ``autopilot.psi_d`` → ``psi_d``)."""
    if column in signals:
        return column
    if column in _ALIASES and _ALIASES[column] in signals:
        return _ALIASES[column]
    target = _norm(column)
    exact = [s for s in signals if _norm(s) == target]
    if len(exact) == 1:
        return exact[0]
    tail = [s for s in signals if len(_norm(s)) >= 3 and target.endswith(_norm(s))]
    tail.sort(key=lambda s: -len(_norm(s)))
    return tail[0] if tail else None


def _open_loop(entry: dict[str, Any]) -> bool:
    """True for an externally driven run (its commands come from the CSV)."""
    if "control_sequence" in entry or "commands" in entry:
        return True
    meaning = str(entry.get("meaning", "")).lower()
    return ("open loop" in meaning or "open-loop" in meaning) and "built-in" not in meaning


_BASE_SIGNALS = {"t", "x", "y", "z", "phi", "theta", "psi", "u", "v", "w", "p", "q", "r"}


def _externally_driven(
    run: PvsRun, columns: list[str], header: list[str], data: F64, kind: str
) -> bool:
    """True when the CSV's commands are not what the vehicle's control system produced and
    the case logs no controller state (so no autopilot is being checked)."""
    names = [f"{c}_cmd" for c in _CMD_NAMES[kind]]
    if any(c not in header for c in names):
        return False
    base = _BASE_SIGNALS | set(names) | set(_CMD_NAMES[kind])
    ctrl = set(run.columns) - base
    if any(_signal_for(c, {k: None for k in ctrl}) for c in columns if c not in base):
        return False
    for c in names:
        exp = data[:, header.index(c)]
        if np.max(np.abs(run.columns[c][0] - exp)) > _tolerance(exp):
            return True
    return False


def _read_csv(path: Path) -> tuple[list[str], F64]:
    from marinesim.core.textio import read_input_text

    text = read_input_text(path, what="trajectory", error=DataError, gz=path.suffix == ".gz")
    try:
        header = text.split("\n", 1)[0].strip().split(",")
        data = np.loadtxt(io.StringIO(text), delimiter=",", skiprows=1, ndmin=2)
    except (OSError, ValueError, EOFError) as exc:
        raise DataError(f"cannot read trajectory: {exc}", file=path) from None
    if data.shape[1] != len(header):
        raise DataError(
            f"{data.shape[1]} values per row but {len(header)} header names", file=path, line=2
        )
    return header, data


def _tolerance(col: F64) -> float:
    lo, hi = float(np.min(col)), float(np.max(col))
    if hi > lo:
        return REL_TOL * (hi - lo)
    return REL_TOL * max(1.0, abs(hi))


def verify_file(path: Path, entry: dict[str, Any]) -> CaseResult:
    """Replay one trajectory file of a manifest entry and compare every column.

    Parameters
    ----------
    path : Path
        The ``.csv.gz`` trajectory.
    entry : dict
        Its manifest entry (``constructor``, ``sampleTime``, ``N``, ``columns`` ...).

    Returns
    -------
    CaseResult
    """
    from marinesim.reference import pvs_fleet  # the other PVS vehicles (README §3.4)

    if pvs_fleet.handles(str(entry.get("constructor", ""))):
        return pvs_fleet.verify_file(path, entry)
    case = path.name.removesuffix(".gz").removesuffix(".csv")
    res = CaseResult("pvs", case, str(path))
    try:
        header, data, columns, h, n_steps = read_case(path, entry)
        vehicle = build(str(entry["constructor"]))
        names = [f"{c}_cmd" for c in _CMD_NAMES[vehicle.kind]]
        commands = open_loop_commands(entry, header, data, names, path)
        run = simulate(vehicle, n_steps, h, commands=commands)
        note = ""
        if commands is None and _externally_driven(run, columns, header, data, vehicle.kind):
            # the logged commands are not the vehicle's own control system and no controller
            # state is logged: an externally driven run whose entry does not say so
            commands = data[:, [header.index(c) for c in names]]
            run = simulate(vehicle, n_steps, h, commands=commands)
            note = "; commands differ from the constructor's control system: replayed from the CSV"
    except (ConfigError, DataError, KeyError, ValueError) as exc:
        res.error = True
        res.message = f"{type(exc).__name__}: {exc}"
        return res
    return compare_run(res, entry, header, data, columns, run, f"{n_steps} steps of {h} s{note}")


def read_case(path: Path, entry: dict[str, Any]) -> tuple[list[str], F64, list[str], float, int]:
    """A trajectory file checked against its manifest entry (README §3.1–3.3).

    Returns
    -------
    header, data, columns, h, n_steps
        The CSV's column names and (N + 1, k) values, the columns to compare, the sample
        time [s] and the number of steps N.
    """
    header, data = _read_csv(path)
    columns = list(entry.get("columns") or header)
    missing = [c for c in columns if c not in header]
    if missing:
        raise DataError(f"columns {missing} of the manifest are not in the file", file=path)
    h = float(entry.get("sampleTime", 0.02))
    n_steps = int(entry.get("N", data.shape[0] - 1))
    if data.shape[0] != n_steps + 1:
        raise DataError(f"{data.shape[0]} rows, expected N + 1 = {n_steps + 1}", file=path)
    return header, data, columns, h, n_steps


def open_loop_commands(
    entry: dict[str, Any], header: list[str], data: F64, names: list[str], path: Path
) -> F64 | None:
    """The recorded command columns ``names`` of an open-loop case, else None."""
    if not _open_loop(entry):
        return None
    absent = [c for c in names if c not in header]
    if absent:
        raise DataError(f"open-loop case without command columns {absent}", file=path)
    return data[:, [header.index(c) for c in names]]


def compare_run(
    res: CaseResult,
    entry: dict[str, Any],
    header: list[str],
    data: F64,
    columns: list[str],
    run: PvsRun,
    what: str,
) -> CaseResult:
    """Compare every column of a replay with the file at the §3.3 tolerance, into ``res``."""
    for name in columns:
        exp = data[:, header.index(name)]
        tol = _tolerance(exp)
        key = _signal_for(name, run.columns)
        if key is None:
            res.columns.append(ColumnResult(name, float("inf"), tol, False, "signal not produced"))
            continue
        got = run.columns[key][0]
        err = float(np.max(np.abs(got - exp))) if np.all(np.isfinite(got)) else float("inf")
        res.columns.append(ColumnResult(name, err, tol, err <= tol))
    res.message = f"{entry.get('constructor', '')}, {what}"
    if run.events:
        res.message += "; " + "; ".join(run.events)
    return res


def verify_path(path: Path) -> list[CaseResult]:
    """Verify every trajectory of a PythonVehicleSimulator reference folder.

    Parameters
    ----------
    path : Path
        Folder holding ``manifest.json`` (or the manifest itself).

    Returns
    -------
    list of CaseResult
        One per trajectory file, in manifest order.
    """
    path = Path(path)
    folder = path.parent if path.is_file() else path
    files = manifest_files(folder / "manifest.json")
    out = []
    for fname, entry in files.items():
        fpath = folder / fname
        if not fpath.exists():
            out.append(CaseResult("pvs", fname, str(fpath), message="file not found", error=True))
            continue
        out.append(verify_file(fpath, entry))
    return out
