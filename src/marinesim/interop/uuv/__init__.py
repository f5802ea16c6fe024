"""Import UUV Simulator actuators (thruster and fin plugins) and marinesim actuator YAML.

Accepted inputs, all giving the same :class:`~marinesim.actuators.actuator_set.ActuatorSet`:

* one or several ``<plugin>`` blocks (thruster: ``<dynamics>`` + ``<conversion>``; fin:
  ``<dynamics>`` + ``<liftdrag>``), optionally inside ``<gazebo>`` and with their
  ``<joint>`` elements pasted beside them;
* a whole xacro-expanded URDF (``<robot>``) with several thrusters and fins: each plugin's
  ``<jointName>`` / ``<joint_name>`` names the joint whose ``<origin>`` gives the mount
  pose and (fins) whose ``<limit>`` gives the joint limits; other plugins are ignored;
* marinesim's own YAML (:mod:`marinesim.actuators.actuator_set`).

Frames are flipped from Gazebo FLU to FRD (spec ``actuators_6dof.md`` §1.2): positions
p → T·p with T = diag(1, −1, −1); a thruster mount R_FLU (rpy) becomes T·R_FLU·T, i.e.
rpy (r, −p, −y), so the thrust axis is T·R_FLU·e_x.  A fin keeps the Gazebo fin-link frame
as its own frame: R_m = T·R_FLU, i.e. rpy (r + π, −p, −y), so that a fin command keeps its
UUV Simulator sign (the joint axis stays the fin frame's +z).

Unknown tags, a missing ``<type>``, unexpanded ``${...}`` xacro expressions and malformed
XML raise :class:`~marinesim.core.errors.ConfigError` naming file, line, column and tag.
UUV Simulator's silent replacements (min ≥ max = unlimited, efficiency outside [0, 1] = 1)
are kept but reported as :class:`~marinesim.core.errors.ConfigWarning` (errors with
``strict=True``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.parsers import expat

import yaml

from marinesim.actuators import thruster as th
from marinesim.actuators.actuator_set import ActuatorSet
from marinesim.actuators.fins import FinParams
from marinesim.actuators.uuv_names import SECTIONS, THRUSTER_KNOBS, from_uuv
from marinesim.core.errors import ConfigError, ConfigWarning, suggest
from marinesim.core.params import validate

__all__ = [
    "ActuatorSet",
    "load_actuators",
    "load_actuators_yaml",
    "parse_actuators_yaml",
    "parse_uuv_xml",
]

_ROOT = "marinesim_uuv_root"

#: Tags a thruster plugin may hold; the second set is read by UUV Simulator's ROS layer or
#: only names topics, and is accepted and ignored.
_THRUSTER_TAGS = {
    "linkName",
    "jointName",
    "thrusterID",
    "gain",
    "clampMax",
    "clampMin",
    "thrustMin",
    "thrustMax",
    "thrust_efficiency",
    "propeller_efficiency",
    "dynamics",
    "conversion",
}
_THRUSTER_IGNORED = {"inputTopic", "thrustTopic", "robotNamespace", "robot_namespace", "namespace"}
_FIN_TAGS = {"dynamics", "liftdrag", "fin_id", "link_name", "joint_name"}
_FIN_IGNORED = {
    "current_velocity_topic",
    "input_topic",
    "output_topic",
    "wrench_topic",
    "state_topic",
    "robotNamespace",
    "robot_namespace",
    "namespace",
}
#: section -> UUV tag -> marinesim field (for locating validation errors)
_FIELD_OF: dict[str, dict[str, str]] = {
    sec: {tag: f for _, (_, tags) in types.items() for tag, f in tags.items()}
    for sec, types in SECTIONS.items()
}


@dataclass
class _Node:
    tag: str
    attrib: dict[str, str]
    line: int
    column: int
    children: list[_Node] = field(default_factory=list)
    text: str = ""

    def child(self, tag: str) -> _Node | None:
        for c in self.children:
            if c.tag == tag:
                return c
        return None

    def iter(self, tag: str) -> list[_Node]:
        out = []
        for c in self.children:
            if c.tag == tag:
                out.append(c)
            out.extend(c.iter(tag))
        return out

    def error(self, message: str, file: str | None, param: str | None) -> ConfigError:
        """A ConfigError located at this element (file, line, column, param)."""
        return ConfigError(message, file=file, line=self.line, column=self.column, param=param)


def _parse_tree(text: str, file: str | None) -> _Node:
    """Parse XML (one element, several, or a fragment) keeping 1-based lines and columns."""
    body = text
    start = body.lstrip()
    if start.startswith("<?xml"):
        i = body.index("<?xml")
        j = body.find("?>", i)
        if j < 0:
            raise ConfigError("malformed XML: '<?xml' declaration without '?>'", file=file, line=1)
        j += 2
        body = body[:i] + " " * (j - i) + body[j:]
    from marinesim.core.textio import XML_MAX_DEPTH

    prefix = f"<{_ROOT}>"
    parser = expat.ParserCreate()
    root = _Node(_ROOT, {}, 1, 1)
    stack = [root]

    def col_of(line: int, col0: int) -> int:
        return col0 + 1 - (len(prefix) if line == 1 else 0)

    def start_el(name: str, attrs: dict[str, str]) -> None:
        if len(stack) > XML_MAX_DEPTH:
            raise ConfigError(
                f"elements nested deeper than {XML_MAX_DEPTH} levels",
                file=file,
                line=parser.CurrentLineNumber,
                param="xml.max_depth",
            )
        node = _Node(
            name,
            dict(attrs),
            parser.CurrentLineNumber,
            col_of(parser.CurrentLineNumber, parser.CurrentColumnNumber),
        )
        stack[-1].children.append(node)
        stack.append(node)

    def end_el(name: str) -> None:
        stack.pop()

    def data(chunk: str) -> None:
        stack[-1].text += chunk

    parser.StartElementHandler = start_el
    parser.EndElementHandler = end_el
    parser.CharacterDataHandler = data
    try:
        parser.Parse(prefix + body + f"</{_ROOT}>", True)
    except expat.ExpatError as exc:
        line = exc.lineno
        raise ConfigError(
            f"malformed XML: {expat.ErrorString(exc.code)}",
            file=file,
            line=line,
            column=col_of(line, exc.offset),
        ) from None
    return root.children[0]


def _check_expanded(node: _Node, file: str | None) -> None:
    for value in [node.text, *node.attrib.values()]:
        if "${" in value:
            raise node.error(
                "unexpanded xacro expression ${...}: run `xacro` on the file first", file, node.tag
            )
    for c in node.children:
        _check_expanded(c, file)


def _vec(text: str | None, node: _Node, file: str | None, what: str) -> tuple[float, float, float]:
    if text is None:
        return (0.0, 0.0, 0.0)
    parts = text.split()
    try:
        vals = [float(p) for p in parts]
    except ValueError:
        vals = []
    if len(vals) != 3:
        raise node.error(f"{what} must be 3 numbers (got {text!r})", file, what)
    if not all(math.isfinite(v) and abs(v) <= 1e9 for v in vals):
        raise node.error(
            f"{what} must be 3 finite numbers of magnitude <= 1e9 (got {text!r})", file, what
        )
    return (vals[0], vals[1], vals[2])


@dataclass
class _Joint:
    node: _Node
    xyz: tuple[float, float, float]
    rpy: tuple[float, float, float]
    lower: float | None
    upper: float | None
    parent: str = ""
    nested: bool = False


def _joints(root: _Node, file: str | None) -> dict[str, _Joint]:
    out: dict[str, _Joint] = {}
    for j in root.iter("joint"):
        name = j.attrib.get("name")
        if not name or j.child("parent") is None and j.child("origin") is None:
            continue  # a <joint> reference inside a plugin or a transmission
        origin = j.child("origin")
        xyz = (
            _vec(origin.attrib.get("xyz"), origin, file, "origin.xyz")
            if origin is not None
            else (0.0, 0.0, 0.0)
        )
        rpy = (
            _vec(origin.attrib.get("rpy"), origin, file, "origin.rpy")
            if origin is not None
            else (0.0, 0.0, 0.0)
        )
        axis = j.child("axis")
        if axis is not None:
            ax = _vec(axis.attrib.get("xyz", "1 0 0"), axis, file, "axis.xyz")
            if math.hypot(*ax) < 1e-9:
                raise axis.error(f"joint {name!r}: the axis is the zero vector", file, "axis.xyz")
        lim = j.child("limit")
        lower = upper = None
        if lim is not None:
            try:
                lower = float(lim.attrib["lower"]) if "lower" in lim.attrib else None
                upper = float(lim.attrib["upper"]) if "upper" in lim.attrib else None
                if not all(math.isfinite(v) for v in (lower, upper) if v is not None):
                    raise ValueError
            except ValueError:
                raise lim.error("joint limit must be a finite number", file, "limit") from None
        parent = j.child("parent")
        out[name] = _Joint(
            j, xyz, rpy, lower, upper, parent.attrib.get("link", "") if parent else ""
        )
    children = {
        c.attrib.get("link", "")
        for jt in out.values()
        for c in jt.node.children
        if c.tag == "child"
    }
    for jt in out.values():
        jt.nested = bool(jt.parent) and jt.parent in children
    return out


def _mounted(jt: _Joint, file: str | None) -> _Joint:
    """The joint, if it hangs directly on the base link (poses are not composed yet)."""
    if jt.nested:
        raise jt.node.error(
            f"not supported yet: actuator joint on link {jt.parent!r}, which is not the base link "
            "(poses along a chain of joints are not composed)",
            file,
            "joint.parent",
        )
    return jt


def _block(
    node: _Node, section: str, file: str | None, warn: list[tuple[_Node, str, str]]
) -> dict[str, Any]:
    """Translate a <dynamics>/<conversion>/<liftdrag> element, errors located at the tag."""
    raw: dict[str, Any] = {}
    where: dict[str, _Node] = {}
    for c in node.children:
        if c.children:
            raise c.error(
                f"<{c.tag}> inside <{section}> must hold a value, not elements",
                file,
                f"{section}.{c.tag}",
            )
        if c.tag in raw:
            raise c.error(f"<{c.tag}> given twice in <{section}>", file, f"{section}.{c.tag}")
        raw[c.tag] = c.text.strip()
        where[c.tag] = c
    try:
        data, notes = from_uuv(section, raw)
    except ConfigError as exc:
        at = where.get(exc.param or "", node)
        raise at.error(exc.message, file, f"{section}.{exc.param}") from None
    for tag, msg in notes:
        warn.append((where.get(tag, node), f"{section}.{tag}", msg))
    return data


def _unknown(c: _Node, kind: str, known: set[str], file: str | None) -> ConfigError:
    close = suggest(c.tag, known)
    hint = f"; did you mean <{close[0]}>?" if close else ""
    return c.error(
        f"unknown tag <{c.tag}> in a {kind} plugin{hint} (known: {', '.join(sorted(known))})",
        file,
        c.tag,
    )


def _float(c: _Node, file: str | None) -> float:
    try:
        v = float(c.text.strip())
    except ValueError:
        raise c.error(f"<{c.tag}> must be a number (got {c.text.strip()!r})", file, c.tag) from None
    if not math.isfinite(v):
        raise c.error(f"<{c.tag}> must be finite", file, c.tag)
    return v


def _flip_position(p: tuple[float, float, float]) -> tuple[float, float, float]:
    return (p[0], -p[1], -p[2])


@dataclass(frozen=True)
class _Kind:
    """What tells a thruster ``<plugin>`` from a fin ``<plugin>`` when reading one."""

    name: str  #: "thruster" or "fin" (in messages)
    tags: frozenset[str]  #: tags read
    ignored: frozenset[str]  #: tags accepted and ignored
    blocks: tuple[str, str]  #: the two required sub-blocks
    joint_tag: str
    link_tag: str
    id_tag: str
    knobs: Mapping[str, str]  #: scalar tag → field name
    label: str  #: default name prefix before the id
    is_fin: bool  #: a fin needs its joint (pose and limits) and keeps the fin-link frame


_THRUSTER = _Kind(
    "thruster",
    frozenset(_THRUSTER_TAGS),
    frozenset(_THRUSTER_IGNORED),
    ("dynamics", "conversion"),
    "jointName",
    "linkName",
    "thrusterID",
    THRUSTER_KNOBS,
    "thruster_",
    False,
)
_FIN = _Kind(
    "fin",
    frozenset(_FIN_TAGS),
    frozenset(_FIN_IGNORED),
    ("dynamics", "liftdrag"),
    "joint_name",
    "link_name",
    "fin_id",
    {},
    "fin",
    True,
)


def _scan_plugin(
    plugin: _Node,
    kind: _Kind,
    file: str | None,
    warn: list[tuple[_Node, str, str]],
    marks: dict[str, tuple[int, int]],
    prefix: str,
) -> tuple[dict[str, Any], str | None, str | None, int | None]:
    """Read the children of a thruster or fin ``<plugin>`` block.

    Returns the data read (sub-blocks and knobs), the joint name, the link name and the id.
    """
    data: dict[str, Any] = {}
    seen: set[str] = set()
    joint_name = link_name = None
    ident: int | None = None
    for c in plugin.children:
        if c.tag in kind.ignored:
            continue
        if c.tag not in kind.tags:
            raise _unknown(c, kind.name, set(kind.tags) | set(kind.ignored), file)
        if c.tag in seen:
            raise c.error(f"<{c.tag}> given twice", file, c.tag)
        seen.add(c.tag)
        if c.tag in kind.blocks:
            data[c.tag] = _block(c, c.tag, file, warn)
            marks[f"{prefix}.{c.tag}"] = (c.line, c.column)
            for g in c.children:
                name = _FIELD_OF[c.tag].get(g.tag, g.tag)
                marks[f"{prefix}.{c.tag}.{name}"] = (g.line, g.column)
        elif c.tag in kind.knobs:
            data[kind.knobs[c.tag]] = _float(c, file)
            marks[f"{prefix}.{kind.knobs[c.tag]}"] = (c.line, c.column)
        elif c.tag == kind.joint_tag:
            joint_name = c.text.strip()
        elif c.tag == kind.link_tag:
            link_name = c.text.strip()
        elif c.tag == kind.id_tag:
            try:
                ident = int(c.text.strip())
            except ValueError:
                raise c.error(f"<{kind.id_tag}> must be an integer", file, c.tag) from None
    for tag in kind.blocks:
        if tag not in data:
            raise plugin.error(f"{kind.name} plugin without <{tag}>", file, tag)
    return data, joint_name, link_name, ident


def _actuator(
    plugin: _Node,
    kind: _Kind,
    joints: Mapping[str, _Joint],
    file: str | None,
    warn: list[tuple[_Node, str, str]],
    marks: dict[str, tuple[int, int]],
    prefix: str,
) -> tuple[int | None, dict[str, Any]]:
    """One thruster or fin: its data, mounted at its joint (FLU → FRD), and its id.

    A thruster without its joint in the file sits at CO with thrust along +x (warned); a fin
    needs its joint, whose ``<limit>`` gives the joint limits.
    """
    data, joint_name, link_name, ident = _scan_plugin(plugin, kind, file, warn, marks, prefix)
    data["name"] = link_name or (
        f"{kind.label}{ident}" if ident is not None else plugin.attrib.get("name", "")
    )
    jt = joints.get(joint_name or "")
    if jt is None and kind.is_fin:
        raise plugin.error(
            f"fin plugin: joint {joint_name!r} not found; paste the fin's <joint> (with <origin> and "
            "<limit lower= upper=>) beside the plugin or load the whole URDF",
            file,
            "joint_name",
        )
    if jt is None and joint_name:
        warn.append(
            (
                plugin,
                "jointName",
                f"joint {joint_name!r} not in this file: thruster placed at CO, thrust along +x "
                "(load the whole URDF or paste the <joint> to get its pose)",
            )
        )
    if jt is not None:
        jt = _mounted(jt, file)
        if kind.is_fin and (jt.lower is None or jt.upper is None):
            raise jt.node.error(
                f"joint {joint_name!r} of a fin has no <limit lower= upper=>", file, "limit"
            )
        data["position"] = _flip_position(jt.xyz)
        r, p, y = jt.rpy
        # a fin keeps the Gazebo fin-link frame: R_m = T·R_FLU (module docstring)
        data["rpy"] = (r + math.pi if kind.is_fin else r, -p, -y)
        if kind.is_fin:
            data["lower"], data["upper"] = jt.lower, jt.upper
            marks[f"{prefix}.lower"] = marks[f"{prefix}.upper"] = (jt.node.line, jt.node.column)
    marks[prefix] = (plugin.line, plugin.column)
    return ident, data


_VARIANTS = {
    "zero_order",
    "first_order",
    "yoerger",
    "bessa",
    "basic",
    "dead_zone",
    "linear_interp",
    "quadratic",
    "two_lines",
}


def _validate(
    model: Any, data: Any, file: Any, marks: Mapping[str, tuple[int, int]], prefix: str = ""
) -> Any:
    """:func:`validate` with the discriminator segment (``.first_order.``) removed from paths."""
    try:
        return validate(model, data, file=file, marks=marks, prefix=prefix)
    except ConfigError as exc:
        if not exc.param:
            raise
        parts = exc.param.split(".")
        clean = ".".join(p for i, p in enumerate(parts) if not (p in _VARIANTS and i > 0))
        if clean == exc.param:
            raise
        probe, loc = clean, None
        while probe:
            if probe in marks:
                loc = marks[probe]
                break
            probe = probe.rsplit(".", 1)[0] if "." in probe else ""
        line, col = loc if loc else (exc.line, exc.column)
        raise ConfigError(exc.message, file=exc.file, line=line, column=col, param=clean) from None


def _sorted(
    items: list[tuple[int | None, dict[str, Any], dict[str, tuple[int, int]]]],
) -> list[tuple[int | None, dict[str, Any], dict[str, tuple[int, int]]]]:
    if all(i is not None for i, _, _ in items):
        return sorted(items, key=lambda t: t[0])  # type: ignore[arg-type, return-value]
    return items


def _emit(warn: list[tuple[_Node, str, str]], file: str | None, strict: bool) -> None:
    for node, param, msg in warn:
        if strict:
            raise node.error(msg + " (strict mode)", file, param)
        warnings.warn(
            ConfigWarning(msg, file=file, line=node.line, column=node.column, param=param),
            stacklevel=3,
        )


def parse_uuv_xml(
    text: str, *, file: str | Path | None = None, strict: bool = False
) -> ActuatorSet:
    """Build the actuators described by UUV Simulator plugin XML or a xacro-expanded URDF.

    Parameters
    ----------
    text : str
        XML: ``<plugin>`` block(s), ``<gazebo>`` blocks, joints, or a whole ``<robot>``.
    file : str or Path, optional
        Source file named in errors and warnings.
    strict : bool
        Turn every ConfigWarning (UUV Simulator's silent replacements) into a ConfigError.

    Returns
    -------
    ActuatorSet
        Thrusters (ordered by ``thrusterID``) and fins (ordered by ``fin_id``), FRD.

    Raises
    ------
    ConfigError
        Malformed XML, unexpanded xacro, unknown tag, missing element, invalid value — with
        file, line, column and the tag or parameter.
    """
    fname = str(file) if file is not None else None
    root = _parse_tree(text, fname)
    _check_expanded(root, fname)
    joints = _joints(root, fname)
    robot_mode = any(c.tag == "robot" for c in root.children)
    plugins = root.iter("plugin")
    warn: list[tuple[_Node, str, str]] = []
    thr: list[tuple[int | None, dict[str, Any], dict[str, tuple[int, int]]]] = []
    fins: list[tuple[int | None, dict[str, Any], dict[str, tuple[int, int]]]] = []
    for plugin in plugins:
        tags = {c.tag for c in plugin.children}
        if "conversion" in tags:
            m: dict[str, tuple[int, int]] = {}
            i, d = _actuator(plugin, _THRUSTER, joints, fname, warn, m, "thrusters.?")
            thr.append((i, d, m))
        elif "liftdrag" in tags:
            m = {}
            i, d = _actuator(plugin, _FIN, joints, fname, warn, m, "fins.?")
            fins.append((i, d, m))
        elif not robot_mode:
            raise plugin.error(
                "plugin is neither a thruster (<conversion>) nor a fin (<liftdrag>)", fname, "plugin"
            )
    if not thr and not fins:
        raise ConfigError("no thruster or fin plugin found", file=fname, line=1)
    _emit(warn, fname, strict)
    out_t = []
    for j, (_, d, m) in enumerate(_sorted(thr)):
        marks = {k.replace("thrusters.?", f"thrusters.{j}"): v for k, v in m.items()}
        params = _validate(th.ThrusterParams, d, fname, marks, f"thrusters.{j}")
        out_t.append(
            th.check(params, file=fname, marks=marks, prefix=f"thrusters.{j}", strict=strict)
        )
    out_f = []
    for j, (_, d, m) in enumerate(_sorted(fins)):
        marks = {k.replace("fins.?", f"fins.{j}"): v for k, v in m.items()}
        out_f.append(_validate(FinParams, d, fname, marks, f"fins.{j}"))
    return ActuatorSet(thrusters=tuple(out_t), fins=tuple(out_f))


def _compose(
    node: yaml.Node, path: str, marks: dict[str, tuple[int, int]], file: Any = None
) -> Any:
    from marinesim.core.textio import yaml_construct

    marks[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Any] = {}
        for k, v in node.value:
            key = str(yaml_construct(k, file=file))
            sub = f"{path}.{key}" if path else key
            out[key] = _compose(v, sub, marks, file)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [
            _compose(v, f"{path}.{i}" if path else str(i), marks, file)
            for i, v in enumerate(node.value)
        ]
    return yaml_construct(node, file=file)


def parse_actuators_yaml(
    text: str, *, file: str | Path | None = None, strict: bool = False
) -> ActuatorSet:
    """Build an :class:`ActuatorSet` from marinesim actuator YAML (format: module docstring).

    Parameters
    ----------
    text : str
        YAML text with ``thrusters`` and/or ``fins``.
    file : str or Path, optional
        Source file named in errors and warnings.
    strict : bool
        Turn ConfigWarnings (e.g. ``clamp_min >= clamp_max``) into ConfigErrors.

    Returns
    -------
    ActuatorSet
        The actuators, FRD.

    Raises
    ------
    ConfigError
        YAML syntax errors and invalid values, located ``file:line:column: param``.
    """
    from marinesim.core.textio import yaml_compose

    node = yaml_compose(text, file=file)  # bounded nesting, aliases and expanded size
    marks: dict[str, tuple[int, int]] = {}
    data = _compose(node, "", marks, file) if node is not None else {}
    if not isinstance(data, dict):
        raise ConfigError(
            "actuator YAML must be a mapping with 'thrusters' and/or 'fins'", file=file, line=1
        )
    aset = _validate(ActuatorSet, data, file, marks)
    for j, t in enumerate(aset.thrusters):
        th.check(t, file=file, marks=marks, prefix=f"thrusters.{j}", strict=strict)
    return aset


def load_actuators(path: str | Path, *, strict: bool = False) -> ActuatorSet:
    """Read actuators from a file: UUV XML/URDF (``.xml``, ``.urdf``, ``.sdf``) or YAML.

    Parameters
    ----------
    path : str or Path
        The file.
    strict : bool
        Turn ConfigWarnings into ConfigErrors.

    Returns
    -------
    ActuatorSet
        The actuators, FRD.

    Raises
    ------
    ConfigError
        Unreadable file or any error of :func:`parse_uuv_xml` / :func:`parse_actuators_yaml`.
    """
    from marinesim.core.textio import read_input_text

    p = Path(path)
    text = read_input_text(p, what="actuator file")
    if p.suffix.lower() in (".yaml", ".yml"):
        return parse_actuators_yaml(text, file=p, strict=strict)
    if p.suffix.lower() in (".xml", ".urdf", ".sdf", ".xacro") or text.lstrip().startswith("<"):
        return parse_uuv_xml(text, file=p, strict=strict)
    raise ConfigError("unknown actuator file type (expected .yaml/.yml or .xml/.urdf)", file=p)


def load_actuators_yaml(path: str | Path, *, strict: bool = False) -> ActuatorSet:
    """Read marinesim actuator YAML from ``path`` (see :func:`parse_actuators_yaml`)."""
    from marinesim.core.textio import read_input_text

    p = Path(path)
    text = read_input_text(p, what="actuator file")
    return parse_actuators_yaml(text, file=p, strict=strict)
