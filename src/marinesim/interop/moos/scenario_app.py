"""``marinesim moos MISSION.moos --scenario S.yaml``: a marinesim scenario behind the MOOS face.

The mission's uSimMarine block still names the process, the AppTick and the DB; the vehicle
is the scenario's first entity block (e.g. a Fossen 6-DOF REMUS 100 with its fins and
propeller, a current, an INS).  The MOOS actuator mail reaches the engine through the
controller plugin ``moos_actuators`` that the scenario must list for that block:

* ``DESIRED_RUDDER`` [%] → rudder fin angle = value/100 × ``rudder_max_deg`` (positive turns
  to starboard: the heading increases, as in uSimMarine);
* ``DESIRED_ELEVATOR`` [%] → stern-plane angle = value/100 × ``elevator_max_deg`` (positive
  dives, as uSimMarine's elevator);
* ``DESIRED_THRUST`` [%] → propeller speed = value/100 × ``rpm_max`` (all clipped to ±100 %).

With ``mode: differential`` (a twin-propeller vehicle such as the PythonVehicleSimulator
Otter, ``actuators/cmd`` = [n1 port, n2 starboard] in rad/s) the plugin follows uSimMarine's
differential-thrust convention, whose speed model reads thrust = (L + R)/2 and rudder =
(L − R)/2, i.e. a positive rudder (more port thrust) turns to starboard:

* normal mode: L = DESIRED_THRUST + DESIRED_RUDDER, R = DESIRED_THRUST − DESIRED_RUDDER;
* after ``THRUST_MODE_DIFFERENTIAL = true`` (mail): L = DESIRED_THRUST_L, R = DESIRED_THRUST_R;

each clipped to ±100 % and mapped linearly to propeller speed: +100 % → ``prop_max_rad_s``
(the Otter's largest forward speed, 103.93 rad/s), −100 % → ``prop_min_rad_s`` (−101.74 rad/s).

Every iteration steps the engine by one AppTick period of MOOS time (an integer number of
scenario ticks) and posts the **navigation belief** as ``NAV_X``, ``NAV_Y``, ``NAV_DEPTH``,
``NAV_HEADING``, ``NAV_SPEED`` (plus ``NAV_Z``, and ``NAV_LAT`` / ``NAV_LONG`` when the
mission file has a datum, through the same UTM geodesy as ``usm``) and the **truth** as the
same names with ``_GT`` (``NAV_X_GT`` …); a block without a navigation plugin posts its truth
as both.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np

from marinesim.core import registry
from marinesim.core.errors import ConfigError
from marinesim.core.frames import euler_from_quat
from marinesim.core.params import ParamsBase, field
from marinesim.engine.plugin import Plugin
from marinesim.interop.moos.app import MoosSettings, UsmMoosApp
from marinesim.interop.moos.files import LoadedConfig
from marinesim.interop.moos.wire import MoosMsg

__all__ = ["MoosActuators", "ScenarioMoosApp"]

#: The actuator mail the bridge forwards to the engine (doubles, in %).
ACTUATOR_VARS = (
    "DESIRED_THRUST", "DESIRED_RUDDER", "DESIRED_ELEVATOR", "DESIRED_THRUST_L", "DESIRED_THRUST_R",
)  # fmt: skip
#: The mail that switches differential thrust on or off ("true"/"false", as uSimMarine reads it).
MODE_VAR = "THRUST_MODE_DIFFERENTIAL"


class MoosActuatorsParams(ParamsBase):
    """Scaling of the MOOS actuator percentages."""

    mode: Literal["fins", "differential"] = field(
        "fins",
        description="fins: rudder/stern-plane fins + one propeller (REMUS 100); differential: "
        "two propellers [port, starboard] on actuators/cmd (Otter)",
    )
    rudder_max_deg: float = field(15.0, unit="deg", gt=0, le=90, description="fin at 100 % rudder")
    elevator_max_deg: float = field(
        15.0, unit="deg", gt=0, le=90, description="stern plane at 100 % elevator"
    )
    rpm_max: float = field(1525.0, unit="rpm", gt=0, description="propeller at 100 % thrust")
    prop_max_rad_s: float = field(
        103.93086427398005, unit="rad/s", gt=0, description="differential: propeller at +100 %"
    )
    prop_min_rad_s: float = field(
        -101.73666550381692, unit="rad/s", lt=0, description="differential: propeller at -100 %"
    )


def differential_thrust(
    thrust: float, rudder: float, left: float, right: float, *, differential: bool
) -> tuple[float, float]:
    """Port and starboard thrust [%] from MOOS mail, uSimMarine's differential convention.

    Parameters
    ----------
    thrust, rudder : float
        ``DESIRED_THRUST`` and ``DESIRED_RUDDER`` [%] (used in normal mode).
    left, right : float
        ``DESIRED_THRUST_L`` and ``DESIRED_THRUST_R`` [%] (used when ``differential``).
    differential : bool
        ``THRUST_MODE_DIFFERENTIAL``.

    Returns
    -------
    (float, float)
        Port, starboard thrust in [−100, 100] %: normal mode thrust ± rudder (the inverse of
        uSimMarine's thrust = (L + R)/2, rudder = (L − R)/2), so a positive rudder gives
        more port thrust and turns to starboard.
    """
    lft, rgt = (left, right) if differential else (thrust + rudder, thrust - rudder)
    return min(max(lft, -100.0), 100.0), min(max(rgt, -100.0), 100.0)


class MoosActuators(Plugin):
    """DESIRED_THRUST / RUDDER / ELEVATOR from a live MOOS community → fins/cmd, propeller/cmd."""

    kind: ClassVar[str] = "controller"
    Params = MoosActuatorsParams
    publishes: ClassVar[dict[str, str]] = {
        "fins/cmd": "array",
        "propeller/cmd": "double",
        "actuators/cmd": "array",
    }
    #: Latest actuator values [%] (and THRUST_MODE_DIFFERENTIAL as 1/0), written by the MOOS
    #: app before each engine step.
    mail: ClassVar[dict[str, float]] = {}

    def control(self, ctx: Any, rng: Any) -> None:
        """Publish the fin angles [rad] and propeller speed [rpm] of the latest mail."""
        p: Any = self.params
        n = ctx.n

        def pct(name: str) -> float:
            return min(max(float(self.mail.get(name, 0.0)), -100.0), 100.0) / 100.0

        if p.mode == "differential":
            lft, rgt = differential_thrust(
                float(self.mail.get("DESIRED_THRUST", 0.0)),
                float(self.mail.get("DESIRED_RUDDER", 0.0)),
                float(self.mail.get("DESIRED_THRUST_L", 0.0)),
                float(self.mail.get("DESIRED_THRUST_R", 0.0)),
                differential=bool(self.mail.get(MODE_VAR, 0.0)),
            )
            cmd = np.empty((n, 2))
            for j, pc in enumerate((lft, rgt)):  # Otter: n1 port, n2 starboard
                cmd[:, j] = pc / 100.0 * (p.prop_max_rad_s if pc >= 0 else -p.prop_min_rad_s)
            ctx.publish("actuators/cmd", cmd)
            return
        # PVS REMUS 100 fins: a positive rudder angle turns to starboard and a positive
        # stern-plane angle dives, as uSimMarine's positive rudder and elevator do
        fins = np.empty((n, 2))
        fins[:, 0] = math.radians(pct("DESIRED_RUDDER") * p.rudder_max_deg)
        fins[:, 1] = math.radians(pct("DESIRED_ELEVATOR") * p.elevator_max_deg)
        ctx.publish("fins/cmd", fins)
        ctx.publish("propeller/cmd", np.full(n, pct("DESIRED_THRUST") * p.rpm_max))


registry.register("controller", "moos_actuators", MoosActuators, replace=True)


def _heading_deg(q: np.ndarray) -> np.ndarray:
    """Heading [deg] in [0, 360] (np.mod: a yaw just below 0 gives 360.0) of quaternions (N, 4)."""
    return np.mod(np.degrees(euler_from_quat(q)[:, 2]), 360.0)


class ScenarioMoosApp(UsmMoosApp):
    """The MOOS app loop of :class:`UsmMoosApp` over a marinesim scenario's first block.

    Raises
    ------
    ConfigError
        The scenario does not list ``moos_actuators`` for its first block, or its tick does
        not divide the AppTick period.
    """

    warm_before_join = True  # the scenario compiles: seconds, before the DB sees us
    fast_start = False  # no start record: the scenario's vehicle is not the usm model

    def __init__(
        self,
        loaded: LoadedConfig,
        settings: MoosSettings,
        scenario: str | Path,
        **kw: Any,
    ) -> None:
        super().__init__(loaded, settings, **kw)
        from marinesim.scenario import load_simulation

        self.scenario = str(scenario)
        self.sim = load_simulation(self.scenario)
        if not self.sim.blocks:
            raise ConfigError("the scenario has no entity block", file=self.scenario)
        self.block = self.sim.blocks[0]
        kinds = [type(ps.plugin).__name__ for ps in self.block.spec.plugins()]
        if "MoosActuators" not in kinds:
            raise ConfigError(
                f"block {self.block.name!r} has no 'moos_actuators' controller: add "
                "'controllers: [{name: moos, plugin: moos_actuators}]' to take the MOOS mail",
                file=self.scenario,
            )
        if self.block.n != 1:
            raise ConfigError(
                f"block {self.block.name!r} has {self.block.n} vehicles; one MOOS app flies one",
                file=self.scenario,
            )
        dt = float(self.sim.clock.dt)
        ticks = (1.0 / settings.app_tick) / dt
        if abs(ticks - round(ticks)) > 1e-6 or round(ticks) < 1:
            raise ConfigError(
                f"the scenario tick {dt:g} s does not divide the AppTick period "
                f"{1 / settings.app_tick:g} s",
                file=self.scenario,
                param="time.dt",
            )
        self.ticks = int(round(ticks))
        MoosActuators.mail = {k: 0.0 for k in ACTUATOR_VARS}
        MoosActuators.mail[MODE_VAR] = 0.0
        cfg = loaded.config
        lat0 = getattr(cfg, "lat_origin", None)
        lon0 = getattr(cfg, "long_origin", None)
        self.geodesy = None
        if lat0 is not None and lon0 is not None:
            from marinesim.core.geodesy import MoosGeodesy

            self.geodesy = MoosGeodesy(float(lat0), float(lon0))

    def _start_model(self, t0: float) -> None:
        self.t0 = t0

    def _warm_up(self) -> None:
        """Nothing to warm: stepping would move the scenario's vehicle before the start."""

    def _mail(self, m: MoosMsg, now: float) -> list[tuple[str, float | str]]:
        if m.key in ACTUATOR_VARS:
            if m.dtype != "D" or not math.isfinite(m.dval):
                self._warn(
                    f"{m.key} from {m.src}: {'string' if m.dtype != 'D' else 'non-finite'} "
                    "value ignored (a finite double is expected)",
                    f"{m.key}|{m.src}|type",
                )
            else:
                MoosActuators.mail[m.key] = m.dval
        elif m.key == MODE_VAR:
            text = (m.sval if m.dtype != "D" else "").strip().lower()
            if text in ("true", "differential", "false", "normal"):
                MoosActuators.mail[MODE_VAR] = float(text in ("true", "differential"))
            else:
                self._warn(
                    f"{m.key} from {m.src}: {text or m.dval!r} is not true/false; ignored",
                    f"{m.key}|{m.src}|value",
                )
        else:
            self._warn(
                f"{m.key} from {m.src}: not used by the scenario model; ignored",
                f"{m.key}|unused",
            )
        return []

    def _iterate(self, now: float) -> list[tuple[str, float | str]]:
        self.sim.step(self.ticks)
        blk = self.block
        truth = blk.truth
        belief = blk.belief if blk.belief is not None else truth
        out: list[tuple[str, float | str]] = []
        for st, sfx in ((belief, ""), (truth, "_GT")):
            pos = np.asarray(st.pos)[0]
            vals = {
                "NAV_X": pos[1],
                "NAV_Y": pos[0],
                "NAV_DEPTH": pos[2],
                "NAV_HEADING": float(_heading_deg(np.asarray(st.quat))[0]),
                "NAV_SPEED": float(np.asarray(st.vel)[0, 0]),
                "NAV_Z": -pos[2],
            }
            if self.geodesy is not None:
                lat, lon = self.geodesy.local_to_latlon(pos[1], pos[0])
                vals["NAV_LAT"], vals["NAV_LONG"] = float(lat), float(lon)
            for k, v in vals.items():
                if math.isfinite(float(v)):
                    out.append((k + sfx, float(v)))
        return out

    def _pose_text(self) -> str:
        pos = np.asarray(self.block.truth.pos)[0]
        return (
            f"Model: scenario {Path(self.scenario).name}, block {self.block.name}"
            f"!@Truth: north={pos[0]:.2f}, east={pos[1]:.2f}, depth={pos[2]:.2f}"
        )
