"""ArduSub's SURFTRAK (range hold) mode and the vertical autopilot around it.

Follows ``ArduSub/mode_surftrak.cpp`` as described exactly in the SURFTRAK spec (§1–§7):
ALT_HOLD whose depth target carries a terrain offset so that the rangefinder distance is held.
Conventions are ArduSub's: z up, origin at the surface, cm, cm/s, loop period 2.5 ms; GCS
messages keep ArduSub's texts (``%f`` of float32 values).

Version note (spec §4.8): at the surface and at the bottom the **absolute** Sub 4.5 semantics
are implemented — the total position target becomes min(target, SURFACE_DEPTH − 5 cm) or
max(z + 10 cm, target) and then the terrain offset is re-initialised to 0 without moving it.
Current master's literal reading (target minus the terrain offset) is not followed.

Values are floats (N = 1) or arrays (N,) (see :mod:`marinesim.control.posz`); the mode number
is shared by the batch.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import model_validator

from marinesim.control.depth_hold import Motors, SurfaceBottomDetector, althold_control_depth
from marinesim.control.pilot import PilotStick
from marinesim.control.posz import PosZ, PosZGains, any_true, clamp, where
from marinesim.control.rangefinder_health import RangefinderHealth
from marinesim.core.params import ParamsBase, field

__all__ = [
    "ALT_HOLD",
    "INVALID_TARGET",
    "SURFTRAK",
    "ArduSubVertical",
    "ButtonTargets",
    "GcsMessage",
    "KeepTarget",
    "MASTER_ALIASES",
    "SurftrakParams",
    "offset_target_step",
    "reset_target",
    "surface_bottom_step",
    "take_step",
]

Num = Any

#: Mode numbers.
ALT_HOLD = 2
SURFTRAK = 21
#: ``rangefinder_target_cm`` when there is none.
INVALID_TARGET = -1.0

INFO = "INFO"
WARNING = "WARNING"


#: ArduSub master (4.7-dev) parameter name → (Sub 4.5 name, factor to 4.5 units).
MASTER_ALIASES: dict[str, tuple[str, float]] = {
    "PSC_D_POS_P": ("PSC_POSZ_P", 1.0),
    "PSC_D_VEL_P": ("PSC_VELZ_P", 1.0),
    "PSC_D_VEL_I": ("PSC_VELZ_I", 1.0),
    "PSC_D_VEL_D": ("PSC_VELZ_D", 1.0),
    "PSC_D_VEL_FF": ("PSC_VELZ_FF", 1.0),
    "PSC_D_VEL_IMAX": ("PSC_VELZ_IMAX", 100.0),
    "PSC_D_VEL_FLTE": ("PSC_VELZ_FLTE", 1.0),
    "PSC_D_VEL_FLTD": ("PSC_VELZ_FLTD", 1.0),
    "PSC_D_ACC_P": ("PSC_ACCZ_P", 10.0),
    "PSC_D_ACC_I": ("PSC_ACCZ_I", 10.0),
    "PSC_D_ACC_D": ("PSC_ACCZ_D", 10.0),
    "PSC_D_ACC_FF": ("PSC_ACCZ_FF", 10.0),
    "PSC_D_ACC_IMAX": ("PSC_ACCZ_IMAX", 1000.0),
    "PSC_D_ACC_FLTT": ("PSC_ACCZ_FLTT", 1.0),
    "PSC_D_ACC_FLTE": ("PSC_ACCZ_FLTE", 1.0),
    "PSC_D_ACC_FLTD": ("PSC_ACCZ_FLTD", 1.0),
    "PSC_JERK_D": ("PSC_JERK_Z", 1.0),
    "RNGFND1_MIN": ("RNGFND1_MIN_CM", 100.0),
    "RNGFND1_MAX": ("RNGFND1_MAX_CM", 100.0),
}


class SurftrakParams(ParamsBase):
    """ArduSub parameters used by ALT_HOLD / SURFTRAK (Sub 4.5 names, 4.5 units).

    Master (4.7-dev) names are mapped onto these by
    :func:`marinesim.interop.ardupilot.read_params` with a ``FutureWarning``.
    Defaults are ArduSub's code defaults (PSC_JERK_Z 5, PILOT_ACCEL_Z 100: KPv 2.5); the
    recommended tuning for a 0.3 s rangefinder delay is PSC_JERK_Z 8, PILOT_ACCEL_Z 500 (KPv 0.8).
    """

    SURFTRAK_DEPTH: float = field(-50.0, unit="cm", description="ceiling for holding range", le=0)
    SURFACE_DEPTH: float = field(
        -10.0, unit="cm", description="at_surface threshold", ge=-100, le=0
    )
    RNGFND_SQ_MIN: float = field(90.0, unit="%", description="minimum signal quality", ge=0, le=100)
    RNGFND1_TYPE: int = field(10, description="rangefinder type (0 none, 10 MAVLink)")
    RNGFND1_ORIENT: int = field(25, description="orientation (25 = down)")
    RNGFND1_MIN_CM: float = field(20.0, unit="cm", description="minimum range", ge=0)
    RNGFND1_MAX_CM: float = field(700.0, unit="cm", description="maximum range", gt=0)
    PILOT_SPEED_UP: float = field(500.0, unit="cm/s", description="climb limit", gt=0)
    PILOT_SPEED_DN: float = field(0.0, unit="cm/s", description="descent limit (0: = up)", ge=0)
    PILOT_ACCEL_Z: float = field(100.0, unit="cm/s^2", description="vertical accel A", gt=0)
    THR_DZ: float = field(100.0, unit="us", description="throttle dead zone", ge=0)
    JS_GAIN_DEFAULT: float = field(0.5, description="joystick gain", gt=0, le=1)
    RC3_MIN: float = field(1100.0, unit="us", description="throttle channel minimum", gt=0)
    RC3_MAX: float = field(1900.0, unit="us", description="throttle channel maximum", gt=0)
    RC3_DZ: float = field(
        30.0, unit="us", description="throttle channel dead zone (ArduSub's default 30)", ge=0
    )
    PSC_POSZ_P: float = field(3.0, unit="1/s", description="position P", gt=0)
    PSC_VELZ_P: float = field(8.0, unit="1/s", description="velocity P", ge=0)
    PSC_VELZ_I: float = field(0.0, description="velocity I (only 0 supported)")
    PSC_VELZ_D: float = field(0.0, description="velocity D (only 0 supported)")
    PSC_VELZ_FF: float = field(0.0, description="velocity FF (only 0 supported)")
    PSC_VELZ_IMAX: float = field(1000.0, unit="cm/s^2", description="velocity IMAX", ge=0)
    PSC_VELZ_FLTE: float = field(5.0, unit="Hz", description="velocity error filter", ge=0)
    PSC_VELZ_FLTD: float = field(5.0, unit="Hz", description="velocity D filter", ge=0)
    PSC_ACCZ_P: float = field(0.5, description="accel P (per mille / cm/s^2)", ge=0)
    PSC_ACCZ_I: float = field(0.1, description="accel I", ge=0)
    PSC_ACCZ_D: float = field(0.0, description="accel D (only 0 supported)")
    PSC_ACCZ_FF: float = field(0.0, description="accel FF", ge=0)
    PSC_ACCZ_IMAX: float = field(100.0, unit="d%", description="accel IMAX", ge=0)
    PSC_ACCZ_FLTT: float = field(0.0, unit="Hz", description="accel target filter", ge=0)
    PSC_ACCZ_FLTE: float = field(20.0, unit="Hz", description="accel error filter", ge=0)
    PSC_ACCZ_FLTD: float = field(0.0, unit="Hz", description="accel D filter", ge=0)
    PSC_JERK_Z: float = field(5.0, unit="m/s^3", description="jerk limit", gt=0)
    WPNAV_ACCEL_Z: float = field(100.0, unit="cm/s^2", description="AUTO/GUIDED accel (no effect)")

    @model_validator(mode="before")
    @classmethod
    def _master_names(cls, data: Any) -> Any:
        """Accept master (4.7-dev) names, e.g. in a scenario's ``ardusub:`` block (§9)."""
        if not isinstance(data, dict) or not any(k in MASTER_ALIASES for k in data):
            return data
        data = dict(data)
        for name, (target, factor) in MASTER_ALIASES.items():
            if name not in data:
                continue
            if target in data:
                raise ValueError(f"{name} and {target} are the same parameter; give only one")
            value = data.pop(name)
            try:
                value = float(value) * factor
            except (TypeError, ValueError):
                pass  # left to the field's own validation
            else:
                warnings.warn(
                    f"{name} is ArduSub's current (master) name; read as {target} = {value:g} "
                    "(Sub 4.5 units)",
                    FutureWarning,
                    stacklevel=2,
                )
            data[target] = value
        return data

    @model_validator(mode="after")
    def _supported(self) -> SurftrakParams:
        for name in ("PSC_VELZ_I", "PSC_VELZ_D", "PSC_VELZ_FF", "PSC_ACCZ_D"):
            if getattr(self, name) != 0.0:
                raise ValueError(f"{name} other than 0 is not supported yet")
        if self.RNGFND1_MIN_CM >= self.RNGFND1_MAX_CM:
            raise ValueError("RNGFND1_MIN_CM must be below RNGFND1_MAX_CM")
        if self.RC3_MIN + self.RC3_DZ >= self.RC3_MAX:
            raise ValueError("RC3_MIN + RC3_DZ must be below RC3_MAX")
        return self

    def gains(self, dt: float = 0.0025) -> PosZGains:
        """The z controller's gains and limits."""
        dn = self.PILOT_SPEED_DN if self.PILOT_SPEED_DN > 0 else self.PILOT_SPEED_UP
        return PosZGains(
            pos_p=self.PSC_POSZ_P,
            vel_p=self.PSC_VELZ_P,
            vel_flte=self.PSC_VELZ_FLTE,
            acc_p=self.PSC_ACCZ_P,
            acc_i=self.PSC_ACCZ_I,
            acc_ff=self.PSC_ACCZ_FF,
            acc_imax=self.PSC_ACCZ_IMAX,
            acc_flte=self.PSC_ACCZ_FLTE,
            acc_fltt=self.PSC_ACCZ_FLTT,
            jerk_z=self.PSC_JERK_Z,
            accel_z=self.PILOT_ACCEL_Z,
            speed_up=self.PILOT_SPEED_UP,
            speed_dn=dn,
            dt=dt,
        )

    def stick(self) -> PilotStick:
        """Stick shaping from PILOT_SPEED_UP/DN, THR_DZ and the joystick gain."""
        return PilotStick(
            self.PILOT_SPEED_UP, self.PILOT_SPEED_DN, self.THR_DZ, self.JS_GAIN_DEFAULT
        )

    @property
    def kpv(self) -> float:
        """Terrain-following position gain KPv = 50·PSC_JERK_Z/PILOT_ACCEL_Z (1/s)."""
        return 50.0 * self.PSC_JERK_Z / self.PILOT_ACCEL_Z


@dataclass(frozen=True)
class GcsMessage:
    """A GCS STATUSTEXT: sim time (s), severity, exact text, vehicle row."""

    t: float
    severity: str
    text: str
    vehicle: int = 0


def reset_target(mask: Num, target_cm: Num, off: Num, off_target: Num) -> tuple[Num, Num, Num]:
    """Forget the rangefinder target where ``mask`` and zero the terrain offset (pure).

    Returns the new ``(target_cm, off, off_target)`` (cm; target −1 = none).
    """
    return (
        where(mask, INVALID_TARGET, target_cm),
        where(mask, 0.0, off),
        where(mask, 0.0, off_target),
    )


def surface_bottom_step(
    centred: Num,
    at_surface: Num,
    at_bottom: Num,
    z: Num,
    pos_target: Num,
    target_cm: Num,
    off: Num,
    off_target: Num,
    surface_depth_cm: float,
) -> tuple[Num, Num, Num, Num, Num]:
    """SURFTRAK's surface and bottom resets with the stick centred (pure; §4.5, §4.8).

    Parameters
    ----------
    centred : bool or ndarray (N,)
        Pilot climb demand is zero.
    at_surface, at_bottom : bool or ndarray (N,)
        Detector flags.
    z : float or ndarray (N,)
        Belief z (cm, up).
    pos_target, target_cm, off, off_target : float or ndarray (N,)
        Total position target, rangefinder target, terrain offset and its target (cm).
    surface_depth_cm : float
        SURFACE_DEPTH (cm).

    Returns
    -------
    tuple
        ``(other, pos_target, target_cm, off, off_target)``; ``other`` marks the centred
        vehicles neither at the surface nor at the bottom (they track the terrain).
    """
    surf = centred & at_surface
    below = centred & (at_surface ^ True)
    bot = below & at_bottom
    other = below & (at_bottom ^ True)
    if any_true(surf):
        # Sub 4.5 absolute semantics (spec §4.8): total target, then offset → 0
        cap = surface_depth_cm - 5.0
        pos_target = where(surf & (pos_target > cap), cap, pos_target)
        target_cm, off, off_target = reset_target(surf, target_cm, off, off_target)
    if any_true(bot):
        pos_target = where(bot & (z + 10.0 > pos_target), z + 10.0, pos_target)
        target_cm, off, off_target = reset_target(bot, target_cm, off, off_target)
    return other, pos_target, target_cm, off, off_target


def offset_target_step(
    mask: Num, target_cm: Num, terrain_offset_cm: Num, off_target: Num, surftrak_depth_cm: float
) -> Num:
    """Terrain-offset target that holds ``target_cm`` below the SURFTRAK_DEPTH ceiling (pure).

    Returns the new offset target (cm) where ``mask`` and a target is held, else unchanged.
    """
    valid = mask & (target_cm > 0)
    desired = terrain_offset_cm + target_cm
    over = desired >= surftrak_depth_cm
    off = terrain_offset_cm + (surftrak_depth_cm - desired) * over
    return where(valid, off, off_target)


def take_step(
    centred: Num, target_cm: Num, pilot_in_control: Num, z: Num, pilot_start_z: Num
) -> tuple[Num, Num]:
    """The pilot takes control when the stick leaves the centre with a target held (pure).

    Returns the new ``(pilot_in_control, pilot_start_z)`` (bool, cm).
    """
    take = (centred ^ True) & (target_cm > 0) & (pilot_in_control ^ True)
    if any_true(take):
        pilot_start_z = where(take, z, pilot_start_z)
        pilot_in_control = pilot_in_control | take
    return pilot_in_control, pilot_start_z


def _f32(x: float) -> float:
    return float(np.float32(x))


def _at(x: Num, i: int) -> float:
    return float(x[i]) if isinstance(x, np.ndarray) else float(x)


def _rows(mask: Num) -> list[int]:
    if isinstance(mask, np.ndarray):
        return [int(i) for i in np.flatnonzero(mask)]
    return [0] if mask else []


class ArduSubVertical:
    """ArduSub's vertical autopilot for N vehicles: rangefinder backend, ALT_HOLD, SURFTRAK.

    Parameters
    ----------
    params : SurftrakParams
    z, vz, az : float or ndarray (N,)
        Initial belief z (cm, up), climb rate (cm/s), vertical acceleration (cm/s²).
    throttle : float or ndarray (N,)
        Initial (trimmed) throttle 0…1.
    dt : float
        Loop period (s).

    Notes
    -----
    The caller drives it: :meth:`handle_distance_sensor` on message arrival,
    :meth:`rangefinder_cycle` every 20th loop (20 Hz), :meth:`run` every loop, then
    :meth:`detect` with the new motor state.  ``now_us`` is set by the caller each loop.
    """

    def __init__(
        self, params: SurftrakParams, z: Num, vz: Num, az: Num, throttle: Num, dt: float = 0.0025
    ) -> None:
        self.p = params
        self.dt = dt
        self.gains = params.gains(dt)
        self.stick = params.stick()
        self.now_us = 0.0
        self.mode = ALT_HOLD
        self.armed = True
        self.depth_sensor = "ok"  # "ok" | "missing" | "failed"
        zero = z * 0.0
        false = z != z
        self.zctl = PosZ(self.gains, z, vz, az, throttle)
        self.motors = Motors(throttle + zero, dt)
        self.detector = SurfaceBottomDetector(zero, params.SURFACE_DEPTH)
        enabled = params.RNGFND1_TYPE != 0 and params.RNGFND1_ORIENT == 25
        self.health = RangefinderHealth(
            zero, params.RNGFND1_MIN_CM, params.RNGFND1_MAX_CM, params.RNGFND_SQ_MIN, enabled
        )
        self.target_cm = zero + INVALID_TARGET
        self.pilot_in_control = false
        self.pilot_start_z = zero
        self.z, self.vz, self.az = z + zero, vz + zero, az + zero
        self.messages: list[GcsMessage] = []
        self.retargets = 0
        # script buttons 1-4 (ArduSub maps joystick functions 108-110 to buttons 1-3)
        self._buttons = [False] * 5
        self._button_counts = [0] * 5

    # ------------------------------------------------------------------ messages
    def _send(self, severity: str, text: str, rows: list[int]) -> None:
        t = self.now_us * 1e-6
        for i in rows:
            self.messages.append(GcsMessage(t, severity, text, i))

    # ------------------------------------------------------------------ sensors
    def handle_distance_sensor(
        self, mask: Num, dist_cm: Num, min_cm: Num, max_cm: Num, sq: Num, orientation: int = 25
    ) -> None:
        """A DISTANCE_SENSOR message arrives now where ``mask`` (fields in cm, %)."""
        if orientation != 25:
            return
        self.health.handle_message(mask, self.now_us, dist_cm, min_cm, max_cm, sq)

    def rangefinder_cycle(self) -> None:
        """ArduSub ``read_rangefinder`` (20 Hz) on the current belief z."""
        self.health.update(self.now_us, self.z)

    def rangefinder_alt_ok(self) -> Num:
        """Scripting: ``rangefinder_alt_ok()``."""
        return self.health.alt_ok(self.now_us)

    def get_rangefinder_target_cm(self) -> Num:
        """Scripting: the held distance (cm), −1 when none."""
        return self.target_cm

    def set_button(self, i: int, pressed: bool) -> None:
        """Joystick input: script button ``i`` (1–4) pressed or released (counts presses)."""
        if not 1 <= i <= 4:
            raise ValueError(f"script buttons are 1-4, got {i}")
        if pressed and not self._buttons[i]:
            self._button_counts[i] += 1
        self._buttons[i] = bool(pressed)

    def is_button_pressed(self, i: int) -> bool:
        """Scripting: button ``i`` (1–4) is held."""
        return self._buttons[i]

    def get_and_clear_button_count(self, i: int) -> int:
        """Scripting: presses of button ``i`` (1–4) since the last call."""
        n, self._button_counts[i] = self._button_counts[i], 0
        return n

    # ------------------------------------------------------------------ mode logic
    def set_mode(self, mode: int) -> bool:
        """Switch mode (2 = ALT_HOLD, 21 = SURFTRAK); returns False if entry failed."""
        if mode not in (ALT_HOLD, SURFTRAK):
            raise ValueError(f"mode {mode} is not simulated (2 ALT_HOLD, 21 SURFTRAK)")
        every = _rows(self.z == self.z)
        if self.depth_sensor == "missing":
            self._send(WARNING, "Depth sensor is not connected.", every)
            return False
        if self.depth_sensor == "failed":
            self._send(WARNING, "Depth sensor error.", every)
            return False
        g = self.gains
        self.zctl.init(self.z, self.vz, clamp(self.az, -g.accel, g.accel), self.zctl.throttle)
        self.mode = mode
        if mode == SURFTRAK:
            self._reset(self.z == self.z)
            self.pilot_in_control = self.z != self.z
            ok = self.rangefinder_alt_ok()
            not_ok = ok ^ True
            self._send(INFO, "waiting for a rangefinder reading", _rows(not_ok))
            high = ok & (self.z >= self.p.SURFTRAK_DEPTH)
            # C's %f: six decimals of the float32 value
            text = f"descend below {_f32(self.p.SURFTRAK_DEPTH * 0.01):f} meters to hold range"
            self._send(WARNING, text, _rows(high))
        return True

    def _reset(self, mask: Num) -> None:
        zc = self.zctl
        self.target_cm, zc.off, zc.off_target = reset_target(
            mask, self.target_cm, zc.off, zc.off_target
        )

    def set_rangefinder_target_cm(self, target_cm: Num, mask: Num = True) -> Num:
        """Set the held distance (cm) where ``mask``; checks and messages of spec §4.4.

        Returns
        -------
        bool or ndarray (N,)
            Success per vehicle (False outside ``mask``).
        """
        mask = mask & (self.z == self.z)
        target_cm = target_cm + self.z * 0.0
        if self.mode != SURFTRAK:
            self._send(WARNING, "wrong mode, rangefinder target not set", _rows(mask))
            self._reset(mask)
            return mask & False
        high = mask & (self.z >= self.p.SURFTRAK_DEPTH)
        rest = mask & (high ^ True)
        below = rest & (target_cm < self.health.msg_min)
        rest = rest & (below ^ True)
        above = rest & (target_cm > self.health.msg_max)
        ok = rest & (above ^ True)
        if any_true(high):
            depth = _f32(self.p.SURFTRAK_DEPTH * 0.01)
            text = f"descend below {depth:f} meters to set rangefinder target"
            self._send(WARNING, text, _rows(high))
        if any_true(below):
            self._send(WARNING, "rangefinder target below minimum, ignored", _rows(below))
        if any_true(above):
            self._send(WARNING, "rangefinder target above maximum, ignored", _rows(above))
        if any_true(ok):
            self.target_cm = where(ok, target_cm, self.target_cm)
            for i in _rows(ok):
                meters = _f32(_f32(_at(target_cm, i)) * _f32(0.01))
                text = f"rangefinder target is {meters:.2f} meters"
                self._send(INFO, text, [i])
            self.retargets += 1
            self.zctl.init_terrain_offset(ok, self.z - target_cm)
        failed = mask & (ok ^ True)
        if any_true(failed):
            self._reset(failed)
        return ok

    def _update_surface_offset(self, mask: Num) -> None:
        h = self.health
        mask = mask & self.rangefinder_alt_ok()
        if not any_true(mask):
            return
        off = h.terrain_offset_cm
        first = mask & (self.target_cm <= 0) & (h.inertial_alt_cm < self.p.SURFTRAK_DEPTH)
        if any_true(first):
            self.set_rangefinder_target_cm(h.inertial_alt_cm - off, first)
        self.zctl.off_target = offset_target_step(
            mask, self.target_cm, off, self.zctl.off_target, self.p.SURFTRAK_DEPTH
        )

    def _control_range(self, climb: Num) -> None:
        z = self.z
        centred = abs(climb) < 0.05
        release = centred & self.pilot_in_control
        if any_true(release):
            self.set_rangefinder_target_cm(self.target_cm + z - self.pilot_start_z, release)
            self.pilot_in_control = self.pilot_in_control & (release ^ True)
        zc = self.zctl
        other, zc.pos_target, self.target_cm, zc.off, zc.off_target = surface_bottom_step(
            centred, self.detector.at_surface, self.detector.at_bottom, z, zc.pos_target,
            self.target_cm, zc.off, zc.off_target, self.p.SURFACE_DEPTH,
        )  # fmt: skip
        if any_true(other):
            self._update_surface_offset(other)
        self.pilot_in_control, self.pilot_start_z = take_step(
            centred, self.target_cm, self.pilot_in_control, z, self.pilot_start_z
        )

    def climb_from_stick(self, stick: Num) -> Num:
        """Pilot climb rate (cm/s) for the throttle control input 0…1000, clamped to limits."""
        st = self.stick
        bottom, top = st.band
        climb = where(stick < bottom, st.descent_speed * (stick - bottom) / bottom, 0.0)
        climb = where(stick > top, st.speed_up * (stick - top) / (1000.0 - top), climb)
        return clamp(climb, -st.descent_speed, st.speed_up)

    def control_in_from_pwm(self, pwm: Num) -> Num:
        """ArduPilot's throttle channel: RC input [µs] → control input 0…1000.

        A range channel with a dead zone above its minimum (``RC_Channel::pwm_to_range_dz``,
        integer arithmetic): ``trunc(1000·(pwm − MIN − DZ)/(MAX − MIN − DZ))``, 0 at or below
        MIN + DZ.  With ArduSub's default RC3_DZ of 30 µs, 1500 µs gives 480, not 500.
        """
        p = self.p
        low = p.RC3_MIN + p.RC3_DZ
        r = clamp(np.asarray(pwm, dtype=float), p.RC3_MIN, p.RC3_MAX)
        out = np.where(r > low, np.trunc(1000.0 * (r - low) / (p.RC3_MAX - low)), 0.0)
        return float(out) if out.ndim == 0 else out

    def climb_from_pwm(self, pwm: Num) -> Num:
        """Pilot climb rate (cm/s) for a throttle RC input [µs], as ArduSub computes it.

        ``Sub::get_pilot_desired_climb_rate`` centres its dead band (THR_DZ × joystick gain)
        on the channel's mid-stick (``RC_Channel::get_control_mid``: the control input of
        (MIN + MAX)/2, 480 with the default dead zone), not on 500; the result is clamped to
        the pilot speed limits as in ``ModeSurftrak::control_range``.
        """
        p, st = self.p, self.stick
        low = p.RC3_MIN + p.RC3_DZ
        mid = float(np.trunc(1000.0 * ((p.RC3_MIN + p.RC3_MAX) // 2 - low) / (p.RC3_MAX - low)))
        hw = min(max(p.THR_DZ, 0.0), 400.0) * p.JS_GAIN_DEFAULT
        bottom, top = mid - hw, mid + hw
        c = self.control_in_from_pwm(pwm)
        climb = where(c < bottom, st.descent_speed * (c - bottom) / bottom, 0.0)
        climb = where(c > top, st.speed_up * (c - top) / (1000.0 - top), climb)
        return clamp(climb, -st.descent_speed, st.speed_up)

    def run_pwm(self, pwm: Num, z: Num, vz: Num, az: Num) -> Num:
        """:meth:`run` with the throttle as the RC input ArduSub sees [µs] (a joystick's
        MANUAL_CONTROL z becomes 0.4·z + 1300 µs at gain 0.5): the firmware's pilot path
        including the channel's dead zone (:meth:`climb_from_pwm`)."""
        return self.run_climb(self.climb_from_pwm(pwm), z, vz, az)

    def run(self, stick: Num, z: Num, vz: Num, az: Num) -> Num:
        """One 400 Hz loop of the active mode; returns the vertical thrust −1…1.

        Parameters
        ----------
        stick : float or ndarray (N,)
            Throttle control input 0…1000 (500 = centred).
        z, vz, az : float or ndarray (N,)
            Belief z (cm), climb rate (cm/s), vertical acceleration (cm/s²).
        """
        return self.run_climb(self.climb_from_stick(stick), z, vz, az)

    def run_climb(self, climb: Num, z: Num, vz: Num, az: Num) -> Num:
        """:meth:`run` with the pilot's climb rate (cm/s) already computed from the stick."""
        self.z, self.vz, self.az = z, vz, az
        sat = self.motors.saturated
        self.zctl.limit = self.motors.limit
        if self.mode == SURFTRAK:
            if not self.armed:
                self._reset(z == z)
            else:
                self._control_range(climb)
            self.zctl.set_target_from_climb_rate(climb)
            thr = self.zctl.update(z, vz, az, sat)
        else:
            thr = althold_control_depth(
                self.zctl, climb, z, vz, az, self.detector.at_surface,
                self.detector.at_bottom, self.p.SURFACE_DEPTH, sat,
            )  # fmt: skip
        return self.motors.output(thr)

    def detect(self, z_m: Num, vz_ms: Num) -> None:
        """Surface/bottom detector (400 Hz) from depth-sensor z (m) and climb rate (m/s)."""
        self.detector.update(z_m, vz_ms, self.motors.limit, self.armed)


class KeepTarget:
    """``surftrak2`` (ardusub_surftrak/lua): keep a desired rangefinder target.

    Call every 100 ms with the autopilot.  The first valid target becomes the desired one;
    whenever the current target differs (e.g. after a pilot override or a reset) the desired
    one is re-applied with :meth:`ArduSubVertical.set_rangefinder_target_cm`.  Outside
    SURFTRAK or when disarmed the desired target is forgotten.
    """

    period = 0.1

    def __init__(self) -> None:
        self.desired: Any = None

    def __call__(self, ap: ArduSubVertical) -> None:
        """One script cycle."""
        cur = ap.get_rangefinder_target_cm()
        if ap.mode != SURFTRAK or not ap.armed:
            self.desired = None
            return
        if self.desired is None:
            self.desired = cur * 1.0
        self.desired = where((self.desired <= 0) & (cur > 0), cur, self.desired)
        differ = (self.desired > 0) & (cur != self.desired)
        if any_true(differ):
            ap.set_rangefinder_target_cm(self.desired, differ)


class ButtonTargets:
    """``surftrak_buttons`` (ardusub_surftrak/lua): set or nudge the target with buttons.

    Call every 200 ms.  Button 1 sets the target to ``set_cm`` (SCR_USER1), buttons 2 / 3
    add / subtract ``step_cm`` (SCR_USER2), never below 50 cm.  Ignored (presses are consumed)
    while the rangefinder is not ok.
    """

    period = 0.2

    def __init__(self, set_cm: float, step_cm: float) -> None:
        self.set_cm = float(set_cm)
        self.step_cm = float(step_cm)

    def __call__(self, ap: ArduSubVertical) -> None:
        """One script cycle."""
        counts = [ap.get_and_clear_button_count(i) for i in (1, 2, 3)]
        ok = ap.rangefinder_alt_ok()
        if not any_true(ok) or not any(counts):
            return
        cur = ap.get_rangefinder_target_cm()
        new = cur * 1.0
        if counts[0]:
            new = new * 0.0 + self.set_cm
        new = new + self.step_cm * (counts[1] - counts[2])
        new = new + (50.0 - new) * (new < 50.0)
        ap.set_rangefinder_target_cm(new, ok)
