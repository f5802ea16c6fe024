"""Plugin documentation generated from the code: parameter tables and scenario examples.

Used by ``marinesim plugins show NAME [--example]``; nothing here is written by hand per
plugin, so the help cannot drift from the ``Params`` models.
"""

from __future__ import annotations

import types
import typing
from typing import Any

import yaml
from pydantic import BaseModel
from pydantic_core import PydanticUndefined, to_jsonable_python

from marinesim.core import registry
from marinesim.core.errors import ConfigError, UnknownNameError
from marinesim.core.params import field_units
from marinesim.engine.plugin import overridden_hooks

__all__ = [
    "PLUGIN_KINDS",
    "find_plugin",
    "param_rows",
    "plugin_example",
    "plugin_info",
    "plugin_interface",
]

PLUGIN_KINDS = ("motion", "controller", "autonomy", "sensor", "interaction", "metric")


def find_plugin(name: str, kind: str | None = None) -> tuple[str, Any]:
    """(kind, class) of a registered plugin; unknown names raise with suggestions."""
    kinds = [kind] if kind else list(PLUGIN_KINDS)
    hits = [k for k in kinds if name in registry.names(k)]
    if not hits:
        known = sorted({n for k in kinds for n in registry.names(k)})
        raise UnknownNameError("plugin", name, known)
    if len(hits) > 1:
        raise ConfigError(f"plugin name {name!r} exists as {', '.join(hits)}; pass --kind")
    return hits[0], registry.get(hits[0], name)


def _type_name(ann: Any) -> str:
    """A user's name for a parameter's type: ``table`` for nested parameter blocks.

    Nested blocks (pydantic models) read as ``table``; ``X | None`` reads as ``X, optional``;
    internal module paths never show.
    """
    args = [a for a in typing.get_args(ann) if a is not type(None)]
    optional = len(args) < len(typing.get_args(ann))
    if args and (optional or typing.get_origin(ann) in (typing.Union, types.UnionType)):
        inner = " | ".join(_type_name(a) for a in args)
        return f"{inner}, optional" if optional else inner
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return "table"
    origin = typing.get_origin(ann)
    if origin is typing.Literal:
        return "one of " + ", ".join(str(a) for a in typing.get_args(ann))
    if origin is not None:
        return getattr(origin, "__name__", str(origin))
    text = getattr(ann, "__name__", None) or str(ann)
    return text.replace("typing.", "").rsplit(".", 1)[-1]


def param_rows(cls: Any) -> list[tuple[str, str, str, str, str]]:
    """(name, type, default, unit, description) of every parameter of a plugin class."""
    if hasattr(cls, "param_rows"):
        return list(cls.param_rows())
    model = cls.Params
    units = field_units(model)
    rows = []
    for fname, info in model.model_fields.items():
        if info.default is PydanticUndefined and info.default_factory is None:
            default = "(required)"
        elif info.default_factory is not None:
            default = repr(info.default_factory())
        else:
            default = repr(info.default)
        rows.append(
            (
                fname,
                _type_name(info.annotation),
                default,
                units.get(fname, ""),
                info.description or "",
            )
        )
    return rows


def plugin_info(name: str, kind: str | None = None) -> str:
    """Text shown by ``marinesim plugins show NAME``."""
    k, cls = find_plugin(name, kind)
    lines = [f"{name} ({k} plugin, {cls.__module__}:{cls.__qualname__})", f"  {cls.describe()}", ""]
    subs, pubs = _topics(cls, name)
    docs = cls.topic_docs() if hasattr(cls, "topic_docs") else {}

    def topic(t: str, ty: str) -> str:  # "DESIRED_RUDDER (double, %)": the unit where known
        unit = docs.get(t, ("", ""))[0]
        return f"{t} ({ty}, {unit})" if unit else f"{t} ({ty})"

    lines.append("hooks: " + ", ".join(overridden_hooks(cls)))
    lines.append("subscribes: " + (", ".join(topic(t, ty) for t, ty in subs.items()) or "-"))
    lines.append("publishes: " + (", ".join(topic(t, ty) for t, ty in pubs.items()) or "-"))
    flags = [f for f in ("writes_belief", "reads_truth", "reports_done") if getattr(cls, f, False)]
    if flags:
        lines.append("flags: " + ", ".join(flags))
    lines.append("")
    rows = param_rows(cls)
    lines.append("parameters:")
    if not rows:
        lines.append("  (none)")
    w = max((len(r[0]) for r in rows), default=4)
    for pname, typ, default, unit, desc in rows:
        u = f" [{unit}]" if unit else ""
        lines.append(f"  {pname:<{w}}  {typ:<18} default {default}{u}  {desc}")
    lines.append("")
    lines.append(
        "scheduling keys of the scenario entry: rate_hz [Hz], offset_ticks, uses_truth (controllers/autonomies)"
    )
    return "\n".join(lines)


def _topics(cls: Any, name: str) -> tuple[dict[str, str], dict[str, str]]:
    """(subscribes, publishes) of a default instance, else the class declarations."""
    try:
        inst = cls(name) if not hasattr(cls, "build_params") else cls(name, cls.build_params({})[0])
        return dict(inst.subscribes), dict(inst.publishes)
    except Exception:  # plugins with required params: use the class declarations
        return dict(cls.subscribes), dict(cls.publishes)


def plugin_interface(name: str, kind: str | None = None) -> str:
    """Text shown by ``marinesim plugins show NAME --interface``.

    The topics come from the plugin's ``subscribes`` / ``publishes`` declarations (of an
    instance with default parameters) and their units and meanings from ``topic_docs()``,
    so the text cannot drift from the code.

    Parameters
    ----------
    name : str
        Registered plugin name.
    kind : str, optional
        Plugin kind, when the name is registered under several.

    Returns
    -------
    str
        Hooks, flags, then the SUBSCRIPTIONS and PUBLICATIONS tables (topic, type, unit,
        description).
    """
    k, cls = find_plugin(name, kind)
    subs, pubs = _topics(cls, name)
    docs = cls.topic_docs() if hasattr(cls, "topic_docs") else {}
    bar = "=" * 70
    lines = [bar, f"{name} INTERFACE ({k} plugin, {cls.__module__}:{cls.__qualname__})", bar, ""]
    lines.append("hooks: " + (", ".join(overridden_hooks(cls)) or "-"))
    flags = [
        f
        for f in ("writes_belief", "reads_truth", "writes_truth", "reads_all_truth", "reports_done")
        if getattr(cls, f, False)
    ]
    lines.append("flags: " + (", ".join(flags) or "-"))
    for title, topics in (("SUBSCRIPTIONS", subs), ("PUBLICATIONS", pubs)):
        lines += ["", f"{title}:", "-" * 70]
        if not topics:
            lines.append("  (none)")
            continue
        w = max(len(t) for t in topics)
        for topic, typ in topics.items():
            unit, desc = docs.get(topic, ("", ""))
            lines.append(f"  {topic:<{w}}  {typ:<7} {unit or '-':<8} {desc}".rstrip())
    if "*" in pubs:
        lines += ["", "'*': any variable (the topics are those of the script entries)"]
    return "\n".join(lines) + "\n"


def plugin_example(name: str, kind: str | None = None) -> str:
    """A scenario entry (YAML) with every parameter at its default (``--example``).

    Parameters without a default value (None) are left out; the class's ``example_params``
    fill in what is required, so the printed entry is valid as it stands.
    """
    k, cls = find_plugin(name, kind)
    params: dict[str, Any] = {}
    fields = getattr(getattr(cls, "Params", None), "model_fields", {})
    for pname, _typ, default, _unit, _desc in param_rows(cls):
        if default == "(required)":
            params[pname] = "<required>"
            continue
        info = fields.get(pname)
        real = info.get_default(call_default_factory=True) if info is not None else None
        if isinstance(real, (BaseModel, tuple, list)):
            # nested models and tuples: their JSON form, not their repr
            params[pname] = to_jsonable_python(real)
            continue
        try:
            params[pname] = (
                yaml.safe_load(default) if not default.startswith("'") else default.strip("'")
            )
        except yaml.YAMLError:
            params[pname] = default
        if isinstance(params[pname], str) and params[pname] in ("None", "'None'"):
            params[pname] = None
    params = {k: v for k, v in params.items() if v is not None and v != ""}
    params.update(getattr(cls, "example_params", {}) or {})
    entry = {"name": name, "plugin": name, "params": params}
    if k not in ("motion",):
        entry["rate_hz"] = None
    section = {
        "motion": "motion",
        "controller": "controllers",
        "autonomy": "autonomy",
        "sensor": "sensors",
        "interaction": "interactions",
        "metric": "metrics",
    }[k]
    body = entry if k == "motion" else [entry]
    return f"# {k} plugin {name}: {cls.describe()}\n" + yaml.safe_dump(
        {section: body}, sort_keys=False, width=100
    )
