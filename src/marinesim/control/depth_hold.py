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
]

Num = Any

#: BOTTOM_DETECTOR_TRIGGER_SEC × 400 Hz.
BOTTOM_TRIGGER_LOOPS = 400


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
        f = self.throttle + self.a * (throttle_in - self.throttle)
        f = clamp(f, 0.0, 1.0)
        self.throttle = f
        thrust = 2.0 * (f - 0.5)
        self.limit = (thrust >= 1.0) * 1.0 - (thrust <= -1.0)
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
        thresh = self.surface_m - 0.05 * self.at_surface
        self.at_surface = z_m > thresh
        cond = (limit < 0) & (vz_ms > -0.05) & (vz_ms < 0.05)
        reached = self.count >= BOTTOM_TRIGGER_LOOPS
        self.at_bottom = cond & (reached | self.at_bottom)
        self.count = where(cond, where(reached, self.count, self.count + 1.0), 0.0)


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
    centred = abs(climb) < 0.05
    surf = centred & at_surface
    bot = centred & (at_surface ^ True) & at_bottom
    tgt = zctl.pos_target
    tgt = where(surf & (tgt > surface_depth_cm - 5.0), surface_depth_cm - 5.0, tgt)
    tgt = where(bot & (z + 10.0 > tgt), z + 10.0, tgt)
    zctl.pos_target = tgt
    zctl.set_target_from_climb_rate(climb)
    return zctl.update(z, vz, az, saturated)
