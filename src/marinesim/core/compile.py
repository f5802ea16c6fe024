"""Compiled kernels from one per-row function: serial, parallel, CUDA or interpreted.

A law that runs on N rows (vehicles) is written once as ``one(i, *args)``, a plain function
registered with ``numba.extending.register_jitable`` that advances row ``i``.  :func:`kernels`
builds from it every way of walking the rows:

``serial`` / ``parallel``
    numba ``njit`` loops cached on disk (``cache=True``); the ``prange`` loop
    (``parallel=True``) from ``parallel_min`` rows on, the serial loop below (thread start-up
    costs more than it saves on a few rows).
``python``
    ``one`` interpreted in a Python loop (slow: a check on the compiled kernels, debugging).
``cuda``
    numba CUDA, ``one`` compiled as a device function, one thread per row (built on first
    use; :func:`require_cuda` raises :class:`~marinesim.core.errors.ConfigError` saying why
    when no device can run it).

Every row runs the same instructions whatever N is, so N = 1 and any N give bit-identical rows
on one backend.  Which backend names a layer accepts, and how it picks its default, is the
layer's own policy (``marinesim.models.sixdof.backends``, ``marinesim.allocation.kernels``); this
module only runs an already chosen name.

numba's disk cache checks only the file of the cached function (this module), not the
functions it calls: :func:`source_stamp` digests the sources and the digest is bound into the
kernels' closure, part of numba's cache key, so editing a law recompiles instead of loading
stale machine code.  The digest covers every module of the package (:func:`package_digest`),
not only the files a kernel names: a law calls laws of other packages, which call others, and
a list of them kept by hand went stale (an edited PID law left a stale EKF kernel loading).

numba names a compiled function's machine code by its qualified name and a counter of the
compiling process, so two kernels of one name and signature compiled by different processes
and loaded from the cache into a third could resolve to each other's code (a warm cache ran
the EKF's depth update law for its GPS updates): each kernel's loops are named after its stamp,
and laws built by a factory carry names of their own (``ekf_rows.update_law``).

numba is imported only when kernels are built or run (importing this module does not need it).
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from marinesim.core.errors import ConfigError

__all__ = [
    "BACKENDS",
    "PARALLEL_MIN",
    "SERIAL",
    "THREADS",
    "Kernels",
    "compile_ptx",
    "cuda_launch",
    "kernels",
    "require_cuda",
    "package_digest",
    "run_cuda",
    "source_stamp",
    "walk_rows",
    "tree_digest",
    "writable",
]

#: Every way :meth:`Kernels.launch` can run the rows.
BACKENDS = ("cpu", "python", "cuda")
#: Default row count from which the CPU runs the ``prange`` loop.
PARALLEL_MIN = 256
#: CUDA threads per block.
THREADS = 128
#: ``parallel_min`` of kernels that always walk their rows serially: a row costing well under
#: a microsecond, numba's worker threads (start-up, spin-waiting counted as CPU time) cost
#: more than a second core saves at any N the engine runs (``benchmarks/bench_survey.py``).
SERIAL = 1 << 62

cuda: Any = None  # numba.cuda once a CUDA kernel is built (a module global for the simulator)


def require_cuda(param: str = "backend", instead: str = "use backend 'cpu'") -> Any:
    """``numba.cuda`` when a CUDA device can run kernels (or numba's simulator is enabled).

    ``param`` names the setting that asked for CUDA and ``instead`` what to do instead, in
    the error.

    Raises
    ------
    ConfigError
        ``no CUDA device: …`` with the reason numba gives (no driver, no GPU, ...).
    """
    try:
        from numba import cuda as nb_cuda
    except ImportError as exc:  # pragma: no cover - numba ships numba.cuda
        raise ConfigError(
            f"no CUDA device: numba.cuda cannot be imported ({exc})", param=param
        ) from None
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return nb_cuda
    try:
        ok = nb_cuda.is_available()
    except Exception as exc:  # noqa: BLE001 - the driver's own error is the reason
        raise ConfigError(f"no CUDA device: {exc}", param=param) from None
    if not ok:
        raise ConfigError(
            "no CUDA device: numba finds no usable NVIDIA GPU/driver on this machine "
            f"({instead}; NUMBA_ENABLE_CUDASIM=1 runs the CUDA path in numba's simulator)",
            param=param,
        )
    return nb_cuda


def compile_ptx(fn: Any, sig: tuple, cc: tuple[int, int] = (9, 0)) -> str:
    """PTX of the kernel ``fn`` (a Python function) for argument types ``sig`` and compute
    capability ``cc`` (default 9.0: H100, H200): a check that a kernel and every law it calls
    compile for a device.  Needs numba-cuda and CUDA's NVVM library, not a GPU."""
    from numba import cuda as nb_cuda
    from numba.cuda import dispatcher

    # numba compiles the functions a kernel calls (overloads of the CUDA target) as device
    # functions for the current device's compute capability; without a device, ``cc``
    class _Device:
        compute_capability = cc

    current = dispatcher.get_current_device
    dispatcher.get_current_device = lambda: _Device
    try:
        ptx, _ret = nb_cuda.compile_ptx(fn, sig, cc=cc)
    finally:
        dispatcher.get_current_device = current
    return ptx


def cuda_launch(kernel: Any, n: int, *args: Any) -> None:
    """Launch a CUDA kernel with one thread per row (``n`` threads, blocks of :data:`THREADS`)."""
    blocks = max(1, (n + THREADS - 1) // THREADS)
    kernel[blocks, THREADS](*args)


def run_cuda(kernel: Any, n: int, args: tuple, results: dict[int, Any]) -> None:
    """Copy ``args`` to the device, launch ``kernel(n, *args)`` over ``n`` rows, copy back.

    ``results`` maps argument positions (in ``args``) to the host arrays that receive them.
    """
    nb_cuda = require_cuda()
    import numpy as np

    dev = [nb_cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
    cuda_launch(kernel, n, n, *dev)
    for k, host in results.items():
        dev[k].copy_to_host(host)


def source_stamp(one: Any, extra: Iterable[str | Path] = ()) -> str:
    """Digest (16 hex digits) of the sources kernels of ``one`` are compiled from.

    Parameters
    ----------
    one : function
        The per-row function: every ``*.py`` of its module's folder is digested.
    extra : iterable of path
        More sources: a file, or a folder (its ``*.py``), e.g. laws outside the package.

    The digest also covers :func:`package_digest` (every module of marinesim).
    """
    files = set(Path(sys.modules[one.__module__].__file__ or "").resolve().parent.glob("*.py"))
    for e in extra:
        p = Path(e).resolve()
        files.update(p.glob("*.py") if p.is_dir() else (p,))
    h = hashlib.sha256(package_digest().encode())
    for f in sorted(files):
        if f.is_file():
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


@functools.cache
def package_digest() -> str:
    """Digest of every ``*.py`` of the installed marinesim package (once per process, about
    30 ms): part of every compiled kernel's and generated tick's cache key."""
    return tree_digest(Path(__file__).resolve().parents[1])


def tree_digest(root: Path) -> str:
    """Digest of the names and contents of every ``*.py`` below ``root``."""
    h = hashlib.sha256()
    for f in sorted(root.rglob("*.py")):
        h.update(f.relative_to(root).as_posix().encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def lazy_kernels(one: Any, size: int | tuple[int, int], **options: Any) -> Any:
    """A function returning ``kernels(one, size, **options)``, built at its first call.

    The layer's numpy API calls it only when compiled laws are on (importing numba then).
    """
    built: list[Kernels] = []

    def get() -> Kernels:
        if not built:
            built.append(kernels(one, size, **options))
        return built[0]

    get.one = one  # type: ignore[attr-defined]  # (walk_rows interprets it without numba)
    return get


def writable(args: tuple) -> tuple:
    """``args`` with every read-only array (also within a tuple argument) replaced by a
    writable copy.

    numba types a read-only array apart from a writable one, and compiles a function once per
    argument types: a kernel launched with an engine's read-only view (a truth field, a
    cached parameter row) would compile its row function, and all it calls, a second time
    beside the generated tick, whose arrays are writable.  The kernels only read such inputs;
    in the bundled scenarios they are a few values each (a vehicle's pose, a thruster table).
    """
    import numpy as np

    if not any(
        (isinstance(a, np.ndarray) and not a.flags.writeable) or isinstance(a, tuple) for a in args
    ):
        return args
    return tuple(
        writable(a) if isinstance(a, tuple)
        else np.array(a) if isinstance(a, np.ndarray) and not a.flags.writeable else a
        for a in args
    )  # fmt: skip


def walk_rows(get: Any, n: int, args: tuple) -> None:
    """``one(i, *args)`` for every row i < ``n`` of a :func:`lazy_kernels` law: its compiled
    kernel when compiled laws are on (:func:`~marinesim.core.jitable.jit_enabled`), else the
    same function interpreted (``MARINESIM_JIT=0``), row by row."""
    from marinesim.core.jitable import jit_enabled

    if n and jit_enabled():
        get().launch("cpu", args)
    else:
        for i in range(n):
            get.one(i, *args)


@dataclass
class Kernels:
    """The kernels of one per-row function ``one(i, *args)`` (built by :func:`kernels`).

    ``size`` locates the array whose first axis is the row axis N: ``args[size]``, or
    ``args[size[0]][size[1]]`` when the arguments travel as tuples.
    """

    one: Any
    size: int | tuple[int, int]
    serial: Any
    parallel: Any
    parallel_min: int = PARALLEL_MIN
    _cuda: list[Any] = field(default_factory=list)

    def rows(self, args: tuple) -> int:
        """N, the number of rows ``args`` hold."""
        if isinstance(self.size, int):
            return int(args[self.size].shape[0])
        return int(args[self.size[0]][self.size[1]].shape[0])

    def cuda_kernel(self) -> Any:
        """The CUDA kernel (one thread per row), built on first use."""
        global cuda
        if not self._cuda:
            if not isinstance(self.size, int):
                raise ConfigError(
                    "backend 'cuda' takes flat array arguments, not (inputs, outputs) tuples",
                    param="backend",
                )
            cuda = require_cuda()
            one = self.one

            @cuda.jit
            def kernel(n, *args):  # noqa: ANN001, ANN002, ANN202
                i = cuda.grid(1)
                if i < n:
                    one(i, *args)

            self._cuda.append(kernel)
        return self._cuda[0]

    def ptx(self, args: tuple, cc: tuple[int, int] = (9, 0)) -> str:
        """The CUDA kernel of ``one`` compiled to PTX for the types of ``args`` (flat arrays
        and scalars, as :meth:`launch` takes them): see :func:`compile_ptx`."""
        import numba

        one = self.one
        names = ", ".join(f"a{i}" for i in range(len(args)))
        src = (
            f"def kernel(n, {names}):\n    i = cuda.grid(1)\n    if i < n:\n"
            f"        one(i, {names})\n"
        )
        from numba import cuda as nb_cuda

        ns: dict[str, Any] = {"cuda": nb_cuda, "one": one}
        exec(src, ns)  # noqa: S102 - a kernel of fixed arity for compile_ptx's signature
        sig = (numba.types.int64, *(numba.typeof(a) for a in args))
        return compile_ptx(ns["kernel"], sig, cc)

    def launch(self, backend: str, args: tuple, results: dict[int, Any] | None = None) -> None:
        """Run ``one`` for every row of ``args`` on ``backend`` (a name of :data:`BACKENDS`).

        ``results`` maps argument positions to the host arrays the kernel writes (copied
        back from a GPU; the CPU backends write them in place).

        Raises
        ------
        ConfigError
            A name not in :data:`BACKENDS`, or ``cuda`` without a usable device.
        """
        n = self.rows(args)
        if backend == "cpu":
            (self.parallel if n >= self.parallel_min else self.serial)(n, *writable(args))
        elif backend == "python":
            for i in range(n):
                self.one(i, *args)
        elif backend == "cuda":
            run_cuda(self.cuda_kernel(), n, args, results or {})
        else:
            raise ConfigError(
                f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}",
                param="backend",
            )


def kernels(
    one: Any,
    size: int | tuple[int, int],
    *,
    stamp: str | None = None,
    parallel_min: int = PARALLEL_MIN,
    error_model: str = "python",
) -> Kernels:
    """Serial and ``prange`` CPU kernels (cached on disk) and a CUDA kernel of ``one``.

    Parameters
    ----------
    one : function
        ``one(i, *args)`` advances row ``i``; registered with ``register_jitable``.
    size : int or (int, int)
        Where the row axis is: ``args[size]``, or ``args[size[0]][size[1]]`` when the
        arguments are two tuples ``(ins, outs)`` (then ``one(i, ins, outs)``; CPU and
        ``python`` only).
    stamp : str, optional
        Cache key of the sources (:func:`source_stamp`); default: ``one``'s own package.
    parallel_min : int
        Rows from which ``cpu`` runs the ``prange`` loop.
    error_model : {"python", "numpy"}
        numba's error model (``"numpy"``: no zero-divisor checks).
    """
    import numba
    import numba.extending

    key = source_stamp(one) if stamp is None else stamp
    if not key:
        raise ValueError("the source stamp must not be empty")
    key = f"{key}|{error_model}"  # numba's cache key does not hold the error model: the stamp does
    opts = {"cache": True, "error_model": error_model}
    # the loops call ``one`` through ``row``, a compiled function of its own: numba compiles a
    # registered function once per set of its caller's options (and argument types), and a
    # kernel (called from Python) has other options than a law of the generated tick (called
    # from compiled code), which calls ``one`` directly; through ``row`` both callers of ``one``
    # have the same options, so a process that runs the plugins' kernels and then compiles the
    # tick compiles ``one`` and what it calls once where the error model and the arguments'
    # types are the same (a fresh BlueROV2 or REMUS 100 run compiled its 6-DOF step twice)
    if isinstance(size, int):

        def row(i, *args):  # noqa: ANN001, ANN002, ANN202
            one(i, *args)

        def serial(n, *args):  # noqa: ANN001, ANN002, ANN202
            if len(key) == 0:  # the stamp is in the closure, hence in numba's cache key
                return
            for i in range(n):
                row(i, *args)

        def parallel(n, *args):  # noqa: ANN001, ANN002, ANN202
            if len(key) == 0:
                return
            for i in numba.prange(n):
                row(i, *args)

    else:  # two tuples (inputs, outputs): named, as a parfor takes no tuple of tuples

        def row(i, ins, outs):  # noqa: ANN001, ANN202
            one(i, ins, outs)

        def serial(n, ins, outs):  # noqa: ANN001, ANN202
            if len(key) == 0:
                return
            for i in range(n):
                row(i, ins, outs)

        def parallel(n, ins, outs):  # noqa: ANN001, ANN202
            if len(key) == 0:
                return
            for i in numba.prange(n):
                row(i, ins, outs)

    # a name of its own per stamp: numba's symbol of a compiled function is its qualified name
    # plus a counter of the compiling process, so two kernels of one signature cached by
    # different processes could resolve to each other's code when loaded together
    # (and per function: kernels of two functions of one folder share their stamp)
    tag = hashlib.sha256(f"{key}|{one.__module__}.{one.__qualname__}".encode()).hexdigest()[:16]
    for fn in (row, serial, parallel):
        fn.__name__ = fn.__qualname__ = f"{fn.__name__}_{tag}"
    numba.extending.register_jitable(row)
    serial = numba.njit(**opts)(serial)
    parallel = numba.njit(parallel=True, **opts)(parallel)
    return Kernels(one, size, serial, parallel, parallel_min)
