"""Declarations of the uSimMarine model: program constants, the MOOS variables it
subscribes to and publishes (used by ``--interface`` and the generated docs), and the
mail variable tables.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from marinesim.models.usm.config import UsmConfig

Params = UsmConfig

F64 = NDArray[np.float64]
BoolA = NDArray[np.bool_]

#: π as MOOS-IvP's AngleUtils uses it (M_PI).
_PI = math.pi
#: The truncated π of the reverse-mode yaw copy (§2.2).
_PI_TRUNC = 3.1415926
#: Hard-coded program constants (§5.2).
_DIFF_FULL_RATE = 36.0  # deg/s at full differential thrust
_BUOYANCY_DELAY = 5.0  # s
_REPORT_INTERVAL = 5.0  # s
_V22_FULL_SPEED = 5.0  # m/s, forced every heading step (§12)


# --------------------------------------------------------------------------------------
# declarations (used by ``--interface`` and the generated docs)
# --------------------------------------------------------------------------------------

#: Subscribed variables: (name, type, unit, description, variants).
SUBSCRIPTIONS: list[tuple[str, str, str, str, tuple[str, ...]]] = [
    ("DESIRED_THRUST", "double", "%", "thrust; ignored while differential", ("usm", "usm_v22")),
    (
        "DESIRED_RUDDER",
        "double",
        "%",
        "rudder, rate-limited per message (§3.9)",
        ("usm", "usm_v22"),
    ),
    ("DESIRED_ELEVATOR", "double", "%", "elevator (clipped to ±100 when used)", ("usm", "usm_v22")),
    ("DESIRED_THRUST_L", "double", "%", "left thrust, differential mode only", ("usm", "usm_v22")),
    ("DESIRED_THRUST_R", "double", "%", "right thrust, differential mode only", ("usm", "usm_v22")),
    (
        "THRUST_MODE_DIFFERENTIAL",
        "string",
        "",
        "true/false: differential thrust mode",
        ("usm", "usm_v22"),
    ),
    ("THRUST_MODE_REVERSE", "string", "", "true/false: reverse thrust mode", ("usm", "usm_v22")),
    (
        "USM_SIM_PAUSED",
        "string",
        "",
        "TRUE pauses, anything else resumes (§3.11)",
        ("usm", "usm_v22"),
    ),
    ("BUOYANCY_RATE", "double", "m/s", "buoyancy rate, positive floats up", ("usm", "usm_v22")),
    ("ROTATE_SPEED", "double", "deg/s", "external rotation, any sign", ("usm", "usm_v22")),
    ("DRIFT_X", "double", "m/s", "drift east", ("usm", "usm_v22")),
    ("CURRENT_X", "double", "m/s", "alias of DRIFT_X", ("usm", "usm_v22")),
    ("DRIFT_Y", "double", "m/s", "drift north", ("usm", "usm_v22")),
    ("CURRENT_Y", "double", "m/s", "alias of DRIFT_Y", ("usm", "usm_v22")),
    ("DRIFT_VECTOR", "string", "deg,m/s", "'ang,mag' sets the drift", ("usm", "usm_v22")),
    ("DRIFT_VECTOR_ADD", "string", "deg,m/s", "'ang,mag' added to the drift", ("usm", "usm_v22")),
    (
        "DRIFT_VECTOR_MULT",
        "double",
        "",
        "drift magnitude multiplier (negative reverses)",
        ("usm", "usm_v22"),
    ),
    ("WATER_DEPTH", "double", "m", "water depth (>= 0; 0 = unknown)", ("usm", "usm_v22")),
    (
        "USM_RESET",
        "string",
        "",
        "'x=,y=,heading=,speed=,depth=' or positional (§3.12)",
        ("usm", "usm_v22"),
    ),
    ("USM_TURN_RATE", "double", "%", "turn rate, clipped to [0, 100]", ("usm", "usm_v22")),
    ("USM_ENABLED", "string", "", "true/false: publish (usm) or run (V22)", ("usm", "usm_v22")),
    (
        "OBSTACLE_HIT",
        "any",
        "",
        "freezes the simulation for good (V22: string 'true' only)",
        ("usm", "usm_v22"),
    ),
    ("BUOYANCY_CONTROL", "string", "", "'true' starts the buoyancy handshake", ("usm", "usm_v22")),
    ("TRIM_CONTROL", "string", "", "'true' starts the trim handshake", ("usm", "usm_v22")),
    (
        "USM_BUOYANCY_RATE",
        "double",
        "m/s",
        "documented alias of BUOYANCY_RATE (default mode)",
        ("usm", "usm_v22"),
    ),
    (
        "USM_WATER_DEPTH",
        "double",
        "m",
        "documented alias of WATER_DEPTH (default mode)",
        ("usm", "usm_v22"),
    ),
    (
        "USM_CURRENT_FIELD",
        "string",
        "",
        "true/false: configured current field active (default mode)",
        ("usm", "usm_v22"),
    ),
    ("NAV_X", "double", "m", "overwrites x while disabled", ("usm_v22",)),
    ("NAV_Y", "double", "m", "overwrites y while disabled", ("usm_v22",)),
    ("NAV_HEADING", "double", "deg", "overwrites the heading while disabled", ("usm_v22",)),
    ("USM_RESET_NAV", "string", "", "copies the GT record into the NAV record", ("usm_v22",)),
    ("USM_TURN_RADIUS", "double", "m", "turn-radius limit (>= 0; 0 = off)", ("usm_v22",)),
]

#: Published variables: (name, type, unit, description, variants); <P> is the prefix.
PUBLICATIONS: list[tuple[str, str, str, str, tuple[str, ...]]] = [
    ("<P>_X", "double", "m", "x east (UTM grid)", ("usm", "usm_v22")),
    ("<P>_Y", "double", "m", "y north (UTM grid)", ("usm", "usm_v22")),
    ("<P>_LAT", "double", "deg", "latitude (with a datum)", ("usm", "usm_v22")),
    ("<P>_LONG", "double", "deg", "longitude (with a datum)", ("usm", "usm_v22")),
    ("<P>_HEADING", "double", "deg", "heading (+180 in reverse mode)", ("usm", "usm_v22")),
    (
        "<P>_SPEED",
        "double",
        "m/s",
        "speed (snapped to 0.01 in compat='moos'; V22 clamped to max_speed)",
        ("usm", "usm_v22"),
    ),
    ("<P>_DEPTH", "double", "m", "depth", ("usm", "usm_v22")),
    ("SIMULATION_MODE", "string", "", "'TRUE'", ("usm", "usm_v22")),
    ("<P>_Z", "double", "m", "-depth", ("usm", "usm_v22")),
    ("<P>_PITCH", "double", "rad", "pitch", ("usm", "usm_v22")),
    ("<P>_YAW", "double", "rad", "yaw (+3.1415926 in reverse mode)", ("usm", "usm_v22")),
    ("TRUE_X", "double", "m", "x (with dual_state: the GT value)", ("usm", "usm_v22")),
    ("TRUE_Y", "double", "m", "y (with dual_state: the GT value)", ("usm", "usm_v22")),
    ("<P>_HEADING_OVER_GROUND", "double", "deg", "heading over ground", ("usm", "usm_v22")),
    ("<P>_SPEED_OVER_GROUND", "double", "m/s", "speed over ground", ("usm", "usm_v22")),
    ("<P>_ALTITUDE", "double", "m", "altitude, once a water depth was known", ("usm", "usm_v22")),
    (
        "<P>_GT_*",
        "double",
        "",
        "the same set for the ground-truth record (dual_state)",
        ("usm", "usm_v22"),
    ),
    ("USM_FSUMMARY", "string", "", "drift summary 'ang=, mag=, xmag=, ymag='", ("usm",)),
    (
        "USM_DRIFT_SUMMARY",
        "string",
        "",
        "drift summary 'ang=, mag=, xmag=, ymag='",
        ("usm", "usm_v22"),
    ),
    ("USM_RESET_COUNT", "double", "", "number of USM_RESET messages", ("usm", "usm_v22")),
    ("BUOYANCY_REPORT", "string", "", "buoyancy handshake status", ("usm", "usm_v22")),
    ("TRIM_REPORT", "string", "", "trim handshake status", ("usm", "usm_v22")),
]

_DOUBLE_VARS = frozenset(
    {
        "DESIRED_THRUST",
        "DESIRED_RUDDER",
        "DESIRED_ELEVATOR",
        "DESIRED_THRUST_L",
        "DESIRED_THRUST_R",
        "BUOYANCY_RATE",
        "ROTATE_SPEED",
        "DRIFT_X",
        "CURRENT_X",
        "DRIFT_Y",
        "CURRENT_Y",
        "DRIFT_VECTOR_MULT",
        "WATER_DEPTH",
        "USM_TURN_RATE",
        "USM_BUOYANCY_RATE",
        "USM_WATER_DEPTH",
        "NAV_X",
        "NAV_Y",
        "NAV_HEADING",
        "USM_TURN_RADIUS",
    }
)
_STRING_VARS = frozenset(
    {
        "THRUST_MODE_DIFFERENTIAL",
        "THRUST_MODE_REVERSE",
        "USM_SIM_PAUSED",
        "DRIFT_VECTOR",
        "DRIFT_VECTOR_ADD",
        "USM_RESET",
        "USM_ENABLED",
        "BUOYANCY_CONTROL",
        "TRIM_CONTROL",
        "USM_CURRENT_FIELD",
        "USM_RESET_NAV",
    }
)
_DEAD_ALIASES = frozenset(
    {
        "USM_FORCE_X",
        "USM_FORCE_Y",
        "USM_FORCE_THETA",
        "USM_FORCE_VECTOR",
        "USM_FORCE_VECTOR_ADD",
        "USM_FORCE_VECTOR_MULT",
    }
)
_V22_ONLY = frozenset({"NAV_X", "NAV_Y", "NAV_HEADING", "USM_RESET_NAV", "USM_TURN_RADIUS"})
