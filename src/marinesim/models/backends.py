"""Backends of the compiled models: one source, three ways to run it.

Each model is written once as plain per-vehicle functions (``register_jitable``); a backend
only decides how the vehicles are walked:

``"cpu"`` (default)
    numba ``njit`` kernels, ``prange`` over vehicles (``parallel=True``) above
    :data:`PARALLEL_MIN` vehicles and a serial loop below it; cached on disk (``cache=True``).
``"python"``
    the same functions interpreted, a loop over vehicles — slow; for checking the compiled
    kernels and for debugging.
``"cuda"``
    numba CUDA: the same functions compiled as device functions, one thread per vehicle.
    Needs an NVIDIA GPU with a working driver; otherwise :func:`require_cuda` raises
    :class:`~marinesim.core.errors.ConfigError` saying why.

Tolerances: on one backend, N = 1 and every N give bit-identical results (each vehicle runs
the same instructions).  ``cpu`` and ``python`` differ only where LLVM's and the C library's
``sin``/``cos``/``atan2``/``exp`` round differently (≤ 1 ulp per call); the tests hold them to
1e-12 relative per signal.  CUDA contracts a·b + c into fused multiply-adds, so it is held to
the same 1e-12 against ``cpu`` when a device is present.

The default backend is ``cpu``; the environment variable ``MARINESIM_BACKEND`` changes it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numba

from marinesim.core.errors import ConfigError

__all__ = [
    "BACKENDS",
    "PARALLEL_MIN",
    "Kernels",
    "cuda_launch",
    "kernels",
    "require_cuda",
    "resolve",
    "run_cuda",
]

BACKENDS = ("cpu", "python", "cuda")
#: Below this many vehicles the CPU kernels run serially (thread start-up costs more).
PARALLEL_MIN = 256
_THREADS = 128


def resolve(backend: str | None = None) -> str:
    """The backend to use: ``backend``, else ``$MARINESIM_BACKEND``, else ``"cpu"``.

    Raises
    ------
    ConfigError
        Unknown name (the allowed ones are listed), or ``"cuda"`` without a usable device.
    """
    name = backend or os.environ.get("MARINESIM_BACKEND") or "cpu"
    if name not in BACKENDS:
        raise ConfigError(
            f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}", param="backend"
        )
    if name == "cuda":
        require_cuda()
    return name


def require_cuda() -> Any:
    """``numba.cuda`` when a CUDA device can run kernels (or the simulator is enabled).

    Raises
    ------
    ConfigError
        ``no CUDA device: …`` with the reason numba gives (no driver, no GPU, ...).
    """
    try:
        from numba import cuda
    except ImportError as exc:  # pragma: no cover - numba ships numba.cuda
        raise ConfigError(f"no CUDA device: numba.cuda cannot be imported ({exc})") from None
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return cuda
    try:
        ok = cuda.is_available()
    except Exception as exc:  # noqa: BLE001 - the driver's own error is the reason
        raise ConfigError(f"no CUDA device: {exc}", param="backend") from None
    if not ok:
        raise ConfigError(
            "no CUDA device: numba finds no usable NVIDIA GPU/driver on this machine "
            "(use backend 'cpu'; NUMBA_ENABLE_CUDASIM=1 runs the CUDA path in numba's "
            "simulator)",
            param="backend",
        )
    return cuda


def cuda_launch(kernel: Any, n: int, *args: Any) -> None:
    """Launch a CUDA kernel with one thread per vehicle (``n`` threads, blocks of 128)."""
    blocks = max(1, (n + _THREADS - 1) // _THREADS)
    kernel[blocks, _THREADS](*args)


def run_cuda(kernel: Any, n: int, args: tuple, results: dict[int, Any]) -> None:
    """Copy ``args`` to the device, launch ``kernel`` over ``n`` vehicles, copy back.

    ``results`` maps argument positions to the host arrays that receive them.
    """
    cuda = require_cuda()
    import numpy as np

    dev = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
    cuda_launch(kernel, n, *dev)
    for k, host in results.items():
        dev[k].copy_to_host(host)


cuda: Any = None  # numba.cuda once a CUDA kernel is built (a module global for the simulator)


@dataclass
class Kernels:
    """The kernels of one per-vehicle step function ``one(i, *args)`` (:func:`kernels`)."""

    one: Any
    size_arg: int
    serial: Any
    parallel: Any
    _cuda: list[Any] = field(default_factory=list)

    def cuda_kernel(self) -> Any:
        """The CUDA kernel (one thread per vehicle), built on first use."""
        global cuda
        if not self._cuda:
            cuda = require_cuda()
            one, k = self.one, self.size_arg

            @cuda.jit
            def kernel(*args):  # noqa: ANN002, ANN202
                i = cuda.grid(1)
                if i < args[k].shape[0]:
                    one(i, *args)

            self._cuda.append(kernel)
        return self._cuda[0]

    def launch(self, backend: str | None, args: tuple, results: dict[int, Any]) -> None:
        """Run ``one`` for every vehicle (``args[size_arg].shape[0]`` of them) on a backend.

        ``results`` maps argument positions to the host arrays the kernel writes (copied
        back from a GPU).
        """
        name = resolve(backend)
        n = args[self.size_arg].shape[0]
        if name == "cpu":
            (self.parallel if n >= PARALLEL_MIN else self.serial)(*args)
        elif name == "python":
            for i in range(n):
                self.one(i, *args)
        else:
            run_cuda(self.cuda_kernel(), n, args, results)


def source_stamp(one: Any) -> str:
    """Digest of the sources a kernel of ``one`` is compiled from.

    numba's disk cache checks only the file of the cached function (here this module), not the
    functions it calls; the digest is bound into the kernels (a closure constant, part of
    numba's cache key), so editing any of these files recompiles instead of loading stale
    machine code: ``one``'s module, every module of its package, :mod:`marinesim.models.sixdof`,
    :mod:`marinesim.models.integrate` and :mod:`marinesim.core.frames`.
    """
    import hashlib
    import sys
    from pathlib import Path

    here = Path(__file__).resolve().parent
    files = {
        *Path(sys.modules[one.__module__].__file__ or "").resolve().parent.glob("*.py"),
        *(here / "sixdof").glob("*.py"),
        here / "integrate.py",
        here.parent / "core" / "frames.py",
    }
    h = hashlib.sha256()
    for f in sorted(files):
        if f.is_file():
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def kernels(one: Any, size_arg: int) -> Kernels:
    """Serial and ``prange`` CPU kernels (cached on disk) and a CUDA kernel of ``one``.

    Parameters
    ----------
    one : function
        ``one(i, *args)`` advances vehicle ``i``; registered with ``register_jitable``.
    size_arg : int
        Position in ``args`` of an array whose first axis is the vehicle axis N.
    """
    stamp = source_stamp(one)  # in the closure, hence in numba's cache key

    @numba.njit(cache=True)
    def serial(*args):  # noqa: ANN002, ANN202
        if len(stamp) == 0:
            return
        for i in range(args[size_arg].shape[0]):
            one(i, *args)

    @numba.njit(cache=True, parallel=True)
    def parallel(*args):  # noqa: ANN002, ANN202
        if len(stamp) == 0:
            return
        for i in numba.prange(args[size_arg].shape[0]):
            one(i, *args)

    return Kernels(one, size_arg, serial, parallel)
