"""Propagation of the uSimMarine model (spec §2.3, §2.4, §3) over N vehicles.

The laws are the per-vehicle functions of :mod:`marinesim.models.usm.laws`; this module
gathers their inputs from the state (the thrust-map speed of the effective thrust, the step of
each vehicle) and launches :data:`~marinesim.models.usm.laws.STEP` on a backend
(:func:`marinesim.models.backends.resolve`: ``cpu``, ``python`` or ``cuda``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from marinesim.models import backends
from marinesim.models.usm import laws
from marinesim.models.usm.declarations import F64, BoolA
from marinesim.models.usm.moos_math import _thrust_map
from marinesim.models.usm.state import _RECORD, UsmState
from marinesim.models.usm_config import UsmConfig

#: Record fields written by the kernel, in the order of :func:`laws.step_one`'s arguments.
_KERNEL_RECORD = _RECORD
#: Positions of the output arrays in the kernel's arguments (copied back from a GPU).
_OUT0 = 21 + len(_RECORD)
_RESULTS = tuple(range(_OUT0, _OUT0 + len(_RECORD) + 3))


def _speed_lookup(config: UsmConfig, thrust: F64) -> F64:
    """Thrust-map speed [m/s] of ``thrust`` [%] (before the turn loss)."""
    tm = _thrust_map(config)
    if tm.using_thrust_factor and not tm.neg_pairs and not tm.reflect:
        # factor rule, nothing for negative thrust (the default uSimMarine map)
        f = tm.thrust_factor
        if f == 0:
            return np.zeros_like(thrust)
        v = np.maximum(thrust, 0.0)
        v /= f
        return v
    return np.asarray(tm.speed(thrust), dtype=np.float64)


def _same_bits(a: F64, b: F64) -> bool:
    """Whether two float arrays hold the same bit patterns (identity is the quick yes)."""
    if a is b:
        return True
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(np.array_equal(a.view(np.int64), b.view(np.int64)))


def map_speed(config: UsmConfig, st: UsmState) -> tuple[F64, dict[str, Any]]:
    """Thrust-map speed [m/s] of each vehicle's effective thrust, and cache changes.

    The effective thrust is the thrust, the mean of the left and right thrusts in
    differential mode, negated in reverse mode (§3.3).  Without either mode the lookup of
    the thrust is cached in the state (``act_thrust`` → ``act_vs``) while the thrust and a
    frozen thrust map stay the same.
    """
    diff = st.diff_mode
    rev = st.reverse
    if bool(diff.any()) or bool(rev.any()):
        t_sp = np.where(diff, (st.thrust_l + st.thrust_r) / 2.0, st.thrust)
        t_sp = np.where(rev, -t_sp, t_sp)
        return _speed_lookup(config, t_sp), {}
    tm = config.thrust_map
    cacheable = tm is None or bool(getattr(tm, "_frozen", False))
    if cacheable and st.act_config is config and _same_bits(st.act_thrust, st.thrust):
        return st.act_vs, {}
    vs = _speed_lookup(config, st.thrust)
    # a map that can still change (not frozen) is stored but never trusted (no config)
    return vs, {"act_thrust": st.thrust, "act_vs": vs, "act_config": config if cacheable else None}


def _f64(a: Any, n: int) -> F64:
    return np.ascontiguousarray(np.broadcast_to(np.asarray(a, dtype=np.float64), (n,)))


def propagate(
    config: UsmConfig,
    st: UsmState,
    rec: dict[str, Any],
    run: BoolA,
    dt: F64,
    vs: F64,
    drift_x: F64 | None,
    drift_y: F64 | None,
    tsm: tuple[F64, F64, F64],
    backend: str | None = None,
) -> tuple[dict[str, Any], tuple[F64, F64, F64]]:
    """``propagateNodeRecord`` for every vehicle where ``run``; the record elsewhere.

    Parameters
    ----------
    config : UsmConfig
        Effective parameters (``variant`` selects the V22 laws).
    st : UsmState
        Actuators and mail-settable parameters.
    rec : dict of str to ndarray (N,)
        The record to propagate (the NAV record or the ground-truth one), keys ``_RECORD``.
    run : ndarray of bool (N,)
        Vehicles that propagate.
    dt, vs : ndarray (N,)
        Step [s]; thrust-map speed [m/s] (:func:`map_speed`).
    drift_x, drift_y : ndarray (N,) or None
        Drift [m/s] added to the motion; None: no drift (the speed over ground is then
        |speed|, as the program computes it for its NAV record in dual-state mode).
    tsm : tuple of ndarray (N,)
        V22 turn-speed map (full rate, null rate [%], null speed [m/s]).
    backend : str, optional
        ``cpu``, ``python`` or ``cuda`` (default ``$MARINESIM_BACKEND`` or ``cpu``).

    Returns
    -------
    (dict, tuple)
        The new record (keys ``_RECORD``) and the new turn-speed map.
    """
    n = st.n
    drift = drift_x is not None
    zeros = np.zeros(n) if not drift else None
    par = np.array(
        [
            1.0 if config.variant == "usm_v22" else 0.0,
            config.max_acceleration,
            config.max_deceleration,
            config.turn_loss,
            config.max_depth_rate_speed,
            config.max_depth_rate,
            config.max_speed,
            1.0 if drift else 0.0,
        ],
        dtype=np.float64,
    )
    out = [np.empty(n, dtype=bool if k == "altitude_set" else np.float64) for k in _RECORD]
    tsm_out = [np.empty(n) for _ in range(3)]
    name = backends.resolve(backend)
    block = 1 if name == "cuda" else laws.BLOCK
    args = (
        np.arange(0, n, block, dtype=np.int64),
        np.ascontiguousarray(run, dtype=bool),
        _f64(dt, n),
        _f64(vs, n),
        st.thrust, st.rudder, st.elevator, st.thrust_l, st.thrust_r,
        st.diff_mode, st.reverse, st.turn_rate, st.turn_radius, st.rotate_speed,
        st.buoyancy_rate, st.water_depth,
        _f64(drift_x, n) if drift else zeros,
        _f64(drift_y, n) if drift else zeros,
        *tsm,
        *(rec[k] for k in _RECORD),
        *out,
        *tsm_out,
        par,
    )
    laws.STEP.launch(name, args, {k: args[k] for k in _RESULTS})
    return dict(zip(_RECORD, out, strict=True)), (tsm_out[0], tsm_out[1], tsm_out[2])
