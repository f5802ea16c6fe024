"""The uSimMarine kinematic vehicle model (``usm``) and its V22 variant (``usm_v22``).

Batched over N vehicles: every state field is an array with a leading vehicle axis, and N = 1
runs the very same code.  The arithmetic reproduces the real programs operation by operation
(spec ``usimmarine.md``; MOOS-IvP ``dep_uSimMarine`` and ``uSimMarineV22``): speed averaging,
the pitch sawtooth, per-message rudder slewing, the vector-mean heading, ``relAng`` for the
heading over ground, the truncated pause clock and so on.

Three entry points play the program's MOOS cycle (spec §2):

* :func:`init` — start-up (§2.1): the record time stamp is the MOOS time at start-up;
* :func:`apply_mail` — one typed MOOS message (§6), applied to some or all vehicles;
* :func:`iterate` — one ``Iterate()`` (§2.2): propagate (§2.3, §3), then publish (§7);
  :func:`iterate_one` the same for one vehicle, its publications as Python numbers, and
  :class:`OneVehicle` one vehicle mailed and iterated in turn with its rows kept between
  iterations (what the MOOS app runs).

:func:`step` is the architecture's ``step(params, state, cmd, env, dt)`` form used by the
engine: it advances each vehicle's MOOS time by ``dt``, hands the desired actuators over as
mail and iterates once.

Units: m, m/s, m/s², compass degrees (0 = north, clockwise) for heading, radians for pitch
and yaw, percent for thrust/rudder/elevator, seconds for time.  Local frame: x east, y north
(UTM grid), depth positive down.

The package holds the whole model, split by idea: :mod:`.state` (fields, ``init``),
:mod:`.mail` (``apply_mail``), :mod:`.propagate` (§3), :mod:`.publish` (``iterate``, §7),
:mod:`.declarations` (parameters, subscriptions, publications), :mod:`.moos_math` (the MOOS
arithmetic helpers), :mod:`.config` (the effective configuration, ``configure``), with its
schema (:mod:`.config_schema`) and program-exact text reading (:mod:`.config_text`), and
:mod:`.thrustmap` (thrust ↔ speed).  This module is its public face.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from marinesim.core.errors import ConfigError
from marinesim.models.usm.config import UsmConfig
from marinesim.models.usm.declarations import F64, PUBLICATIONS, SUBSCRIPTIONS, Params  # noqa: F401
from marinesim.models.usm.mail import _limit_change, apply_mail  # noqa: F401
from marinesim.models.usm.moos_math import drift_summary, rel_ang, snap_speed  # noqa: F401
from marinesim.models.usm.one import OneVehicle, iterate_one, scalar_pubs  # noqa: F401
from marinesim.models.usm.publish import iterate  # noqa: F401
from marinesim.models.usm.state import _FIELD_NAMES, UsmState, _evolve, init  # noqa: F401

__all__ = [
    "PUBLICATIONS",
    "Params",
    "SUBSCRIPTIONS",
    "UsmState",
    "apply_mail",
    "bench_config",
    "drift_summary",
    "init",
    "iterate",
    "OneVehicle",
    "iterate_one",
    "measure_throughput",
    "rel_ang",
    "snap_speed",
    "step",
]

#: The model's parameter type (architecture contract: ``Params``; ``init``; ``step``).
# --------------------------------------------------------------------------------------
# the architecture's step()
# --------------------------------------------------------------------------------------

_CMD_ORDER = (
    "DESIRED_THRUST",
    "DESIRED_RUDDER",
    "DESIRED_ELEVATOR",
    "DESIRED_THRUST_L",
    "DESIRED_THRUST_R",
)


def step(
    params: UsmConfig,
    state: UsmState,
    cmd: Mapping[str, ArrayLike] | None,
    env: Mapping[str, ArrayLike] | None,
    dt: float | ArrayLike,
    *,
    return_publications: bool = False,
) -> UsmState | tuple[UsmState, dict[str, Any]]:
    """One engine step: advance MOOS time by ``dt``, deliver the commands, iterate once.

    Parameters
    ----------
    params : UsmConfig
        Effective parameters.
    state : UsmState
        State before the step (its ``moos_time`` is the time of the previous iteration).
    cmd : mapping of str to array_like (N,), optional
        Desired actuators as double mail, applied in this order before the propagation:
        ``DESIRED_THRUST``, ``DESIRED_RUDDER`` (rate-limited at the new MOOS time),
        ``DESIRED_ELEVATOR``, ``DESIRED_THRUST_L``, ``DESIRED_THRUST_R`` [%].  Missing keys
        keep the held values.
    env : mapping, optional
        ``drift_x``, ``drift_y`` [m/s] arrays (N,) that override the drift held by the model
        (the same as ``DRIFT_X``/``DRIFT_Y`` mail); None keeps it.
    dt : float or array_like (N,)
        Step [s]; one model iteration per step (the model never sub-steps, spec §9.3).
    return_publications : bool
        Also return the publications of :func:`iterate`.

    Returns
    -------
    UsmState, or (UsmState, dict) with ``return_publications``
    """
    t_new = state.moos_time + np.asarray(dt, dtype=np.float64)
    t_msg = float(np.max(t_new))
    if cmd:
        for var in _CMD_ORDER:
            if var in cmd:
                val = np.broadcast_to(np.asarray(cmd[var], dtype=np.float64), (state.n,))
                if var == "DESIRED_RUDDER" and params.max_rudder_degs_per_sec > 0:
                    # the rate limit uses each vehicle's own time
                    state = _rudder_per_row(params, state, val, t_new)
                    continue
                state, _p, _w = apply_mail(params, state, var, val, moos_time=t_msg)
    if env:
        ch: dict[str, Any] = {}
        for key in ("drift_x", "drift_y"):
            if key in env and env[key] is not None:
                ch[key] = np.broadcast_to(np.asarray(env[key], dtype=np.float64), (state.n,)).copy()
        if ch:
            state = _evolve(state, ch)
    new, pubs = iterate(params, state, t_new)
    if return_publications:
        return new, pubs
    return new


def _rudder_per_row(params: UsmConfig, state: UsmState, val: F64, t_new: F64) -> UsmState:
    gate = ~(state.diff_mode if params.variant == "usm_v22" else state.diff_flag)
    prev = state.rudder
    maxd = (t_new - state.rudder_tstamp) * params.max_rudder_degs_per_sec
    change = _limit_change(val - prev, maxd)
    return _evolve(
        state,
        {
            "rudder_prev": np.where(gate, prev, state.rudder_prev),
            "rudder": np.where(gate, prev + change, prev),
            "diff_mode": np.where(gate, False, state.diff_mode),
            "rudder_tstamp": np.where(gate, t_new, state.rudder_tstamp),
        },
    )


# --------------------------------------------------------------------------------------
# throughput measurement (``marinesim bench usm``, ``benchmarks/bench_usm.py``)
# --------------------------------------------------------------------------------------


def bench_config() -> UsmConfig:
    """The configuration used by the throughput benchmark: documented-mode defaults.

    No datum (lat/long projection is a separate cost), the default thrust map, deceleration
    limit 0.5 m/s² and a rudder rate limit of 30 %/s, so every branch of the hot path runs.

    Returns
    -------
    UsmConfig
        ``compat="moos"``, prefix ``NAV``, ``max_rudder_degs_per_sec = 30``.
    """
    return UsmConfig(compat="moos", prefix="NAV", max_rudder_degs_per_sec=30.0)


def _bench_commands(n: int) -> tuple[F64, F64]:
    thrust = np.linspace(20.0, 100.0, n) if n > 1 else np.array([60.0])
    rudder = np.linspace(-40.0, 40.0, n) if n > 1 else np.array([15.0])
    return thrust, rudder


def measure_throughput(
    n: int,
    steps: int,
    *,
    dt: float = 0.1,
    loop: bool = True,
    loop_vehicles: int = 50,
    loop_steps: int = 20,
    rounds: int = 3,
    config: UsmConfig | None = None,
    mail: bool = True,
) -> dict[str, Any]:
    """Vehicle-steps per second of :func:`iterate` at N vehicles, and of a per-vehicle loop.

    Every step delivers ``DESIRED_THRUST`` and ``DESIRED_RUDDER`` (one value per vehicle)
    with :func:`apply_mail` and runs one :func:`iterate` (propagation and publications);
    with ``mail=False`` the commands are delivered once before timing and the timed steps
    are :func:`iterate` alone (held actuators).
    The baseline is a plain Python loop over vehicles calling the same two functions on
    N = 1 states, timed on ``min(n, loop_vehicles)`` vehicles × ``loop_steps`` steps in the
    same process (its rate per vehicle-step does not depend on N).

    Parameters
    ----------
    n : int
        Number of vehicles N.
    steps : int
        Timed steps of the batched run (after two warm-up steps).
    dt : float
        Step [s].
    loop : bool
        Also time the per-vehicle loop.
    loop_vehicles, loop_steps : int
        Size of the loop sample (with fewer vehicles, more steps: the same work).
    rounds : int
        Batched and loop timings are interleaved in this many rounds; the fastest round of
        each is reported (robust against other load on the machine).
    config : UsmConfig, optional
        Default :func:`bench_config`.
    mail : bool
        Deliver the two command messages every step (default) or only iterate.

    Returns
    -------
    dict
        ``model``, ``vehicles``, ``steps``, ``mail``, ``seconds_per_step`` (best round),
        ``vehicle_steps_per_s``, and with ``loop``: ``loop_vehicle_steps_per_s`` and
        ``ratio`` (batched / loop).
    """
    import time

    if n < 1:
        raise ConfigError(f"number of vehicles must be >= 1, got {n}", param="vehicles")
    if steps < 1:
        raise ConfigError(f"number of steps must be >= 1, got {steps}", param="steps")
    if not (math.isfinite(dt) and dt > 0):
        raise ConfigError(f"step dt must be a finite number > 0 s, got {dt}", param="dt")
    c = config if config is not None else bench_config()
    thrust, rudder = _bench_commands(n)

    def one_step(st: UsmState, t: float, th: Any, ru: Any, send: bool = mail) -> UsmState:
        if send:
            st, _p, _w = apply_mail(c, st, "DESIRED_THRUST", th, moos_time=t)
            st, _p, _w = apply_mail(c, st, "DESIRED_RUDDER", ru, moos_time=t)
        st, _pubs = iterate(c, st, t)
        return st

    st = init(c, n)
    t = 0.0
    for _ in range(2):
        t += dt
        st = one_step(st, t, thrust, rudder, True)
    m = min(n, loop_vehicles)
    per_round = max(1, steps // rounds)
    # the loop sample does about loop_vehicles × loop_steps vehicle-steps per round (the same
    # work as the batched round when N is small)
    lsteps = max(1, min(per_round * n // m, (loop_vehicles * loop_steps) // m))
    states = [init(c, 1) for _ in range(m)]
    th = [float(v) for v in thrust[:m]]
    ru = [float(v) for v in rudder[:m]]
    tl = 0.0
    if loop:
        for _ in range(2):
            tl += dt
            states = [one_step(s, tl, th[i], ru[i], True) for i, s in enumerate(states)]
    # interleaved rounds; the best round of each counts (the machine may be shared)
    best = math.inf
    lbest = math.inf
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(per_round):
            t += dt
            st = one_step(st, t, thrust, rudder)
        best = min(best, (time.perf_counter() - t0) / per_round)
        if loop:
            t0 = time.perf_counter()
            for _ in range(lsteps):
                tl += dt
                for i in range(m):
                    states[i] = one_step(states[i], tl, th[i], ru[i])
            lbest = min(lbest, (time.perf_counter() - t0) / (lsteps * m))
    out: dict[str, Any] = {
        "model": c.variant,
        "vehicles": n,
        "steps": per_round * rounds,
        "mail": bool(mail),
        "seconds_per_step": best,
        "vehicle_steps_per_s": n / best,
    }
    if loop:
        out["loop_vehicle_steps_per_s"] = 1.0 / lbest
        out["ratio"] = out["vehicle_steps_per_s"] / out["loop_vehicle_steps_per_s"]
    return out
