"""The compiled route: many ticks of the entity blocks in one call of their generated tick.

:func:`route_for` asks every plugin of a simulation for its declaration
(:mod:`~marinesim.engine.compiled.law`).  When every block's per-tick work is all declared —
every plugin that runs each tick is compiled-capable, and the Python-only ones (e.g. an
autonomy at 1 Hz) run on ticks of their own — :class:`CompiledRoute` runs the generated tick
(:mod:`~marinesim.engine.compiled.generate`) between those ticks and hands back to Python
whenever something only Python does is due: a Python-only plugin's tick, a message waiting
on the bus, a law that hands back (an event, a non-finite state), a full recorder chunk.

The engine's own side of the tick is done here once for every plugin set: the recorder's
frames (hold-last, decimated, from the laws' per-tick logs), the bus and hook-call counts,
the hook contexts as the last call left them, the clock.  The plugins' side — their state at
the tick reached, the truth — is each plugin's ``commit``.

Several entity blocks share one generated tick: the laws of all blocks, in the order the
plugins' tick runs them (each phase over every block), each block's wires (``bus.*``,
``truth.*``) its own (:attr:`Laws.scope <marinesim.engine.compiled.law.Laws.scope>`).  A
law of any block that hands back restores the state of every block to the start of that
tick, so the plugins run that tick for all of them, as the Python route does.
"""

from __future__ import annotations

import os
import time as _time
from typing import Any

import numpy as np

from marinesim.core.errors import ConfigError
from marinesim.engine.compiled import background, lawfunc
from marinesim.engine.compiled.generate import (
    arena_tables,
    array_of,
    cached_machine_code,
    compile_tick,
    shape_offsets,
    tick_module_of,
    tick_path,
)
from marinesim.engine.compiled.law import MAX_TICKS, WIRE_PREFIXES, Laws, declared, on_cuda
from marinesim.engine.compiled.notice import compiled_apart, compiling, compiling_apart

__all__ = ["CompiledRoute", "route_for"]

#: Seconds of chained compiled calls in one :meth:`CompiledRoute.run` at most (then the run's
#: progress, pause and interrupt checks, and the tick reached goes through the plugins: at
#: 10⁴ ``usm`` vehicles that tick costs ≈ 15 ms, 1.5 % of a second's chain).
CHAIN_S = 1.0

#: Hooks a Python-only plugin may have and still leave the ticks between its own to the
#: compiled tick (it runs on its due ticks, through the plugins).
_SPARSE_HOOKS = {"autonomy", "start", "stop"}


class CompiledRoute:
    """Drives the generated tick of the entity blocks (the :class:`~marinesim.engine.span.Span`
    face).

    Parameters
    ----------
    sim : Simulation
        Built simulation.
    entries : list of (Slot, Laws)
        The compiled plugins of every block, in the plugins' tick order.
    sparse : list of Slot
        Python-only plugins that run on ticks of their own (the route stops before them).
    """

    def __init__(self, sim: Any, entries: list[tuple[Any, Laws]], sparse: list[Any]) -> None:
        self.sim = sim
        self.entries = entries
        self.sparse = sparse
        #: The blocks the route runs (scenario order); :attr:`block` the first.
        self.blocks = list(dict.fromkeys(s.block for s, _laws in entries if s.block is not None))
        self.block = self.blocks[0]
        self.ticks = 0  # ticks run compiled (the manifest reports them)
        self._kernel: Any = None  # (fn, arrays, interpreted, saved): the loop called now
        self._kernels: dict[bool, Any] = {}  # both loops, by ``saved``, once made
        #: The loops (by ``saved``) that have run once (typed, machine code loaded).
        self._warmed: set[Any] = set()
        #: Per call site, the cycles its law took (:mod:`~marinesim.engine.compiled.profile`
        #: sets it): while set, the calls go through the profiled copies of the loops.
        self.prof: np.ndarray | None = None
        self.prof_s = 0.0  # seconds in the profiled loops' calls, and their ticks
        self.prof_ticks = 0
        self.prof_compile_s = 0.0  # (and in compiling the profiled loops)
        #: Hold the engine's bookkeeping of consecutive calls back until :meth:`flush` (set
        #: by ``Simulation.step``: one tick per call of an externally clocked run).
        self.defer = False
        self._dn, self._dk0 = 0, 0  # ticks deferred, their first tick
        self._truth: Any = None  # the truth object the last deferred call left
        self._direct: tuple[Any, ...] | None = None  # (tick_loop, AD, DM, SV): see direct()
        self._dc = 0  # ticks run through direct() whose commit waits (sync())
        self._bg: Any = None  # the tick's compile in another process (background.Job)
        self._fresh: list[tuple[int, Laws, str, int]] = []  # see _call
        self._fresh_held: tuple[Any, ...] = ()  # the fresh arrays the tables point at
        self._bg_tried = False
        #: The last call ended after a whole tick at a law's request (``STOP_AFTER``: a world
        #: finished): the engine checks the end conditions, and the next tick may be compiled.
        self.soft = False
        #: Every motion declaration holds the truth of ended worlds (Laws.holds).
        self._holds = all(
            laws.holds for _s, laws in entries if any(law.hook == "substep" for law in laws.laws)
        )
        self._sched = np.array(
            [x for hook in ("autonomy", "control") for s, laws in entries for law in laws.laws
             if law.hook == hook for x in (s.period, s.offset)],
            dtype=np.int64,
        )  # fmt: skip (the generated tick's order: autonomy laws, then control laws)

    # ------------------------------------------------------------------------------ running
    def _ready(self) -> bool:
        sim = self.sim
        if sim._recorder._cap == 0 or not all(b.active.all() for b in self.blocks):
            return False
        if sim.bus.pending:
            return False
        if sim._worlds.frozen.any() and not self._holds:
            return False  # a motion that cannot hold an ended world: the plugins hold it
        taken = {id(s) for _s, laws in self.entries for s in laws.inboxes}
        for slot, laws in self.entries:
            sub = getattr(slot, "sub", None)
            if sub is not None and sub.inbox and id(slot) not in taken:
                return False  # a message to deliver: the plugins read it
            if not laws.ready():
                return False
        return True

    def _due(self, k: int, kend: int) -> int:
        """The next tick (from k, at most ``kend``) a Python-only plugin is due (or, one that
        says when, has work: ``next_work``)."""
        for a in self.sparse:
            nxt = a.offset if k <= a.offset else a.offset + -(-(k - a.offset) // a.period) * a.period
            if _idle(a):
                due = a.plugin.next_work(a.ctx, k, self.sim.clock)
                nxt = kend if due is None else max(nxt, due)
            kend = min(kend, nxt)
        return kend

    def _limit(self, k: int, kend: int) -> int:
        kend = self._due(k, kend)
        rec = self.sim._recorder
        every, ticks0 = rec.every, rec._ticks
        first = -(-ticks0 // every) * every  # the recorder's chunk: stop at the tick filling it
        most = min([MAX_TICKS, *(laws.max_ticks for _s, laws in self.entries)])
        return min(kend, k + first + (rec._cap - rec._row - 1) * every - ticks0 + 1, k + most)

    def run(self, k: int, kend: int) -> int:
        """Run ticks k… compiled (at most to ``kend``); returns the tick reached.

        Calls of the generated tick follow one another while each stops only at a limit of
        its own (a full recorder chunk, flushed between them, or ``max_ticks``), for at most
        :data:`CHAIN_S` seconds (the run's progress, pause and interrupt checks come between
        calls of ``run``): the plugins' tick that follows comes only when something only
        Python does is due (a hand-back, a Python-only plugin's tick) or at ``kend``.

        With :attr:`defer` (``Simulation.step``) a call that goes on from the previous one
        (nothing ran in Python since) skips the load, and the engine's bookkeeping waits for
        :meth:`flush`; one call per ``run``.
        """
        self.sync()
        self.soft = False
        if self._dn:  # ticks whose bookkeeping waits (an externally clocked run: defer)
            if k == self._dk0 + self._dn and self._same_truth() and not self.sim.bus.pending:
                lim = self._limit(self._dk0, kend)  # the recorder's state is that of tick _dk0
                if lim > k:
                    return self._call(k, lim, load=False)
            self.flush()
        if self.defer:
            return self._run_once(k, kend)
        t0 = _time.perf_counter()
        refilled = -1
        while True:
            due = self._due(k, kend)
            lim = self._limit(k, kend)
            # every call loads: a load also fills what is indexed from the call's first tick
            # (e.g. SURFTRAK's pilot climb rates for ticks k …), which the last call's arrays
            # hold for its own ticks (tests/interop/test_surftrak_kernel.py, pilot)
            k1 = self._run_once(k, kend)
            if self.soft:  # a world finished at k1 − 1: its end condition is Python's
                return k1
            if k1 < lim and k1 != refilled and self._ready() and self._refill():
                refilled = k = k1  # a random block was used up: drawn, on from that tick
                continue
            if k1 <= k or k1 != lim or lim >= due or _time.perf_counter() - t0 > CHAIN_S:
                return k1
            k = k1

    def _refill(self) -> bool:
        """Every declaration's ``refill`` (all of them: each draws what it needs)."""
        return any([laws.refill() for _slot, laws in self.entries])

    def _run_once(self, k: int, kend: int) -> int:
        """One call of the generated tick from k (see :meth:`run`)."""
        if not self._ready():
            return k
        kend = self._limit(k, kend)
        if kend <= k:
            return k
        return self._call(k, kend, load=True)

    def flush(self) -> None:
        """The deferred bookkeeping (frames, bus and hook-call counts, hook contexts) of the
        ticks run since :attr:`defer` held it back, as one chunk (their log rows are in place:
        each deferred call writes after the rows of the calls before it), after the commits
        that :meth:`direct` ticks left waiting (:meth:`sync`)."""
        dn = self._dn
        if not dn:
            return
        self.sync()
        self._dn = 0
        k0 = self._dk0
        self._account(k0, k0 + dn, self._finish(dn))

    # ------------------------------------------------------------- direct ticks (SITL)
    def direct_window(self, kend: int) -> int:
        """The tick up to which :meth:`direct` may run ticks now, from the clock's tick (that
        tick itself when none may): a deferred run goes on (``Simulation.step`` left one, as
        :meth:`run` would go on with it) up to its recorder chunk and ``max_ticks`` limit.

        The caller of :meth:`direct` stands in for ``Simulation.step``: it checks the end
        conditions and stop requests itself, fills the arrays that the declarations'
        ``inputs`` fill before each tick, and calls :meth:`sync` before reading any plugin
        state (the laws' ``commit`` waits for it), :meth:`flush` or ``Simulation.step``.
        """
        sim = self.sim
        k = sim.clock.k
        kern = self._kernel
        if not self.defer or not self._dn or self.sparse or kern is None or kern[2] or not kern[3] or self._fresh:
            return k  # (fresh arrays: their addresses change between calls)
        if kern is not self._kernels.get(True):
            return k  # the profiled loop (profile.py): its calls count cycles, through _call
        if k != self._dk0 + self._dn or not self._same_truth() or sim.bus.pending:
            return k
        if self._direct is None:  # (the kernel: the compiled tick_loop and its tables)
            tables = kern[4]
            self._direct = (None,) if tables is None else (kern[0], *tables)
        if self._direct[0] is None:
            return k
        return self._limit(self._dk0, kend)

    def direct(self) -> tuple[Any, ...]:
        """``(fn, args)``: ``fn(k, k + 1, *args, j0)`` runs tick k of the deferred run (``j0``
        = :attr:`_dn`, its log row) and returns the tick reached (k: handed back, nothing
        done); after it the caller adds one to :attr:`_dn` and :attr:`_dc` and sets the
        clock's tick.  Only inside :meth:`direct_window`.  ``fn`` is the compiled ``tick_loop``
        over the route's tables (its arrays' addresses and shapes, the save copies): after its
        first call its compiled entry point (no type dispatch)."""
        assert self._direct is not None and self._direct[0] is not None
        fn, addr, dims, sv = self._direct
        ovl = getattr(fn, "overloads", {})
        if len(ovl) == 1:
            fn = next(iter(ovl.values())).entry_point
            self._direct = (fn, addr, dims, sv)
        c = self.sim.clock
        return fn, (float(c.start), float(c.dt), float(c.h), int(c.substeps), self._sched, addr, dims, sv, 1)

    def sync(self) -> None:
        """The plugins' state after the ticks run through :meth:`direct` (one ``commit`` of
        them all, as after one call of the generated tick that ran them)."""
        dc = self._dc
        if not dc:
            return
        self._dc = 0
        k = self.sim.clock.k
        self._commit(k - dc, k, dc)
        self._keep_truth()

    def _commit(self, k: int, kstop: int, ticks: int) -> None:
        """Every declaration's ``commit``; the events they emit (each its own, in time order)
        then in time order over them all, as the plugins' ticks emitted them (a stable sort:
        one tick's events keep the order of the plugins that emitted them)."""
        events = self.sim._events
        n0 = len(events)
        for _slot, laws in self.entries:
            laws.commit(k, kstop, ticks)
        if len(self.blocks) > 1 and len(events) - n0 > 1:
            events[n0:] = sorted(events[n0:], key=lambda e: e.t)
        # the rows of ended worlds ran on in the generated tick, unseen: their truth is held
        # where they ended (as after the plugins' physics), their frames repeat their end
        # (_record) and their events are dropped (Worlds.events)
        self.sim._worlds.hold()

    def _same_truth(self) -> bool:
        """Every block's truth is the object the last deferred call left (nothing ran since)."""
        kept = self._truth
        return kept is not None and all(b.truth is t for b, t in zip(self.blocks, kept, strict=True))

    def _keep_truth(self) -> None:
        """Note the truth objects the ticks just run left (and each block's last finite
        position: the compiled ticks stop before a non-finite state)."""
        self._truth = tuple(b.truth for b in self.blocks)
        for b in self.blocks:
            self.sim._last_finite[b.name] = b.truth.pos.copy()

    def _call(self, k: int, kend: int, *, load: bool) -> int:
        """One call of the generated tick from tick k (the state arrays loaded first unless
        they hold the state of tick k already: a call that goes on from the last one); k
        without running while the tick compiles in the background."""
        # (loaded before the kernel's arrays are taken: a first load may set arrays that stay
        # fixed from then on, e.g. the SURFTRAK sensor's terrain profile)
        if load:
            for _slot, laws in self.entries:
                laws.load(k)
        for _slot, laws in self.entries:
            laws.inputs(k)
        # a stepped run saves the state at each tick's start (``tick_loop``); a run does not
        # (``tick_run``, the loop without the save copies: compiled apart, less to compile)
        # (each kept once made, with its tables: direct() passes the same addresses)
        saved = self.defer
        prof = self.prof is not None and not _interpreted() and not on_cuda()
        kind: Any = ("prof", saved) if prof else saved  # (the loop: its kernel, warmed)
        kern = self._kernels.get(kind)
        if kern is not None:
            self._kernel = kern
        else:
            decls = [laws for _s, laws in self.entries]
            interp = _interpreted()
            if prof:  # the same loop with each law call timed (profile.py)
                from marinesim.engine.compiled.profile import compile_prof

                fn, order, state = compile_prof(decls, saved=saved)
            elif not saved and on_cuda():  # (a stepped run's tick_loop stays on the CPU)
                from marinesim.engine.compiled.gpu import compile_gpu_tick

                fn, order, state = compile_gpu_tick(decls)
                interp = True  # called as py_run is: with the arrays
            else:
                fn, order, state = compile_tick(decls, interpreted=interp, saved=saved)
            arrays = [array_of(decls, key) for key in order]
            saves = [np.empty_like(arrays[i]) for i in state] if saved else []
            # the compiled tick takes the arrays as tables of their addresses and shapes
            # (the state's save copies too), made once; the interpreted one the arrays
            pairs = [(arrays[i], c) for i, c in zip(state, saves, strict=False)]  # (none: not saved)
            tables = None if interp else arena_tables(arrays, pairs)
            self._kernel = self._kernels[kind] = (fn, (*arrays, *saves), interp, saved, tables)
            # arrays a load may replace (Laws.fresh): their argument positions (and where
            # their shapes start in the shape table)
            self._fresh = []
            dpos = shape_offsets(arrays)
            for i, key in enumerate(order):
                d, _, name = key.partition(":")
                if not key.startswith(WIRE_PREFIXES) and name in decls[int(d)].fresh:
                    self._fresh.append((i, decls[int(d)], name, dpos[i]))
        fn, tail, interp, _saved, tables = self._kernel
        if not interp and tables is None:
            return k  # an array that is not C-contiguous: the plugins run the tick
        if self._fresh:
            tail = list(tail)
            for i, laws, name, dpos in self._fresh:
                arr = laws.arrays[name]
                if tables is not None:  # (read only by the laws: a contiguous copy will do)
                    arr = np.ascontiguousarray(arr)
                    tables[0][i] = arr.ctypes.data
                    tables[1][dpos : dpos + arr.ndim] = arr.shape
                tail[i] = arr
            tail = tuple(tail)
            self._fresh_held = tail  # (the tables' addresses: kept alive through the call)
        if tables is not None:
            tail = tables if saved else tables[:2]
        clock = self.sim.clock
        # a deferred call that goes on writes its log rows after those of the calls before
        j0 = self._dn
        # no state saved each tick where a hand-back can be replayed from the plugins' state
        # (see below); a deferred run's (Simulation.step) is not all in the plugins' state
        save = 1 if saved else 0
        head = (k, kend, clock.start, clock.dt, clock.h, int(clock.substeps), self._sched)
        extra = (self.prof,) if prof else ()
        args = (*head, *tail, save, j0, *extra) if saved else (*head, *tail, j0, *extra)
        warm = kind in self._warmed
        if not warm and prof:  # compiled (and the laws loaded) by a call that runs no tick
            t_c = _time.perf_counter()
            with np.errstate(all="ignore"), compiling(fn, [laws for _s, laws in self.entries], saved):
                lawfunc.load(tick_module_of([laws for _s, laws in self.entries]))
                fn(k, k, *args[2:])
            self._warmed.add(kind)
            self.prof_compile_s += _time.perf_counter() - t_c
            warm = True
        t_call = _time.perf_counter()
        if not warm and not interp and self._compiling_apart(fn, args):
            return k  # the plugins run this tick (the same bits)
        if warm and not interp:  # typed: no compile notice to check (≈ 0.25 ms a call);
            kstop = int(fn(*args))  # machine code does not consult numpy's error state
        elif warm:
            with np.errstate(all="ignore"):
                kstop = int(fn(*args))
        else:
            with np.errstate(all="ignore"), compiling(fn, [laws for _s, laws in self.entries], saved):
                if not interp:  # the law functions' pointers (compiled first if missing)
                    lawfunc.load(tick_module_of([laws for _s, laws in self.entries]))
                kstop = int(fn(*args))
            self._warmed.add(kind)
        # −kstop: a law asked to end the call after tick kstop − 1 (STOP_AFTER), done whole
        soft, kstop = kstop < 0, abs(kstop)
        if kstop == k:
            return k
        if kstop < kend and not save and (not soft or (not saved and on_cuda())):
            # handed back at kstop with part of that tick done (or, on CUDA, worlds went on
            # past kstop): the plugins' state is that of tick k (committed by the last call,
            # or loaded from), so load it and run ticks k … kstop − 1 again (the same laws on
            # the same arrays: the same bits; the interpreted tick ignores numpy's warnings as
            # above)
            for _slot, laws in self.entries:
                laws.load(k)
            for _slot, laws in self.entries:
                laws.inputs(k)
            with np.errstate(all="ignore"):
                again = abs(int(fn(k, kstop, *head[2:], *tail, j0, *extra)))
            if again != kstop:  # pragma: no cover - a law that is not deterministic
                raise RuntimeError(f"compiled tick: replay of ticks {k}…{kstop - 1} stopped at {again}")
        self.soft = soft
        ticks = kstop - k
        if prof:  # (a replay's ticks counted again: its laws' cycles are in the counts)
            self.prof_s += _time.perf_counter() - t_call
            self.prof_ticks += ticks * (2 if kstop < kend and not save and not soft else 1)
        self._commit(k, kstop, ticks)
        if self.defer and not self.sparse:  # the bookkeeping waits for flush()
            dn = self._dn
            if not dn:
                self._dk0 = k
            self._dn = dn + ticks  # (the log rows are in place: j0)
            self._keep_truth()
            self.sim.clock.k = kstop
            return kstop
        self._account(k, kstop, self._finish(ticks))
        self._truth = tuple(b.truth for b in self.blocks)  # (a chained call goes on: run())
        return kstop

    def _compiling_apart(self, fn: Any, args: tuple[Any, ...]) -> bool:
        """Whether the tick is compiling in another process now
        (:mod:`~marinesim.engine.compiled.background`): started at the first call of a run
        whose tick is not in the disk cache (``Simulation.run``, ``compiled`` None, not
        ``MARINESIM_COMPILE=wait``); the call that finds it done loads the machine code, one
        that finds it failed compiles here."""
        job = self._bg
        if job is None:
            if self._bg_tried:
                return False
            self._bg_tried = True
            if self.defer or self.sim.compiled is not None or not background.allowed():
                return False
            if getattr(fn, "signatures", None) or cached_machine_code(fn):
                return False  # compiled in this process already, or on disk
            job = background.start(tick_path(fn), args, saved=self._kernel[3])
            if job is None:
                return False
            self._bg = job
            compiling_apart()
            return True
        state = job.state()
        if state == "running":
            return True
        self._bg = None
        compiled_apart(job, state == "done", self.sim.clock.t)
        return False

    def _finish(self, ticks: int) -> dict[tuple[str, str], np.ndarray]:
        """The laws' logged signals of the ticks run, keyed (block, signal) as the recorder."""
        return {
            n if slot.block is None else (slot.block.name, n): v  # (a world plugin's: keyed)
            for slot, laws in self.entries
            for n, v in laws.finish(ticks).items()
        }

    def _account(self, k: int, kstop: int, vals: dict[tuple[str, str], np.ndarray]) -> None:
        """The engine's side of ticks k … kstop − 1 run compiled (the laws committed)."""
        sim = self.sim
        clock = sim.clock
        ticks = kstop - k
        for slot in self.sparse:  # calls with nothing to do (next_work): counted, not made
            if _idle(slot):
                p, o = slot.period, slot.offset
                due = [kk for kk in range(k, kstop) if kk >= o and (kk - o) % p == 0]
                if due:
                    slot.calls["autonomy"] = slot.calls.get("autonomy", 0) + len(due)
                    ctx = slot.ctx
                    ctx.t = ctx.events.t = clock.start + due[-1] * clock.dt
                    ctx.tick, ctx.t_next = due[-1], clock.start + (due[-1] + 1) * clock.dt
                    slot.phase = "autonomy"
        for blk in self.blocks:
            sim._last_finite[blk.name] = blk.truth.pos.copy()
        self._record(k, ticks, vals)
        bus = sim.bus
        nsub = int(clock.substeps)
        for slot, laws in self.entries:
            blk = slot.block
            hooks = {law.hook for law in laws.laws}
            due = range(k, kstop)
            if slot.period != 1 and hooks & {"autonomy", "control", "sense", "estimate"}:
                # autonomy and control are due at tick k, a sensor at k + 1 (its t_{k+1})
                p, o = slot.period, slot.offset
                d = 0 if hooks & {"autonomy", "control"} else 1
                due = [kk for kk in due if kk + d >= o and (kk + d - o) % p == 0]
            calls = len(due)
            sent = {t: calls for t in laws.publishes} if laws.counts is None else laws.counts(k, kstop)
            for topic, m in sent.items():
                if topic in laws.unheard:
                    continue  # nobody subscribes: counted below
                bus.published[topic] = bus.published.get(topic, 0) + m
                bus.delivered[topic] = bus.delivered.get(topic, 0) + m
                key = (topic, blk.name)
                bus._seq[key] = bus._seq.get(key, 0) + m
            for topic in laws.unheard if calls else ():
                # one per call, or per publishing call where ``counts`` says how many
                m = sent.get(topic, calls)
                if m:
                    bus.unheard[topic] = bus.unheard.get(topic, 0) + m
            hook = next(
                x
                for x in ("autonomy", "control", "substep", "sense", "estimate", "after_physics",
                          "metric")  # fmt: skip
                if x in hooks
            )
            n_calls = calls * (nsub if hook == "substep" else 1)
            slot.calls[hook] = slot.calls.get(hook, 0) + n_calls
            for extra in laws.also_calls:  # e.g. a belief writer's estimate after its sense
                slot.calls[extra] = slot.calls.get(extra, 0) + n_calls
            if not calls:
                continue  # not due in these ticks: its context as its last call left it
            k_last = due[-1]
            t_last = clock.start + k_last * clock.dt
            t_next = clock.start + (k_last + 1) * clock.dt
            if hook == "substep":
                t_hook = t_last + (nsub - 1) * clock.h
            else:
                t_hook = t_next if hook in ("sense", "estimate", "after_physics", "metric") else t_last
            ctx = slot.ctx
            ctx.t, ctx.tick, ctx.t_next = t_hook, k_last, t_next
            ctx.events.t = t_hook
            slot.phase = laws.also_calls[-1] if laws.also_calls else hook
            if hook == "substep":
                ctx.substep = nsub - 1
            if blk is not None and hasattr(slot, "current_inbox"):
                slot.current_inbox = type(slot.current_inbox)([], blk.n)
        clock.k = kstop
        self.ticks += ticks

    def _record(self, k: int, ticks: int, vals: dict[tuple[str, str], np.ndarray]) -> None:
        """The frames of ticks k … k + ticks − 1 (at t_{k+1} …), hold-last, decimated: every
        block's signals (``vals``, keyed (block, signal)), the others held."""
        sim = self.sim
        rec = sim._recorder
        clock = sim.clock
        every, ticks0 = rec.every, rec._ticks
        sel = np.flatnonzero((ticks0 + np.arange(ticks)) % every == 0)
        r = sel.size
        row = rec._row
        if r:
            tt = clock.start + np.arange(k + 1, k + ticks + 1) * clock.dt
            rec._tbuf[row : row + r] = tt[sel]
            buf = rec._buf
            for (bname, name), cur in rec.current.items():
                dst = buf.get(name)
                if dst is None:  # a signal that appeared during this chunk: NaN before
                    dst = buf[name] = np.full((cur.shape[1], rec._cap, rec.n_rows), np.nan)
                ob = rec.offsets[bname]
                v = vals.get((bname, name))
                if v is None:  # held (hold-last)
                    dst[:, row : row + r, ob : ob + cur.shape[0]] = cur.T[:, None, :]
                else:
                    vs = v if r == ticks else v[sel]  # every frame: no gathered copy
                    dst[:, row : row + r, ob : ob + v.shape[1]] = vs.transpose(2, 0, 1)
        for key, v in vals.items():
            rec.hold(key, v[-1])
        rec.hold_frozen(row, r)  # the rows of ended worlds repeat their end
        rec._ticks = ticks0 + ticks
        rec._row = row + r
        last_skipped = (ticks0 + ticks - 1) % every != 0
        rec._pending = float(clock.start + (k + ticks) * clock.dt) if last_skipped else None
        if rec._row >= rec._cap or (
            r and rec.sink is not None and _time.perf_counter() - rec._last_flush >= rec.flush_s
        ):
            rec.flush()


def _idle(slot: Any) -> bool:
    """A Python-only autonomy that says on which tick it next has work
    (``next_work(ctx, k, clock)`` → tick or None): its calls between are no-ops the route counts without making (e.g. a
    script of timed events)."""
    return hasattr(slot.plugin, "next_work") and set(slot.hooks) <= _SPARSE_HOOKS


def _slot_name(slot: Any) -> str:
    """``block.plugin`` (a world plugin: its name)."""
    name = getattr(slot.plugin, "name", type(slot.plugin).__name__)
    return name if slot.block is None else f"{slot.block.name}.{name}"


def _interpreted() -> bool:
    """``MARINESIM_JIT=interp``: the generated tick interpreted (a check on the generator)."""
    return os.environ.get("MARINESIM_JIT", "1") == "interp"


# ------------------------------------------------------------------------------ eligibility
def plan(sim: Any) -> tuple[str | None, list[tuple[Any, Laws]], list[Any]]:
    """Why the compiled route does not apply (None if it does), its entries, sparse slots.

    The entries are every block's compiled plugins in the order the plugins' tick runs them
    (:class:`~marinesim.engine.tick.TickLoop`): the autonomy plugins block by block, the
    controllers chain position by chain position (each over the blocks), then the motion
    plugins and the sensors block by block.  With several blocks a reason names its block.
    """
    blocks = list(sim.blocks)
    if not blocks:
        return "the scenario has no entity block", [], []
    if sim.clock.time_warp:
        return "time_warp (paced runs)", [], []
    many = len(blocks) > 1

    def named(blk: Any, why: str) -> str:
        return f"block {blk.name!r}: {why}" if many else why

    keyed: list[tuple[tuple[int, int, int], Any, Laws]] = []
    sparse: list[Any] = []
    order = {"autonomy": 0, "controller": 1, "motion": 2}
    for bi, blk in enumerate(blocks):
        if blk.n == 0:
            return named(blk, "it has no entities (count 0)"), [], []
        writer = next((s for s in sim.slots if s.block is blk and s.plugin.writes_belief), None)
        pos: dict[str, int] = {}
        motion = False
        for slot in (s for s in sim.slots if s.block is blk):
            kind = slot.plugin.kind
            i = pos[kind] = pos.get(kind, -1) + 1  # its place among its block's plugins of its kind
            laws = declared(slot.plugin, slot, sim)
            if isinstance(laws, str):
                why = f"plugin {slot.plugin.name!r} runs only tick by tick here: {laws}"
                return named(blk, why), [], []
            if laws is not None:
                if writer is not None and kind in ("autonomy", "controller") and not laws.navigation:
                    why = (f"plugin {slot.plugin.name!r} reads the truth, not the navigation "
                           f"estimate of {writer.plugin.name!r}, in the compiled tick")  # fmt: skip
                    return named(blk, why), [], []
                if many:
                    laws.scope = blk.name  # the block's wires are its own
                motion = motion or any(law.hook == "substep" for law in laws.laws)
                rank = order.get(kind, 3)
                # the controller chain runs position by position over the blocks
                key = (rank, i, bi) if kind == "controller" else (rank, bi, i)
                keyed.append((key, slot, laws))
            elif set(slot.hooks) <= _SPARSE_HOOKS and (slot.period > 1 or _idle(slot)):
                sparse.append(slot)
            else:
                return named(blk, f"plugin {slot.plugin.name!r} runs only tick by tick"), [], []
        if not motion:
            return named(blk, "no compiled motion plugin"), [], []
    keyed.sort(key=lambda e: e[0])
    entries = [(slot, laws) for _key, slot, laws in keyed]
    why = _world_entries(sim, entries, many)
    if isinstance(why, str):
        return why, [], []
    return None, entries + why, sparse


def _world_entries(sim: Any, entries: list[tuple[Any, Laws]], many: bool) -> str | list[tuple[Any, Laws]]:
    """The world plugins' declarations (after every block's: the ``metric`` phase ends the
    tick), or why the route does not apply.  Each block's position wire is named
    ``truth.position`` (``@block`` with several blocks), an alias of the first of
    :data:`~marinesim.engine.plugins.metric_laws.POSITION_WIRES` its declarations hold."""
    if not sim.world_slots:
        return []
    from marinesim.engine.plugins.metric_laws import POSITION_WIRES

    has_position = set()
    for blk in sim.blocks:
        own = [laws for s, laws in entries if s.block is blk]
        wire = next((w for w in POSITION_WIRES for laws in own if w in laws.arrays), None)
        if wire is not None:
            owner = next(laws for laws in own if wire in laws.arrays)
            owner.arrays.setdefault("truth.position", owner.arrays[wire])
            has_position.add(blk.name)
    out: list[tuple[Any, Laws]] = []
    for slot in sim.world_slots:
        name = slot.plugin.name
        if slot.plugin.kind != "metric":
            return f"the scenario has a world {slot.plugin.kind} plugin ({name!r})"
        laws = declared(slot.plugin, slot, sim)
        if laws is None:
            return f"world metric {name!r} runs only tick by tick"
        if isinstance(laws, str):
            return f"world metric {name!r} runs only tick by tick here: {laws}"
        for law in laws.laws:
            for arg in law.args:
                if arg.startswith("truth.position"):
                    b = arg.partition("@")[2] or sim.blocks[0].name
                    if b not in has_position:
                        what = f"block {b!r}: " if many else ""
                        return f"world metric {name!r}: {what}its motion keeps no position wire"
        out.append((slot, laws))
    return out


def route_for(sim: Any, compiled: bool | None) -> CompiledRoute | None:
    """The compiled route of ``sim``, or None (the plugins run every tick).

    Raises
    ------
    ConfigError
        ``compiled`` is True, a plugin of the scenario declares compiled laws and the route
        does not apply (the message says why).
    """
    if compiled is False or (compiled is None and os.environ.get("MARINESIM_JIT", "1") == "0"):
        return None
    cuda = on_cuda()
    if cuda:
        from marinesim.engine.compiled.gpu import require_device

        require_device()
    if not any(hasattr(s.plugin, "compiled_laws") for s in sim.slots):
        if cuda:
            raise ConfigError(
                "no plugin of this scenario has compiled laws", param="MARINESIM_JIT=cuda"
            )
        return None
    why, entries, sparse = plan(sim)
    if cuda:
        if why is not None:
            raise ConfigError(f"the compiled tick does not apply: {why}", param="MARINESIM_JIT=cuda")
        from marinesim.engine.compiled.gpu import require_layouts

        require_layouts([laws for _s, laws in entries], [_slot_name(s) for s, _l in entries])
    if why is not None:
        if compiled and any(declared(s.plugin, s, sim) is not None for s in sim.slots):
            raise ConfigError(f"the compiled tick does not apply: {why}", param="compiled")
        return None
    if not _interpreted():
        try:
            import numba  # noqa: F401
        except ImportError:
            if compiled:
                from marinesim.core.errors import DependencyNotInstalled

                raise DependencyNotInstalled("numba", "fast") from None
            return None
    return CompiledRoute(sim, entries, sparse)

