"""``register_jitable`` without importing numba until something compiled needs it.

:mod:`marinesim.core.frames` holds laws that run as plain Python/numpy *and* inside numba
code; numba must know them (``numba.extending.register_jitable``) before compiled code that
calls them is typed.  Importing numba costs about 0.7 s of CPU and 70 MB of memory, which the
processes that never compile (``marinesim moos`` as uSimMarine, the moos batch workers) should
not pay at start-up.  :func:`register_jitable` here registers at once when
``numba.extending`` is already loaded; otherwise it notes the function and registers every
noted one right after ``numba.extending`` is first imported (an import hook), which every
module that compiles does before its code is typed.  The function itself is returned
unchanged either way, as numba's own decorator does.

The same hook makes numba's disk cache safe for concurrent processes
(:mod:`marinesim.core.numba_cache`): :func:`arm`, called by ``import marinesim``, patches it
now when ``numba.core.caching`` is loaded, else right after it loads (``import numba`` loads
it).  Nothing here imports numba.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeVar

__all__ = ["INLINE", "arm", "jit_enabled", "register_jitable"]

F = TypeVar("F", bound=Callable[..., Any])

_PENDING: list[Callable[..., Any]] = []
_LOCK = threading.Lock()
_TARGET = "numba.extending"
_CACHING = "numba.core.caching"


def _patch_cache(module: ModuleType) -> None:
    from marinesim.core import numba_cache

    numba_cache.install(module)


def _flush(module: ModuleType) -> None:
    with _LOCK:
        todo = list(_PENDING)
        _PENDING.clear()
    for fn in todo:
        module.register_jitable(fn)


class _Loader:  # the loader protocol (importlib.abc costs import time)
    def __init__(self, inner: Any, after: Callable[[ModuleType], None]) -> None:
        self.inner = inner
        self.after = after

    def create_module(self, spec: Any) -> ModuleType | None:
        return self.inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.inner.exec_module(module)
        self.after(module)


class _Hook:  # the meta path finder protocol
    def find_spec(self, name: str, path: Any, target: ModuleType | None = None) -> Any:
        after = _AFTER.get(name)
        if after is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _Loader(spec.loader, after)
                return spec
        return None


#: What runs right after each watched module has loaded.
_AFTER: dict[str, Callable[[ModuleType], None]] = {_TARGET: _flush, _CACHING: _patch_cache}
_HOOK = _Hook()


def _hook() -> None:
    with _LOCK:
        if _HOOK not in sys.meta_path:
            sys.meta_path.insert(0, _HOOK)


def arm() -> None:
    """Make numba's disk cache process-safe now if numba is loaded, else once it loads."""
    mod = sys.modules.get(_CACHING)
    if mod is not None and hasattr(mod, "IndexDataCacheFile"):
        _patch_cache(mod)
    else:
        _hook()


def register_jitable(fn: F) -> F:
    """Register ``fn`` with numba now if numba is loaded, else when it is (see module doc)."""
    mod = sys.modules.get(_TARGET)
    if mod is not None and hasattr(mod, "register_jitable"):
        mod.register_jitable(fn)
        return fn
    with _LOCK:
        _PENDING.append(fn)
    _hook()
    return fn


_NUMBA: list[bool] = []


def _inline() -> str:
    import importlib.util

    return "never" if importlib.util.find_spec("numba_cuda") is not None else "always"


#: ``inline=`` of the 6-DOF models' small terms (``register_jitable(inline=INLINE)``):
#: ``"always"``, numba inlining them in its own IR (about a third more REMUS 100 steps a
#: second on the CPU than calls LLVM does not inline), unless numba-cuda is installed: its CUDA
#: target cannot compile a function registered so once the CPU has compiled it in the same
#: process, so with the ``gpu`` extra they are plain calls (the same bits either way).
INLINE = _inline()


def jit_enabled() -> bool:
    """True when compiled laws may run: ``MARINESIM_JIT`` is not ``0`` and numba imports.

    The environment is read at every call (a test or a user may switch routes mid-process);
    whether numba imports is found once (the first call imports it).
    """
    if os.environ.get("MARINESIM_JIT", "1") == "0":
        return False
    if not _NUMBA:
        try:
            import numba  # noqa: F401

            _NUMBA.append(True)
        except ImportError:  # pragma: no cover - numba is a dependency
            _NUMBA.append(False)
    return _NUMBA[0]
