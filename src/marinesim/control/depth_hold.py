"""ALT_HOLD depth control, the surface/bottom detector and the motors' throttle stage.

ArduSub pieces shared by ALT_HOLD and SURFTRAK (SURFTRAK spec §4.5, §5.2, §8.4):

* :func:`althold_control_depth` — ALT_HOLD's ``control_depth``: pilot climb rate, and with the
  stick centred the surface (target ≤ SURFACE_DEPTH − 5 cm) and bottom (target ≥ z + 10 cm)
  rules, then the z controller.
* :class:`SurfaceBottomDetector` — 400 Hz detector: at_surface from the depth sensor with a
  5 cm hysteresis; at_bottom after 1 s (400 loops) of downward saturation with |vz| < 5 cm/s.
* :class:`Motors` — AP_Motors' 2 Hz throttle filter, clamp 0…1, vertical thrust
  2·(throttle − 0.5) and the saturation flags (+1 up / −1 down).

z up, cm; floats (N = 1) or arrays (N,) as in :mod:`marinesim.control.posz`.
"""

from __future__ import annotations

from typing import Any

from marinesim.control.posz import PosZ, alpha, clamp, where

__all__ = [
    "BOTTOM_TRIGGER_LOOPS",
    "Motors",
    "SurfaceBottomDetector",
    "althold_control_depth",
    "althold_target",
    "detector_step",
    "motors_step",
]

Num = Any

#: BOTTOM_DETECTOR_TRIGGER_SEC × 400 Hz.
BOTTOM_TRIGGER_LOOPS = 400


def motors_step(throttle_in: Num, throttle: Num, a: float) -> tuple[Num, Num, Num]:
    """AP_Motors throttle stage for one loop (pure).

    Parameters
    ----------
    throttle_in : float or ndarray (N,)
        Controller throttle (0…1, may exceed the range).
    throttle : float or ndarray (N,)
        Filtered throttle of the last loop (0…1).
    a : float
        Low-pass coefficient (2 Hz at 400 Hz).

    Returns
    -------
    (throttle, thrust, limit)
        New filtered throttle (0…1), vertical thrust −1…1 (up +) and the saturation flag
        (+1 up / −1 down / 0).
    """
    f = throttle + a * (throttle_in - throttle)
    f = clamp(f, 0.0, 1.0)
    thrust = 2.0 * (f - 0.5)
    limit = (thrust >= 1.0) * 1.0 - (thrust <= -1.0)
    return f, thrust, limit


def detector_step(
    z_m: Num, vz_ms: Num, limit: Num, at_surface: Num, at_bottom: Num, count: Num, surface_m: float
) -> tuple[Num, Num, Num]:
    """Surface/bottom detector for one armed loop (pure).

    Parameters
    ----------
    z_m, vz_ms : float or ndarray (N,)
        Depth-sensor z (m, up) and climb rate (m/s).
    limit : float or ndarray (N,)
        Motor saturation (+1 / −1 / 0).
    at_surface, at_bottom : bool or ndarray (N,)
        Flags of the last loop.
    count : float or ndarray (N,)
        Loops of downward saturation at rest so far.
    surface_m : float
        SURFACE_DEPTH (m, z up).

    Returns
    -------
    (at_surface, at_bottom, count)
    """
    thresh = surface_m - 0.05 * at_surface
    at_surface = z_m > thresh
    cond = (limit < 0) & (vz_ms > -0.05) & (vz_ms < 0.05)
    reached = count >= BOTTOM_TRIGGER_LOOPS
    at_bottom = cond & (reached | at_bottom)
    count = where(cond, where(reached, count, count + 1.0), 0.0)
    return at_surface, at_bottom, count


def althold_target(
    climb: Num, pos_target: Num, z: Num, at_surface: Num, at_bottom: Num, surface_depth_cm: float
) -> Num:
    """ALT_HOLD's surface and bottom rules on the position target (cm), stick centred (pure).

    Returns the new total position target (cm, z up): ≤ SURFACE_DEPTH − 5 cm at the surface,
    ≥ z + 10 cm at the bottom, unchanged otherwise or while the pilot climbs.
    """
    centred = abs(climb) < 0.05
    surf = centred & at_surface
    bot = centred & (at_surface ^ True) & at_bottom
    tgt = pos_target
    tgt = where(surf & (tgt > surface_depth_cm - 5.0), surface_depth_cm - 5.0, tgt)
    return where(bot & (z + 10.0 > tgt), z + 10.0, tgt)


class Motors:
    """AP_Motors throttle stage for N vehicles.

    Parameters
    ----------
    throttle : float or ndarray (N,)
        Initial filtered throttle (0…1).
    dt : float
        Loop period (s).
    cutoff_hz : float
        Throttle filter cut-off (2 Hz).
    """

    def __init__(self, throttle: Num, dt: float = 0.0025, cutoff_hz: float = 2.0) -> None:
        self.a = alpha(dt, cutoff_hz)
        self.throttle = throttle
        self.thrust = 2.0 * (throttle - 0.5)
        self.limit = throttle * 0.0

    def output(self, throttle_in: Num) -> Num:
        """Filter ``throttle_in`` and return the vertical thrust −1…1 (positive up)."""
        self.throttle, thrust, self.limit = motors_step(throttle_in, self.throttle, self.a)
        self.thrust = thrust
        return thrust

    @property
    def saturated(self) -> Num:
        """True where the throttle is at its lower or upper limit."""
        return self.limit != 0


class SurfaceBottomDetector:
    """ArduSub's surface/bottom detector with a healthy depth sensor (400 Hz).

    Parameters
    ----------
    template : float or ndarray (N,)
        A value of the batch's type/shape.
    surface_depth_cm : float
        SURFACE_DEPTH (cm, z up, e.g. −10).
    """

    def __init__(self, template: Num, surface_depth_cm: float) -> None:
        false = template != template
        self.surface_m = surface_depth_cm * 0.01
        self.at_surface = false
        self.at_bottom = false
        self.count = template * 0.0

    def update(self, z_m: Num, vz_ms: Num, limit: Num, armed: bool = True) -> None:
        """Update the flags from depth-sensor z (m), climb rate (m/s) and motor limit."""
        if not armed:
            self.at_surface = self.at_surface & False
            self.at_bottom = self.at_bottom & False
            self.count = self.count * 0.0
            return
        self.at_surface, self.at_bottom, self.count = detector_step(
            z_m, vz_ms, limit, self.at_surface, self.at_bottom, self.count, self.surface_m
        )


def althold_control_depth(
    zctl: PosZ,
    climb: Num,
    z: Num,
    vz: Num,
    az: Num,
    at_surface: Num,
    at_bottom: Num,
    surface_depth_cm: float,
    saturated: Num,
) -> Num:
    """ALT_HOLD's ``control_depth`` for one loop; returns the throttle (0…1, unfiltered).

    Parameters
    ----------
    zctl : PosZ
        The z controller.
    climb : float or ndarray (N,)
        Pilot climb rate (cm/s), already clamped to the speed limits.
    z, vz, az : float or ndarray (N,)
        Belief z (cm), climb rate (cm/s), vertical acceleration (cm/s²).
    at_surface, at_bottom : bool or ndarray (N,)
        Detector flags.
    surface_depth_cm : float
        SURFACE_DEPTH (cm).
    saturated : bool or ndarray (N,)
        Motors at a throttle limit.
    """
    zctl.pos_target = althold_target(
        climb, zctl.pos_target, z, at_surface, at_bottom, surface_depth_cm
    )
    zctl.set_target_from_climb_rate(climb)
    return zctl.update(z, vz, az, saturated)
