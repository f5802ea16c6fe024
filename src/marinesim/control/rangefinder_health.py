"""Autopilot side of the down-facing rangefinder (SURFTRAK spec §2–§3).

* the MAVLink backend (type 10): message intake, effective limits, 500 ms timeout, status and
  the valid count (§2.1–2.2);
* ArduSub's health rule ``alt_healthy`` and ``rangefinder_alt_ok`` (§2.3);
* the terrain estimate: 0.25 Hz low-pass of the reading with a reset after > 1 s without a
  healthy reading, and ``terrain_offset = inertial_alt − filtered`` (§3).

Times are integer microseconds since boot (floats holding integers in arrays).  Values are
floats (N = 1) or arrays of shape (N,) (see :mod:`marinesim.control.posz`).
"""

from __future__ import annotations

import math
from typing import Any

from marinesim.control.posz import where

__all__ = [
    "FILT_ALPHA",
    "HEALTH_MAX",
    "MAVLINK_TIMEOUT_US",
    "NEVER_US",
    "RANGEFINDER_TIMEOUT_US",
    "SQ_UNKNOWN",
    "STATUS_GOOD",
    "STATUS_HIGH",
    "STATUS_LOW",
    "STATUS_NODATA",
    "RangefinderHealth",
    "alt_ok_of",
    "health_step",
    "map_signal_quality",
    "message_step",
]

Num = Any

#: AP_RangeFinder_MAVLink timeout (µs).
MAVLINK_TIMEOUT_US = 500_000
#: ArduSub RANGEFINDER_TIMEOUT_MS (µs): filter reset and ``rangefinder_alt_ok`` window.
RANGEFINDER_TIMEOUT_US = 1_000_000
#: ArduSub RANGEFINDER_HEALTH_MAX: consecutive good cycles needed.
HEALTH_MAX = 3
#: Filter gain: 0.05 s step, RANGEFINDER_WPNAV_FILT_HZ = 0.25 Hz.
FILT_ALPHA = 0.05 / (0.05 + 1.0 / (2.0 * math.pi * 0.25))
#: "Never" time (µs) used before the first message / healthy reading.
NEVER_US = -1.0e15
#: Signal quality "unknown".
SQ_UNKNOWN = -1
STATUS_NODATA, STATUS_LOW, STATUS_HIGH, STATUS_GOOD = 1, 2, 3, 4


def map_signal_quality(sq: Num) -> Num:
    """DISTANCE_SENSOR signal_quality → backend value: 0 → unknown (−1), 1 → 0, else as is."""
    return where(sq == 0, -1.0, where(sq == 1, 0.0, sq * 1.0))


def message_step(
    mask: Num,
    now_us: float,
    dist_cm: Num,
    min_cm: Num,
    max_cm: Num,
    sq: Num,
    param_min: float,
    param_max: float,
    msg_dist: Num,
    msg_min: Num,
    msg_max: Num,
    msg_sq: Num,
    last_msg_us: Num,
) -> tuple[Num, Num, Num, Num, Num]:
    """Store a DISTANCE_SENSOR message where ``mask`` (pure; §2.1).

    Parameters
    ----------
    mask : bool or ndarray (N,)
        Which vehicles received a message.
    now_us : float
        Arrival time (µs).
    dist_cm, min_cm, max_cm, sq : float or ndarray (N,)
        Message fields (cm, cm, cm, %).
    param_min, param_max : float
        RNGFND1_MIN_CM, RNGFND1_MAX_CM (cm).
    msg_dist, msg_min, msg_max, msg_sq, last_msg_us : float or ndarray (N,)
        Stored message (cm, cm, cm, backend quality, µs).

    Returns
    -------
    tuple
        New ``(msg_dist, msg_min, msg_max, msg_sq, last_msg_us)``.
    """
    both_zero = (min_cm == 0) & (max_cm == 0)
    eff_min = where(both_zero, param_min, where(min_cm > param_min, min_cm, param_min))
    eff_max = where(both_zero, param_max, where(max_cm < param_max, max_cm, param_max))
    return (
        where(mask, dist_cm, msg_dist),
        where(mask, eff_min, msg_min),
        where(mask, eff_max, msg_max),
        where(mask, map_signal_quality(sq), msg_sq),
        where(mask, now_us, last_msg_us),
    )


def health_step(
    now_us: float,
    z_cm: Num,
    msg_dist: Num,
    msg_min: Num,
    msg_max: Num,
    msg_sq: Num,
    last_msg_us: Num,
    valid_count: Num,
    filt_cm: Num,
    last_healthy_us: Num,
    terrain_offset_cm: Num,
    have_offset: Num,
    sq_min: float,
) -> tuple[Num, Num, Num, Num, Num, Num, Num, Num, Num]:
    """One 20 Hz cycle of backend status, valid count, health and terrain filter (pure; §2.2–3).

    Parameters
    ----------
    now_us : float
        Current time (µs).
    z_cm : float or ndarray (N,)
        Inertial z (cm, up).
    msg_dist, msg_min, msg_max, msg_sq, last_msg_us : float or ndarray (N,)
        Stored message (see :func:`message_step`).
    valid_count, filt_cm, last_healthy_us, terrain_offset_cm : float or ndarray (N,)
        Backend valid count, filtered distance (cm), last healthy time (µs), terrain offset (cm).
    have_offset : bool or ndarray (N,)
        A terrain offset was ever computed.
    sq_min : float
        RNGFND_SQ_MIN (%).

    Returns
    -------
    tuple
        New ``(status, distance_cm, sq, valid_count, alt_healthy, filt_cm, last_healthy_us,
        terrain_offset_cm, have_offset)``.
    """
    stale = (now_us - last_msg_us) > MAVLINK_TIMEOUT_US
    dist = where(stale, 0.0, msg_dist)
    high = dist > msg_max
    low = dist < msg_min
    status = where(
        stale, STATUS_NODATA, where(high, STATUS_HIGH, where(low, STATUS_LOW, STATUS_GOOD))
    )
    good = status == STATUS_GOOD
    vc = valid_count + 1.0
    vc = vc + (10.0 - vc) * (vc > 10.0)
    valid_count = vc * good
    sq = where(stale, SQ_UNKNOWN, msg_sq)
    sq_ok = (sq == SQ_UNKNOWN) | (sq >= sq_min)
    healthy = good & (valid_count >= HEALTH_MAX) & sq_ok
    timed_out = (now_us - last_healthy_us) > RANGEFINDER_TIMEOUT_US
    filt_new = where(timed_out, dist, filt_cm + FILT_ALPHA * (dist - filt_cm))
    filt_cm = where(healthy, filt_new, filt_cm)
    last_healthy_us = where(healthy, now_us, last_healthy_us)
    terrain_offset_cm = where(healthy, z_cm - filt_cm, terrain_offset_cm)
    have_offset = have_offset | healthy
    return (
        status, dist, sq, valid_count, healthy, filt_cm, last_healthy_us, terrain_offset_cm,
        have_offset,
    )  # fmt: skip


def alt_ok_of(alt_healthy: Num, last_healthy_us: Num, now_us: float, enabled: bool) -> Num:
    """``rangefinder_alt_ok``: enabled, healthy, and healthy within the last second (pure)."""
    ok = alt_healthy & ((now_us - last_healthy_us) < RANGEFINDER_TIMEOUT_US)
    return ok if enabled else ok & False


class RangefinderHealth:
    """Backend + health + terrain filter state for N vehicles.

    Parameters
    ----------
    template : float or ndarray (N,)
        A value of the batch's type and shape (its contents are not used).
    min_cm, max_cm : float
        RNGFND1_MIN_CM, RNGFND1_MAX_CM (cm).
    sq_min : float
        RNGFND_SQ_MIN (%).
    enabled : bool
        RNGFND1_TYPE != 0 and orientation down.
    """

    def __init__(
        self, template: Num, min_cm: float, max_cm: float, sq_min: float, enabled: bool = True
    ) -> None:
        zero = template * 0.0
        self.param_min = float(min_cm)
        self.param_max = float(max_cm)
        self.sq_min = float(sq_min)
        self.enabled = bool(enabled)
        # stored message
        self.msg_dist = zero
        self.msg_min = zero + self.param_min
        self.msg_max = zero + self.param_max
        self.msg_sq = zero + SQ_UNKNOWN
        self.last_msg_us = zero + NEVER_US
        # backend output
        self.status = zero + STATUS_NODATA
        self.distance_cm = zero
        self.sq = zero + SQ_UNKNOWN
        self.valid_count = zero
        # sub level
        self.alt_healthy = template != template  # all False, right type
        self.last_healthy_us = zero + NEVER_US
        self.filt_cm = zero
        self.inertial_alt_cm = zero
        self.terrain_offset_cm = zero
        self.have_offset = self.alt_healthy

    def handle_message(
        self, mask: Num, now_us: float, dist_cm: Num, min_cm: Num, max_cm: Num, sq: Num
    ) -> None:
        """Store a DISTANCE_SENSOR message where ``mask`` (orientation matches, message sent).

        Parameters
        ----------
        mask : bool or ndarray (N,)
            Which vehicles received a message.
        now_us : float
            Arrival time (µs since boot); the message's own time field is ignored.
        dist_cm, min_cm, max_cm, sq : float or ndarray (N,)
            Message fields (cm, cm, cm, %).
        """
        (
            self.msg_dist, self.msg_min, self.msg_max, self.msg_sq, self.last_msg_us,
        ) = message_step(
            mask, now_us, dist_cm, min_cm, max_cm, sq, self.param_min, self.param_max,
            self.msg_dist, self.msg_min, self.msg_max, self.msg_sq, self.last_msg_us,
        )  # fmt: skip

    @property
    def min_m(self) -> Num:
        """Effective minimum range (m)."""
        return self.msg_min * 0.01

    @property
    def max_m(self) -> Num:
        """Effective maximum range (m)."""
        return self.msg_max * 0.01

    def update(self, now_us: float, z_cm: Num) -> None:
        """One 20 Hz cycle: backend status, valid count, health, terrain filter (§2.2–3).

        Parameters
        ----------
        now_us : float
            Current time (µs).
        z_cm : float or ndarray (N,)
            Inertial z (cm, up).
        """
        (
            self.status, self.distance_cm, self.sq, self.valid_count, self.alt_healthy,
            self.filt_cm, self.last_healthy_us, self.terrain_offset_cm, self.have_offset,
        ) = health_step(
            now_us, z_cm, self.msg_dist, self.msg_min, self.msg_max, self.msg_sq,
            self.last_msg_us, self.valid_count, self.filt_cm, self.last_healthy_us,
            self.terrain_offset_cm, self.have_offset, self.sq_min,
        )  # fmt: skip
        self.inertial_alt_cm = z_cm

    def alt_ok(self, now_us: float) -> Num:
        """``rangefinder_alt_ok``: enabled, healthy and healthy within the last second."""
        return alt_ok_of(self.alt_healthy, self.last_healthy_us, now_us, self.enabled)
