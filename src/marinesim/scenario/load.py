"""YAML loading with line marks: every node's dotted path → (line, column).

``load_text`` parses a scenario (templating first), checks the §12.2 rules, validates the
layout (:class:`~marinesim.scenario.schema.ScenarioModel`) and returns a :class:`LoadedScenario`
whose errors all read ``file:line:column: dotted.path: message``.  Paths use block and plugin
names where the list items have one (``entities.auv.motion.params.turn_rate``).
"""

from __future__ import annotations

import copy
import hashlib
import json
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from marinesim.core.errors import ConfigError, suggest
from marinesim.core.params import BOOL_MESSAGE, bool_error_loc
from marinesim.core.textio import read_input_text, yaml_compose, yaml_construct
from marinesim.scenario.schema import ScenarioModel
from marinesim.scenario.templating import apply_sets, parse_assignments, substitute

__all__ = [
    "LoadedScenario",
    "compose_with_marks",
    "load_file",
    "load_text",
    "resolved_text",
    "scenario_hash",
]

Marks = dict[str, tuple[int, int]]

_X_Y_HINT = (
    "positions are written north/east (m); 'x' and 'y' are ambiguous (east/north in MOOS, "
    "north/east in NED) and are not accepted"
)
_HEADING_HINT = (
    "heading needs a unit: write heading_deg (marine heading: degrees, 0 = north, clockwise)"
)


@dataclass
class LoadedScenario:
    """A parsed, checked scenario.

    Attributes
    ----------
    model : ScenarioModel
        The validated layout.
    data : dict
        The data after templating and overrides (plugin params still raw).
    marks : dict
        Index path → (line, column).
    file : str
        File name used in messages.
    base_dir : Path or None
        Directory relative file names are resolved against.
    builtin : str or None
        Name of the bundled scenario, if it is one.
    """

    model: ScenarioModel
    data: dict[str, Any]
    marks: Marks
    file: str
    base_dir: Path | None = None
    builtin: str | None = None
    set_paths: list[str] = field(default_factory=list)

    def where(self, path: str) -> tuple[int | None, int | None]:
        """(line, column) of an index path or its closest marked parent."""
        return mark_for(self.marks, path)

    def display(self, path: str) -> str:
        """Index path with list indices replaced by item names where they have one."""
        return display_path(self.data, path)

    def error(self, message: str, path: str) -> ConfigError:
        """A ConfigError located at ``path``."""
        line, col = self.where(path)
        return ConfigError(message, file=self.file, line=line, column=col, param=self.display(path))


def mark_for(marks: Mapping[str, tuple[int, int]], path: str) -> tuple[int | None, int | None]:
    """Line and column of ``path`` or of its nearest marked parent."""
    probe = path
    while True:
        if probe in marks:
            return marks[probe]
        if "." not in probe:
            return None, None
        probe = probe.rsplit(".", 1)[0]


def display_path(data: Any, path: str) -> str:
    """Replace list indices by item names (``entities.0`` → ``entities.auv``) along ``path``."""
    out = []
    node = data
    for part in path.split(".") if path else []:
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            item = node[int(part)]
            name = item.get("name") if isinstance(item, dict) else None
            if (
                isinstance(name, str)
                and name
                and [i.get("name") for i in node if isinstance(i, dict)].count(name) == 1
            ):
                out.append(name)
            else:
                out.append(part)
            node = item
        elif isinstance(node, dict):
            out.append(part)
            node = node.get(part)
        else:
            out.append(part)
            node = None
    return ".".join(out)


def compose_with_marks(text: str, *, file: str | Path | None = None) -> tuple[Any, Marks]:
    """Parse YAML text; return (data, marks) with 1-based (line, column) per dotted path.

    Raises
    ------
    ConfigError
        Malformed YAML (with the parser's line and column) or a duplicate key.
    """
    node = yaml_compose(text, file=file)  # bounded nesting, aliases and expanded size
    if node is None:
        raise ConfigError("the scenario file is empty", file=file, line=1)
    marks: Marks = {}
    _walk(node, "", marks, file)
    data = yaml_construct(node, file=file)
    return data, marks


def _walk(node: yaml.Node, path: str, marks: Marks, file: str | Path | None) -> None:
    marks[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            key = str(key_node.value)
            if key in seen:
                raise ConfigError(
                    f"duplicate key {key!r}",
                    file=file,
                    line=key_node.start_mark.line + 1,
                    column=key_node.start_mark.column + 1,
                    param=f"{path}.{key}" if path else key,
                )
            seen.add(key)
            sub = f"{path}.{key}" if path else key
            _walk(value_node, sub, marks, file)
            marks[sub] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, f"{path}.{i}" if path else str(i), marks, file)


def _check_rules(data: Any, marks: Marks, file: str, path: str = "", root: Any = None) -> None:
    """Engine spec §12.2: no x/y keys, no unit-less heading (outside plugin params and script)."""
    root = data if root is None else root
    if isinstance(data, dict):
        for key, value in data.items():
            sub = f"{path}.{key}" if path else str(key)
            if key in ("x", "y"):
                line, col = mark_for(marks, sub)
                raise ConfigError(
                    _X_Y_HINT, file=file, line=line, column=col, param=display_path(root, sub)
                )
            if key == "heading":
                line, col = mark_for(marks, sub)
                raise ConfigError(
                    _HEADING_HINT,
                    file=file,
                    line=line,
                    column=col,
                    param=display_path(root, sub),
                )
            if key in ("params", "script", "properties"):
                continue
            _check_rules(value, marks, file, sub, root)
    elif isinstance(data, list):
        for i, item in enumerate(data):
            _check_rules(item, marks, file, f"{path}.{i}" if path else str(i), root)


def _unwrap(ann: Any) -> list[Any]:
    """Candidate model classes inside an annotation (Optional, Union, list, dict)."""
    out: list[Any] = []
    origin = typing.get_origin(ann)
    if origin is None:
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            out.append(ann)
        return out
    for arg in typing.get_args(ann):
        out.extend(_unwrap(arg))
    return out


def _fields_at(model: type[BaseModel], loc: Sequence[Any]) -> list[str]:
    """Field names of the nested model an error location points into (for did-you-mean)."""
    current: list[type[BaseModel]] = [model]
    for part in loc[:-1]:
        if isinstance(part, int) or (isinstance(part, str) and part.isdigit()):
            continue
        nxt: list[type[BaseModel]] = []
        for m in current:
            info = m.model_fields.get(str(part))
            if info is not None:
                nxt.extend(_unwrap(info.annotation))
        if not nxt:
            return []
        current = nxt
    names: list[str] = []
    for m in current:
        names.extend(m.model_fields)
    return names


def validate_model(
    model: type[BaseModel],
    data: Any,
    marks: Mapping[str, tuple[int, int]],
    file: str,
    *,
    prefix: str = "",
    root: Any = None,
) -> Any:
    """Validate ``data`` against ``model``; raise a located ConfigError.

    Unknown keys are reported first (with a did-you-mean over the fields of the nested model
    they are in), then missing values, then the rest.  ``prefix`` is the index path of
    ``data`` in the file, ``root`` the whole document (for item names in the message).
    """
    try:
        return model.model_validate(data)
    except (TypeError, ValueError) as exc:
        if not isinstance(exc, ValidationError):  # a validator that raised instead of reporting
            line, col = mark_for(marks, prefix)
            shown = display_path(root if root is not None else data, prefix) if prefix else None
            raise ConfigError(
                f"invalid parameters ({type(exc).__name__}: {exc})",
                file=file,
                line=line,
                column=col,
                param=shown,
            ) from None
        errors = exc.errors()
        err = next((e for e in errors if e.get("type") == "extra_forbidden"), None)
        err = err or next((e for e in errors if e.get("type") == "missing"), errors[0])
        refined = bool_error_loc(err)
        loc = [
            p
            for p in refined
            if not (
                isinstance(p, str)
                and (p in ("uniform", "field", "str", "EndMetric") or "[" in p or "Literal" in p)
            )
        ]
        rel = ".".join(str(p) for p in loc)
        path = f"{prefix}.{rel}" if prefix and rel else (prefix or rel)
        line, col = mark_for(marks, path)
        typ = err.get("type")
        msg = str(err.get("msg", "invalid value"))
        if typ == "extra_forbidden" and loc:
            close = suggest(str(loc[-1]), _fields_at(model, loc))
            msg = "extra field not permitted" + (f" (did you mean {close[0]!r}?)" if close else "")
        elif typ == "missing":
            msg = "required value missing"
        elif refined != tuple(err.get("loc", ())):
            msg = BOOL_MESSAGE
        elif "input" in err and not isinstance(err["input"], dict | list):
            msg += f" (got {err['input']!r})"
        shown = (
            display_path(root if root is not None else data, path)
            if root is not None or not prefix
            else path
        )
        raise ConfigError(msg, file=file, line=line, column=col, param=shown or None) from None


def validate_layout(data: Any, marks: Marks, file: str) -> ScenarioModel:
    """Validate the scenario layout (see :func:`validate_model`)."""
    if not isinstance(data, dict):
        raise ConfigError(
            "a scenario file must be a mapping (key: value lines)", file=file, line=1, column=1
        )
    if "marinesim" not in data:
        raise ConfigError(
            "missing 'marinesim: 1' (the scenario schema version)",
            file=file,
            line=1,
            column=1,
            param="marinesim",
        )
    return validate_model(ScenarioModel, data, marks, file, root=data)


def load_text(
    text: str,
    *,
    file: str | Path = "<scenario>",
    base_dir: str | Path | None = None,
    variables: Mapping[str, Any] | Sequence[str] | None = None,
    sets: Mapping[str, Any] | Sequence[str] | None = None,
    seed: int | None = None,
    builtin: str | None = None,
) -> LoadedScenario:
    """Parse and check a scenario text.

    Parameters
    ----------
    text : str
        YAML text (may contain ``${name=default}``).
    file : str or Path
        Name used in messages.
    base_dir : str or Path, optional
        Directory for relative paths (default: the file's directory).
    variables : mapping or list of "k=v", optional
        ``--var`` values.
    sets : mapping or list of "path=value", optional
        ``--set`` overrides.
    seed : int, optional
        ``--seed`` (overrides the file's seed).
    builtin : str, optional
        Name of a bundled scenario.

    Returns
    -------
    LoadedScenario
    """
    fname = str(file)
    vars_ = (
        parse_assignments(variables, option="--var")
        if isinstance(variables, (list, tuple))
        else dict(variables or {})
    )
    sets_ = (
        parse_assignments(sets, option="--set")
        if isinstance(sets, (list, tuple))
        else dict(sets or {})
    )
    filled = substitute(text, vars_, file=fname)
    data, marks = compose_with_marks(filled, file=fname)
    if not isinstance(data, dict):
        raise ConfigError(
            "a scenario file must be a mapping (key: value lines)", file=fname, line=1, column=1
        )
    changed = apply_sets(data, sets_) if sets_ else []
    if seed is not None:
        data["seed"] = int(seed)
    _merge_defaults(data, marks)
    _check_rules(data, marks, fname)
    try:
        model = validate_layout(data, marks, fname)
        _check_limits(model, marks, fname)
    except ConfigError as exc:
        raise mark_set_origin(exc, data, changed) from None
    bdir = (
        Path(base_dir)
        if base_dir is not None
        else (Path(fname).resolve().parent if not fname.startswith("<") else None)
    )
    return LoadedScenario(model, data, marks, fname, bdir, builtin, changed)


def _check_limits(model: ScenarioModel, marks: Marks, file: str) -> None:
    """The limits of :mod:`marinesim.core.limits` on ``time:`` (dt, time_warp, steps)."""
    from marinesim.core.limits import MAX_ENTITIES, MAX_STEPS, MIN_DT, MIN_TIME_WARP

    tm = model.time

    names = [e.name for e in model.entities or []]

    def fail(msg: str, path: str) -> ConfigError:
        line, col = mark_for(marks, path)
        parts = path.split(".")
        if parts[0] == "entities" and len(parts) > 2 and names.count(names[int(parts[1])]) == 1:
            parts[1] = names[int(parts[1])] or parts[1]  # the block's name, as elsewhere
        return ConfigError(msg, file=file, line=line, column=col, param=".".join(parts))

    if tm.dt < MIN_DT:
        raise fail(f"must be >= {MIN_DT:g} s (MIN_DT), got {tm.dt:g}", "time.dt")
    if 0 < tm.time_warp < MIN_TIME_WARP:
        raise fail(
            f"must be 0 (as fast as possible) or >= {MIN_TIME_WARP:g} (MIN_TIME_WARP), "
            f"got {tm.time_warp:g}",
            "time.time_warp",
        )
    if tm.substeps > MAX_STEPS:
        raise fail(f"must be <= {MAX_STEPS}, got {tm.substeps}", "time.substeps")
    total = 0
    for i, ent in enumerate(model.entities or []):
        total += ent.count
        if total > MAX_ENTITIES:
            raise fail(
                f"more than {MAX_ENTITIES} vehicles in the scenario (MAX_ENTITIES)",
                f"entities.{i}.count",
            )
        name = ent.name
        if not name.strip() or any(c in name for c in "/\\\0") or name in (".", ".."):
            raise fail(
                f"entity name {name!r} must be a non-empty name without '/', '\\' or NUL",
                f"entities.{i}.name",
            )
        for kind in ("motion", "controllers", "autonomy", "sensors"):
            entries = getattr(ent, kind, None)
            listed = isinstance(entries, list)
            for j, pe in enumerate(entries if listed else [entries]):
                if getattr(pe, "name", None) is not None and not str(pe.name).strip():
                    where = f"entities.{i}.{kind}" + (f".{j}" if listed else "")
                    raise fail("plugin instance name is empty", where + ".name")
    if tm.end is not None:
        steps = (tm.end - tm.start) / tm.dt * tm.substeps
        if steps > MAX_STEPS:
            raise fail(
                f"{tm.end - tm.start:g} s at dt = {tm.dt:g} s x {tm.substeps} substeps is "
                f"{steps:.3g} steps, over the limit of {MAX_STEPS} (MAX_STEPS)",
                "time.end",
            )


def mark_set_origin(exc: ConfigError, data: Any, changed: Sequence[str]) -> ConfigError:
    """Say so when the offending value came from ``--set`` (its line is the file's original)."""
    if not exc.param or not changed:
        return exc
    shown = {display_path(data, c) for c in changed} | set(changed)
    if not any(exc.param == c or exc.param.startswith(c + ".") for c in shown):
        return exc
    return (
        type(exc)(
            exc.message + " (value from --set)",
            file=exc.file,
            line=exc.line,
            column=exc.column,
            param=exc.param,
        )
        if type(exc) is ConfigError
        else exc
    )


def _merge_defaults(data: dict[str, Any], marks: Marks) -> None:
    """Merge ``entity_defaults`` into every entity mapping (the entity's own keys win)."""
    defaults = data.get("entity_defaults")
    if not isinstance(defaults, dict) or not isinstance(data.get("entities"), list):
        return
    for i, ent in enumerate(data["entities"]):
        if not isinstance(ent, dict):
            continue
        for key, value in defaults.items():
            if key not in ent:
                ent[key] = copy.deepcopy(value)
                src = f"entity_defaults.{key}"
                for mk, mv in list(marks.items()):
                    if mk == src or mk.startswith(src + "."):
                        marks.setdefault(f"entities.{i}.{key}" + mk[len(src) :], mv)


def load_file(
    path: str | Path,
    *,
    variables: Mapping[str, Any] | Sequence[str] | None = None,
    sets: Mapping[str, Any] | Sequence[str] | None = None,
    seed: int | None = None,
) -> LoadedScenario:
    """Read and check a scenario file (see :func:`load_text`)."""
    p = Path(path)
    text = read_input_text(p, what="scenario file")
    return load_text(
        text, file=str(p), base_dir=p.resolve().parent, variables=variables, sets=sets, seed=seed
    )


def resolved_text(data: Mapping[str, Any]) -> str:
    """The resolved scenario as YAML (variables filled, overrides applied, seed set)."""
    return yaml.safe_dump(_plain(data), sort_keys=False, default_flow_style=None, width=100)


def scenario_hash(data: Mapping[str, Any]) -> str:
    """SHA-256 of the resolved scenario (canonical JSON with sorted keys)."""
    blob = json.dumps(_plain(data), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _plain(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj
