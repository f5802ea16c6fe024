"""Register marinesim's Gymnasium environments when both packages are imported, in any order.

Gymnasium (1.x) has no plugin entry points, so ``gymnasium.make("marinesim/UsmWaypoint-v0")``
finds the ids only after something registered them.  ``import marinesim`` calls
:func:`install`, which must not import Gymnasium (0.6 s; most users of marinesim never need
it):

* Gymnasium already imported: register now (:func:`marinesim.gym.register_envs`);
* otherwise: put a one-shot finder on ``sys.meta_path`` that lets the normal machinery load
  ``gymnasium`` and registers right after its module has run; the finder removes itself on
  first use and changes nothing else about the import.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["install"]


def _register() -> None:
    pending = sys.modules.get("marinesim.gym")
    if pending is not None and not hasattr(pending, "register_envs"):
        return  # marinesim.gym is importing gymnasium: it registers at the end of its import
    try:
        from marinesim.gym import register_envs

        register_envs()
    except Exception as exc:  # never break the user's import of gymnasium
        import warnings

        warnings.warn(
            f"marinesim could not register its Gymnasium environments: {exc}",
            RuntimeWarning,
            stacklevel=2,
        )


class _Loader:  # the loader protocol (no importlib.abc: it costs import time)
    """Runs gymnasium's own loader, then registers and puts the original loader back."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader

    def create_module(self, spec: Any) -> Any:
        return self.loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        try:
            self.loader.exec_module(module)
        finally:
            module.__loader__ = self.loader
            if getattr(module, "__spec__", None) is not None:
                module.__spec__.loader = self.loader
        _register()


class _Finder:  # the meta path finder protocol
    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "gymnasium":
            return None
        import importlib.util

        if self in sys.meta_path:
            sys.meta_path.remove(self)  # one shot; find_spec below uses the other finders
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _Loader(spec.loader)
        return spec


def install() -> None:
    """Register now if Gymnasium is loaded, else once it is imported (idempotent)."""
    if "gymnasium" in sys.modules:
        _register()
    elif not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
