"""Whether numpy's float64 elementary functions give the C library's bits on this machine.

The compiled laws call the C library (numba lowers ``math.atan2`` and friends to libm); the
plugins' numpy expressions call numpy's ufuncs.  numpy dispatches some of those at run time
to SIMD code of its own: on a CPU with AVX-512 (``X86_V4`` in ``numpy.show_runtime()``, e.g.
Intel Skylake-SP and later, AMD Zen 4) ``arctan2``, ``arcsin``, ``exp``, ``log``, ``power``
and others come from vectorised implementations that differ from libm in the last bit for a
few percent of arguments (``sin``, ``cos`` and ``sqrt`` do not).  There the compiled tick and
the plugins' ticks agree to rounding (about 1e-16 relative per operation), not bit for bit;
elsewhere they agree bit for bit.  ``NPY_DISABLE_CPU_FEATURES=X86_V4``, set before numpy is
imported, makes numpy use libm's bits on such a CPU too.

:func:`numpy_matches_libm` tells which case this process is in, by evaluating the functions
the laws use on a fixed set of 1 536 arguments both ways (about 15 ms, once per process);
run manifests record it (``numpy_libm``).  :func:`libm_environment` gives the environment
under which a new process's numpy uses libm's bits (``marinesim batch`` starts its local
workers with it, so that a stacked world's results never depend on which worlds it is
stacked with: see docs/guide/worlds.md).
"""

from __future__ import annotations

import functools
import math
import os

import numpy as np

__all__ = ["libm_environment", "numpy_matches_libm"]


def _args() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Arguments over the ranges the laws see: angles, ratios in [−1, 1], small and large."""
    k = np.arange(512, dtype=float)
    x = np.concatenate([
        -10.0 + 20.0 * (k * 0.6180339887498949 % 1.0),
        -1.0 + 2.0 * (k * 0.7548776662466927 % 1.0),
        1e-3 * (-1.0 + 2.0 * (k * 0.5698402909980532 % 1.0)),
    ])  # fmt: skip
    y = -5.0 + 10.0 * (np.arange(x.size) * 0.4142135623730951 % 1.0)
    return x, y, np.abs(x) + 1e-3


@functools.cache
def numpy_matches_libm() -> bool:
    """True when numpy's float64 ``sin``, ``cos``, ``tan``, ``arcsin``, ``arccos``, ``arctan``,
    ``arctan2``, ``exp``, ``expm1``, ``log``, ``log1p``, ``log10`` and ``power`` give the C
    library's results bit for bit on a fixed sample of arguments (see the module)."""
    x, y, pos = _args()
    unary = (
        (np.sin, math.sin, x), (np.cos, math.cos, x), (np.tan, math.tan, x),
        (np.arcsin, math.asin, np.clip(x, -1.0, 1.0)), (np.arccos, math.acos, np.clip(x, -1.0, 1.0)),
        (np.arctan, math.atan, x), (np.exp, math.exp, x), (np.expm1, math.expm1, x),
        (np.log, math.log, pos), (np.log1p, math.log1p, pos), (np.log10, math.log10, pos),
    )  # fmt: skip
    for nf, mf, a in unary:
        if nf(a).tobytes() != np.array([mf(v) for v in a.tolist()]).tobytes():
            return False
    for nf, mf, a, b in ((np.arctan2, math.atan2, x, y), (np.power, math.pow, pos, y)):
        ref = np.array([mf(u, v) for u, v in zip(a.tolist(), b.tolist(), strict=True)])
        if nf(a, b).tobytes() != ref.tobytes():
            return False
    return True


def libm_environment() -> dict[str, str]:
    """Variables under which a new process's numpy gives libm's bits here: {} where it does
    already (or ``NPY_DISABLE_CPU_FEATURES`` is set: the user's choice), else
    ``NPY_DISABLE_CPU_FEATURES`` naming the AVX-512 groups numpy dispatches to on this CPU
    (``X86_V4 AVX512_ICL`` with numpy 2.4; ``AVX512F AVX512_SKX …`` with older numpy)."""
    if numpy_matches_libm() or os.environ.get("NPY_DISABLE_CPU_FEATURES"):
        return {}
    try:
        from numpy._core import _multiarray_umath as umath
    except ImportError:  # numpy < 2
        from numpy.core import _multiarray_umath as umath  # type: ignore[no-redef]
    found = getattr(umath, "__cpu_features__", {})
    off = [
        f for f in getattr(umath, "__cpu_dispatch__", ())
        if found.get(f) and (f == "X86_V4" or f.startswith("AVX512"))
    ]  # fmt: skip
    return {"NPY_DISABLE_CPU_FEATURES": " ".join(off)} if off else {}
