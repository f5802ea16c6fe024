"""The compiled engine tick of the REMUS 100 block: :func:`_tick` and its compilation.

One call runs one engine tick t_k → t_{k+1} of every vehicle of a ``fossen6dof`` (REMUS 100,
PythonVehicleSimulator-exact) + ``depth_heading_autopilot`` block over floats: the autopilot
(:func:`marinesim.control.pvs_fleet.remus_law`, the law the plugin's compiled rows call),
then the model's substeps (:func:`marinesim.models.sixdof.pvs_vehicles.step_one`, the row the
model's compiled kernel runs, with its divergence guard).  It stops short of the Euler angles
of the new pose: ``atan2`` and ``asin`` of compiled code and of numpy differ in the last bit
on CPUs where numpy uses its own SIMD versions, so it leaves their arguments (the same
expressions as :func:`marinesim.core.frames.euler_from_quat`) for the driver,
:mod:`marinesim.engine.plugins.remus_span`, to finish with numpy.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numba
from numba.extending import register_jitable

from marinesim.control.pvs_fleet import remus_law
from marinesim.core import compile as cc
from marinesim.core.frames import wrap_pi_c
from marinesim.models.sixdof.pvs_vehicles import step_one

__all__ = ["kernel_for"]

_CACHE: dict[str, Any] = {}

#: The model's divergence bounds in the plugin route (pvs.step_guarded's defaults) [m/s, rad/s].
MAX_SPEED = 50.0
MAX_RATE = 50.0


@register_jitable
def _tick(
    k, j, start, dt, hsub, nsub, kind, par, zero, prow, wnz, d2r, r2d, hrad, tf, x, xb, x0,
    xq, xp, cmd, ap, aps, eta, u5, alive, status, size, ea, ep, yy, xx, ss, xlog, ulog, elog,
):  # noqa: ANN001, ANN202  # fmt: skip
    """Run engine tick ``k`` (the span's ``j``-th) of every vehicle; 1 done, 0 handed back.

    Inputs held between calls: ``x`` (N, 15) model rows at t_k, ``cmd`` (N, 3) held command,
    ``ap`` (N, 8) autopilot states, ``tf`` = [t_prev of the autopilot, model time], ``ea`` /
    ``ep`` (2, N) / (N,) roll and yaw / pitch of the pose at t_k.  ``prow`` (N, 22): the law's
    rows with the span's constant entries.  Writes ``xlog[j]``, ``ulog[j]`` (the command) and
    ``elog[j - 1]`` (the Euler angles the driver finished after tick j − 1), and the
    arguments of the new pose's angles, ``yy`` / ``xx`` (2, N) and ``ss`` (N,), and ``xp``:
    the rows before the tick's last substep.  A tick whose step the guard stops is undone
    (``x``, ``ap``, ``tf``, ``xp`` as before it; returns 0: the plugins run it).
    """
    n = x.shape[0]
    m = x.shape[1]
    t = start + k * dt
    hc = max(t - tf[0], 1e-12)
    if j > 0:
        for i in range(n):
            elog[j - 1, 0, i] = ea[0, i]
            elog[j - 1, 1, i] = ep[i]
            elog[j - 1, 2, i] = ea[1, i]
    tf2 = tf[1]
    e0 = math.exp(-hc * wnz)
    for i in range(n):
        for c in range(m):
            x0[i, c] = x[i, c]
        for c in range(ap.shape[1]):
            aps[i, c] = ap[i, c]
        p = prow[i]
        p[0] = e0
        p[1] = 1 - math.exp(-hc * wnz)
        psi_d = ap[i, 4]
        psi_ref = psi_d + wrap_pi_c(hrad[i] - psi_d)
        p[21] = (psi_ref * r2d) * d2r
        e = eta[i]
        e[0], e[1], e[2] = x[i, 0], x[i, 1], x[i, 2]
        e[3], e[4], e[5] = ea[0, i], ep[i], ea[1, i]
        remus_law(p, ap[i], e, x[i, 6:12], hc, u5[i])
        # the torpedo's [δ_r, −δ_r, δ_s, −δ_s, n] → REMUS 100's [δ_r, −δ_s, n]
        cmd[i, 0] = u5[i, 0]
        cmd[i, 1] = u5[i, 3]
        cmd[i, 2] = u5[i, 4]
        ulog[j, i, 0] = cmd[i, 0]
        ulog[j, i, 1] = cmd[i, 1]
        ulog[j, i, 2] = cmd[i, 2]
    ok = True
    for s in range(nsub):
        if s == nsub - 1:  # the rows before the last substep (the truth's specific force)
            for i in range(n):
                for c in range(m):
                    xq[i, c] = x[i, c]
        for i in range(n):
            step_one(i, kind, par, zero, x, cmd, hsub, MAX_SPEED, MAX_RATE, alive, xb, status, size)
            if status[i] != 0:
                ok = False
        if not ok:
            break
        for i in range(n):
            for c in range(m):
                x[i, c] = xb[i, c]
        tf2 = tf2 + hsub
    if not ok:  # undo the tick: the plugins run it (event, non-finite truth)
        for i in range(n):
            alive[i] = True
            for c in range(m):
                x[i, c] = x0[i, c]
            for c in range(ap.shape[1]):
                ap[i, c] = aps[i, c]
        return 0
    tf[0] = t
    tf[1] = tf2
    for i in range(n):
        for c in range(m):
            xlog[j, i, c] = x[i, c]
            xp[i, c] = xq[i, c]
        # quat_from_euler, then euler_from_quat's atan2/asin arguments (same expressions)
        r2, p2, y2 = x[i, 3] / 2, x[i, 4] / 2, x[i, 5] / 2
        cr, sr = math.cos(r2), math.sin(r2)
        cp, sp = math.cos(p2), math.sin(p2)
        cy, sy = math.cos(y2), math.sin(y2)
        q0 = cr * cp * cy + sr * sp * sy
        q1 = sr * cp * cy - cr * sp * sy
        q2 = cr * sp * cy + sr * cp * sy
        q3 = cr * cp * sy - sr * sp * cy
        yy[0, i] = 2 * (q0 * q1 + q2 * q3)
        xx[0, i] = 1 - 2 * (q1 * q1 + q2 * q2)
        ss[i] = min(1.0, max(-1.0, 2 * (q0 * q2 - q3 * q1)))
        yy[1, i] = 2 * (q0 * q3 + q1 * q2)
        xx[1, i] = 1 - 2 * (q2 * q2 + q3 * q3)
    return 1


def kernel_for() -> Any:
    """The compiled :func:`_tick`: numba, disk-cached, keyed on the sources it is built from
    (this folder, the autopilot law, the angle helpers, the REMUS 100 model)."""
    if "kernel" in _CACHE:
        return _CACHE["kernel"]
    src = Path(__file__).resolve().parents[2]
    key = cc.source_stamp(
        _tick,
        (src / "control" / "pvs_fleet.py", src / "core" / "frames.py", src / "models" / "sixdof"),
    )

    def keyed(*args):  # noqa: ANN002, ANN202
        if len(key) == 0:  # the stamp is in the closure, hence in numba's cache key
            return 0
        return _tick(*args)

    kern = numba.njit(cache=True, error_model="numpy")(keyed)
    _CACHE["kernel"] = kern
    return kern
