"""``waypoints`` autonomy: follow a list of (north, east) points or a lawnmower survey.

Publishes DESIRED_HEADING, DESIRED_SPEED and DESIRED_DEPTH every update (and DESIRED_SPEED =
0 once done with ``end_action: stop``); reports ``done`` after the last point of the last pass.
Reads belief.  Waypoint math is in :mod:`marinesim.control.guidance`.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import model_validator

from marinesim.control.guidance import lawnmower, split_lanes, waypoint_init, waypoint_update
from marinesim.core.errors import ConfigError
from marinesim.core.params import ParamsBase, field
from marinesim.engine.plugin import Plugin

__all__ = ["LawnmowerParams", "Waypoints", "WaypointsParams"]


class LawnmowerParams(ParamsBase):
    """A lawnmower survey pattern (lanes of ``length`` along ``heading_deg``)."""

    north: float = field(..., unit="m", description="start corner, north")
    east: float = field(..., unit="m", description="start corner, east")
    length: float = field(..., unit="m", gt=0, description="lane length")
    width: float = field(..., unit="m", ge=0, description="extent across the lanes")
    spacing: float = field(..., unit="m", gt=0, description="distance between lanes")
    heading_deg: float = field(0.0, unit="deg", description="direction of the first lane (marine)")
    first_turn: Literal["right", "left"] = field("right", description="side the pattern grows to")
    split: bool = field(
        True,
        description="share the lanes among the block's vehicles of one world (contiguous groups)",
    )

    @model_validator(mode="after")
    def _bounded(self) -> LawnmowerParams:
        from marinesim.core.limits import MAX_WAYPOINTS

        if 2 * (self.width / self.spacing + 1) > MAX_WAYPOINTS:
            raise ValueError(
                f"spacing {self.spacing:g} m across a width of {self.width:g} m makes more than "
                f"{MAX_WAYPOINTS} waypoints (MAX_WAYPOINTS); widen the spacing"
            )
        return self


class WaypointsParams(ParamsBase):
    """Waypoint list or lawnmower, speed, depth and capture rules."""

    points_ne: list[tuple[float, float]] | None = field(
        None, unit="m", description="waypoints as [north, east] pairs"
    )
    lawnmower: LawnmowerParams | None = field(
        None, description="a lawnmower pattern instead of points_ne"
    )
    member_offset_ne: list[tuple[float, float]] | None = field(
        None,
        unit="m",
        description="per-vehicle [north, east] shift of the points (one pair per vehicle)",
    )
    speed: float = field(..., unit="m/s", ge=0, description="desired speed (>= 0)")
    depth: float = field(0.0, unit="m", ge=0, description="desired depth")
    capture_radius: float = field(
        5.0, unit="m", gt=0, description="waypoint reached inside this radius"
    )
    slip_radius: float = field(
        15.0,
        unit="m",
        ge=0,
        description="also reached inside this radius when the distance grows (0 = off)",
    )
    lead: float = field(
        0.0, unit="m", ge=0, description="track-line lead distance (0 = steer at the point)"
    )
    repeat: int = field(0, unit="", ge=-1, description="extra passes over the list (-1 = forever)")
    end_action: Literal["stop", "hold"] = field(
        "stop", description="after the last point: stop (speed 0) or hold the last heading"
    )

    @model_validator(mode="after")
    def _one_pattern(self) -> WaypointsParams:
        if (self.points_ne is None) == (self.lawnmower is None):
            raise ValueError("give exactly one of points_ne or lawnmower")
        if self.points_ne is not None and len(self.points_ne) == 0:
            raise ValueError("points_ne is empty")
        return self


class Waypoints(Plugin):
    """Waypoint / lawnmower autonomy publishing DESIRED_HEADING/SPEED/DEPTH; reports done."""

    kind: ClassVar[str] = "autonomy"
    Params = WaypointsParams
    publishes: ClassVar[dict[str, str]] = {
        "DESIRED_HEADING": "double",
        "DESIRED_SPEED": "double",
        "DESIRED_DEPTH": "double",
        "WPT_INDEX": "double",
    }
    reports_done: ClassVar[bool] = True
    #: Lanes are split among the vehicles of each world (docs/guide/worlds.md).
    world_aware: ClassVar[bool] = True
    example_params: ClassVar[dict[str, Any]] = {
        "points_ne": [[20.0, 0.0], [20.0, 20.0]],
        "speed": 1.5,
    }

    @classmethod
    def topic_docs(cls) -> dict[str, tuple[str, str]]:
        """Units and meaning of the published setpoints."""
        return {
            "DESIRED_HEADING": ("deg", "heading towards the lead point on the track line"),
            "DESIRED_SPEED": ("m/s", "transit speed (0 once done with end_action: stop)"),
            "DESIRED_DEPTH": ("m", "depth setpoint (positive down)"),
            "WPT_INDEX": ("-", "index of the current waypoint"),
        }

    def _points(self, n: int, worlds: int = 1) -> tuple[np.ndarray, np.ndarray]:
        p: Any = self.params
        if p.lawnmower is not None:
            lm = p.lawnmower
            pts = lawnmower(
                lm.north, lm.east, lm.length, lm.width, lm.spacing, lm.heading_deg, lm.first_turn
            )
            v = n // max(worlds, 1)  # the lanes are shared among the vehicles of one world
            per = (split_lanes(pts, v) if (lm.split and v > 1) else [pts] * v) * max(worlds, 1)
        else:
            per = [np.asarray(p.points_ne, dtype=float)] * n
        if p.member_offset_ne is not None:
            if len(p.member_offset_ne) != n:
                raise ConfigError(
                    f"member_offset_ne has {len(p.member_offset_ne)} pairs for {n} vehicles",
                    param=f"{self.name}.params.member_offset_ne",
                )
            per = [q + np.asarray(o) for q, o in zip(per, p.member_offset_ne, strict=True)]
        npts = np.array([len(q) for q in per], dtype=np.int64)
        pmax = int(npts.max()) if n else 1
        arr = np.zeros((n, pmax, 2))
        for i, q in enumerate(per):  # build time only
            arr[i, : len(q)] = q
            arr[i, len(q) :] = q[-1]
        return arr, npts

    def start(self, ctx: Any, rng: Any) -> None:
        """Expand the pattern per vehicle and start at the first point."""
        pts, npts = self._points(ctx.n, ctx.n_worlds)
        ctx.state["points"] = pts
        ctx.state["npoints"] = npts
        b = ctx.belief
        ctx.state["wpt"] = waypoint_init(b.pos[:, :2])
        ctx.state["last_heading"] = b.heading_deg.copy()

    def compiled_laws(self, slot: Any, sim: Any) -> Any:
        """The compiled tick's declaration (:mod:`marinesim.engine.plugins.usm_laws`)."""
        from marinesim.engine.plugins.usm_laws import waypoints_laws

        return waypoints_laws(self, slot, sim)

    def autonomy(self, ctx: Any, rng: Any) -> None:
        """Advance along the points and publish the setpoints."""
        p: Any = self.params
        st = ctx.state
        pos = ctx.belief.pos[:, :2]
        wpt, heading, target, reached = waypoint_update(
            st["wpt"],
            pos,
            st["points"],
            st["npoints"],
            capture_radius=p.capture_radius,
            slip_radius=p.slip_radius,
            lead=p.lead,
            repeat=p.repeat,
        )
        st["wpt"] = wpt
        if reached.any():
            for i in np.flatnonzero(reached):
                msg = (
                    "all waypoints done"
                    if wpt.done[i]
                    else f"waypoint reached, next index {int(wpt.index[i])}"
                )
                ctx.events.emit("waypoint", msg, rows=[i])
        heading = np.where(np.isnan(heading), st["last_heading"], heading)
        st["last_heading"] = heading
        speed = np.full(ctx.n, p.speed)
        if p.end_action == "stop":
            speed = np.where(wpt.done, 0.0, speed)
        on = ctx.active
        if on.all():  # every row: the same messages as rows=flatnonzero(active), fewer copies
            ctx.publish("DESIRED_HEADING", heading)
            ctx.publish("DESIRED_SPEED", speed)
            ctx.publish("DESIRED_DEPTH", np.full(ctx.n, p.depth))
            ctx.publish("WPT_INDEX", wpt.index.astype(float))
        else:
            active = np.flatnonzero(on)
            if active.size:
                ctx.publish("DESIRED_HEADING", heading[active], rows=active)
                ctx.publish("DESIRED_SPEED", speed[active], rows=active)
                ctx.publish("DESIRED_DEPTH", np.full(active.size, p.depth), rows=active)
                ctx.publish("WPT_INDEX", wpt.index[active].astype(float), rows=active)
        ctx.log("target", target, "m", ("north", "east"))
        ctx.log("index", wpt.index.astype(float), "")
        ctx.log("done", wpt.done.astype(float), "")

    def done(self, ctx: Any) -> Any:
        """(N,) True after the last point of the last pass."""
        wpt = ctx.state.get("wpt")
        return None if wpt is None else wpt.done
