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
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeVar

__all__ = ["register_jitable"]

F = TypeVar("F", bound=Callable[..., Any])

_PENDING: list[Callable[..., Any]] = []
_LOCK = threading.Lock()
_TARGET = "numba.extending"


def _flush(module: ModuleType) -> None:
    with _LOCK:
        todo = list(_PENDING)
        _PENDING.clear()
    for fn in todo:
        module.register_jitable(fn)


class _Loader(importlib.abc.Loader):
    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.inner.exec_module(module)
        _flush(module)


class _Hook(importlib.abc.MetaPathFinder):
    def find_spec(
        self, name: str, path: Any, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if name != _TARGET:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _Loader(spec.loader)
                return spec
        return None


_HOOK = _Hook()


def register_jitable(fn: F) -> F:
    """Register ``fn`` with numba now if numba is loaded, else when it is (see module doc)."""
    mod = sys.modules.get(_TARGET)
    if mod is not None and hasattr(mod, "register_jitable"):
        mod.register_jitable(fn)
        return fn
    with _LOCK:
        _PENDING.append(fn)
        if _HOOK not in sys.meta_path:
            sys.meta_path.insert(0, _HOOK)
    return fn
