"""Where a simulation's generated tick spends its time: each law call timed inside the tick.

:func:`law_costs` runs a simulation's next ticks (or the rest of its run) through a copy of
its generated loop (:mod:`~marinesim.engine.compiled.generate`) that reads the processor's
cycle counter before and after each law call and adds the difference to that call site's
count.  The laws are the same functions on the same arrays, in the same order: the run's
results are the same bits as without the profile (a test holds it).  What it returns:

* per call site (:class:`LawCost`): the law's seconds per tick, from its cycles and the
  counter's rate measured against the wall clock over the same ticks; a ``substep`` law's
  substeps and an ``autonomy`` or ``control`` law's period are in it (seconds per tick, not
  per call);
* for the whole (:class:`LawProfile`): the ticks that ran compiled, the seconds in the
  compiled calls (the laws and the loop around them) and the wall-clock seconds of the
  whole, so what the engine spends outside the compiled calls (its Python between calls:
  the recorder, loading and committing the plugins' state, ticks the plugins ran) is the
  difference.

``marinesim bench laws SCENARIO`` prints it.  The counter is ``llvm.readcyclecounter``
(``rdtsc`` on x86-64); where a machine has none it reads 0 and the profile says so.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from marinesim.core.errors import ConfigError

__all__ = ["LawCost", "LawProfile", "compile_prof", "law_costs", "prof_source", "step_until_compiled"]


@dataclass(frozen=True)
class LawCost:
    """One call site of the generated tick and its time inside the profiled ticks.

    Attributes
    ----------
    site : int
        The call site's index in the tick (``SITES`` of the tick module), in tick order.
    plugin : str
        ``block.plugin`` whose declaration the law belongs to (a world plugin: its name).
    hook : str
        The phase it runs in (:data:`~marinesim.engine.compiled.law.HOOKS`).
    law : str
        ``module.function`` of the law.
    rows : int
        Vehicles of the plugin's block (0 for a world plugin).
    per_tick_s : float
        Seconds per tick (its substeps, and its period, included).
    """

    site: int
    plugin: str
    hook: str
    law: str
    rows: int
    per_tick_s: float

    @property
    def ns_per_vehicle(self) -> float | None:
        """Nanoseconds per vehicle and tick (None for a world plugin)."""
        return self.per_tick_s / self.rows * 1e9 if self.rows else None

    def to_dict(self) -> dict[str, Any]:
        """The fields and :attr:`ns_per_vehicle`, JSON-ready."""
        return {**asdict(self), "ns_per_vehicle": self.ns_per_vehicle}


@dataclass(frozen=True)
class LawProfile:
    """The laws' costs over the profiled ticks, and the time around them.

    Attributes
    ----------
    laws : list of LawCost
        One per call site, in tick order.
    ticks : int
        Ticks the simulation advanced.
    compiled_ticks : int
        Ticks run in the profiled compiled calls (a tick replayed after a hand-back counts
        twice, as its laws ran twice).
    vehicles : int
        Vehicles of the blocks the tick runs.
    loop_s : float
        Seconds inside the compiled calls.
    wall_s : float
        Wall-clock seconds of the whole (without compiling the profiled loops, the first
        time a plugin set is profiled).
    """

    laws: list[LawCost] = field(default_factory=list)
    ticks: int = 0
    compiled_ticks: int = 0
    vehicles: int = 0
    loop_s: float = 0.0
    wall_s: float = 0.0

    @property
    def laws_s(self) -> float:
        """Seconds per tick in the laws, all call sites."""
        return sum(c.per_tick_s for c in self.laws)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: every field, the laws' dicts and :attr:`laws_s`."""
        out = asdict(self)
        out["laws"] = [c.to_dict() for c in self.laws]
        out["laws_s"] = self.laws_s
        return out

    def table(self) -> str:
        """The profile as a text table."""
        lines = [f"{'site':>4}  {'plugin':28} {'hook':13} {'law':30} {'us/tick':>9} {'ns/veh':>8}"]
        for c in self.laws:
            nv = "" if c.ns_per_vehicle is None else f"{c.ns_per_vehicle:8.1f}"
            lines.append(
                f"{c.site:4d}  {c.plugin[:28]:28} {c.hook:13} {c.law.rpartition('.')[2][:30]:30} "
                f"{c.per_tick_s * 1e6:9.2f} {nv:>8}"
            )
        n = max(self.compiled_ticks, 1)
        per = [("laws", self.laws_s), ("compiled calls", self.loop_s / n)]
        if self.ticks:
            per.append(("wall clock", self.wall_s / self.ticks))
        for what, s in per:
            nv = f", {s / self.vehicles * 1e9:.1f} ns per vehicle" if self.vehicles else ""
            lines.append(f"{what}: {s * 1e6:.2f} us per tick{nv}")
        lines.append(f"{self.compiled_ticks} ticks compiled of {self.ticks}")
        return "\n".join(lines)


# ------------------------------------------------------------------------------ the loops
try:  # the profiled loops call these from compiled code
    from numba.core import types as _types
    from numba.extending import intrinsic, register_jitable

    @intrinsic
    def cycles(typingctx: Any) -> Any:  # noqa: ARG001
        """The processor's cycle counter (``llvm.readcyclecounter``)."""

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:  # noqa: ARG001
            from llvmlite import ir

            fnty = ir.FunctionType(ir.IntType(64), [])
            fn = builder.module.declare_intrinsic("llvm.readcyclecounter", fnty=fnty)
            return builder.call(fn, [])

        return _types.int64(), codegen

    @register_jitable
    def lap(pc: Any, c: int, c0: int, st: int) -> int:
        """Add the cycles since ``c0`` to ``pc[c]``; ``st`` (the law's result) passed on."""
        pc[c] += cycles() - c0
        return st

    import numba as _numba

    @_numba.njit(cache=True)
    def _now() -> int:
        return cycles()

except ImportError:  # pragma: no cover - profiling needs numba
    cycles = lap = _now = None  # type: ignore[assignment]


def _prof_module(decls: Any) -> tuple[str, list[str], list[int]]:
    """The profiled loops' module text, the array keys and the state positions (the tick's)."""
    from pathlib import Path

    from marinesim.engine.compiled.generate import (
        _path,
        loop_source,
        site_calls,
        source_head,
        tick_body,
        tick_source,
        write_sites,
    )
    from marinesim.engine.compiled.lawfunc import SYMBOL

    source, order, state = tick_source(decls)
    body, sites = tick_body(decls)
    _t, _py, jit, six = site_calls(decls, sites)
    sym = SYMBOL + Path(_path(source, decls)).stem  # the tick module's table of law pointers
    calls = [f"lap(PC, {c}, cycles(), {call})" for c, call in enumerate(jit)]
    head = "k0, kend, start, dt, h, nsub, sched"
    lines = [
        *source_head(__name__, decls),
        "import numpy as np",
        "",
        "from marinesim.engine.compiled.lawfunc import call_law, call_law_sub, copy_rows",
        "from marinesim.engine.compiled.profile import cycles, lap",
        "",
        f"_SYM = {sym!r}",
        f"SIX = np.array({six!r}, dtype=np.int64)",
        "",
        "",
        *loop_source("prof_run", (head, "AD, DM, j0, PC"), write_sites(body, calls), []),
        "",
        "",
        *loop_source("prof_loop", (head, "AD, DM, SV, save, j0, PC"), write_sites(body, calls),
                     state, tables=True),  # fmt: skip
        "",
    ]
    return "\n".join(lines), order, state


def prof_source(decls: Any) -> str:
    """The profiled loops of the plugin set ``decls``: ``prof_run`` and ``prof_loop`` are the
    tick module's ``tick_run`` and ``tick_loop`` with one more argument, ``PC`` (int64, one
    count per call site), each law call written ``lap(PC, c, cycles(), <the call>)``."""
    return _prof_module(decls)[0]


def compile_prof(decls: Any, *, saved: bool) -> tuple[Any, list[str], list[int]]:
    """The profiled loop (``prof_loop`` when ``saved``, else ``prof_run``) of ``decls`` as
    :func:`~marinesim.engine.compiled.generate.compile_tick` returns the tick's: the function
    (numba ``njit``, disk-cached beside the ticks), the array keys and the state positions."""
    from marinesim.core.compile import package_digest
    from marinesim.engine.compiled.generate import cache_dir, jit_tick, tick_module, write_once

    text, order, state = _prof_module(decls)
    digest = hashlib.sha256((text + package_digest()).encode()).hexdigest()[:20]
    path = cache_dir() / f"prof_{digest}.py"
    write_once(path, text)
    return jit_tick(tick_module(path), saved=saved, prefix="prof"), order, state


# ------------------------------------------------------------------------------ profiling
def step_until_compiled(sim: Any, ticks: int, most: int = 50) -> int:
    """Step ``sim`` ``ticks`` ticks, then on until one has run compiled (at most ``most``
    times ``ticks`` in all, or to its end: a plugin may hand its first ticks to the plugins
    until it is ready).  Returns the ticks run."""
    ran = sim.step(ticks)
    route = getattr(sim, "_span", None)
    # (a loop that has run is warm; the stepped route's tick count waits for its flush)
    while route and not route._warmed and ran < most * ticks and sim.status == "running":
        done = sim.step(ticks)
        if not done:
            break
        ran += done
    return ran


def _route(sim: Any) -> Any:
    from marinesim.engine.compiled.route import CompiledRoute, _interpreted

    route = sim._span_for_run()
    if not isinstance(route, CompiledRoute):
        why = getattr(sim, "compiled_why_not", None) or "no compiled tick applies"
        raise ConfigError(f"no compiled tick to profile: {why}", param="compiled")
    if _interpreted():
        raise ConfigError(
            "MARINESIM_JIT=interp: the tick's laws run interpreted, with no machine code to time",
            param="MARINESIM_JIT",
        )
    from marinesim.engine.compiled.law import on_cuda

    if on_cuda():
        raise ConfigError(
            "MARINESIM_JIT=cuda: the laws run on the device, where this profile does not reach",
            param="MARINESIM_JIT",
        )
    return route


def law_costs(sim: Any, ticks: int | None = None) -> LawProfile:
    """Run ``sim``'s next ``ticks`` ticks (None: to the end of its run) with each law call of
    its generated tick timed, and return the profile.

    Parameters
    ----------
    sim : Simulation
        Its compiled tick applies (``Simulation.compiled`` None or True).  Ticks it runs
        through the plugins (a hand-back, a Python-only plugin due) are in ``ticks`` and
        ``wall_s``, not in the laws' counts.
    ticks : int, optional
        Ticks to step (>= 1); None runs the simulation to its end (``Simulation.run``: the
        loop without the state's save copies).

    Returns
    -------
    LawProfile

    Raises
    ------
    ConfigError
        No compiled tick applies, or it runs interpreted or on CUDA; ``ticks`` < 1.
    """
    from marinesim.engine.compiled.generate import tick_body
    from marinesim.engine.compiled.route import _slot_name

    if ticks is not None and ticks < 1:
        raise ConfigError(f"ticks must be >= 1, got {ticks}", param="ticks")
    if sim._finished or sim._end_reason() is not None:
        raise ConfigError(
            f"the run has ended at t = {sim.clock.t:g} s: no tick left to profile", param="ticks"
        )
    route = _route(sim)
    decls = [laws for _s, laws in route.entries]
    _body, sites = tick_body(decls)
    pc = np.zeros(len(sites), dtype=np.int64)
    k0 = sim.clock.k
    route.prof, route.prof_s, route.prof_ticks, route.prof_compile_s = pc, 0.0, 0, 0.0
    c0, t0 = _now(), time.perf_counter()
    try:
        if ticks is None:
            sim.run()
        else:
            sim.step(ticks)
    finally:
        c1, t1 = _now(), time.perf_counter()
        route.prof = None
    wall = t1 - t0 - route.prof_compile_s  # (the profiled loops' first compile: not the run's)
    if c1 <= c0:
        raise ConfigError("this machine's cycle counter does not count: no profile", param="cycles")
    rate = (c1 - c0) / (t1 - t0)  # counts per second
    n = max(route.prof_ticks, 1)
    laws = []
    for c, site in enumerate(sites):
        slot = route.entries[site.d][0]
        laws.append(LawCost(
            site=c, plugin=_slot_name(slot), hook=site.law.hook,
            law=f"{site.law.fn.__module__}.{site.law.fn.__name__}",
            rows=int(slot.block.n) if slot.block is not None else 0,
            per_tick_s=float(pc[c]) / rate / n,
        ))  # fmt: skip
    return LawProfile(
        laws=laws, ticks=int(sim.clock.k - k0), compiled_ticks=int(route.prof_ticks),
        vehicles=sum(int(b.n) for b in route.blocks), loop_s=route.prof_s, wall_s=wall,
    )  # fmt: skip
