"""Generate the compiled tick of a plugin set: Python source → cache file → numba ``njit``.

:func:`tick_source` composes the declared laws (:mod:`~marinesim.engine.compiled.law`) of
the plugins of one or several entity blocks, in :data:`~marinesim.engine.plugin.PHASES`
order, into the source of a loop that runs many ticks of them all::

    tick_run(k0, kend, start, dt, h, nsub, sched, AD, DM, j0) -> k
    tick_loop(k0, kend, start, dt, h, nsub, sched, AD, DM, SV, save, j0) -> k

(tick k writes the laws' per-tick log rows j = k − k0 + j0).  The arrays come as tables
(:func:`arena_tables`): ``AD`` their data addresses and ``DM`` their shapes in argument
order, ``SV`` the state arrays' save copies (rows: copy, array, bytes), so a call unboxes a
few arguments, not one per array.  For each tick k: save the state (``tick_loop`` with
``save``), the ``autonomy`` then the ``control`` laws due at k (``sched`` holds each of those
laws' period and offset, in that order), the ``substep`` laws ``nsub`` times at t_k + s·h,
the ``after_physics``, the ``sense``, the ``estimate`` and the ``metric`` laws at t_{k+1}; a
law returning non-zero restores the state saved at the tick's start and the loop returns k
(the plugins run that tick).  Without ``save`` (``tick_run``, what ``Simulation.run``
calls) nothing is saved: a law that hands back at k leaves the arrays with part of tick k
done, and the caller replays ticks k0 … k − 1 from the plugins' state (the laws are
deterministic: the same bits).  A stepped run (``Simulation.step``, the SITL backend) calls
``tick_loop``.

Each law call of the compiled loops goes through a C function pointer to the law compiled
on its own (:mod:`~marinesim.engine.compiled.lawfunc`: cached apart, shared by every plugin
set that calls it with arrays of the same types, compiled in several processes at once), so
the loops themselves compile in about a second.  ``py_run`` and ``py_loop`` are the same
loops over the arrays themselves, calling the laws in Python (``MARINESIM_JIT=interp``).

:func:`compile_tick` writes the source to ``<cache>/tick_<digest>.py``, the digest covering
the source itself (the plugin combination: law functions, hooks, argument wiring) and the
files the laws are written in (their modules and declared sources, this generator, and every
module of the package: :func:`marinesim.core.compile.package_digest`), and
compiles it with ``numba.njit(cache=True)``: numba's disk cache sits beside the file, so a
second process loads machine code instead of compiling, and editing any law gives a new
digest (a new file) instead of stale code.  The cache folder is ``$MARINESIM_CACHE_DIR/ticks``
(default ``~/.cache/marinesim/ticks``).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from marinesim.engine.compiled.law import HOOKS, WIRE_PREFIXES, Law, Laws

__all__ = [
    "Site", "arena_tables", "array_of", "cache_dir", "cached_machine_code", "compile_tick",
    "file_lock", "is_cached", "jit_tick", "law_aliases", "loop_source", "owner", "shape_offsets",
    "site_calls", "source_head", "tick_body",
    "tick_module", "tick_module_of", "tick_path", "tick_source", "wiring", "wire_key", "write_once",
    "write_sites",
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


def wiring(decls: Sequence[Laws]) -> tuple[list[str], dict[tuple[int, str], int]]:
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


@dataclass(frozen=True)
class Site:
    """One law call of the tick: declaration ``d``, its :class:`Law`, the common arguments'
    text (``k, j, t, h`` or ``k, j, s, t, h``) and the law's arrays' argument positions."""

    d: int
    law: Law
    common: str
    idx: tuple[int, ...]


def tick_body(decls: Sequence[Laws]) -> tuple[list[str], list[Site]]:
    """One tick's lines (in a loop over k with ``j``, ``t``, ``st`` set; ``@SITE<c>@`` where
    law call ``c`` goes) and its call sites: every loop of :func:`tick_source` and the CUDA
    tick (:mod:`~marinesim.engine.compiled.gpu`) writes its calls into the same lines."""
    _order, index = wiring(decls)
    sites: list[Site] = []

    def call(d: int, law: Law, common: str) -> str:
        sites.append(Site(d, law, common, tuple(index[(d, a)] for a in law.args)))
        return f"@SITE{len(sites) - 1}@"

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
                        *_after_call("            "),
                    ]  # fmt: skip
                elif hook == "substep":
                    body += [
                        "        if st == 0:",
                        "            for s in range(nsub):",
                        f"                st = {call(d, law, 'k, j, s, t + s * h, h')}",
                        *_after_call("                "),
                        "                if st != 0:",
                        "                    break",
                    ]
                else:  # after_physics, sense, estimate, then the world metrics: at t_{k+1}
                    body += [
                        "        if st == 0:",
                        f"            st = {call(d, law, 'k, j, start + (k + 1) * dt, h')}",
                        *_after_call("            "),
                    ]
    return body, sites


def _after_call(indent: str) -> list[str]:
    """After a law call: a negative result (the tick goes on; the call ends after it, so that
    Python looks at what the tick did: a world that finished) sets ``fin``."""
    return [f"{indent}if st < 0:", f"{indent}    fin = 1", f"{indent}    st = 0"]


def law_aliases(sites: Sequence[Site]) -> tuple[dict[Any, str], list[str]]:
    """Each law function's alias in a generated module (``F0``, ``F1`` …) and its import."""
    fns: dict[Any, str] = {}
    imports: list[str] = []
    for site in sites:
        fn = site.law.fn
        if fn not in fns:
            fns[fn] = f"F{len(fns)}"
            imports.append(f"from {fn.__module__} import {fn.__name__} as {fns[fn]}")
    return fns, imports


def source_head(module: str, decls: Sequence[Laws]) -> list[str]:
    """The first lines of a generated module: who wrote it, and the plugin set's laws."""
    laws = "; ".join(f"{law.hook}:{law.fn.__module__}.{law.fn.__name__}" for ls in decls for law in ls.laws)
    return [f'"""Generated by {module}: do not edit."""', f"# plugin set: {laws}"]


def site_calls(decls: Sequence[Laws], sites: Sequence[Site]) -> tuple[list[str], list[str], list[str], list[int]]:
    """Each call site of ``sites`` (:func:`tick_body`) as the tick module writes it: its
    ``SITES`` entry, its interpreted call (the law on the arrays ``a<i>``), its compiled call
    (through the table of law pointers) and the places of its arrays (``SIX``)."""
    order, _index = wiring(decls)
    fns, _imports = law_aliases(sites)
    # every array's data address (AD) and shape (DM) once per compiled call; a law's call
    # site names its arrays by their places in them (SIX: pairs array, first dimension)
    arrs = [array_of(decls, key) for key in order]
    doff = shape_offsets(arrs)
    six: list[int] = []
    table: list[str] = []
    py: list[str] = []
    jit: list[str] = []
    for c, site in enumerate(sites):
        # each call site its own entry of the table of law pointers (lawfunc): compiled,
        # a call through it (``tick_run``, ``tick_loop``); interpreted, the law (``py_*``)
        sub = site.law.hook == "substep"
        kinds = tuple((arrs[i].dtype.name, arrs[i].ndim) for i in site.idx)
        srcs = tuple(str(x) for x in decls[site.d].sources)
        f = fns[site.law.fn]
        table.append(f"    ({f}, {sub}, {kinds!r}, {srcs!r}),")
        py.append(f"{f}({site.common}, {', '.join(f'a{i}' for i in site.idx)})")
        jit.append(
            f"{'call_law_sub' if sub else 'call_law'}(_SYM, {c}, {site.common}, AD, DM, SIX, {len(six)})"
        )
        for i in site.idx:
            six.extend((i, doff[i]))
    return table, py, jit, six


def tick_source(decls: Sequence[Laws]) -> tuple[str, list[str], list[int]]:
    """The generated source, the array keys in argument order, the state arrays' positions."""
    order, index = wiring(decls)
    state = sorted({index[(d, n)] for d, laws in enumerate(decls) for n in laws.state})
    body, sites = tick_body(decls)
    _fns, imports = law_aliases(sites)
    table, py, jit, six = site_calls(decls, sites)
    head = "k0, kend, start, dt, h, nsub, sched"
    arrays = ", ".join(f"a{i}" for i in range(len(order)))
    saves = ", ".join(f"s{i}" for i in state)
    lines = [
        *source_head(__name__, decls),
        "import numpy as np",
        "",
        "from marinesim.engine.compiled.generate import copy_into",
        "from marinesim.engine.compiled.lawfunc import call_law, call_law_sub, copy_rows, site_table",
        "",
        *imports,
        "",
        "# the laws' call sites: the law, whether a substep law, its arrays' (dtype, ndim), the",
        "# files its declaration names as its sources (lawfunc.law_path)",
        "SITES = [",
        *table,
        "]",
        "_FP, _SYM = site_table(__file__, len(SITES))",
        f"SIX = np.array({six!r}, dtype=np.int64)",
        "",
        "",
        *loop_source("tick_run", (head, "AD, DM, j0"), write_sites(body, jit), []),
        "",
        "",
        *loop_source("tick_loop", (head, "AD, DM, SV, save, j0"), write_sites(body, jit), state, tables=True),
        "",
        "",
        *loop_source("py_run", (head, arrays, "j0"), write_sites(body, py), []),
        "",
        "",
        *loop_source("py_loop", (head, arrays, saves, "save, j0"), write_sites(body, py), state),
        "",
    ]  # fmt: skip
    return "\n".join(lines), order, state


def write_sites(body: list[str], calls: list[str]) -> list[str]:
    """``body`` with its call sites ``@SITE<c>@`` written as ``calls[c]``."""
    return [re.sub(r"@SITE(\d+)@", lambda m: calls[int(m.group(1))], line) for line in body]


def loop_source(
    name: str,
    params: Sequence[str],
    body: list[str],
    state: list[int],
    *,
    tables: bool = False,
    prologue: Sequence[str] = (),
    stopped: Sequence[str] = ("            return k",),
    end: Sequence[str] = ("    return -k if fin != 0 else k",),
) -> list[str]:
    """The loop over ticks ``name(params…)`` running ``body`` each tick; with ``state``, the
    state arrays saved at the tick's start and restored on a hand-back when ``save`` is set
    (``tables``: as the rows of the copy table ``SV``, :func:`~.lawfunc.copy_rows`).

    ``prologue``: lines before the loop; ``stopped``: what a hand-back at tick k does (return
    k); ``end``: the lines after the loop: return k, or −k when a law asked for the call to
    end after its tick (a negative result: :data:`~.law.STOP_AFTER`), k − 1 whole.  The CUDA
    tick (:mod:`~marinesim.engine.compiled.gpu`) writes its thread's world there."""
    if tables:
        save = ["            copy_rows(SV, 0)"]
        restore = ["                copy_rows(SV, 1)"]
    else:
        save = [f"            copy_into(s{i}, a{i})" for i in state]
        restore = [f"                copy_into(a{i}, s{i})" for i in state]
    return [
        f"def {name}({', '.join(x for x in params if x)}):",
        *prologue,
        "    k = k0",
        "    fin = 0",
        "    while k < kend:",
        "        j = k - k0 + j0",
        "        t = start + k * dt",
        *(["        if save != 0:", *save] if state else []),
        "        st = 0",
        *body,
        "        if st != 0:",
        *(["            if save != 0:", *restore] if state else []),
        *stopped,
        "        k += 1",
        "        if fin != 0:",
        "            break",
        *end,
    ]


def owner(decls: Sequence[Laws], key: str) -> tuple[int, str]:
    """The declaration (its index) that holds the array behind an argument key of
    :func:`tick_source` (``d:name``, or a wire: the first declaration of its scope that
    declares it) and the array's name there."""
    if not _is_wire(key):
        d, _, name = key.partition(":")
        return int(d), name
    return next(
        (d, n) for d, ls in enumerate(decls) for n in ls.arrays if _is_wire(n) and wire_key(ls, n) == key
    )


def array_of(decls: Sequence[Laws], key: str) -> Any:
    """The array behind an argument key of :func:`tick_source` (``d:name`` or a wire)."""
    d, name = owner(decls, key)
    return decls[d].arrays[name]


def arena_tables(arrays: Sequence[Any], saves: Sequence[tuple[Any, Any]] = ()) -> tuple[Any, ...] | None:
    """The tables the compiled tick takes instead of its arrays (argument order): every
    array's data address (``AD``) and its shape (``DM``, one after the other), and with
    ``saves`` (pairs of a state array and its save copy) the copy table ``SV`` (rows: the
    copy's address, the array's, the bytes), or None when an array is not C-contiguous (the
    laws' views would not be its elements)."""
    import numpy as np

    if not all(a.flags.c_contiguous for a in arrays):
        return None
    addr = np.array([a.ctypes.data for a in arrays], dtype=np.int64)
    dims = np.array([d for a in arrays for d in a.shape] or [0], dtype=np.int64)
    if not saves:
        return addr, dims
    sv = np.array([[s.ctypes.data, a.ctypes.data, a.nbytes] for a, s in saves], dtype=np.int64)
    return addr, dims, sv.reshape(-1, 3)


def shape_offsets(arrays: Sequence[Any]) -> list[int]:
    """Where each array's shape starts in the shape table of :func:`arena_tables`."""
    out, n = [], 0
    for a in arrays:
        out.append(n)
        n += a.ndim
    return out


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
    ``saved``) and of each of its law functions (:mod:`~marinesim.engine.compiled.lawfunc`)."""
    from marinesim.engine.compiled.lawfunc import all_cached

    path = _path(tick_source(decls)[0], decls)
    if not path.is_file():
        return False
    fn = compile_tick(decls, saved=saved)[0]
    return cached_machine_code(fn) and all_cached(tick_module(path))


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


def tick_module_of(decls: Sequence[Laws]) -> Any:
    """The generated module of the plugin set ``decls`` (written by :func:`compile_tick`)."""
    return tick_module(_path(tick_source(decls)[0], decls))


def jit_tick(mod: Any, *, saved: bool = True, prefix: str = "tick") -> Any:
    """The module's ``tick_loop`` (``saved``) or ``tick_run`` as numba compiles it (``njit``,
    disk cache, numpy's error model), made once per module; ``prefix``: another pair of loops
    of the same two signatures (``prof``: :mod:`~marinesim.engine.compiled.profile`)."""
    attr = f"_compiled_{prefix}_{'loop' if saved else 'run'}"
    fn = getattr(mod, attr, None)
    if fn is None:
        import numba

        fn = numba.njit(cache=True, error_model="numpy")(getattr(mod, f"{prefix}_{'loop' if saved else 'run'}"))
        setattr(mod, attr, fn)
    return fn


def write_once(path: Path, source: str) -> None:
    """Write a generated module whose name is the digest of ``source``, unless it exists.

    Written once and never replaced: numba's disk cache is stamped with the file's
    modification time, so a second write by a process starting at the same moment would
    void the machine code the first saves.
    """
    if path.is_file():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(source)
    try:
        os.link(tmp, path)  # atomic, and never over an existing file
    except FileExistsError:
        pass  # another process wrote it first: the same text
    finally:
        tmp.unlink()


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
    write_once(path, source)
    mod = tick_module(path)
    if interpreted:
        return (mod.py_loop if saved else mod.py_run), order, state
    return jit_tick(mod, saved=saved), order, state
