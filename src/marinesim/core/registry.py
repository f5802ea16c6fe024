"""Registry of named implementations (motion models, plugins, actuator variants, ...).

Entries are ``"module:Attr"`` strings imported lazily on first use, so importing marinesim
costs nothing and the layers stay independent.  A failed lookup raises
:class:`~marinesim.core.errors.UnknownNameError` with close matches.

Where entries come from (read once, at the first ``register``/``get``/``names``/``known``):

* **each package's own declarations**: a subpackage of marinesim that provides entries ships a
  ``registry.toml`` beside its ``__init__.py``, one table per kind, ``name = "module:Attr"``,
  and may only name targets inside itself.  This module finds those files by looking at the
  package's folders; it names no package above it, so the layers hold (``core`` knows no
  upper layer, the engine reaches the scenario loader and the run-log backend by kind and
  name only);
* **third parties**: the entry-point group ``marinesim.plugins`` (entry-point name
  ``"<kind>/<name>"``, value ``"module:Attr"``);
* :func:`register` at run time (objects or strings).

Duplicate names raise :class:`~marinesim.core.errors.ConfigError`.
"""

from __future__ import annotations

import importlib
import threading
import tomllib
from importlib import metadata, resources
from typing import Any

from marinesim.core.errors import ConfigError, UnknownNameError

__all__ = ["DECLARATIONS", "get", "known", "names", "register", "resolve"]

#: File name of a package's registry declarations.
DECLARATIONS = "registry.toml"

#: Root package whose subpackages may declare entries (this module's top-level package).
_ROOT = __name__.split(".", 1)[0]

#: (kind, name) -> "module:Attr", not imported yet.
_TARGETS: dict[tuple[str, str], str] = {}
#: (kind, name) -> the imported (or registered) object.
_LOADED: dict[tuple[str, str], Any] = {}
_DISCOVERED = False
_LOCK = threading.RLock()


def register(kind: str, name: str, target: str | Any, *, replace: bool = False) -> None:
    """Register ``target`` (an object or a ``"module:Attr"`` string) as ``name`` of ``kind``.

    Raises
    ------
    ConfigError
        If the name is already registered for that kind and ``replace`` is false.
    """
    _discover()
    key = (kind, name)
    if not replace and (key in _TARGETS or key in _LOADED):
        raise ConfigError(f"duplicate {kind} name {name!r}: it is already registered")
    if isinstance(target, str):
        _TARGETS[key] = target
        _LOADED.pop(key, None)
    else:
        _TARGETS.pop(key, None)
        _LOADED[key] = target


def _add(found: dict[tuple[str, str], str], kind: str, name: str, target: str, origin: str) -> None:
    key = (kind, name)
    if key in found or key in _TARGETS or key in _LOADED:
        raise ConfigError(f"{origin}: {kind} name {name!r} of {target!r} is already registered")
    found[key] = target


def _read_declarations(found: dict[tuple[str, str], str]) -> None:
    """Add the ``registry.toml`` entries of every subpackage (sorted by package name)."""
    root = resources.files(_ROOT)
    for folder in sorted(root.iterdir(), key=lambda p: p.name):
        decl = folder.joinpath(DECLARATIONS)
        if not decl.is_file():
            continue
        package = f"{_ROOT}.{folder.name}"
        origin = f"{package}/{DECLARATIONS}"
        try:
            table = tomllib.loads(decl.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"{origin}: cannot read registry declarations: {exc}") from None
        for kind, entries in table.items():
            if not isinstance(entries, dict):
                raise ConfigError(f"{origin}: [{kind}] must be a table of name = 'module:Attr'")
            for name, target in entries.items():
                module = target.partition(":")[0] if isinstance(target, str) else ""
                if module != package and not module.startswith(package + "."):
                    raise ConfigError(
                        f"{origin}: {kind} {name!r} = {target!r}: a package declares only "
                        f"its own modules ({package}.…)"
                    )
                _add(found, kind, name, target, origin)


def _read_entry_points(found: dict[tuple[str, str], str]) -> None:
    try:
        eps = metadata.entry_points(group="marinesim.plugins")
    except Exception:  # pragma: no cover - broken metadata of another package
        return
    for ep in eps:
        if "/" not in ep.name:
            continue
        kind, name = ep.name.split("/", 1)
        _add(found, kind, name, ep.value, f"entry point {ep.name!r}")


def _discover() -> None:
    """Read the declarations and entry points once (all or nothing; thread-safe)."""
    global _DISCOVERED
    if _DISCOVERED:
        return
    with _LOCK:
        if _DISCOVERED:
            return
        found: dict[tuple[str, str], str] = {}
        _read_declarations(found)
        _read_entry_points(found)
        _TARGETS.update(found)
        _DISCOVERED = True


def resolve(target: str) -> Any:
    """Import ``"package.module:Attr"`` and return the attribute."""
    module_name, _, attr = target.partition(":")
    module = importlib.import_module(module_name)
    obj: Any = module
    for part in attr.split(".") if attr else []:
        obj = getattr(obj, part)
    return obj


def names(kind: str) -> list[str]:
    """Sorted registered names of one kind."""
    _discover()
    return sorted({n for (k, n) in list(_TARGETS) + list(_LOADED) if k == kind})


def known() -> dict[str, list[str]]:
    """All kinds and their names."""
    _discover()
    kinds = sorted({k for (k, _) in list(_TARGETS) + list(_LOADED)})
    return {k: names(k) for k in kinds}


def get(kind: str, name: str, *, label: str | None = None) -> Any:
    """Return the implementation registered as ``name`` of ``kind`` (imported on first use).

    Parameters
    ----------
    kind : str
        Registry kind, e.g. ``"motion"``.
    name : str
        Registered name, e.g. ``"usm"``.
    label : str, optional
        How to call the kind in an error (default: ``kind`` with underscores as blanks,
        e.g. ``"motion model"`` can be passed for motion).

    Raises
    ------
    UnknownNameError
        With did-you-mean suggestions and the list of known names.
    """
    _discover()
    key = (kind, name)
    if key in _LOADED:
        return _LOADED[key]
    if key not in _TARGETS:
        raise UnknownNameError(label or kind.replace("_", " "), name, names(kind))
    obj = resolve(_TARGETS[key])
    _LOADED[key] = obj
    return obj
