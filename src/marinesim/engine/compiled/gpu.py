"""The generated tick on CUDA: one thread per world, the same laws in the same tick lines.

:func:`gpu_source` writes the tick of a plugin set (:func:`~.generate.tick_body`: the lines
every loop of :mod:`~marinesim.engine.compiled.generate` is made of, the law calls the
same) as a CUDA kernel::

    gpu_run(k0, kend, start, dt, h, nsub, sched, a0, a1, …, stop, j0)

Thread w takes its world's part of each array (:class:`~.law.Worlds`: its rows of a row
array, its copy of a world array, a whole shared array) and runs ticks k0 … kend − 1 of its
world, stopping at the first tick a law hands back; ``stop[w]`` is where it stopped.  The
law functions are the ones the CPU tick calls (``register_jitable``: numba compiles them
for the device); they see one world's rows, as in a run of that world alone.

:class:`GpuTick` is that kernel behind the signature of the interpreted loop ``py_run``
(``fn(k0, kend, start, dt, h, nsub, sched, *arrays, j0) -> k``), so the route calls it
as it calls ``py_run``: it copies the arrays to the device, launches one thread per world,
copies them back and returns the first tick any world stopped at.  The route then replays
ticks k0 … k − 1 from the plugins' state as for ``tick_run`` (worlds that went on past k
are run again to k: the same laws on the same arrays) and the plugins run tick k.

Worlds do not wait for each other, so a law that hands back for a reason that concerns
several worlds may hand back where the CPU tick would not (never the reverse): the plugins
then run that tick, which is the same tick.

On a device, the laws' ``math`` functions are CUDA's (libdevice), not the C library's:
results agree with the CPU tick to rounding.  numba's CUDA simulator
(``NUMBA_ENABLE_CUDASIM=1``) runs the same kernel in Python: there they are the same bits.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from marinesim.core.errors import ConfigError
from marinesim.engine.compiled.generate import (
    cache_dir,
    law_aliases,
    loop_source,
    owner,
    source_head,
    tick_body,
    tick_module,
    tick_source,
    wiring,
    write_once,
    write_sites,
)
from marinesim.engine.compiled.law import Laws

__all__ = [
    "GpuTick",
    "LayoutError",
    "Part",
    "compile_gpu_tick",
    "gpu_source",
    "merge_notes",
    "parts",
    "require_device",
    "require_layouts",
    "unsupported",
    "world_major",
]

#: CUDA threads per block (one world each).
THREADS = 64


@dataclass(frozen=True)
class Part:
    """What thread w gets of one array of the tick.

    ``kind``: ``rows`` (its ``per`` rows along ``axis``), ``world`` (its copy), ``shared``
    (the whole array), ``events`` (its slice of an event buffer; ``col`` the row column,
    ``count`` the argument position of the buffer's count), ``count`` (its count),
    ``index`` (its ``per`` row numbers, made its own rows' numbers; read only), ``least`` or
    ``most`` (its copy; the copies' minimum or maximum is kept).  ``blocks``: the row counts
    of the blocks a ``rows`` or ``index`` array gathers (laid out world by world on the
    device); ``value``: a ``shared`` array's value on the device."""

    kind: str
    axis: int = 0
    per: int = 0
    col: int = 0
    count: int = -1
    blocks: tuple[int, ...] = ()
    value: tuple[float, ...] | None = None


@lru_cache(maxsize=64)
def world_major(blocks: tuple[int, ...], worlds: int) -> np.ndarray:
    """The rows of ``blocks`` (concatenated in block order) world by world: world 0's rows of
    block 0, of block 1 …, then world 1's …  (``a[world_major(…)]`` is the device layout;
    made once per layout, read-only)."""
    offs = np.concatenate([[0], np.cumsum(blocks)])
    out = np.concatenate([
        np.arange(offs[b] + w * (m // worlds), offs[b] + (w + 1) * (m // worlds), dtype=np.int64)
        for w in range(worlds) for b, m in enumerate(blocks)
    ])  # fmt: skip
    out.flags.writeable = False
    return out


class LayoutError(ValueError):
    """A declaration's :class:`~.law.Worlds` does not fit its arrays (``decl``: its index)."""

    def __init__(self, decl: int, message: str) -> None:
        super().__init__(message)
        self.decl = decl


def unsupported(decls: Sequence[Laws], names: Sequence[str]) -> list[str]:
    """``names[d]`` of each declaration that has no :class:`~.law.Worlds` layout."""
    return [names[d] for d, laws in enumerate(decls) if laws.gpu is None]


def parts(decls: Sequence[Laws]) -> tuple[int, list[Part]]:
    """The number of worlds and each argument's :class:`Part` (in argument order).

    Raises
    ------
    ValueError
        A declaration without a layout, or blocks with different numbers of worlds.
    LayoutError
        A row array whose row axis does not hold the block's rows, rows that do not split
        into the worlds (the message names the array; ``decl`` its declaration).
    """
    order, _index = wiring(decls)
    worlds = {laws.gpu.worlds for laws in decls if laws.gpu is not None}
    if any(laws.gpu is None for laws in decls) or len(worlds) != 1:
        raise ValueError("every declaration needs a Worlds layout, all with the same worlds")
    nw = worlds.pop()
    out: list[Part] = []
    counts: dict[tuple[int, str], int] = {}
    for pos, key in enumerate(order):
        d, name = owner(decls, key)
        counts[(d, name)] = pos
    for key in order:
        d, name = owner(decls, key)
        laws = decls[d]
        g = laws.gpu
        assert g is not None
        arr = laws.arrays[name]
        if g.n % nw:
            raise LayoutError(d, f"array {name!r}: {g.n} rows do not split into {nw} worlds")
        local = dict(g.local)
        total = sum(g.blocks)
        if any(m % nw for m in g.blocks):
            raise LayoutError(d, f"array {name!r}: blocks of {g.blocks} rows do not split into {nw} worlds")
        if name in g.shared:
            out.append(Part("shared", value=local.get(name)))
        elif name in g.world:
            out.append(Part("world"))
        elif name in g.least:
            out.append(Part("least"))
        elif name in g.most:
            out.append(Part("most"))
        elif name in g.indices:
            per = (total if g.blocks else g.n) // nw
            out.append(Part("index", per=per, blocks=g.blocks))
        elif name in g.per_world:
            if arr.shape[0] != nw:
                raise LayoutError(d, f"array {name!r} {arr.shape}: axis 0 does not hold {nw} worlds")
            out.append(Part("rows", per=1))
        elif g.events is not None and name == g.events[0]:
            out.append(
                Part("events", per=g.n // nw, col=g.events[2], count=counts[(d, g.events[1])])
            )
        elif g.events is not None and name == g.events[1]:
            out.append(Part("count"))
        else:
            axis = dict(g.axes).get(name, g.log_axis if name in laws.logs else 0)
            gathered = bool(g.blocks) and name in g.gathered
            want = total if gathered else dict(g.sizes).get(name, g.n)
            if arr.ndim <= axis or arr.shape[axis] != want:
                raise LayoutError(
                    d, f"array {name!r} {arr.shape}: axis {axis} does not hold the block's {want} "
                    "rows (name it shared or world in the declaration's Worlds)"
                )
            if want % nw:
                raise LayoutError(d, f"array {name!r}: {want} rows do not split into {nw} worlds")
            out.append(Part("rows", axis=axis, per=want // nw, blocks=g.blocks if gathered else ()))
    return nw, out


def gpu_source(decls: Sequence[Laws]) -> str:
    """The CUDA kernel's source (``gpu_run``, to be compiled with ``numba.cuda.jit``)."""
    order, _index = wiring(decls)
    _nw, ps = parts(decls)
    body, sites = tick_body(decls)
    fns, imports = law_aliases(sites)
    views = []
    for i, p in enumerate(ps):
        if p.kind == "shared":
            views.append(f"    v{i} = a{i}")
        elif p.kind in ("rows", "index"):
            lead = ":, " * p.axis
            views.append(f"    v{i} = a{i}[{lead}w * {p.per}:(w + 1) * {p.per}]")
        else:  # world, least, most, events, count: the world's own copy
            views.append(f"    v{i} = a{i}[w]")
    calls = [f"{fns[s.law.fn]}({s.common}, {', '.join(f'v{i}' for i in s.idx)})" for s in sites]
    arrays = ", ".join(f"a{i}" for i in range(len(order)))
    lines = [
        *source_head(__name__, decls),
        "from numba import cuda",
        "",
        *imports,
        "",
        "",
        *loop_source(
            "gpu_run",
            ("k0, kend, start, dt, h, nsub, sched", arrays, "stop, j0"),
            write_sites(body, calls),
            [],
            prologue=["    w = cuda.grid(1)", "    if w >= stop.shape[0]:", "        return", *views],
            stopped=["            fin = 0", "            break"],
            end=["    stop[w] = -k if fin != 0 else k"],
        ),
        "",
    ]  # fmt: skip
    return "\n".join(lines)


class GpuTick:
    """The CUDA tick of a plugin set, called as the interpreted loop ``py_run``.

    Parameters
    ----------
    decls : sequence of Laws
        The declarations, each with a :class:`~.law.Worlds` layout.
    device : bool
        Require a device (or numba's simulator): ConfigError saying why there is none.
        False: only :meth:`ptx` (numba-cuda and CUDA's NVVM library, not a GPU).
    """

    def __init__(self, decls: Sequence[Laws], *, device: bool = True) -> None:
        from marinesim.core.compile import require_cuda

        self.cuda = require_cuda() if device else None
        self.worlds, self.parts = parts(decls)
        source = gpu_source(decls)
        path = cache_dir() / f"gpu_{hashlib.sha256(source.encode()).hexdigest()[:20]}.py"
        write_once(path, source)
        self.module = tick_module(path)
        self.kernel = self.cuda.jit(self.module.gpu_run) if self.cuda is not None else None

    def _host(self, a: np.ndarray, p: Part) -> np.ndarray:
        """The array as the device gets it (a world's copies side by side; an event buffer
        in one slice per world, each as long as the host's allows, empty)."""
        nw = self.worlds
        if p.kind in ("world", "least", "most"):
            return np.ascontiguousarray(np.broadcast_to(a, (nw, *a.shape)))
        if p.kind == "shared" and p.value is not None:
            return np.asarray(p.value, dtype=a.dtype).reshape(a.shape)
        if p.kind == "rows" and p.blocks:
            return np.ascontiguousarray(np.take(a, world_major(p.blocks, nw), axis=p.axis))
        if p.kind == "index":
            first = np.repeat(np.arange(nw, dtype=a.dtype) * p.per, p.per)
            where = a
            if p.blocks:  # a gathered row's place on the device
                where = np.argsort(world_major(p.blocks, nw))[a]
            local = where - first
            if ((local < 0) | (local >= p.per)).any():
                raise RuntimeError(
                    "CUDA tick: a row-number array names rows of another world (its rows "
                    "must be grouped by world, as the block's)"
                )
            return local
        if p.kind == "events":
            return np.zeros((nw, max(1, a.shape[0] // nw), *a.shape[1:]), dtype=a.dtype)
        if p.kind == "count":
            return np.zeros((nw, *a.shape), dtype=a.dtype)
        return a

    def __call__(self, k0: int, kend: int, start: float, dt: float, h: float, nsub: int,
                 sched: np.ndarray, *rest: Any) -> int:  # fmt: skip
        """Run ticks k0 … kend − 1 of every world; the first tick a world stopped at."""
        *arrays, j0 = rest
        cuda = self.cuda
        dev: list[Any] = []
        first: dict[int, int] = {}  # one device array for an array under two names (an alias)
        for i, (a, p) in enumerate(zip(arrays, self.parts, strict=True)):
            f = first.setdefault(id(a), i)
            if f != i and self.parts[f] != p:
                raise RuntimeError("CUDA tick: one array split among the worlds in two ways")
            dev.append(dev[f] if f != i else cuda.to_device(self._host(a, p)))
        stop = cuda.device_array(self.worlds, dtype=np.int64)
        blocks = (self.worlds + THREADS - 1) // THREADS
        self.kernel[blocks, THREADS](
            k0, kend, start, dt, h, nsub, cuda.to_device(np.asarray(sched)), *dev, stop, j0
        )
        stops = stop.copy_to_host()
        ticks = np.abs(stops)  # (−k: the world ended its call after tick k − 1, STOP_AFTER)
        k1 = int(ticks.min())
        for i, (a, d, p) in enumerate(zip(arrays, dev, self.parts, strict=True)):
            if first[id(a)] != i or not a.flags.writeable:  # (an alias: copied back under its
                continue  # first name; a read-only array, which no law writes on the CPU either)
            if p.kind == "events":  # (its count's host array is written here, not copied)
                merge_notes(a, arrays[p.count], d.copy_to_host(), dev[p.count].copy_to_host(),
                            p.col, p.per)  # fmt: skip
            elif p.kind == "rows" and p.blocks:  # (back to the blocks' order)
                at = (slice(None),) * p.axis + (world_major(p.blocks, self.worlds),)
                a[at] = d.copy_to_host()
            elif p.kind == "rows":
                d.copy_to_host(a)
            elif p.kind == "least":
                a[...] = d.copy_to_host().min(axis=0)
            elif p.kind == "most":
                a[...] = d.copy_to_host().max(axis=0)
            elif p.kind == "world":
                # (every world ran every tick: the copies are one value; a world that stopped
                # early left its copy partway, and the route loads and runs these ticks again)
                got = d.copy_to_host()
                same = (got == got[0]) | ((got != got) & (got[0] != got[0]))  # (NaN = NaN)
                if k1 == kend and not same.all():
                    raise RuntimeError(
                        "CUDA tick: the worlds' copies of a world array differ (a law keeps "
                        "something of its rows in it: declare it a row array)"
                    )
                a[...] = got[0]
        # every world that stopped first ended its call after a whole tick: so does the call
        return -k1 if (stops[ticks == k1] < 0).all() else k1

    def ptx(self, arrays: Sequence[np.ndarray], cc: tuple[int, int] = (9, 0)) -> str:
        """The kernel compiled to PTX for compute capability ``cc`` with the argument types
        of ``arrays`` (the route's, in argument order): a check that every law compiles for
        a device (:func:`~marinesim.core.compile.compile_ptx`: numba-cuda, no GPU)."""
        import numba
        from numba.core import types

        from marinesim.core.compile import compile_ptx

        sig = (types.int64, types.int64, types.float64, types.float64, types.float64,
               types.int64, types.int64[::1],
               *(numba.typeof(a if p.kind == "index" else self._host(a, p))
                 for a, p in zip(arrays, self.parts, strict=True)),
               types.int64[::1], types.int64)  # fmt: skip
        return compile_ptx(self.module.gpu_run, sig, cc)


def merge_notes(buf: np.ndarray, cnt: np.ndarray, got: np.ndarray, counts: np.ndarray,
                col: int, per: int) -> None:  # fmt: skip
    """Append the worlds' event notes to the host's buffer ``buf`` (``cnt[0]`` notes in it).

    ``got[w, :counts[w]]`` are world w's notes, its rows counted from 0: the row column
    ``col`` becomes the block's row (world w's rows start at w·``per``), and the notes go in
    order of time (column 0), then row, as the CPU tick notes them walking the rows.
    """
    notes = []
    for w in range(got.shape[0]):
        c = int(counts[w].reshape(-1)[0])
        if c:
            part = got[w, :c].copy()
            part[:, col] += w * per
            notes.append(part)
    if not notes:
        return
    new = np.concatenate(notes)
    new = new[np.lexsort((new[:, col], new[:, 0]))]
    n0 = int(cnt[0])
    if n0 + len(new) > buf.shape[0]:  # pragma: no cover - each world's slice is 1/worlds
        raise RuntimeError("CUDA tick: the event notes overflow the host's buffer")
    buf[n0 : n0 + len(new)] = new
    cnt[0] = n0 + len(new)


def compile_gpu_tick(decls: Sequence[Laws]) -> tuple[GpuTick, list[str], list[int]]:
    """The CUDA tick of ``decls`` with the array keys in argument order and the state
    arrays' positions (as :func:`~.generate.compile_tick` returns them)."""
    _src, order, state = tick_source(decls)
    return GpuTick(decls), order, state


def require_device() -> None:
    """ConfigError unless the CUDA tick can run here: a device (or numba's simulator) and,
    on a device, numba-cuda (numba's own CUDA target, deprecated, cannot compile the laws:
    it rejects Python's ``min`` and ``max``)."""
    import importlib.util
    import os

    from marinesim.core.compile import require_cuda

    require_cuda("MARINESIM_JIT=cuda", "unset MARINESIM_JIT to run the tick on the CPU")
    if (
        os.environ.get("NUMBA_ENABLE_CUDASIM") != "1"
        and importlib.util.find_spec("numba_cuda") is None
    ):
        raise ConfigError(
            "needs numba-cuda (pip install 'marinesim[gpu]'): numba's own CUDA target cannot "
            "compile the tick's laws",
            param="MARINESIM_JIT=cuda",
        )


def require_layouts(decls: Sequence[Laws], names: Sequence[str]) -> None:
    """ConfigError naming the plugins whose laws have no CUDA layout, or the plugin whose
    layout does not fit its arrays."""
    missing = unsupported(decls, names)
    if missing:
        raise ConfigError(
            "these plugins' laws do not run on CUDA yet: "
            + ", ".join(missing)
            + " (unset MARINESIM_JIT to run the compiled tick on the CPU)",
            param="MARINESIM_JIT=cuda",
        )
    try:
        parts(decls)
    except LayoutError as exc:
        raise ConfigError(
            f"plugin {names[exc.decl]}: its laws' CUDA layout (Worlds) does not fit: {exc}",
            param="MARINESIM_JIT=cuda",
        ) from None
