"""Test-suite guards: no global randomness anywhere in marinesim (engine spec §10.4).

numpy's legacy global functions and Python's ``random`` functions are wrapped for the whole
suite: a call made from a ``marinesim`` module raises, calls from elsewhere (hypothesis seeds
the global generators itself) go through.  Property tests run without hypothesis's
per-example deadline.
"""

from __future__ import annotations

import functools
import os
import random
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import settings

# No wall-clock deadline on property tests: their first example may include numba's compile
# (seconds on a cold cache or a loaded machine), and speed belongs in benchmarks/, not in a
# timed unit test.
settings.register_profile("marinesim", deadline=None)
settings.load_profile("marinesim")

# A run compiles its tick in its own process, waiting (marinesim.engine.compiled.background):
# the tests' figures of compiled ticks do not depend on how fast another process compiles.
# The tests of the background compile set it themselves.
os.environ.setdefault("MARINESIM_COMPILE", "wait")

_GLOBAL_NP = (
    "rand", "randn", "random", "random_sample", "normal", "uniform", "randint", "choice",
    "seed", "shuffle", "permutation", "standard_normal", "exponential", "poisson",
)
_GLOBAL_PY = ("random", "uniform", "gauss", "normalvariate", "randint", "choice", "seed", "shuffle")


def _guard(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if caller == "marinesim" or caller.startswith("marinesim."):
            raise AssertionError(f"{caller} used the global random state ({name})")
        return original(*args, **kwargs)

    return wrapper


@pytest.fixture(autouse=True)
def _no_global_rng(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _GLOBAL_NP:
        monkeypatch.setattr(np.random, name, _guard(f"np.random.{name}", getattr(np.random, name)))
    for name in _GLOBAL_PY:
        monkeypatch.setattr(random, name, _guard(f"random.{name}", getattr(random, name)))


@pytest.fixture
def nvvm() -> None:
    """Skip unless numba-cuda and CUDA's NVVM library are installed (the ``gpu`` extra):
    compiling a kernel to PTX needs them, not a GPU."""
    pytest.importorskip("numba_cuda", reason="numba-cuda is not installed (the gpu extra)")
    from numba.core import types

    from marinesim.core.compile import compile_ptx

    def k(a):  # noqa: ANN001, ANN202
        a[0] = 1.0

    try:
        compile_ptx(k, (types.float64[::1],))
    except Exception as exc:  # noqa: BLE001 - why it cannot compile is the skip reason
        pytest.skip(f"no NVVM to compile PTX with: {str(exc)[:200]}")
