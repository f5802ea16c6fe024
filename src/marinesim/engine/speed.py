"""Engine fixed cost per tick (``marinesim bench engine``): the engine around a model, measured.

Three figures from one process, so their ratios hold on any machine:

* ``engine_us_per_tick`` — one vehicle with three plugins whose hooks do nothing (a motion, a
  controller and an autonomy): what a tick costs before any model runs (phases, hook calls,
  bus boundaries, non-finite check, truth log frame, end conditions);
* ``usm_us_per_tick`` — one ``usm`` vehicle with the ``heading_speed_depth_pid`` controller
  and the ``waypoints`` autonomy, the whole tick, and ``usm_hooks_us_per_tick``, the part spent
  inside the three plugins' hooks (their ``ctx.publish``/``ctx.log`` calls included);
* ``model_step_us`` — the bare model step of the same vehicle: three commands mailed and one
  ``kinematic.iterate`` (what the ``usm`` plugin runs per tick), without the engine.

Wall-clock time by default; ``cpu=True`` times with the process's CPU time instead (on a
machine shared with other jobs, CPU time is what the code costs; the clock reads cost a
little more there, so the hooks' share reads slightly high).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, ClassVar

from marinesim.engine.entity import BlockSpec, PluginSpec
from marinesim.engine.plugin import Plugin
from marinesim.engine.simulation import Simulation

__all__ = ["build_null", "build_usm", "measure_tick_cost"]

_DT = 0.1  # s


class _NullMotion(Plugin):
    """Motion plugin whose substep does nothing (truth stays at the spawn pose)."""

    kind: ClassVar[str] = "motion"

    def substep(self, ctx: Any, rng: Any) -> None:
        """Nothing."""


class _NullController(Plugin):
    """Controller whose control hook does nothing."""

    kind: ClassVar[str] = "controller"

    def control(self, ctx: Any, rng: Any) -> None:
        """Nothing."""


class _NullAutonomy(Plugin):
    """Autonomy whose autonomy hook does nothing."""

    kind: ClassVar[str] = "autonomy"

    def autonomy(self, ctx: Any, rng: Any) -> None:
        """Nothing."""


def build_null(seed: int = 1) -> Simulation:
    """One vehicle, three plugins with empty hooks, dt = 0.1 s, no time limit in reach."""
    block = BlockSpec(
        "veh",
        1,
        PluginSpec(_NullMotion("motion")),
        controllers=(PluginSpec(_NullController("control")),),
        autonomy=(PluginSpec(_NullAutonomy("autonomy")),),
    )
    return Simulation([block], dt=_DT, end=1e9, seed=seed, name="bench_engine_null")


def build_usm(seed: int = 1) -> Simulation:
    """One ``usm`` vehicle with the ``heading_speed_depth_pid`` controller and ``waypoints``."""
    from marinesim.core.registry import get

    usm = get("motion", "usm")("usm")
    pid = get("controller", "heading_speed_depth_pid")("pid")
    wpt_cls = get("autonomy", "waypoints")
    square = [(100.0, 0.0), (100.0, 100.0), (0.0, 100.0), (0.0, 0.0)]
    wpt = wpt_cls("waypoints", wpt_cls.Params(points_ne=square, speed=2.0, repeat=-1))
    block = BlockSpec(
        "veh", 1, PluginSpec(usm), controllers=(PluginSpec(pid),), autonomy=(PluginSpec(wpt),)
    )
    return Simulation([block], dt=_DT, end=1e9, seed=seed, name="bench_engine_usm")


def _time_ticks(sim: Simulation, ticks: int, clock: Callable[[], float]) -> float:
    """Seconds per tick over ``ticks`` ticks (after one warm-up tick)."""
    sim.step(1)
    t0 = clock()
    sim.step(ticks)
    return (clock() - t0) / ticks


def _hook_timers(sim: Simulation, clock: Callable[[], float]) -> list[float]:
    """Wrap every hook of every slot with a timer; returns the accumulator [s] (one cell)."""
    acc = [0.0]
    perf = clock

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(ctx: Any, rng: Any) -> Any:
            t0 = perf()
            try:
                return fn(ctx, rng)
            finally:
                acc[0] += perf() - t0

        return timed

    for slot in sim.slots:
        for hook in list(slot.fns):
            slot.fns[hook] = wrap(slot.fns[hook])
    return acc


def _model_step(steps: int, clock: Callable[[], float] = time.perf_counter) -> float:
    """Seconds per bare ``usm`` step: three commands mailed, one iterate, N = 1."""
    from marinesim.engine.plugins.usm import UsmMotion
    from marinesim.models import usm as kinematic

    cfg = UsmMotion("usm").params.config  # type: ignore[attr-defined]
    st = kinematic.init(cfg, 1, moos_time=0.0)
    t = 0.0
    t0 = clock()
    for _ in range(steps):
        t += _DT
        st, _p, _w = kinematic.apply_mail(cfg, st, "DESIRED_THRUST", 50.0, moos_time=t)
        st, _p, _w = kinematic.apply_mail(cfg, st, "DESIRED_RUDDER", 5.0, moos_time=t)
        st, _p, _w = kinematic.apply_mail(cfg, st, "DESIRED_ELEVATOR", 0.0, moos_time=t)
        st, _pubs = kinematic.iterate(cfg, st, t)
    return (clock() - t0) / steps


def measure_tick_cost(ticks: int = 2000, rounds: int = 3, *, cpu: bool = False) -> dict[str, Any]:
    """Engine fixed cost and the ``usm`` tick against the bare model step, same process.

    Parameters
    ----------
    ticks : int
        Ticks per timed round (≥ 1); the usm figures use a fifth of them (at least 1).
    rounds : int
        Rounds; the best (least disturbed) round of each figure is kept.
    cpu : bool
        Time with the process's CPU time (``time.process_time``) instead of the wall clock.

    Returns
    -------
    dict
        ``engine_us_per_tick``, ``usm_us_per_tick``, ``usm_hooks_us_per_tick``,
        ``usm_engine_us_per_tick`` (the tick less its hooks), ``model_step_us``,
        ``usm_tick_over_model_step``, the run's ``ticks``/``rounds`` [µs, ratios] and
        ``clock`` (``"wall"`` or ``"cpu"``).
    """
    if ticks < 1 or rounds < 1:
        raise ValueError("ticks and rounds must be >= 1")
    clock = time.process_time if cpu else time.perf_counter
    usm_ticks = max(1, ticks // 5)
    null_s, usm_s, hooks_s, model_s = [], [], [], []
    for _ in range(rounds):
        null_s.append(_time_ticks(build_null(), ticks, clock))
        sim = build_usm()
        sim.step(1)
        acc = _hook_timers(sim, clock)
        t0 = clock()
        sim.step(usm_ticks)
        usm_s.append((clock() - t0) / usm_ticks)
        hooks_s.append(acc[0] / usm_ticks)
        model_s.append(_model_step(usm_ticks, clock))
    best = min(range(rounds), key=lambda i: usm_s[i])
    usm = usm_s[best]
    hooks = hooks_s[best]
    model = min(model_s)
    return {
        "ticks": ticks,
        "usm_ticks": usm_ticks,
        "rounds": rounds,
        "vehicles": 1,
        "plugins": 3,
        "engine_us_per_tick": min(null_s) * 1e6,
        "usm_us_per_tick": usm * 1e6,
        "usm_hooks_us_per_tick": hooks * 1e6,
        "usm_engine_us_per_tick": (usm - hooks) * 1e6,
        "model_step_us": model * 1e6,
        "usm_tick_over_model_step": usm / model,
        "clock": "cpu" if cpu else "wall",
    }
