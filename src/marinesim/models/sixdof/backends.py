"""Backends of the compiled models: one source, three ways to run it.

Each model is written once as plain per-vehicle functions (``register_jitable``); a backend
only decides how the vehicles are walked (the launchers are :mod:`marinesim.core.compile`'s;
this module holds the models' policy: the names, the default, the sources of the cache key):

``"cpu"`` (default)
    numba ``njit`` kernels, ``prange`` over vehicles (``parallel=True``) above
    :data:`PARALLEL_MIN` vehicles and a serial loop below it; cached on disk (``cache=True``).
``"python"``
    the same functions interpreted, a loop over vehicles — slow; for checking the compiled
    kernels and for debugging.
``"cuda"``
    numba CUDA: the same functions compiled as device functions, one thread per vehicle.
    Needs an NVIDIA GPU with a working driver; otherwise :func:`resolve` raises
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
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from marinesim.core import compile as cc
from marinesim.core.compile import BACKENDS, PARALLEL_MIN, Kernels
from marinesim.core.errors import ConfigError

__all__ = ["BACKENDS", "PARALLEL_MIN", "Kernels", "kernels", "resolve", "source_stamp"]

_HERE = Path(__file__).resolve().parent


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
        cc.require_cuda()
    return name


def source_stamp(one: Any, extra: Iterable[str | Path] = ()) -> str:
    """Digest of the sources a model kernel of ``one`` is compiled from
    (:func:`marinesim.core.compile.source_stamp`): ``one``'s package,
    :mod:`marinesim.models.sixdof` (its laws and integrator stages),
    :mod:`marinesim.core.frames` and ``extra`` (files, or folders of ``*.py``)."""
    core = _HERE.parents[1] / "core"
    return cc.source_stamp(one, (_HERE, core / "frames.py", *extra))


def kernels(one: Any, size_arg: int, extra: Iterable[str | Path] = ()) -> Kernels:
    """Serial and ``prange`` CPU kernels (cached on disk) and a CUDA kernel of ``one``.

    Parameters
    ----------
    one : function
        ``one(i, *args)`` advances vehicle ``i``; registered with ``register_jitable``.
    size_arg : int
        Position in ``args`` of an array whose first axis is the vehicle axis N.
    extra : iterable of path
        Sources of laws ``one`` calls beyond those of :func:`source_stamp` (cache key).
    """
    # numpy's error model, as the generated tick that calls the same functions: a zero
    # divisor gives inf/NaN (the divergence guard reports it) instead of an exception, and
    # one compile of the functions serves both the kernels and the tick
    return cc.kernels(one, size_arg, stamp=source_stamp(one, extra), error_model="numpy")
