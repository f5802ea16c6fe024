"""Replay of the UUV Simulator actuator reference cases (``marinesim verify``, kind ``actuators``).

A case folder holds ``manifest.json`` and one CSV (or ``.csv.gz``) per entry of its ``files``
(formats: the shipped ``reference/README.md`` §2).  Each file is replayed with marinesim's
actuator models and compared column by column: a column passes when
``max |replay − expected| ≤ rel_tol · max(1, max |expected|)`` in the file's SI units
(README §2.2: relative for large values, an absolute floor for columns that are zero in
theory and hold only rounding residue).  Time series follow UUV Simulator's first-call protocol: the call at k = 0 only
latches the time and returns the initial state (ZeroOrder returns its input); each later row
is one step with Δt = t_k − t_{k−1}.

Kinds: ``dynamics``, ``conversion``, ``thruster_chain``, ``liftdrag_sweep``,
``fin_timeseries``, ``thruster_allocation`` and ``hydrodynamic_wrench`` (UUV Simulator's
``HMFossen`` wrench: one freshly built plugin per row, called as the entry's ``calls`` say;
the terms come from :func:`marinesim.models.uuv.uuv_hydrodynamic_terms`).
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from marinesim.actuators import fins as fn
from marinesim.actuators import lift_drag as ld
from marinesim.actuators import thrust_conversion as tc
from marinesim.actuators import thruster as th
from marinesim.actuators import thruster_dynamics as td
from marinesim.actuators.uuv_names import THRUSTER_KNOBS, from_uuv
from marinesim.core.errors import DataError
from marinesim.core.frames import rotation_from_euler
from marinesim.core.params import validate
from marinesim.reference.manifest import manifest_files
from marinesim.reference.runner import CaseResult, ColumnResult
from marinesim.reference.tables import load_table

__all__ = ["D2R_UUV", "THRUSTER_POSES", "load_table", "replay_file", "verify_path"]

#: ``d2r`` of uuv_descriptions ``common.urdf.xacro`` (truncated on purpose, spec §1.2).
D2R_UUV = 0.01745329

#: Thruster poses of the UUV Simulator vehicles (Gazebo FLU base_link; position m, rpy deg
#: converted with :data:`D2R_UUV`), spec §5.1 and §2.6.
THRUSTER_POSES: dict[
    str, list[tuple[tuple[float, float, float], tuple[float, float, float], str]]
] = {
    "rexrov": [
        ((-0.890895, 0.334385, 0.528822), (0.0, -74.53, -53.21), "deg"),
        ((-0.890895, -0.334385, 0.528822), (0.0, -74.53, 53.21), "deg"),
        ((0.890895, 0.334385, 0.528822), (0.0, -105.47, 53.21), "deg"),
        ((0.890895, -0.334385, 0.528822), (0.0, -105.47, -53.21), "deg"),
        ((-0.412125, 0.505415, 0.129), (0.0, 0.0, 45.0), "deg"),
        ((-0.412125, -0.505415, 0.129), (0.0, 0.0, -45.0), "deg"),
        ((0.412125, 0.505415, 0.129), (0.0, 0.0, 135.0), "deg"),
        ((0.412125, -0.505415, 0.129), (0.0, 0.0, -135.0), "deg"),
    ],
    "eca_a9": [((-0.9676, 0.0, 0.0), (0.0, 0.0, math.pi), "rad")],
    "lauv": [((-0.53994, 0.0, 0.0), (0.0, 0.0, math.pi), "rad")],
    "desistek_saga": [
        ((-0.088, -0.1192, -0.0061828), (0.0, 0.0, math.pi), "rad"),
        ((-0.088, 0.1192, -0.0061828), (0.0, 0.0, math.pi), "rad"),
        ((0.067, 0.0, 0.1258172), (0.0, -math.pi / 2, 0.0), "rad"),
    ],
}

_ALIASES = {
    "rexrov": "rexrov",
    "eca a9": "eca_a9",
    "eca_a9": "eca_a9",
    "lauv": "lauv",
    "desistek": "desistek_saga",
    "saga": "desistek_saga",
}

# ----------------------------------------------------------------------------- CSV input


def _find_csv(folder: Path, name: str) -> Path:
    candidates = [folder / name]
    if name.endswith(".gz"):
        candidates.append(folder / name[:-3])
    else:
        candidates.append(folder / (name + ".gz"))
    for c in candidates:
        if c.is_file():
            return c
    raise DataError(f"reference table {name!r} (or .gz) not found", file=folder)


# ----------------------------------------------------------------------------- parameters


def _absent(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value.strip().lower().startswith("absent"))


def _model(section: str, block: Mapping[str, Any]) -> Any:
    data, _notes = from_uuv(
        section, {k: v for k, v in block.items() if k not in ("derivation", "note")}
    )
    model: Any = {"dynamics": td.Params, "conversion": tc.Params, "liftdrag": ld.LiftDragParams}[
        section
    ]
    from pydantic import TypeAdapter, ValidationError

    try:
        return TypeAdapter(model).validate_python(data)
    except ValidationError as exc:
        raise DataError(f"invalid {section} parameters: {exc.errors()[0]['msg']}") from None


def _leading_number(value: Any, key: str) -> float:
    """A number, or the number a string starts with (``"3000 (swapped)"`` → 3000)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    m = re.match(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)", str(value))
    if not m:
        raise DataError(f"{key}: not a number: {value!r}")
    return float(m.group(1))


def _thruster(params: Mapping[str, Any]) -> th.ThrusterParams:
    data: dict[str, Any] = {
        "dynamics": _model("dynamics", params["dynamics"]),
        "conversion": _model("conversion", params["conversion"]),
    }
    for key, ours in THRUSTER_KNOBS.items():
        v = params.get(key)
        if not _absent(v):
            data[ours] = _leading_number(v, key)
    return validate(th.ThrusterParams, data)


# ----------------------------------------------------------------------------- replays


def _segments(cols: Mapping[str, NDArray[Any]]) -> list[tuple[int, int]]:
    """Row ranges [a, b) of consecutive time series (a new one at each k == 0 / signal change)."""
    n = len(cols["t"])
    k = cols.get("k")
    sig = cols.get("signal")
    starts = [0]
    for i in range(1, n):
        if (k is not None and k[i] == 0) or (sig is not None and sig[i] != sig[i - 1]):
            starts.append(i)
    return [(a, b) for a, b in zip(starts, [*starts[1:], n], strict=True)]


def _replay_dynamics(
    entry: Mapping[str, Any], cols: Mapping[str, NDArray[Any]]
) -> dict[str, NDArray[np.float64]]:
    p = _model("dynamics", entry["params"])
    t, cmd = cols["t"], cols["cmd"]
    out = np.empty_like(cmd)
    for a, b in _segments(cols):
        s = np.array([[p.initial_state]])
        for i in range(a, b):
            u = np.array([[cmd[i]]])
            if i == a:
                s = u if isinstance(p, td.ZeroOrder) else s  # first-call latch
            else:
                s = td.update(p, s, u, t[i] - t[i - 1])
            out[i] = s[0, 0]
    return {"state": out}


def _replay_conversion(
    entry: Mapping[str, Any], cols: Mapping[str, NDArray[Any]]
) -> dict[str, NDArray[np.float64]]:
    p = _model("conversion", entry["params"])
    return {"thrust": tc.convert(p, cols["x"])}


def _replay_chain(
    entry: Mapping[str, Any], cols: Mapping[str, NDArray[Any]]
) -> dict[str, NDArray[np.float64]]:
    bank = th.ThrusterBankParams(thrusters=(_thruster(entry["params"]),))
    zero_order = isinstance(bank.thrusters[0].dynamics, td.ZeroOrder)
    t, cmd = cols["t"], cols["cmd"]
    n = len(cmd)
    res = {k: np.empty(n) for k in ("dynamics_input", "dynamic_state", "thrust")}
    for a, b in _segments(cols):
        rotor = th.init(bank, 1).rotor
        for i in range(a, b):
            u, _ = th.dynamics_input(bank, np.array([[cmd[i]]]))
            if i == a:
                rotor = u if zero_order else rotor
            else:
                rotor = th.advance_rotor(bank, rotor, u, t[i] - t[i - 1])
            omega, thrust, _ = th._outputs(bank._packed, rotor)
            res["dynamics_input"][i] = u[0, 0]
            res["dynamic_state"][i] = omega[0, 0]
            res["thrust"][i] = thrust[0, 0]
    return res


def _replay_sweep(
    entry: Mapping[str, Any], cols: Mapping[str, NDArray[Any]]
) -> dict[str, NDArray[np.float64]]:
    p = _model("liftdrag", entry["params"])
    v = np.stack([cols["vx_L"], cols["vy_L"], cols["vz_L"]], axis=-1)
    f, ang = ld.compute(p, v)
    return {"angle_used": ang, "Fx_L": f[:, 0], "Fy_L": f[:, 1], "Fz_L": f[:, 2]}


_OPS: dict[type, Callable[..., float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}


def _expr(text: str, names: Mapping[str, float]) -> float:
    """Evaluate a small arithmetic expression (numbers, pi, d2r, + − × ÷ ** and parentheses)."""

    def ev(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return float(node.value)
        if isinstance(node, ast.Name) and node.id in names:
            return float(names[node.id])
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.operand))
        raise DataError(f"cannot evaluate {text!r} in the fin description")

    try:
        tree = ast.parse(text.strip().replace("−", "-").replace("π", "pi"), mode="eval")
    except SyntaxError:
        raise DataError(f"cannot evaluate {text!r} in the fin description") from None
    return ev(tree)


def _vector(text: str, names: Mapping[str, float]) -> tuple[float, float, float]:
    parts = [p for p in re.split(r"[,\s]+", text.strip()) if p]
    if len(parts) != 3:
        raise DataError(f"expected 3 values, got {text!r}")
    return (_expr(parts[0], names), _expr(parts[1], names), _expr(parts[2], names))


def _fin_geometry(desc: Any) -> tuple[tuple[float, ...], tuple[float, ...], float, float]:
    """Position (FLU), rpy (rad), lower, upper of the fin description (string or mapping)."""
    d2r = D2R_UUV
    if isinstance(desc, Mapping):
        names = {"pi": math.pi, "d2r": float(desc.get("d2r", d2r))}

        def num(v: Any) -> float:
            return float(v) if isinstance(v, int | float) else _expr(str(v), names)

        def vec(v: Any) -> tuple[float, float, float]:
            if isinstance(v, list | tuple):
                return (num(v[0]), num(v[1]), num(v[2]))
            return _vector(str(v), names)

        xyz = vec(desc.get("xyz", desc.get("position", (0, 0, 0))))
        rpy = vec(desc.get("rpy", (0, 0, 0)))
        if "limits" in desc and not isinstance(desc["limits"], list | tuple):
            lim = num(desc["limits"])
            return xyz, rpy, -lim, lim
        if "limits" in desc:
            return xyz, rpy, num(desc["limits"][0]), num(desc["limits"][1])
        return xyz, rpy, num(desc["lower"]), num(desc["upper"])
    text = str(desc)
    m = re.search(r"d2r\s*=\s*([0-9.eE+-]+)", text)
    if m:
        d2r = float(m.group(1))
    names = {"pi": math.pi, "d2r": d2r}
    mx = re.search(r"xyz\s*\(([^)]*)\)", text)
    mr = re.search(r"rpy\s*\(([^)]*)\)", text)
    if not mx or not mr:
        raise DataError(f"fin description without 'xyz (...)' and 'rpy (...)': {text!r}")
    xyz = _vector(mx.group(1), names)
    rpy = _vector(mr.group(1), names)
    ml = re.search(r"limits\s*(?:\+-|±|\+/-)\s*([^\s,;]+)\s*(deg|°)?", text)
    if ml:
        lim = _expr(ml.group(1), names) * (d2r if ml.group(2) else 1.0)
        return xyz, rpy, -lim, lim
    ml2 = re.search(r"lower\s*=?\s*([^\s,;]+)\s*,?\s*upper\s*=?\s*([^\s,;)]+)", text)
    if ml2:
        return xyz, rpy, _expr(ml2.group(1), names), _expr(ml2.group(2), names)
    ml3 = re.search(r"limits\s*\[?\(?\s*([^\s,;]+)\s*,\s*([^\s,;)\]]+)", text)
    if ml3:
        return xyz, rpy, _expr(ml3.group(1), names), _expr(ml3.group(2), names)
    raise DataError(f"fin description without joint limits: {text!r}")


def _base_motion(desc: Any) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    if isinstance(desc, Mapping):
        lin = np.asarray(desc.get("linear_velocity", (0, 0, 0)), dtype=float)
        ang = np.asarray(desc.get("angular_velocity", (0, 0, 0)), dtype=float)
        return lin, ang
    text = str(desc)
    if "identity" not in text:
        raise DataError(
            f"fin case with a base link not held at identity is not supported: {text!r}"
        )
    names = {"pi": math.pi}
    ml = re.search(r"linear velocity\s*\(([^)]*)\)", text)
    lin = np.array(_vector(ml.group(1), names)) if ml else np.zeros(3)
    ma = re.search(r"angular velocity\s*\(([^)]*)\)", text)
    ang = np.array(_vector(ma.group(1), names)) if ma else np.zeros(3)
    return lin, ang


def _replay_fin(
    entry: Mapping[str, Any], cols: Mapping[str, NDArray[Any]]
) -> dict[str, NDArray[np.float64]]:
    params = entry["params"]
    xyz, rpy, lower, upper = _fin_geometry(params["fin"])
    fin = fn.FinParams(
        position=xyz,
        rpy=rpy,
        lower=lower,
        upper=upper,
        dynamics=_model("dynamics", params["dynamics"]),
        liftdrag=_model("liftdrag", params["liftdrag"]),
    )
    bank = fn.FinBankParams(fins=(fin,))
    lin, ang = _base_motion(entry.get("base_link", "identity"))
    nu = np.concatenate([lin, ang])[None, :]
    cur = np.asarray(entry.get("current_velocity_world", (0.0, 0.0, 0.0)), dtype=float)[None, :]
    zero_order = isinstance(fin.dynamics, td.ZeroOrder)
    t, cmd = cols["t"], cols["cmd"]
    n = len(cmd)
    names = [
        "cmd_clamped",
        "angle",
        "joint_pos_used",
        "vx_L",
        "vy_L",
        "vz_L",
        "angle_used",
        "Fx_L",
        "Fy_L",
        "Fz_L",
        "Fx_base",
        "Fy_base",
        "Fz_base",
        "Mx_base",
        "My_base",
        "Mz_base",
    ]
    res = {k: np.empty(n) for k in names}
    for a, b in _segments(cols):
        angle = fn.init(bank, 1).angle
        for i in range(a, b):
            c = np.clip(np.array([[cmd[i]]]), lower, upper)
            if i == a:
                new = c if zero_order else angle
            else:
                new = td.update(fin.dynamics, angle, c, t[i] - t[i - 1])
            v_l, att, f_l, f_b, m_b = fn.fin_forces(bank, angle, nu, cur)
            row = [
                c[0, 0],
                new[0, 0],
                angle[0, 0],
                *v_l[0, 0],
                att[0, 0],
                *f_l[0, 0],
                *f_b[0, 0],
                *m_b[0, 0],
            ]
            for k, v in zip(names, row, strict=True):
                res[k][i] = v
            angle = new
    return res


def _vehicle_poses(entry: Mapping[str, Any]) -> list[tuple[tuple[float, ...], tuple[float, ...]]]:
    """Thruster (position, rpy rad) list of a TAM case: explicit ``thrusters`` or a known vehicle."""
    if "thrusters" in entry:
        out = []
        for th_ in entry["thrusters"]:
            xyz = tuple(float(v) for v in th_.get("xyz", th_.get("position")))
            if "rpy_deg" in th_:
                rpy = tuple(float(v) * D2R_UUV for v in th_["rpy_deg"])
            else:
                rpy = tuple(float(v) for v in th_.get("rpy", (0, 0, 0)))
            out.append((xyz, rpy))
        return out
    text = (str(entry.get("frame", "")) + " " + str(entry.get("vehicle", ""))).lower()
    for alias, key in _ALIASES.items():
        if alias in text:
            return [
                (p, tuple(v * D2R_UUV for v in r) if unit == "deg" else r)
                for p, r, unit in THRUSTER_POSES[key]
            ]
    raise DataError(
        f"thruster_allocation case for an unknown vehicle (frame {entry.get('frame')!r})"
    )


def _replay_tam(
    entry: Mapping[str, Any], cols: Mapping[str, NDArray[Any]]
) -> dict[str, NDArray[np.float64]]:
    poses = _vehicle_poses(entry)
    pos = np.array([p for p, _ in poses], dtype=float)
    dirs = np.array([rotation_from_euler(*r)[:, 0] for _, r in poses], dtype=float)
    b = th.allocation_matrix(pos, dirs)
    order = {"Fx": 0, "Fy": 1, "Fz": 2, "Mx": 3, "My": 4, "Mz": 5}
    rows = [order[str(r).strip()] for r in cols["row"]]
    out = {}
    for j in range(b.shape[1]):
        name = f"thr{j}"
        if name in cols:
            out[name] = b[rows, j]
    missing = [c for c in cols if c.startswith("thr") and c not in out]
    if missing:
        raise DataError(
            f"the case has columns {missing} but the vehicle has {b.shape[1]} thrusters"
        )
    return out


#: UUV Simulator ``HMFossen``: ``ComputeAcc(velRel, time, 0.3)``, the acceleration filter gain.
WRENCH_FILTER_ALPHA = 0.3

_SIX_SUFFIXES = (
    ("0", "1", "2", "3", "4", "5"),
    ("u", "v", "w", "p", "q", "r"),
    ("x", "y", "z", "k", "m", "n"),
)


def _six_index(prefix: str, names: list[str]) -> list[int]:
    """Component (0..5) of each column ``prefix + suffix`` (``_0``..``_5`` or ``u v w p q r``)."""
    sufs = [n[len(prefix) :].lower() for n in names]
    for conv in _SIX_SUFFIXES:
        if all(s in conv for s in sufs):
            return [conv.index(s) for s in sufs]
    raise DataError(f"columns {names}: unknown component names (expected {prefix}0 .. {prefix}5)")


def _three(cols: Mapping[str, NDArray[Any]], prefix: str, n: int) -> NDArray[np.float64]:
    """Columns ``prefix`` + x, y, z as an (n, 3) array; a missing column is a DataError."""
    out = np.empty((n, 3))
    for j, c in enumerate("xyz"):
        col = cols.get(prefix + c)
        if col is None or col.dtype == object:
            raise DataError(f"hydrodynamic_wrench case needs a numeric column {prefix}{c}")
        out[:, j] = col
    return out


def wrench_calls(entry: Mapping[str, Any]) -> tuple[list[tuple[float, bool]], int]:
    """The call protocol of a ``hydrodynamic_wrench`` entry (reference README §2.1).

    Read only from the machine-readable keys: ``rows`` must declare independent rows,
    ``calls`` lists ``{"t": seconds, "velocity": "zero" | "row"}``, ``outputs_from`` names
    the call whose values the row holds (``"the last call"``).  Prose keys (``procedure``,
    ``note``) are never read.

    Returns
    -------
    calls : list of (t [s], uses_row_velocity)
        In call order.
    out_index : int
        Index into ``calls`` of the call whose outputs are compared.

    Raises
    ------
    DataError
        Missing or malformed key, a non-finite or negative time, or a step between successive
        calls ≤ 0.
    """
    rows = entry.get("rows")
    if not isinstance(rows, str) or not rows.strip().lower().startswith("independent"):
        raise DataError(
            f"hydrodynamic_wrench: 'rows' must declare independent rows, got {rows!r}",
            param="rows",
        )
    raw = entry.get("calls")
    if not isinstance(raw, list) or not raw:
        raise DataError("hydrodynamic_wrench: 'calls' must be a non-empty list", param="calls")
    calls: list[tuple[float, bool]] = []
    for i, c in enumerate(raw):
        if not isinstance(c, Mapping):
            raise DataError(f"calls[{i}]: expected {{t, velocity}}, got {c!r}", param="calls")
        t = c.get("t")
        if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t) or t < 0:
            raise DataError(f"calls[{i}].t: not a finite time >= 0 s: {t!r}", param="calls")
        vel = str(c.get("velocity", "")).strip().lower()
        if vel not in ("zero", "row"):
            raise DataError(
                f"calls[{i}].velocity: expected 'zero' or 'row', got {c.get('velocity')!r}",
                param="calls",
            )
        if calls and not float(t) - calls[-1][0] > 0.0:
            raise DataError(
                f"calls[{i}]: step {float(t) - calls[-1][0]:g} s <= 0 after the previous call",
                param="calls",
            )
        calls.append((float(t), vel == "row"))
    frm = entry.get("outputs_from")
    if not isinstance(frm, str) or frm.strip().lower() not in ("last", "the last call", "last call"):
        raise DataError(
            f"hydrodynamic_wrench: 'outputs_from' must be 'the last call', got {frm!r}",
            param="outputs_from",
        )
    return calls, len(calls) - 1


def _wrench_params(entry: Mapping[str, Any], label: str) -> dict[str, Any]:
    """HMFossen parameters for the vehicle label of a row (``vehicles`` may map label → spec)."""
    from marinesim.models import uuv

    vehicles = entry.get("vehicles")
    spec: Any = label
    if isinstance(vehicles, Mapping):
        low = {str(k).strip().lower(): v for k, v in vehicles.items()}
        if label.lower() in low and not isinstance(low[label.lower()], str):
            spec = low[label.lower()]
    try:
        return uuv.uuv_hydro_params(spec)
    except ValueError as exc:
        raise DataError(f"vehicle {label!r}: {exc}", param="vehicles") from None


def _replay_wrench(
    entry: Mapping[str, Any], cols: Mapping[str, NDArray[Any]]
) -> dict[str, NDArray[np.float64]]:
    """UUV Simulator ``HMFossen::ApplyHydrodynamicForces``, one fresh plugin per row.

    Each plugin starts with filtered acceleration 0, previous relative velocity 0 and previous
    time 0, and is called at each time of ``calls`` with zero velocity or the row's
    ν_r = [T(lin − flow) ; T·ang], T = diag(1, −1, −1) (FLU → FRD; the link is at identity, so
    the world flow is the body flow).  ``ComputeAcc`` updates only when Δt = t − t_prev > 0:
    a_f ← (1 − α)·a_f + α·(ν_r − ν_r,prev)/Δt with α = 0.3.  The rows are independent, so
    they are evaluated together, one vectorised pass per call.
    """
    from marinesim.models import uuv

    calls, out_index = wrench_calls(entry)
    n = len(next(iter(cols.values())))
    if n == 0:
        raise DataError("hydrodynamic_wrench case without rows")
    flip = np.array([1.0, -1.0, -1.0])
    lin, ang, flow = _three(cols, "lin_", n), _three(cols, "ang_", n), _three(cols, "flow_", n)
    nu_row = np.concatenate([(lin - flow) * flip, ang * flip], axis=1)
    last_t, last_v, filt = 0.0, np.zeros((n, 6)), np.zeros((n, 6))
    nu_r = np.zeros((n, 6))
    acc_f = np.zeros((n, 6))
    alpha = WRENCH_FILTER_ALPHA
    for i, (t, use_row) in enumerate(calls):
        v = nu_row if use_row else np.zeros((n, 6))
        dt = t - last_t
        if dt > 0.0:
            acc = (v - last_v) / dt
            filt = (1.0 - alpha) * filt + alpha * acc
            last_t, last_v = t, v
        if i == out_index:
            nu_r, acc_f = v, filt.copy()
    labels = [str(v).strip() for v in cols.get("vehicle", np.array([""] * n, dtype=object))]
    damping, added, cor = np.empty((n, 6)), np.empty((n, 6)), np.empty((n, 6))
    for label in dict.fromkeys(labels):
        rows = np.array([j for j, lab in enumerate(labels) if lab == label])
        prm = _wrench_params(entry, label)
        damping[rows], added[rows], cor[rows] = uuv.uuv_hydrodynamic_terms(
            prm, nu_r[rows], acc_f[rows]
        )
    tau = damping + added + cor
    gz = np.concatenate([tau[:, :3] * flip, tau[:, 3:] * flip], axis=1)
    out: dict[str, NDArray[np.float64]] = {}
    six = {"nuR_": nu_r, "accF_": acc_f, "damp_": damping, "addedmass_": added}
    six |= {"coriolisA_": cor, "tauNED_": tau}
    for prefix, arr in six.items():
        names = [c for c in cols if c.startswith(prefix)]
        if names:
            for name, j in zip(names, _six_index(prefix, names), strict=True):
                out[name] = arr[:, j]
    for j, name in enumerate(("Fx_gz", "Fy_gz", "Fz_gz", "Mx_gz", "My_gz", "Mz_gz")):
        if name in cols:
            out[name] = gz[:, j]
    return out


_REPLAYS: dict[
    str, Callable[[Mapping[str, Any], Mapping[str, NDArray[Any]]], dict[str, NDArray[np.float64]]]
] = {
    "dynamics": _replay_dynamics,
    "conversion": _replay_conversion,
    "thruster_chain": _replay_chain,
    "liftdrag_sweep": _replay_sweep,
    "fin_timeseries": _replay_fin,
    "thruster_allocation": _replay_tam,
    "hydrodynamic_wrench": _replay_wrench,
}

#: Input columns of each kind (everything else in the CSV is compared).
_INPUTS = {
    "dynamics": {"signal", "k", "t", "cmd"},
    "conversion": {"x"},
    "thruster_chain": {"signal", "k", "t", "cmd"},
    "liftdrag_sweep": {"deg", "rad", "vx_L", "vy_L", "vz_L"},
    "fin_timeseries": {"signal", "k", "t", "cmd"},
    "thruster_allocation": {"row"},
}


#: Input column prefixes of ``hydrodynamic_wrench`` cases (besides ``vehicle`` and ``case``).
_WRENCH_INPUTS = ("lin_", "ang_", "flow_")


def _kind_of(entry: Mapping[str, Any]) -> str:
    kind = str(entry.get("kind", "")).strip()
    for k in _REPLAYS:
        if kind == k or kind.startswith(k):
            return k
    raise DataError(f"unknown actuator case kind {kind!r} (known: {', '.join(_REPLAYS)})")


def replay_file(
    folder: Path, name: str, entry: Mapping[str, Any], rel_tol: float = 1e-9
) -> CaseResult:
    """Replay one file of a manifest and compare every output column.

    Parameters
    ----------
    folder : Path
        Case folder.
    name : str
        File name as the manifest keys it (``.csv``; a ``.csv.gz`` beside it is accepted).
    entry : mapping
        The manifest entry.
    rel_tol : float
        Tolerance factor: a column passes when ``max |replay − expected| ≤
        rel_tol · max(1, max |expected|)`` (README §2.2; relative for large values, an absolute
        floor of ``rel_tol`` in the column's SI unit).

    Returns
    -------
    CaseResult
        With one ColumnResult per output column; ``error=True`` if the case could not run.
    """
    stem = re.sub(r"\.csv(\.gz)?$", "", name)
    result = CaseResult("actuators", stem, str(folder / name))
    try:
        kind = _kind_of(entry)
        path = _find_csv(folder, name)
        result.path = str(path)
        header, cols = load_table(path)
        got = _REPLAYS[kind](entry, cols)
        if kind == "hydrodynamic_wrench":
            inputs = {
                h
                for h in header
                if h in ("vehicle", "case", "t", "time", "time_s", "k")
                or h.startswith(_WRENCH_INPUTS)
            }
        else:
            inputs = _INPUTS[kind]
        outputs = [h for h in header if h not in inputs]
        if not outputs:
            raise DataError("no output columns to compare", file=path)
        for col in outputs:
            exp = cols[col]
            if exp.dtype == object:
                continue  # labels (e.g. vehicle, case names) are inputs
            if col not in got:
                result.columns.append(ColumnResult(col, math.inf, 0.0, False, "not computed"))
                continue
            rep = np.asarray(got[col], dtype=float)
            if rep.shape != exp.shape or not np.all(np.isfinite(rep) == np.isfinite(exp)):
                result.columns.append(
                    ColumnResult(col, math.inf, 0.0, False, "shape or non-finite mismatch")
                )
                continue
            fin = np.isfinite(exp)
            err = float(np.max(np.abs(rep[fin] - exp[fin]), initial=0.0))
            scale = float(np.max(np.abs(exp[fin]), initial=0.0))
            tol = rel_tol * max(1.0, scale)
            result.columns.append(ColumnResult(col, err, tol, err <= tol))
    except Exception as exc:  # a case that cannot run fails with its reason, never skipped
        result.error = True
        result.message = f"{type(exc).__name__}: {exc}"
    return result


def verify_path(path: Path, rel_tol: float = 1e-9) -> list[CaseResult]:
    """Replay every file of an actuator case folder (or of its ``manifest.json``).

    Parameters
    ----------
    path : Path
        Folder holding ``manifest.json``, or the manifest itself.
    rel_tol : float
        Tolerance factor of :func:`replay_file` (1e-9 as in the reference README; tests use 1e-12 for the pure
        functions).

    Returns
    -------
    list of CaseResult
        One per file, in manifest order.
    """
    path = Path(path)
    manifest = path if path.is_file() else path / "manifest.json"
    files = manifest_files(manifest, "actuator manifest")
    return [replay_file(manifest.parent, name, entry, rel_tol) for name, entry in files.items()]
