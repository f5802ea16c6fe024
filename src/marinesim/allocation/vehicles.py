"""Thruster layouts of real vehicles, for allocation (``specs/allocation.md`` §2.4, §8).

* ``bluerov2_heavy`` — canonical BlueROV2 Heavy geometry of ``clydemcqueen/bluerov2_gz``
  @ ``e21e884`` (the model ArduSub SITL flies), motors in ArduSub order 1–8, exact 45°
  directions, moments about the model origin (the dynamics CO).  Which physical side of each
  T200 is its forward side is **not established by any source**: the ``bound_set`` chooses
  ``ardusub_positive_forward`` (default, flagged: σ = +1 for all), ``flipped`` (σ = −1 for
  all) or ``symmetric`` (σ = +1 but the allocator is told to use the reverse limit on both
  sides).  DOF priority weights (1, 1, 10, 10, 10, 3) (attitude and heave before surge).
* ``bluerov2_heavy_wu2018`` — Wu (2018) geometry as reused by public code [unverified];
  horizontals 85 mm below the origin.
* ``bluerov2_heavy_hippo`` — HippoCampusRobotics ``hippo_sim`` geometry (signs from the
  canonical set).
* ``mrobosub`` — the MRoboSub-like 8-thruster layout from yaw/pitch angles (§2.4; the pairing
  of yaw angles with corners is inferred).
* ``rexrov`` — UUV Simulator's RexROV, poses converted from FLU to FRD.

These layouts live here for allocation; the 6-DOF vehicle presets are maintained separately
(``marinesim.models``) and should be unified with these.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

import numpy as np

from marinesim.allocation.tam import Thruster, ThrusterLayout
from marinesim.core import registry
from marinesim.core.errors import ConfigError, UnknownNameError, suggest

__all__ = [
    "BOUND_SETS",
    "VEHICLES",
    "ardusub_factors",
    "get_layout",
    "layout_from_preset",
    "load_layout_file",
    "vehicle_names",
]

BoundSet = Literal["ardusub_positive_forward", "flipped", "symmetric"]
BOUND_SETS: tuple[str, ...] = ("ardusub_positive_forward", "flipped", "symmetric")

_S = 1.0 / math.sqrt(2.0)

#: BlueROV2 Heavy, bluerov2_gz canonical: (name, position FRD [m], direction of positive output)
_BLUEROV2_HEAVY = (
    ("m1_front_starboard", (0.14, 0.092, 0.0), (-_S, _S, 0.0)),
    ("m2_front_port", (0.14, -0.092, 0.0), (-_S, -_S, 0.0)),
    ("m3_rear_starboard", (-0.15, 0.092, 0.0), (_S, _S, 0.0)),
    ("m4_rear_port", (-0.15, -0.092, 0.0), (_S, -_S, 0.0)),
    ("m5_front_starboard_vertical", (0.118, 0.215, -0.064), (0.0, 0.0, 1.0)),
    ("m6_front_port_vertical", (0.118, -0.215, -0.064), (0.0, 0.0, 1.0)),
    ("m7_rear_starboard_vertical", (-0.118, 0.215, -0.064), (0.0, 0.0, 1.0)),
    ("m8_rear_port_vertical", (-0.118, -0.215, -0.064), (0.0, 0.0, 1.0)),
)

#: ArduSub SUB_FRAME_VECTORED_6DOF factors (roll, pitch, yaw, throttle, forward, lateral), motors 1–8
_ARDUSUB_VECTORED_6DOF = np.array(
    [
        [0, 0, 1, 0, -1, 1],
        [0, 0, -1, 0, -1, -1],
        [0, 0, -1, 0, 1, 1],
        [0, 0, 1, 0, 1, -1],
        [1, -1, 0, -1, 0, 0],
        [-1, -1, 0, -1, 0, 0],
        [1, 1, 0, -1, 0, 0],
        [-1, 1, 0, -1, 0, 0],
    ],
    dtype=float,
)


def ardusub_factors() -> np.ndarray:
    """ArduSub ``SUB_FRAME_VECTORED_6DOF`` factor table, shape (8, 6).

    Columns roll, pitch, yaw, throttle (positive = ascend), forward, lateral; rows motors 1–8
    (``specs/allocation.md`` §8.2).
    """
    return _ARDUSUB_VECTORED_6DOF.copy()


def _bluerov2(
    name: str,
    spec: tuple[tuple[str, tuple[float, float, float], tuple[float, float, float]], ...],
    bound_set: BoundSet,
    notes: str,
) -> ThrusterLayout:
    if bound_set not in BOUND_SETS:
        raise ConfigError(
            f"unknown bound_set {bound_set!r} (known: {', '.join(BOUND_SETS)})", param="bound_set"
        )
    sigma = -1 if bound_set == "flipped" else 1
    return ThrusterLayout(
        name=name,
        thrusters=[
            Thruster(name=n, position=p, direction=d, t200_forward=sigma) for n, p, d in spec
        ],
        dof_weights=(1.0, 1.0, 10.0, 10.0, 10.0, 3.0),
        characteristic_length=0.2,
        notes=notes + f" T200 sides: {bound_set} [assumption: no source establishes it].",
    )


def bluerov2_heavy(bound_set: BoundSet = "ardusub_positive_forward") -> ThrusterLayout:
    """BlueROV2 Heavy, canonical bluerov2_gz geometry (ArduSub motor order 1–8)."""
    return _bluerov2(
        "bluerov2_heavy",
        _BLUEROV2_HEAVY,
        bound_set,
        "clydemcqueen/bluerov2_gz @ e21e884 model.sdf, FRD about the model origin.",
    )


def bluerov2_heavy_wu2018(bound_set: BoundSet = "ardusub_positive_forward") -> ThrusterLayout:
    """BlueROV2 Heavy, Wu (2018) geometry as reused by public code [unverified]."""
    spec = tuple(
        (n, (math.copysign(0.156, p[0]), math.copysign(0.111, p[1]), 0.085), d)
        for n, p, d in _BLUEROV2_HEAVY[:4]
    ) + tuple(
        (n, (math.copysign(0.120, p[0]), math.copysign(0.218, p[1]), 0.0), d)
        for n, p, d in _BLUEROV2_HEAVY[4:]
    )
    return _bluerov2("bluerov2_heavy_wu2018", spec, bound_set, "Wu (2018) numbers [unverified].")


def bluerov2_heavy_hippo(bound_set: BoundSet = "ardusub_positive_forward") -> ThrusterLayout:
    """BlueROV2 Heavy, HippoCampusRobotics hippo_sim geometry (canonical signs)."""
    spec = tuple(
        (n, (math.copysign(0.14, p[0]), math.copysign(0.10, p[1]), 0.0), d)
        for n, p, d in _BLUEROV2_HEAVY[:4]
    ) + tuple(
        (n, (math.copysign(0.12, p[0]), math.copysign(0.22, p[1]), -0.06), d)
        for n, p, d in _BLUEROV2_HEAVY[4:]
    )
    return _bluerov2("bluerov2_heavy_hippo", spec, bound_set, "hippo_sim @ c370f58.")


def mrobosub(bound_set: BoundSet = "ardusub_positive_forward") -> ThrusterLayout:
    """MRoboSub-like 8-thruster layout from yaw/pitch angles (§2.4; pairing inferred)."""
    deg = math.pi / 180.0
    corners = [
        ((0.2921, 0.267, 0.0), -45.0),
        ((0.2921, -0.267, 0.0), 45.0),
        ((-0.2921, 0.267, 0.0), 45.0),
        ((-0.2921, -0.267, 0.0), -45.0),
    ]
    verts = [(0.127, 0.267, 0.0), (0.127, -0.267, 0.0), (-0.127, 0.267, 0.0), (-0.127, -0.267, 0.0)]
    sigma = -1 if bound_set == "flipped" else 1
    th = [
        Thruster(name=f"t{i}", position=p, yaw=y * deg, pitch=0.0, t200_forward=sigma)
        for i, (p, y) in enumerate(corners)
    ]
    th += [
        Thruster(name=f"t{i + 4}", position=p, yaw=0.0, pitch=90.0 * deg, t200_forward=sigma)
        for i, p in enumerate(verts)
    ]
    return ThrusterLayout(
        name="mrobosub", thrusters=th, notes="MRoboSub-like layout [pairing inferred]."
    )


def rexrov(bound_set: BoundSet = "ardusub_positive_forward") -> ThrusterLayout:
    """UUV Simulator RexROV: FLU poses (rpy in degrees × 0.01745329) converted to FRD."""
    d2r = 0.01745329
    poses = [
        ((-0.890895, 0.334385, 0.528822), (0.0, -74.53, -53.21)),
        ((-0.890895, -0.334385, 0.528822), (0.0, -74.53, 53.21)),
        ((0.890895, 0.334385, 0.528822), (0.0, -105.47, 53.21)),
        ((0.890895, -0.334385, 0.528822), (0.0, -105.47, -53.21)),
        ((-0.412125, 0.505415, 0.129), (0.0, 0.0, 45.0)),
        ((-0.412125, -0.505415, 0.129), (0.0, 0.0, -45.0)),
        ((0.412125, 0.505415, 0.129), (0.0, 0.0, 135.0)),
        ((0.412125, -0.505415, 0.129), (0.0, 0.0, -135.0)),
    ]
    flip = np.array([1.0, -1.0, -1.0])
    sigma = -1 if bound_set == "flipped" else 1
    th = []
    for i, (p, rpy) in enumerate(poses):
        _, pitch, yaw = (a * d2r for a in rpy)
        # R = Rz(yaw)·Ry(pitch)·Rx(roll); first column (roll does not move e_x)
        d_flu = np.array(
            [math.cos(yaw) * math.cos(pitch), math.sin(yaw) * math.cos(pitch), -math.sin(pitch)]
        )
        th.append(
            Thruster(
                name=f"thruster_{i}",
                position=tuple(float(x) for x in flip * np.array(p)),  # type: ignore[arg-type]
                direction=tuple(float(x) for x in flip * d_flu),  # type: ignore[arg-type]
                t200_forward=sigma,
            )
        )
    return ThrusterLayout(
        name="rexrov",
        thrusters=th,
        characteristic_length=1.0,
        notes="UUV Simulator RexROV, FLU→FRD.",
    )


VEHICLES = {
    "bluerov2_heavy": bluerov2_heavy,
    "bluerov2_heavy_wu2018": bluerov2_heavy_wu2018,
    "bluerov2_heavy_hippo": bluerov2_heavy_hippo,
    "mrobosub": mrobosub,
    "rexrov": rexrov,
}


def layout_from_preset(
    preset: Mapping[str, Any], name: str = "vehicle", t200_forward: Literal[1, -1] = 1
) -> ThrusterLayout:
    """ThrusterLayout from the ``thrusters`` section of a 6-DOF vehicle preset (parsed YAML).

    Accepts the preset format of ``marinesim/models/presets/*.yaml``
    (``thrusters: {list: [{name, position_frd, direction_frd, motor?}, ...]}``), so the
    allocation and the dynamics can share one geometry.

    Parameters
    ----------
    preset : mapping
        The whole parsed preset, or its ``thrusters`` section.
    name : str
        Vehicle name of the layout.
    t200_forward : {1, -1}
        T200 side along every positive direction (§8.3; not established by any source).

    Raises
    ------
    ConfigError
        Missing or malformed thruster entries (with the dotted parameter path).
    """
    section = preset.get("thrusters", preset)
    items = section.get("list") if isinstance(section, Mapping) else section
    if not isinstance(items, list) or not items:
        raise ConfigError("preset has no thruster list", param="thrusters.list")
    thrusters = []
    for k, item in enumerate(items):
        where = f"thrusters.list.{k}"
        try:
            pos = tuple(float(x) for x in item["position_frd"])
            direction = tuple(float(x) for x in item["direction_frd"])
        except (KeyError, TypeError, ValueError):
            raise ConfigError(
                "thruster needs numeric position_frd and direction_frd (3 values each)", param=where
            ) from None
        label = str(item.get("name", f"t{k}")).replace(" ", "_").replace("-", "_")
        if "motor" in item:
            label = f"m{item['motor']}_{label}"
        thrusters.append(
            Thruster(name=label, position=pos, direction=direction, t200_forward=t200_forward)  # type: ignore[arg-type]
        )
    return ThrusterLayout(name=name, thrusters=thrusters)


def vehicle_names() -> list[str]:
    """Names of the registered thruster layouts (registry kind ``"layout"``)."""
    return registry.names("layout")


def get_layout(name: str, bound_set: BoundSet = "ardusub_positive_forward") -> ThrusterLayout:
    """Registered thruster layout by name (built-ins above, or third-party ``layout/<name>``).

    Parameters
    ----------
    name : str
        One of :func:`vehicle_names`.
    bound_set : {"ardusub_positive_forward", "flipped", "symmetric"}
        Which T200 side acts along each positive direction (see the module docstring).

    Raises
    ------
    UnknownNameError
        With a did-you-mean suggestion.
    """
    try:
        factory = registry.get("layout", name, label="vehicle")
    except UnknownNameError as exc:
        raise UnknownNameError("vehicle", name, exc.known, param="vehicle") from None
    return factory(bound_set)


def _yaml_marks(node: Any, prefix: str = "") -> dict[str, tuple[int, int]]:
    """Dotted path → (line, column) of every node of a composed YAML document."""
    import yaml

    out: dict[str, tuple[int, int]] = {}
    stack = [(node, prefix)]
    while stack:
        n, pre = stack.pop()
        if isinstance(n, yaml.MappingNode):
            for key, val in n.value:
                path = f"{pre}.{key.value}" if pre else str(key.value)
                out.setdefault(path, (key.start_mark.line + 1, key.start_mark.column + 1))
                stack.append((val, path))
        elif isinstance(n, yaml.SequenceNode):
            for k, val in enumerate(n.value):
                path = f"{pre}.{k}" if pre else str(k)
                out.setdefault(path, (val.start_mark.line + 1, val.start_mark.column + 1))
                stack.append((val, path))
    return out


def load_layout_file(path: Any) -> ThrusterLayout:
    """A :class:`ThrusterLayout` from a YAML file (``name``, ``thrusters: [...]``, ...).

    Parameters
    ----------
    path : str or Path
        The layout file.

    Raises
    ------
    ConfigError
        Missing, unreadable or undecodable file, malformed YAML (with the nesting and alias
        limits of :mod:`marinesim.core.textio`), unknown keys (did-you-mean) or invalid values,
        located ``file:line:column: param``.
    """
    from pathlib import Path

    from marinesim.core.params import validate
    from marinesim.core.textio import read_input_text, yaml_compose, yaml_construct

    p = Path(path)
    text = read_input_text(p, what="vehicle file")
    node = yaml_compose(text, file=p)
    data = yaml_construct(node, file=p) if node is not None else None
    if not isinstance(data, dict):
        raise ConfigError("a thruster layout must be a mapping", file=p, line=1)
    marks = _yaml_marks(node)

    def check(d: Any, known: list[str], prefix: str) -> None:
        if not isinstance(d, dict):
            return
        for key in d:
            if str(key) in known:
                continue
            where = f"{prefix}{key}"
            line, col = marks.get(where, (None, None))
            close = suggest(str(key), known)
            hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            raise ConfigError(
                f"unknown parameter {key!r}{hint} (known: {', '.join(known)})",
                file=p,
                line=line,
                column=col,
                param=where,
            )

    check(data, list(ThrusterLayout.model_fields), "")
    thrusters = data.get("thrusters")
    if isinstance(thrusters, list):
        for k, t in enumerate(thrusters):
            check(t, list(Thruster.model_fields), f"thrusters.{k}.")
    return validate(ThrusterLayout, data, file=p, marks=marks)
