"""Effective configuration of the uSimMarine model (``usm`` and ``usm_v22``).

:class:`UsmConfig` holds the values the model runs with after the configuration lines have
been applied by :func:`marinesim.models.usm_config.configure` (written in this module) in
either mode (``compat="doc"``, the documented behaviour; ``compat="moos"``, the real
program's parsing).  Units: m, m/s, m/s², deg, deg/s, percent, s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # pragma: no cover
    from marinesim.environment.current import CurrentField
    from marinesim.models.thrustmap import ThrustMap

__all__ = ["UsmConfig"]

Compat = Literal["doc", "moos"]
Variant = Literal["usm", "usm_v22"]


@dataclass(frozen=True)
class UsmConfig:
    """Effective parameters of one uSimMarine vehicle block (spec usimmarine.md §5.2, §12).

    Every field has the program's default.  ``thrust_map`` is None until configured (the
    model then uses an empty map with ``thrust_factor`` 20 and no reflect).
    """

    variant: Variant = "usm"
    compat: Compat = "doc"
    # start state
    start_x: float = 0.0  # m, local east (UTM grid)
    start_y: float = 0.0  # m, local north (UTM grid)
    start_heading: float = 0.0  # deg, not wrapped
    start_speed: float = 0.0  # m/s
    start_depth: float = 0.0  # m, >= 0
    # dynamics
    buoyancy_rate: float = 0.025  # m/s, positive floats up
    max_acceleration: float = 0.0  # m/s^2, 0 = unlimited
    max_deceleration: float = 0.5  # m/s^2, 0 = unlimited
    max_depth_rate: float = 0.5  # m/s
    max_depth_rate_speed: float = 2.0  # m/s
    turn_rate: float = 70.0  # percent-ish, clipped to [0, 100]
    rotate_speed: float = 0.0  # deg/s
    turn_loss: float = 0.85  # fraction of speed lost at full rudder (V22: turn_spd_loss)
    max_rudder_degs_per_sec: float = 0.0  # %/s of rudder, 0 = off
    # drift and environment
    drift_x: float = 0.0  # m/s east
    drift_y: float = 0.0  # m/s north
    default_water_depth: float = 0.0  # m, 0 = unknown
    current_field: CurrentField | None = None
    current_field_active: bool = True
    # thrust map
    thrust_map: ThrustMap | None = None
    # app
    dual_state: bool = False
    sim_pause: bool = False
    prefix: str = "USM"
    trim_tolerance: float = 5.0  # deg
    max_trim_delay: float = 10.0  # s
    app_tick: float | None = None  # Hz, from the .moos block (the step is 1/AppTick)
    # V22 only
    turn_spd_map_full_speed: float = 5.0  # m/s (forced to 5 by the program every step)
    turn_spd_map_null_speed: float = 0.0  # m/s
    turn_spd_map_full_rate: float = 100.0  # percent
    turn_spd_map_null_rate: float = 0.0  # percent
    turn_radius: float = -1.0  # m, <= 0 = off
    max_speed: float = 5.0  # m/s, clamp of the published speed
    thrust_mode_diff: bool = False
    thrust_mode_reverse: bool = False
    extras: dict[str, str] = field(default_factory=dict)  # accepted but unmodelled keys
