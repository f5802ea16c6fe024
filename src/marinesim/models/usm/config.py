"""Effective configuration of the uSimMarine model (``usm`` and ``usm_v22``).

:class:`UsmConfig` holds the values the model runs with after the configuration lines have
been applied by :func:`configure` in either mode (``compat="doc"``, the documented behaviour;
``compat="moos"``, the real program's parsing; spec usimmarine.md §5, §10, §12).  Units: m,
m/s, m/s², deg, deg/s, percent, s.

API
---
``configure(lines, *, variant="usm", compat="doc", file=None, globals=None, base_dir=None,
load_current_field=None) -> (UsmConfig, list[ConfigWarning])``
    ``lines``: ``(key, value, line)`` or ``(key, value)`` tuples or ``"key = value"`` strings,
    in file order, as written.  Warnings include every parameter whose effective value would
    differ in the other mode (§10.3).
``config_from_mapping(mapping, *, variant="usm", compat="doc", file=None, marks=None, ...)``
    The same rules for a YAML ``params:`` mapping (``compat``/``variant`` keys allowed).
``PARAMS``
    The single parameter schema (name, kind, default, unit, description, variants, doc
    default) from which the parser, :func:`example_block` and :func:`effective_rows` derive.

This module is pure (layer L1): it never opens files.  A ``current_field`` value is handed to
the ``load_current_field(path, file=, line=)`` callable supplied by the caller
(:func:`marinesim.interop.moos.files.load_current_field`).

The schema lives in :mod:`marinesim.models.usm.config_schema`, the program-exact reading of
configuration text in :mod:`marinesim.models.usm.config_text`; every name above is importable
from here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from marinesim.core.errors import ConfigError, ConfigWarning
from marinesim.models.usm.config_schema import (  # noqa: F401
    _SAME,
    DEPRECATED,
    PARAMS,
    Compat,
    Param,
    UsmConfig,
    Variant,
)
from marinesim.models.usm.config_text import (  # noqa: F401
    LoadCurrentField,
    _diff_warnings,
    _evaluate,
    _fmt,
    _globals_values,
    _normalise,
    drift_from_vector,
    parse_start_pos,
    split_config_line,
)

__all__ = [
    "PARAMS",
    "Param",
    "UsmConfig",
    "config_from_mapping",
    "configure",
    "drift_from_vector",
    "effective_rows",
    "example_block",
    "parse_start_pos",
    "split_config_line",
]


def configure(
    lines: Iterable[Any],
    *,
    variant: Variant = "usm",
    compat: Compat = "doc",
    file: str | Path | None = None,
    globals: Mapping[str, Any] | None = None,  # noqa: A002 - the MOOS word
    base_dir: str | Path | None = None,
    load_current_field: LoadCurrentField | None = None,
) -> tuple[UsmConfig, list[ConfigWarning]]:
    """Apply the lines of a ``ProcessConfig = uSimMarine`` block (spec §5, §10, §12).

    Parameters
    ----------
    lines : iterable
        In file order: ``(key, value, line)`` or ``(key, value)`` tuples, or
        ``"key = value"`` strings.  MOOS's rules apply in both modes: ``//`` comments removed,
        all blanks deleted, empty values dropped, keys case-insensitive.
    variant : {"usm", "usm_v22"}
        uSimMarine or uSimMarineV22 (file order, lower-case keys, no deprecated aliases, V22
        keys).
    compat : {"doc", "moos"}
        ``"doc"`` (default): the documented behaviour, file order, unknown or invalid values
        raise.  ``"moos"``: the real program (reverse order for ``usm``, exponent numbers and
        unknown keys rejected with a warning, thrust maps truncated at the first bad item).
    file : str or Path, optional
        File named in messages.
    globals : mapping, optional
        The ``.moos`` globals (``LatOrigin``, ``LongOrigin``, ``MOOSTimeWarp``).
    base_dir : str or Path, optional
        Directory against which ``current_field`` is resolved (the file's directory).
    load_current_field : callable, optional
        ``(path, file=, line=) -> CurrentField | (CurrentField, warnings)``, raising
        :class:`ConfigError` for a missing or empty file.  Needed for ``current_field`` in
        documented mode.

    Returns
    -------
    (UsmConfig, list of ConfigWarning)
        The effective configuration (its ``thrust_map`` is always set and frozen) and the
        warnings: the mode's own ones plus every parameter whose value would differ in the
        other mode (file, line, parameter, both values).

    Raises
    ------
    ConfigError
        ``compat="doc"``: the first unknown parameter (with a suggestion), invalid value or
        malformed thrust-map item, by file line.  Either mode: a bad ``variant``/``compat``.
    """
    if variant not in ("usm", "usm_v22"):
        raise ConfigError(f"variant must be 'usm' or 'usm_v22', not {variant!r}", param="variant")
    if compat not in ("doc", "moos"):
        raise ConfigError(f"compat must be 'doc' or 'moos', not {compat!r}", param="compat")
    fname = str(file) if file is not None else None
    bdir = Path(base_dir) if base_dir is not None else None
    norm = _normalise(lines, fname)
    main = _evaluate(norm, variant, compat, fname, bdir, load_current_field, True)
    other_mode: Compat = "moos" if compat == "doc" else "doc"
    other = _evaluate(norm, variant, other_mode, fname, bdir, None, False)
    if main.errors:
        raise sorted(main.errors, key=lambda e: e.line or 0)[0]
    warnings = list(main.warnings)
    warnings.extend(_diff_warnings(main, other, compat, fname))
    gvals, gwarns = _globals_values(globals, fname, compat)
    warnings.extend(gwarns)
    values = dict(main.values)
    values.update(gvals)
    tm = main.tm
    if main.values.get("current_field") is not None and compat == "moos":  # pragma: no cover
        values.pop("current_field")
    origins = {k: v for k, v in main.origins.items() if v is not None}
    cfg = UsmConfig(
        variant=variant,
        compat=compat,
        thrust_map=tm.freeze(),
        extras=dict(main.extras),
        origins=origins,
    )
    known = {f.name for f in fields(UsmConfig)}
    cfg = replace(cfg, **{k: v for k, v in values.items() if k in known})
    return cfg, warnings


def _thrust_map_pairs(value: Sequence[Any], *, file: Any, line: Any, param: str) -> str:
    """A YAML ``thrust_map`` list of ``[thrust, speed]`` pairs as the MOOS text ``t:s, ...``.

    Raises
    ------
    ConfigError
        An item is not a pair of numbers (e.g. a flat list ``[1, 2, 3]``).
    """
    parts = []
    for k, item in enumerate(value):
        ok = (
            isinstance(item, Sequence)
            and not isinstance(item, str)
            and len(item) == 2
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in item)
        )
        if not ok:
            raise ConfigError(
                f"item {k} is {item!r}: a thrust_map list holds [thrust, speed] pairs of "
                "numbers, e.g. [[-100, -2], [0, 0], [100, 5]] (or give the MOOS text "
                "'-100:-2, 0:0, 100:5')",
                file=file,
                line=line,
                param=param,
            )
        parts.append(f"{item[0]}:{item[1]}")
    return ", ".join(parts)


def config_from_mapping(
    mapping: Mapping[str, Any] | None,
    *,
    variant: Variant = "usm",
    compat: Compat = "doc",
    file: str | Path | None = None,
    marks: Mapping[str, tuple[int, int]] | None = None,
    prefix: str = "",
    base_dir: str | Path | None = None,
    load_current_field: LoadCurrentField | None = None,
) -> tuple[UsmConfig, list[ConfigWarning]]:
    """Build the configuration from a YAML ``params:`` mapping with the rules of :func:`configure`.

    Parameters
    ----------
    mapping : mapping
        Parameter name → value (numbers, booleans or strings), in file order.  A ``compat``
        key overrides the ``compat`` argument; a ``variant`` key must match ``variant``.
    variant, compat, file, base_dir, load_current_field
        As for :func:`configure`.
    marks : mapping, optional
        Dotted path → (line, column) of the YAML nodes (line numbers in messages).
    prefix : str
        Dotted path of the mapping inside the file (``entities.0.motion.params``).

    Returns
    -------
    (UsmConfig, list of ConfigWarning)
    """
    data = dict(mapping or {})
    path = (prefix + ".") if prefix else ""

    def line_of(key: str) -> int | None:
        if marks and (path + key) in marks:
            return marks[path + key][0]
        return None

    if "compat" in data:
        compat = data.pop("compat")
        if compat not in ("doc", "moos"):
            raise ConfigError(
                f"compat must be 'doc' or 'moos', not {compat!r}",
                file=file,
                line=line_of("compat"),
                param=path + "compat",
            )
    if "variant" in data:
        v = data.pop("variant")
        if v != variant:
            raise ConfigError(
                f"variant {v!r} does not match the model {variant!r}",
                file=file,
                line=line_of("variant"),
                param=path + "variant",
            )
    items: list[tuple[str, str, int | None]] = []
    for key, value in data.items():
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, (int, float)):
            if isinstance(value, float) and not math.isfinite(value):
                raise ConfigError(
                    f"value {value!r} is not finite",
                    file=file,
                    line=line_of(key),
                    param=path + str(key),
                )
            # positional digits (never an exponent the user did not write), exact round trip
            text = (
                np.format_float_positional(value, unique=True, trim="-")
                if isinstance(value, float)
                else str(value)
            )
        elif isinstance(value, str):
            text = value
        elif isinstance(value, Sequence) and key == "thrust_map":
            text = _thrust_map_pairs(value, file=file, line=line_of(key), param=path + str(key))
        else:
            raise ConfigError(
                f"expected a number, boolean or string, got {value!r}",
                file=file,
                line=line_of(key),
                param=path + str(key),
            )
        items.append((str(key), text, line_of(key)))
    return configure(
        items,
        variant=variant,
        compat=compat,
        file=file,
        base_dir=base_dir,
        load_current_field=load_current_field,
    )


# ---------------------------------------------------------------------------------------
# Generated text: --example and the `check` table
# ---------------------------------------------------------------------------------------

_BLOCK_NAME = {"usm": "uSimMarine", "usm_v22": "uSimMarineV22"}


def example_block(variant: Variant = "usm") -> str:
    """The ``--example`` configuration block, generated from :data:`PARAMS`.

    Every line is valid and means the same in both modes (parsing it back gives no error and
    no warning); documented-only parameters are shown commented out.
    """
    rows: list[tuple[str, str, str]] = []
    for p in PARAMS:
        if variant not in p.variants or p.kind == "unsupported":
            continue
        if p.name in ("apptick", "commstick"):
            continue
        if p.example == "":
            value = {"path": "field.cfd", "bool": "true"}.get(p.kind, "")
            if not value:
                continue
            rows.append(("// " + p.name, value, p.description))
            continue
        value = p.example if p.example is not None else _fmt(p.default)
        note = p.description + (f" [{p.unit}]" if p.unit else "")
        if p.doc_default is not _SAME:
            note += f" (documentation list says {_fmt(p.doc_default)})"
        if p.name == "turn_loss":
            rows.append(("// " + p.name, value, note + "; honoured in documented mode only"))
            continue
        rows.append((p.name, value, note))
    width = max(len(r[0]) for r in rows)
    vwidth = min(max(len(r[1]) for r in rows), 24)
    out = [
        "=" * 70,
        f"{_BLOCK_NAME[variant]} Example MOOS Configuration (generated by marinesim)",
        "=" * 70,
        "",
        f"ProcessConfig = {_BLOCK_NAME[variant]}",
        "{",
        "  AppTick   = 10     // the model step is 1/AppTick",
        "  CommsTick = 10",
        "",
    ]
    for name, value, note in rows:
        out.append(f"  {name.ljust(width)} = {value.ljust(vwidth)}  // {note}")
    out.append("}")
    return "\n".join(out) + "\n"


def effective_rows(cfg: UsmConfig) -> list[tuple[str, str, str, str]]:
    """Rows ``(parameter, value, unit, source)`` of the effective configuration for ``check``.

    ``source`` is ``"line N"`` for a value set by the file, else ``"default"``.
    """
    rows: list[tuple[str, str, str, str]] = []
    seen: set[str] = set()
    for p in PARAMS:
        if cfg.variant not in p.variants or p.field is None or p.field in seen:
            continue
        if p.kind == "path" and cfg.compat == "moos":
            continue
        if p.name == "turn_loss" and cfg.compat == "moos":
            continue
        seen.add(p.field)
        if p.name == "thrust_factor":
            value: Any = cfg.thrust_map.thrust_factor if cfg.thrust_map else 20.0
        elif p.name == "thrust_reflect":
            value = cfg.thrust_map.reflect if cfg.thrust_map else False
        elif p.name == "thrust_map":
            tm = cfg.thrust_map
            value = tm.to_text() if tm and (tm.pos_pairs or tm.neg_pairs) else "(empty)"
        else:
            value = getattr(cfg, p.field)
        line = cfg.origins.get(p.field) or cfg.origins.get(p.name)
        rows.append((p.name, _fmt(value), p.unit, f"line {line}" if line else "default"))
    for key, value in cfg.extras.items():
        rows.append((key, value, "", "moos/appcast key (no effect)"))
    if cfg.lat_origin is not None:
        rows.append(("LatOrigin", _fmt(cfg.lat_origin), "deg", "global"))
        rows.append(("LongOrigin", _fmt(cfg.long_origin), "deg", "global"))
    return rows
