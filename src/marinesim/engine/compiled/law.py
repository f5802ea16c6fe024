"""The law-declaration protocol: what a plugin hands the generated tick.

A plugin joins the compiled tick by implementing ``compiled_laws(slot, sim)``, returning a
:class:`Laws` (or None: this configuration runs tick by tick; a plugin without the method is
*Python-only*).  A :class:`Laws` names

* the **law functions** it runs in each phase hook (:class:`Law`): plain functions registered
  with ``numba.extending.register_jitable`` (so the same function runs interpreted and
  compiled), over the plugin's own structure-of-arrays state;
* the **arrays** they work on, by name: the plugin's state and parameters (its own), and
  *wires*, arrays shared between plugins in the tick — a bus topic that never leaves the
  compiled tick (``"bus.fins_cmd"``), a truth field (``"truth.eta"``) or the block's
  navigation estimate (``"belief.pos"``, :data:`WIRE_PREFIXES`): the first declaration
  that names a wire in its ``arrays`` owns it, the others read and write the same array;
* what the engine must account for: the topics it publishes each call (bus counts), the
  signals it logs (``finish`` turns the per-tick log arrays into the recorder's signals with
  numpy, the same expressions as the plugin's own ``ctx.log``), and ``commit``: the plugin
  state at the tick the compiled loop stopped at.

A law's signature is ``fn(k, j, t, h, *arrays)`` for ``autonomy`` / ``control`` / ``after_physics`` /
``sense`` (a sensor's measurement at t_{k+1}, after every ``after_physics`` law) /
``estimate`` (a belief writer's estimate at t_{k+1}, after every ``sense`` law) / ``metric`` (a
world metric at t_{k+1}, after every entity law; tick
``k``, the ``j``-th of this call, time ``t`` of the hook) and ``fn(k, j, s, t, h, *arrays)``
for ``substep`` (substep ``s``); it returns 0 when the tick may go on, a positive number to
hand the tick back to the plugins (the generated loop then restores every state array to
the start of that tick: nothing of it is done), or :data:`STOP_AFTER` (negative) when the
tick may go on but the call must end after it, so that Python looks at what it did before
the next tick (a world whose vehicles are all done: its end condition).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from marinesim.core.jitable import register_jitable

__all__ = [
    "HOOKS",
    "WIRE_PREFIXES",
    "LOG_BUDGET",
    "Law",
    "Laws",
    "Worlds",
    "MAX_TICKS",
    "STOP_AFTER",
    "copy_log",
    "copy_log_cm",
    "log_ticks",
    "on_cuda",
]

#: Hooks a law may run in, in the order of the tick (engine spec §4.2: autonomy, control,
#: then the physics substeps, then what describes t_{k+1}: the sensors, the estimates, last
#: the world metrics).
#: ``autonomy`` and ``control`` laws run on their slot's due ticks (its period and offset).
HOOKS = ("autonomy", "control", "substep", "after_physics", "sense", "estimate", "metric")

#: Prefixes of the wire names: arrays shared by the declarations of one block (a bus topic
#: kept in the tick, a truth field, the block's navigation estimate).
WIRE_PREFIXES = ("bus.", "truth.", "belief.")

#: A law's result that lets its tick go on and ends the compiled call after it (the engine
#: then checks the end conditions, and the next call goes on at once).
STOP_AFTER = -1

#: Ticks of one compiled call at most (the per-tick log arrays' first axis).
MAX_TICKS = 2048
#: Values the per-tick logs of one declaration may hold (ticks × vehicles × columns).
LOG_BUDGET = 8_000_000


def log_ticks(n: int, cols: int) -> int:
    """Ticks of one compiled call (a declaration's ``max_ticks`` and its logs' tick axis) for
    ``n`` vehicles with ``cols`` logged columns: :data:`MAX_TICKS`, fewer for many vehicles
    (the logs within :data:`LOG_BUDGET` values), at least 8."""
    return max(8, min(MAX_TICKS, LOG_BUDGET // max(n * cols, 1)))


@dataclass(frozen=True)
class Law:
    """One law function in one hook.

    Parameters
    ----------
    hook : str
        One of :data:`HOOKS`.
    fn : callable
        ``register_jitable`` function, importable as ``fn.__module__``.``fn.__name__``.
    args : tuple of str
        Names (keys of :attr:`Laws.arrays`, or wires) passed after the common arguments.
    """

    hook: str
    fn: Callable[..., int]
    args: tuple[str, ...]


@dataclass(frozen=True)
class Worlds:
    """How the CUDA tick (:mod:`~marinesim.engine.compiled.gpu`, one thread per world) hands a
    declaration's arrays to each thread; a declaration without it does not run on CUDA.

    Every array not named here is a *row* array: its row axis (the first, or
    :attr:`log_axis` for a log) has the block's ``n`` rows, world w's rows
    ``w·n/worlds … (w+1)·n/worlds − 1``, and a thread gets its world's rows (a view: a law
    sees a block of ``n/worlds`` vehicles, as a world run alone).

    Attributes
    ----------
    n, worlds : int
        The block's rows (every world's vehicles) and its worlds.
    shared : tuple of str
        Arrays every world reads whole (parameters); the laws never write them.
    world : tuple of str
        Arrays the laws keep for every row at once (a flag, the time of the last call): each
        world gets a copy of its own, and all copies must end equal (one value again).
    events : (str, str, int), optional
        An event buffer (rows: one note each), its count (1,) and the column of a note that
        holds a row: each world notes in a slice of the buffer of its own, and the notes
        are merged in order of time, then row (as the rows are walked on the CPU), the row
        column made the block's row again.
    log_axis : int
        The row axis of the log arrays (:attr:`Laws.logs`): 2 for component-major
        (c, ticks, N), 1 for (ticks, N, c).
    axes : tuple of (str, int)
        Row arrays whose row axis is another than the first (a delay line (length, N):
        ``("zbuf", 1)``).
    per_world : tuple of str
        Row arrays with one row per world on the first axis (a world's closest approach).
    indices : tuple of str
        Arrays of the block's row numbers (of the ``gathered`` rows, with ``blocks``) that the
        laws only read, world w's part naming rows of world w (rows grouped by replica): each
        thread gets its part as numbers of its world's rows (counted from 0).
    blocks : tuple of int
        With a declaration that reads several entity blocks (a world metric, the contacts
        sonar): their rows, in block order.
    gathered : tuple of str
        Row arrays that hold the ``blocks``' rows one block after the other (its first axis, or
        :attr:`log_axis` for a log): each thread gets its world's rows of every block, block
        by block (the host lays them out so, world by world, and back after the call).
    sizes : tuple of (str, int)
        Row arrays with rows of another block than ``n`` (their row count).
    local : tuple of (str, tuple of float)
        Shared arrays with a value of their own on the device (the offset of a block's rows in
        a world's part of the ``gathered`` rows).
    least, most : tuple of str
        Arrays the laws keep for all worlds at once as a minimum (a metric's smallest value
        over the worlds) or a maximum (a flag set where any world sets it: a sensor's
        "published at this tick"): each world gets a copy, and the copies' minimum or maximum
        is kept, element by element.
    """

    n: int
    worlds: int
    shared: tuple[str, ...] = ()
    world: tuple[str, ...] = ()
    events: tuple[str, str, int] | None = None
    log_axis: int = 2
    axes: tuple[tuple[str, int], ...] = ()
    per_world: tuple[str, ...] = ()
    indices: tuple[str, ...] = ()
    least: tuple[str, ...] = ()
    most: tuple[str, ...] = ()
    blocks: tuple[int, ...] = ()
    gathered: tuple[str, ...] = ()
    sizes: tuple[tuple[str, int], ...] = ()
    local: tuple[tuple[str, tuple[float, ...]], ...] = ()


@dataclass
class Laws:
    """A plugin's declaration for one slot (see the module docstring).

    Attributes
    ----------
    laws : list of Law
        In the order they run within their hooks.
    arrays : dict
        Name → array (float64 or int64/bool, C-contiguous).  Names are the plugin's own;
        ``bus.*`` / ``truth.*`` names are wires shared with the other plugins of the block.
    state : tuple of str
        The mutable arrays (saved at each tick's start, restored when a law hands back).
    logs : tuple of str
        Arrays with a tick axis (``MAX_TICKS``) the laws fill at row ``j``: leading
        (ticks, N, c), or second, component-major (c, ticks, N), which the recorder copies
        as contiguous blocks (its own layout; :func:`copy_log_cm`).
    publishes : tuple of str
        Bus topics the plugin publishes at each call (the bus counts go on as if it had).
    unheard : tuple of str
        Topics the plugin publishes at each call that no subscriber wants (the bus's
        ``no_subscriber`` counts go on as if it had).
    counts : callable, optional
        ``counts(k, kstop) -> {topic: messages}`` for a plugin that publishes on some of its
        calls only (e.g. a sensor's message ticks); replaces :attr:`publishes`' count.
    inboxes : tuple of Slot
        Slots whose waiting messages this declaration takes over (``load`` reads them into
        its wires, ``commit`` puts what still waits back): the route runs while they wait.
    max_ticks : int
        Ticks one compiled call may run at most (the first axis of its log arrays; default
        :data:`MAX_TICKS`): a declaration over many vehicles keeps its logs small.
    fresh : tuple of str
        Own arrays that ``load`` may replace by another array of the same dtype and number of
        dimensions (e.g. a random stream's pre-drawn block, passed without a copy): the route
        passes the current ones at every call.  The laws only read them; never state.
    sources : tuple of path
        Files or folders the laws call into (their digest keys the compiled tick).
    navigation : bool
        A controller's or an autonomy's laws read the block's navigation from the belief
        wires (``belief.*``, :mod:`~marinesim.engine.plugins.belief_laws`) when the block has
        a belief writer (as the plugin reads ``ctx.belief``).  A block with a belief writer
        joins the tick only when every controller and autonomy declaration says so.
    also_calls : tuple of str
        Hooks of the plugin's Python face that the engine calls on the same ticks after the
        laws' hook (a belief writer's ``estimate`` after its ``sense``), which the laws do
        too: counted as called, the last of them the slot's phase.
    scope : str
        The entity block whose wires these laws share (set by the route when it composes
        the laws of several blocks into one tick: each block's ``bus.*`` / ``truth.*`` wires
        are its own); ``""``: one block, the wires are shared by every declaration.
    ready : callable
        ``ready() -> bool``: the plugin state can be loaded now (e.g. it has run a tick).
    refill : callable
        ``refill() -> bool``: after a hand-back, draw the next block of a random stream the
        laws read in place when the next tick's draws would run past it (True when drawn:
        the route goes on compiled from that tick instead of running it through the plugins).
    load : callable
        ``load(k)``: fill :attr:`arrays` from the plugin state at the start of tick ``k``.
    inputs : callable
        ``inputs(k)``: fill the arrays an outside program sets between calls (e.g. SITL's
        servo pulses); before every call, also one that goes on from the previous call
        without ``load`` (``Simulation.step``: the arrays hold the state already).
    commit : callable
        ``commit(k, kstop, ticks)``: the plugin state at the start of tick ``kstop`` after
        ``ticks`` ticks ran compiled.
    finish : callable
        ``finish(ticks) -> dict`` signal name → (ticks, N, c) values of the frames at
        t_{k+1} … (the recorder's names: ``truth.pos`` …, or ``<plugin>.<signal>``); a
        view of a component-major log (``log[c0:c1, :ticks].transpose(1, 2, 0)``) records
        fastest.
    gpu : Worlds, optional
        How the CUDA tick splits the arrays among worlds (None: these laws do not run on
        CUDA; ``MARINESIM_JIT=cuda`` then says so).
    holds : bool
        A motion declaration whose laws hold the truth wires of ended (frozen) worlds where
        they ended (:mod:`~marinesim.engine.compiled.frozen`): a stacked run whose worlds end
        at different ticks stays compiled after the first ends only when every motion
        declaration of it does.
    """

    laws: list[Law]
    arrays: dict[str, np.ndarray]
    state: tuple[str, ...] = ()
    logs: tuple[str, ...] = ()
    publishes: tuple[str, ...] = ()
    unheard: tuple[str, ...] = ()
    counts: Callable[[int, int], dict[str, int]] | None = None
    inboxes: tuple[Any, ...] = ()
    max_ticks: int = MAX_TICKS
    fresh: tuple[str, ...] = ()
    sources: tuple[str | Path, ...] = ()
    navigation: bool = False
    also_calls: tuple[str, ...] = ()
    scope: str = ""
    ready: Callable[[], bool] = lambda: True
    refill: Callable[[], bool] = lambda: False
    load: Callable[[int], None] = lambda k: None
    inputs: Callable[[int], None] = lambda k: None
    commit: Callable[[int, int, int], None] = lambda k, kstop, ticks: None
    finish: Callable[[int], dict[str, np.ndarray]] = field(default=lambda ticks: {})
    gpu: Worlds | None = None
    holds: bool = False

    def __post_init__(self) -> None:
        for law in self.laws:
            if law.hook not in HOOKS:
                raise ValueError(f"law {law.fn.__name__}: hook {law.hook!r} not in {HOOKS}")
        for name in (*self.state, *self.logs, *self.fresh):
            if name not in self.arrays:
                raise ValueError(f"state/log array {name!r} is not among the declared arrays")
        for name in self.fresh:
            if name in self.state or name.startswith(WIRE_PREFIXES):
                raise ValueError(f"fresh array {name!r} cannot be state or a wire")


def on_cuda() -> bool:
    """``MARINESIM_JIT=cuda``: a run's generated tick on CUDA (:mod:`.gpu`); a declaration
    picks its laws for one thread per world then (no CPU threads within a law)."""
    return os.environ.get("MARINESIM_JIT", "1") == "cuda"


def declared(plugin: Any, slot: Any, sim: Any) -> Laws | str | None:
    """The declaration of ``plugin`` for ``slot``.

    None: Python-only; a string: compiled-capable, but not in this setup (the reason, which
    ``compiled: true`` reports).
    """
    fn = getattr(plugin, "compiled_laws", None)
    return None if fn is None else fn(slot, sim)


@register_jitable
def copy_log(k, j, t, h, cur, log):  # noqa: ANN001, ANN201
    """An ``after_physics`` law for any plugin: the frame at t_{k+1} logs ``cur`` (N, c), the
    values the plugin holds after the tick, into row ``j`` of ``log`` (ticks, N, c)."""
    for i in range(cur.shape[0]):
        for c in range(cur.shape[1]):
            log[j, i, c] = cur[i, c]
    return 0


@register_jitable
def copy_log_cm(k, j, t, h, cur, log):  # noqa: ANN001, ANN201
    """:func:`copy_log` into a component-major log (c, ticks, N): ``log[c, j, i] = cur[i, c]``
    (the recorder's own layout: a chunk of frames is one contiguous copy per component)."""
    for i in range(cur.shape[0]):
        for c in range(cur.shape[1]):
            log[c, j, i] = cur[i, c]
    return 0
