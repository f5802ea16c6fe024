"""Generate the compiled tick of a plugin set: Python source → cache file → numba ``njit``.

:func:`tick_source` composes the declared laws (:mod:`~marinesim.engine.compiled.law`) of
the plugins of one or several entity blocks, in :data:`~marinesim.engine.plugin.PHASES`
order, into the source of one function that runs many ticks of them all::

    tick_loop(k0, kend, start, dt, h, nsub, sched, a0, a1, …, s0, s1, …, save, j0) -> k

(tick k writes the laws' per-tick log row j = k − k0 + j0).  For each tick k: save the mutable state arrays (``s*``; only with ``save``), the ``autonomy`` then the
``control`` laws due at k (``sched`` holds each of those laws' period and offset, in that
order), the ``substep`` laws ``nsub`` times
at t_k + s·h, the ``after_physics``, the ``sense`` then the ``metric`` laws at t_{k+1}; a law returning non-zero restores the
state saved at the tick's start and the loop returns k (the plugins run that tick).  Without
``save`` (0) nothing is saved: a law that hands back at k leaves the arrays with part of
tick k done, and the caller replays ticks k0 … k − 1 from the plugins' state (the laws are
deterministic: the same bits) — a copy of every state array each tick (≈ 6 MB at 10⁴
``usm`` vehicles) costs more than the rare replay.

Beside it the module holds ``tick_run(k0, kend, start, dt, h, nsub, sched, a0, a1, …, j0)``:
the same loop without the save arrays, what ``Simulation.run`` calls (it never saves).  It
is compiled on its own (:func:`jit_tick` ``saved=False``): the save and restore of every
state array is a large part of the loop's code (in ``auv_survey_ins``, 161 state arrays,
about a third of its compile time: 36 s against 54–59 s), which a run that never saves need
not compile.  A stepped run (``Simulation.step``, the SITL backend) compiles ``tick_loop``.

:func:`compile_tick` writes the source to ``<cache>/tick_<digest>.py``, the digest covering
the source itself (the plugin combination: law functions, hooks, argument wiring) and the
files the laws are written in (their modules and declared sources, this generator, and every
module of the package: :func:`marinesim.core.compile.package_digest`), and
compiles it with ``numba.njit(cache=True)``: numba's disk cache sits beside the file, so a
second process loads machine code instead of compiling, and editing any law gives a new
digest (a new file) instead of stale code.  The cache folder is ``$MARINESIM_CACHE_DIR/ticks``
(default ``~/.cache/marinesim/ticks``).

Beside it the file holds ``tick_arena(k0, kend, start, dt, h, nsub, sched, addr, dims, j0)``:
the same loop with its arrays given as their data addresses and shapes (``numba.carray``
views of the same memory), so that a call of one tick unboxes ten arguments instead of one
per array (:func:`compile_arena`, :func:`arena_tables`; ``CompiledRoute.direct``).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from marinesim.engine.compiled.law import HOOKS, WIRE_PREFIXES, Law, Laws

__all__ = [
    "arena_tables", "array_of", "cache_dir", "cached_machine_code", "compile_arena", "compile_tick",
    "file_lock", "is_cached", "jit_tick", "tick_module", "tick_path", "tick_source", "wire_key",
]


def cache_dir() -> Path:
    """Folder of the generated ticks (and numba's cache of them)."""
    root = os.environ.get("MARINESIM_CACHE_DIR")
    base = Path(root) if root else Path.home() / ".cache" / "marinesim"
    return base / "ticks"


def wire_key(laws: Laws, name: str) -> str:
    """The argument key of array ``name`` of a declaration that is a wire (``bus.*``,
    ``truth.*``): the name, or ``name@scope`` for the wires of one block of several
    (:attr:`Laws.scope`); an empty scope keeps the plain name, and a name that already
    names its block (``truth.pos@survey_b``: a law reading another block's wire) is kept."""
    return f"{name}@{laws.scope}" if laws.scope and "@" not in name else name


def _is_wire(name: str) -> bool:
    return name.startswith(WIRE_PREFIXES)


def _wiring(decls: Sequence[Laws]) -> tuple[list[str], dict[tuple[int, str], int]]:
    """Every array once: wires (``bus.*``, ``truth.*``) shared within their scope (one entity
    block), the rest per declaration."""
    order: list[str] = []
    index: dict[tuple[int, str], int] = {}
    seen: dict[str, int] = {}
    for d, laws in enumerate(decls):
        for name in laws.arrays:
            key = wire_key(laws, name) if _is_wire(name) else f"{d}:{name}"
            if key not in seen:
                seen[key] = len(order)
                order.append(key)
            index[(d, name)] = seen[key]
    for d, laws in enumerate(decls):
        for law in laws.laws:
            for a in law.args:
                if (d, a) not in index:
                    key = wire_key(laws, a)
                    if _is_wire(a) and key in seen:  # a wire another declaration owns
                        index[(d, a)] = seen[key]
                    else:
                        raise ValueError(f"law {law.fn.__name__}: array {a!r} is not declared")
    return order, index


def tick_source(decls: Sequence[Laws]) -> tuple[str, list[str], list[int]]:
    """The generated source, the array keys in argument order, the state arrays' positions."""
    order, index = _wiring(decls)
    state = sorted({index[(d, n)] for d, laws in enumerate(decls) for n in laws.state})
    fns: dict[Any, str] = {}
    imports: list[str] = []

    def alias(law: Law) -> str:
        if law.fn not in fns:
            fns[law.fn] = f"L{len(fns)}"
            imports.append(f"from {law.fn.__module__} import {law.fn.__name__} as {fns[law.fn]}")
        return fns[law.fn]

    def call(d: int, law: Law, common: str) -> str:
        args = ", ".join(f"a{index[(d, a)]}" for a in law.args)
        return f"{alias(law)}({common}, {args})"

    body: list[str] = []
    nctl = 0
    for hook in HOOKS:
        for d, laws in enumerate(decls):
            for law in laws.laws:
                if law.hook != hook:
                    continue
                if hook in ("autonomy", "control"):
                    p, o = f"sched[{2 * nctl}]", f"sched[{2 * nctl + 1}]"
                    nctl += 1
                    body += [
                        f"        if st == 0 and ({p} == 1 or (k >= {o} and (k - {o}) % {p} == 0)):",
                        f"            st = {call(d, law, 'k, j, t, h')}",
                    ]  # fmt: skip
                elif hook == "substep":
                    body += [
                        "        if st == 0:",
                        "            for s in range(nsub):",
                        f"                st = {call(d, law, 'k, j, s, t + s * h, h')}",
                        "                if st != 0:",
                        "                    break",
                    ]
                else:  # after_physics, sense, estimate, then the world metrics: at t_{k+1}
                    body += [
                        "        if st == 0:",
                        f"            st = {call(d, law, 'k, j, start + (k + 1) * dt, h')}",
                    ]
    head = "k0, kend, start, dt, h, nsub, sched"
    arrays = ", ".join(f"a{i}" for i in range(len(order)))
    saves = ", ".join(f"s{i}" for i in state)
    lines = [
        '"""Generated by marinesim.engine.compiled.generate: do not edit."""',
        "# plugin set: "
        + "; ".join(f"{law.hook}:{law.fn.__module__}.{law.fn.__name__}" for ls in decls for law in ls.laws),
        "import numpy as np",
        "",
        "from marinesim.engine.compiled.generate import address_ptr, copy_into",
        "",
        "try:",
        "    from numba import carray",
        "except ImportError:  # the interpreted tick (no arena)",
        "    carray = None",
        *imports,
        "",
        "",
        *_loop_source("tick_run", (head, arrays, "j0"), body, []),
        "",
        "",
        *_loop_source("tick_loop", (head, arrays, saves, "save, j0"), body, state),
        "",
        *_arena_source(decls, order, state),
    ]  # fmt: skip
    return "\n".join(lines), order, state


def _loop_source(name: str, params: Sequence[str], body: list[str], state: list[int]) -> list[str]:
    """The loop over ticks ``name(params…)`` running ``body`` each tick; with ``state``, the
    state arrays saved at the tick's start and restored on a hand-back when ``save`` is set."""
    save = [f"            copy_into(s{i}, a{i})" for i in state]
    restore = [f"                copy_into(a{i}, s{i})" for i in state]
    return [
        f"def {name}({', '.join(x for x in params if x)}):",
        "    k = k0",
        "    while k < kend:",
        "        j = k - k0 + j0",
        "        t = start + k * dt",
        *(["        if save != 0:", *save] if state else []),
        "        st = 0",
        *body,
        "        if st != 0:",
        *(["            if save != 0:", *restore] if state else []),
        "            return k",
        "        k += 1",
        "    return k",
    ]


def array_of(decls: Sequence[Laws], key: str) -> Any:
    """The array behind an argument key of :func:`tick_source` (``d:name`` or a wire)."""
    if not _is_wire(key):
        d, _, name = key.partition(":")
        return decls[int(d)].arrays[name]
    # a wire: its owner's (the first declaration of its scope that declares it)
    return next(ls.arrays[n] for ls in decls for n in ls.arrays if _is_wire(n) and wire_key(ls, n) == key)


def _arena_source(decls: Sequence[Laws], order: list[str], state: list[int]) -> list[str]:
    """``tick_arena``: :func:`tick_loop` whose arrays come as two small tables, their data
    addresses (``addr``) and shapes (``dims``), so that one call unboxes 10 arguments instead
    of one per array (≈ 0.2 µs each).  The arrays are views of the same memory: the caller
    keeps the arrays alive and passes the addresses of exactly the arrays (C-contiguous) that
    :func:`tick_loop` would get, in its order (the state arrays' save copies last)."""
    args: list[str] = []
    off = 0
    for i in [*range(len(order)), *state]:
        arr = array_of(decls, order[i])
        nd = arr.ndim
        if nd == 0:
            return []  # (a 0-d array: no arena; the plain call only)
        shape = ", ".join(f"dims[{off + m}]" for m in range(nd))
        dt = arr.dtype.name + ("_" if arr.dtype.name == "bool" else "")
        args.append(f"        carray(address_ptr(addr[{len(args)}]), ({shape},), np.{dt}),")
        off += nd
    return [
        "",
        "def tick_arena(k0, kend, start, dt, h, nsub, sched, addr, dims, j0):",
        "    return _tick(",
        "        k0, kend, start, dt, h, nsub, sched,",
        *args,
        "        1, j0,",
        "    )",
        "",
    ]


def arena_tables(arrays: Sequence[Any]) -> tuple[Any, Any] | None:
    """``(addr, dims)`` of :func:`tick_arena` for these arrays (argument order), or None when
    one is not C-contiguous (the arena views would not be the same elements)."""
    import numpy as np

    if not all(a.flags.c_contiguous and a.ndim > 0 for a in arrays):
        return None
    addr = np.array([a.ctypes.data for a in arrays], dtype=np.int64)
    dims = np.array([d for a in arrays for d in a.shape], dtype=np.int64)
    return addr, dims


def copy_into(dst: Any, src: Any) -> None:  # register_jitable below (numba optional)
    """``dst[...] = src`` for C-contiguous arrays of the same size (compiled and interpreted)."""
    d = dst.reshape(dst.size)
    s = src.reshape(src.size)
    for i in range(d.size):
        d[i] = s[i]


def address_ptr(addr: int) -> Any:  # an intrinsic below (numba optional)
    """A data address (``ndarray.ctypes.data``) as a pointer, for ``numba.carray``."""
    raise NotImplementedError("address_ptr runs in compiled code only")


try:  # the generated tick calls it from compiled code
    from numba.core import types as _nbt
    from numba.extending import intrinsic, register_jitable

    copy_into = register_jitable(copy_into)

    @intrinsic
    def address_ptr(typingctx: Any, addr: Any) -> Any:  # noqa: ARG001
        if not isinstance(addr, _nbt.Integer):
            return None

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:  # noqa: ARG001
            return builder.inttoptr(args[0], context.get_value_type(_nbt.voidptr))

        return _nbt.voidptr(addr), codegen

except ImportError:  # pragma: no cover - the compiled tick needs numba
    pass


def _digest(source: str, decls: Sequence[Laws]) -> str:
    from marinesim.core.compile import package_digest

    files = {Path(__file__).resolve()}
    for laws in decls:
        for law in laws.laws:
            files.add(Path(sys.modules[law.fn.__module__].__file__ or "").resolve())
        for extra in laws.sources:
            p = Path(extra).resolve()
            files.update(p.glob("*.py") if p.is_dir() else (p,))
    h = hashlib.sha256(source.encode())
    h.update(package_digest().encode())  # the laws' own callees, in any package
    for f in sorted(files):
        if f.is_file():
            h.update(f.read_bytes())
    return h.hexdigest()[:20]


def _path(source: str, decls: Sequence[Laws]) -> Path:
    return cache_dir() / f"tick_{_digest(source, decls)}.py"


def is_cached(decls: Sequence[Laws], *, saved: bool = False) -> bool:
    """Whether numba's disk cache already holds the machine code of this plugin set's tick
    (:func:`cached_machine_code` of its compiled ``tick_run``, or ``tick_loop`` when
    ``saved``)."""
    path = _path(tick_source(decls)[0], decls)
    return path.is_file() and cached_machine_code(compile_tick(decls, saved=saved)[0])


def tick_path(fn: Any) -> Path:
    """The generated module file of a tick function (:func:`compile_tick`'s)."""
    py = getattr(fn, "py_func", fn)
    return Path(py.__code__.co_filename)


def cached_machine_code(fn: Any) -> bool:
    """Whether numba's disk cache holds machine code of the compiled tick ``fn`` (an index of
    its function, ``tick_run`` or ``tick_loop``, where numba keeps this module's cache: beside
    it, or under ``NUMBA_CACHE_DIR``)."""
    cache = getattr(fn, "_cache", None)
    folder = getattr(cache, "_cache_path", None)
    if folder is None:
        return False
    name = getattr(fn, "py_func", fn).__name__
    return any(Path(folder).glob(f"{tick_path(fn).stem}.{name}-*.nbi"))


@contextlib.contextmanager
def compile_lock(decls: Sequence[Laws]) -> Iterator[None]:
    """Hold this plugin set's compile lock (an exclusive ``flock`` on ``tick_<digest>.lock``
    beside the tick) while the body runs.

    Processes that start on the same empty cache at once (``pytest -n``, a Dask worker pool,
    a shell loop of runs) would each compile the same tick; with the lock one compiles and the
    others wait, then load its machine code from numba's disk cache.  The operating system
    drops the lock of a process that dies.  A no-op where ``fcntl`` is missing (Windows).
    """
    with file_lock(_path(tick_source(decls)[0], decls).with_suffix(".lock")):
        yield


@contextlib.contextmanager
def file_lock(lock: Path) -> Iterator[None]:
    """An exclusive ``flock`` on the file ``lock`` while the body runs (:func:`compile_lock`;
    the background compile of a tick takes its plugin set's lock the same way)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


_LOADED: dict[Path, Any] = {}


def tick_module(path: Path) -> Any:
    """The generated module in ``path``, imported once per process (as ``marinesim_<stem>``)."""
    mod = _LOADED.get(path)
    if mod is None:
        spec = importlib.util.spec_from_file_location(f"marinesim_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)
        _LOADED[path] = mod
    return mod


def jit_tick(mod: Any, *, saved: bool = True) -> Any:
    """The module's ``tick_loop`` (``saved``) or ``tick_run`` as numba compiles it (``njit``,
    disk cache, numpy's error model), made once per module."""
    attr = "_compiled" if saved else "_compiled_run"
    fn = getattr(mod, attr, None)
    if fn is None:
        import numba

        fn = numba.njit(cache=True, error_model="numpy")(mod.tick_loop if saved else mod.tick_run)
        setattr(mod, attr, fn)
    return fn


def compile_tick(
    decls: Sequence[Laws], *, interpreted: bool = False, saved: bool = False
) -> tuple[Any, list[str], list[int]]:
    """The tick loop of ``decls`` (numba ``njit``, disk-cached; ``interpreted``: plain Python):
    ``tick_run``, or ``tick_loop`` (with the state arrays' save copies) when ``saved``.

    Returns the function, the array keys in argument order and the state arrays' positions.
    Compiling happens at the first call (see :mod:`~marinesim.engine.compiled.notice`).
    """
    source, order, state = tick_source(decls)
    path = _path(source, decls)
    if not path.is_file():
        # written once and never replaced (its name is the digest of its content): numba's
        # disk cache is stamped with the file's modification time, so a second write by a
        # process starting at the same moment would void the machine code the first saves
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(source)
        try:
            os.link(tmp, path)  # atomic, and never over an existing file
        except FileExistsError:
            pass  # another process wrote it first: the same text
        finally:
            tmp.unlink()
    mod = tick_module(path)
    if interpreted:
        return (mod.tick_loop if saved else mod.tick_run), order, state
    return jit_tick(mod, saved=saved), order, state


def compile_arena(decls: Sequence[Laws]) -> Any:
    """The ``tick_arena`` of ``decls`` (numba ``njit``, disk-cached), or None when the
    generated module has none (see :func:`_arena_source`).  Call :func:`compile_tick` with
    ``saved`` first (the arena calls ``tick_loop``)."""
    source, _order, _state = tick_source(decls)
    mod = _LOADED.get(_path(source, decls))
    if mod is None or not hasattr(mod, "tick_arena") or getattr(mod, "_compiled", None) is None:
        return None
    fn = getattr(mod, "_arena", None)
    if fn is None:
        import numba

        mod._tick = mod._compiled  # the compiled tick_loop, called from tick_arena
        fn = mod._arena = numba.njit(cache=True, error_model="numpy")(mod.tick_arena)
    return fn
