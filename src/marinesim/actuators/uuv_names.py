"""UUV Simulator parameter names → marinesim parameter dicts (actuator model families).

UUV Simulator's plugin XML (and the reference manifests generated from it) name the models
``ZeroOrder``/``FirstOrder``/``Yoerger``/``Bessa`` (``<dynamics>``), ``Basic``/``Bessa``/
``LinearInterp`` (``<conversion>``) and ``Quadratic``/``TwoLines`` (``<liftdrag>``), with
camel-case parameter tags.  These pure functions translate one such block, given as a
mapping ``tag -> value`` (numbers or the element text), into the dict that the marinesim
``Params`` models validate.  Unknown tags raise :class:`~marinesim.core.errors.ConfigError`
whose ``param`` is the offending tag (callers add file and line).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from marinesim.core.errors import ConfigError, suggest

__all__ = ["SECTIONS", "THRUSTER_KNOBS", "from_uuv"]

#: scalar tags of a UUV Simulator thruster plugin -> ThrusterParams field
THRUSTER_KNOBS: dict[str, str] = {
    "clampMin": "clamp_min",
    "clampMax": "clamp_max",
    "thrustMin": "thrust_min",
    "thrustMax": "thrust_max",
    "gain": "gain",
    "thrust_efficiency": "thrust_efficiency",
    "propeller_efficiency": "propeller_efficiency",
}

#: section -> UUV type -> (marinesim type, {uuv tag: marinesim field})
SECTIONS: dict[str, dict[str, tuple[str, dict[str, str]]]] = {
    "dynamics": {
        "ZeroOrder": ("zero_order", {}),
        "FirstOrder": ("first_order", {"timeConstant": "time_constant"}),
        "Yoerger": ("yoerger", {"alpha": "alpha", "beta": "beta"}),
        "Bessa": ("bessa", {"Jmsp": "jmsp", "Kv1": "kv1", "Kv2": "kv2", "Kt": "kt", "Rm": "rm"}),
    },
    "conversion": {
        "Basic": ("basic", {"rotorConstant": "rotor_constant"}),
        "Bessa": (
            "dead_zone",
            {
                "rotorConstantL": "rotor_constant_l",
                "rotorConstantR": "rotor_constant_r",
                "deltaL": "delta_l",
                "deltaR": "delta_r",
            },
        ),
        "LinearInterp": (
            "linear_interp",
            {"inputValues": "input_values", "outputValues": "output_values"},
        ),
    },
    "liftdrag": {
        "Quadratic": (
            "quadratic",
            {"lift_constant": "lift_constant", "drag_constant": "drag_constant"},
        ),
        "TwoLines": (
            "two_lines",
            {
                "area": "area",
                "fluid_density": "fluid_density",
                "a0": "a0",
                "alpha_stall": "alpha_stall",
                "cla": "cla",
                "cla_stall": "cla_stall",
                "cda": "cda",
                "cda_stall": "cda_stall",
            },
        ),
    },
}

_LISTS = {"inputValues", "outputValues"}


def _number(tag: str, value: Any, notes: list[tuple[str, str]]) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    text = str(value).strip()
    if text == "":
        # ECA A9 writes <cda_stall></cda_stall>: assumed to parse as 0 [unverified]
        notes.append(
            (tag, f"<{tag}> is empty: 0 assumed [unverified: SDF's parse of an empty double]")
        )
        return 0.0
    try:
        return float(text)
    except ValueError:
        raise ConfigError(f"<{tag}> must be a number (got {text!r})", param=tag) from None


def _numbers(tag: str, value: Any) -> list[float]:
    if isinstance(value, list | tuple):
        items = list(value)
    else:
        items = str(value).replace(",", " ").split()
    out = []
    for item in items:
        try:
            out.append(float(item))
        except (TypeError, ValueError):
            raise ConfigError(
                f"<{tag}> must be numbers separated by blanks (got {item!r})", param=tag
            ) from None
    return out


def from_uuv(
    section: str, block: Mapping[str, Any]
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """Translate one UUV Simulator ``<dynamics>``/``<conversion>``/``<liftdrag>`` block.

    Parameters
    ----------
    section : {"dynamics", "conversion", "liftdrag"}
        Which block.
    block : mapping
        ``type`` and the parameter tags (values as numbers or element text).

    Returns
    -------
    params : dict
        The marinesim dict (``type`` plus fields) for the section's ``Params`` model.
    notes : list of (str, str)
        Values that were assumed (tag, message), to be reported as ConfigWarnings.

    Raises
    ------
    ConfigError
        Missing or unknown ``type``, unknown tag, missing tag, non-numeric value; ``param``
        names the tag.
    """
    types = SECTIONS[section]
    if "type" not in block:
        raise ConfigError(f"<{section}> has no <type> (one of {', '.join(types)})", param="type")
    uuv_type = str(block["type"]).strip()
    if uuv_type not in types:
        close = suggest(uuv_type, types)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigError(
            f"unknown <{section}> type {uuv_type!r}{hint} (known: {', '.join(types)})", param="type"
        )
    ours, tags = types[uuv_type]
    out: dict[str, Any] = {"type": ours}
    notes: list[tuple[str, str]] = []
    for tag, value in block.items():
        if tag == "type":
            continue
        if tag not in tags:
            close = suggest(tag, tags)
            hint = f"; did you mean <{close[0]}>?" if close else ""
            raise ConfigError(
                f"unknown tag <{tag}> in <{section}> of type {uuv_type}{hint} "
                f"(known: {', '.join(['type', *tags])})",
                param=tag,
            )
        out[tags[tag]] = _numbers(tag, value) if tag in _LISTS else _number(tag, value, notes)
    for tag, name in tags.items():
        if name not in out:
            raise ConfigError(f"<{section}> of type {uuv_type} needs <{tag}>", param=tag)
    return out, notes
