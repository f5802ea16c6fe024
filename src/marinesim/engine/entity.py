"""Entity blocks: the entities created by one scenario ``entities:`` entry (engine spec §2.1).

A block holds N entities that share plugin types; every array has a leading axis N.  The
scenario layer builds :class:`BlockSpec` objects from validated YAML; the engine turns them into
:class:`EntityBlock` runtime objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from marinesim.core.errors import ConfigError
from marinesim.core.frames import angle360
from marinesim.core.rng import generator, spawn_key
from marinesim.core.state import VehicleState
from marinesim.engine.plugin import Plugin

__all__ = ["BlockSpec", "EntityBlock", "PluginSpec", "Spawn", "read_only"]


@dataclass(frozen=True)
class PluginSpec:
    """One plugin instance of a block with its scheduling options.

    Attributes
    ----------
    plugin : Plugin
        The instance (name, validated params).
    rate_hz : float or None
        Update rate [Hz]; None = every tick.
    offset_ticks : int
        First tick of the schedule.
    uses_truth : bool
        Oracle opt-in for controllers and autonomies (engine spec §2.3).
    registry_name : str
        Registered plugin name (for the manifest).
    """

    plugin: Plugin
    rate_hz: float | None = None
    offset_ticks: int = 0
    uses_truth: bool = False
    registry_name: str = ""


@dataclass(frozen=True)
class Spawn:
    """Mean initial pose of a block and its random spread (one draw per entity).

    Attributes
    ----------
    north, east, depth : float
        Mean NED position [m] (depth positive down).
    heading_deg : float
        Mean marine heading [deg].
    speed : float
        Initial forward speed [m/s].
    distribution : str
        ``"normal"`` (spread values are standard deviations) or ``"uniform"`` (half-widths).
    spread : dict of str to float
        Keys among north, east, depth, heading_deg.
    offsets : ndarray, shape (N, 4), optional
        Fixed per-member offsets (north, east, depth, heading_deg) added before the spread
        (e.g. a line-abreast formation).
    """

    north: float = 0.0
    east: float = 0.0
    depth: float = 0.0
    heading_deg: float = 0.0
    speed: float = 0.0
    distribution: str = "normal"
    spread: dict[str, float] = field(default_factory=dict)
    offsets: Any = None

    def draw(
        self,
        seed: int,
        replica: int,
        block: str,
        n: int,
        rows: list[tuple[int, int]] | None = None,
    ) -> NDArray[np.float64]:
        """(N, 4) initial north, east, depth, heading_deg, from the spawn streams (§10.1).

        ``rows`` gives (replica, member) per row for stacked replicas (§10.5); by default row i
        is member i of ``replica``.
        """
        row_keys = rows if rows is not None else [(replica, i) for i in range(n)]
        members = np.array([m for _r, m in row_keys], dtype=np.int64)
        base = np.tile([self.north, self.east, self.depth, self.heading_deg], (n, 1)).astype(float)
        if self.offsets is not None:
            off = np.asarray(self.offsets, dtype=float)
            count = int(members.max()) + 1 if n else 0
            if off.shape != (count, 4):
                raise ConfigError(
                    f"spawn offsets of block {block!r} must have shape ({count}, 4), got {off.shape}"
                )
            base = base + off[members]
        keys = ("north", "east", "depth", "heading_deg")
        scale = np.array([float(self.spread.get(k, 0.0)) for k in keys])
        if np.any(scale != 0.0):
            draws = np.empty((n, 4))
            for i, (rep, m) in enumerate(row_keys):  # one stream per member: independent of N
                g = generator(seed, spawn_key(rep, block, m))
                draws[i] = (
                    g.standard_normal(4)
                    if self.distribution == "normal"
                    else g.uniform(-1.0, 1.0, 4)
                )
            base = base + draws * scale
        base[:, 2] = np.maximum(base[:, 2], 0.0)
        base[:, 3] = angle360(base[:, 3])
        return base


@dataclass(frozen=True)
class BlockSpec:
    """Build description of one entity block.

    Attributes
    ----------
    name : str
        Block name; entity names are ``<name>[<i>]``.
    count : int
        Number of entities N ≥ 0.
    motion : PluginSpec
        Exactly one motion plugin.
    controllers, autonomy, sensors : tuple of PluginSpec
        Controller chain (in order), autonomies, sensors.
    spawn : Spawn
        Initial placement.
    team : int
        Team number.
    radius : float
        Entity radius [m].
    contact_type : str
        Free label.
    """

    name: str
    count: int
    motion: PluginSpec
    controllers: tuple[PluginSpec, ...] = ()
    autonomy: tuple[PluginSpec, ...] = ()
    sensors: tuple[PluginSpec, ...] = ()
    spawn: Spawn = field(default_factory=Spawn)
    team: int = 1
    radius: float = 1.0
    contact_type: str = "vehicle"
    properties: dict[str, Any] = field(default_factory=dict)
    #: Stacked replica indices (engine spec §10.5): when not empty the block has
    #: count × len(replicas) rows, replica-major; row j is member j % count of replica
    #: replicas[j // count], named ``<name>[<member>]@<replica>``.
    replicas: tuple[int, ...] = ()

    def plugins(self) -> tuple[PluginSpec, ...]:
        """All plugin specs: motion, sensors, controllers, autonomy."""
        return (self.motion, *self.sensors, *self.controllers, *self.autonomy)


def read_only(state: VehicleState) -> VehicleState:
    """A copy of ``state`` whose arrays are read-only views (writes raise ValueError)."""

    def ro(a: Any) -> Any:
        if a is None:
            return None
        v = np.asarray(a).view()
        v.flags.writeable = False
        return v

    return VehicleState(
        ro(state.pos),
        ro(state.quat),
        ro(state.vel),
        ro(state.ang_vel),
        ro(state.accel),
        state.t,
        ro(state.cov),
    )


class EntityBlock:
    """Runtime arrays of one block.

    Parameters
    ----------
    spec : BlockSpec
    first_id : int
        Id of member 0 (ids are assigned in scenario order).
    """

    def __init__(self, spec: BlockSpec, first_id: int) -> None:
        self.spec = spec
        self.name = spec.name
        reps = tuple(int(r) for r in spec.replicas)
        self.n = int(spec.count) * max(len(reps), 1)
        self.ids = np.arange(first_id, first_id + self.n, dtype=np.int64)
        if reps:
            c = int(spec.count)
            self.names = [f"{spec.name}[{j % c}]@{reps[j // c]}" for j in range(self.n)]
        else:
            self.names = [f"{spec.name}[{i}]" for i in range(self.n)]
        #: (N,) stacked replica index of every row (§10.5); None when replicas are not stacked
        #: (every row belongs to the simulation's replica).
        self.row_replica: NDArray[np.int64] | None = (
            np.repeat(np.asarray(reps, dtype=np.int64), int(spec.count)) if reps else None
        )
        #: (N,) world (stack position 0..R-1) of every row: the world axis beside the vehicle
        #: axis.  Everything that couples vehicles acts within one world (docs/guide/worlds.md).
        self.world: NDArray[np.int64] = np.repeat(
            np.arange(max(len(reps), 1), dtype=np.int64), int(spec.count)
        )
        self.index = np.arange(self.n, dtype=np.int64)
        self.team = np.full(self.n, int(spec.team), dtype=np.int64)
        self.radius = np.full(self.n, float(spec.radius))
        self.active = np.ones(self.n, dtype=bool)
        self.health = np.ones(self.n)
        self.done = np.zeros(self.n, dtype=bool)
        self.truth = VehicleState.zeros(self.n)
        self.belief: VehicleState | None = None  # None: alias of truth (perfect navigation)
        self._truth_ro: VehicleState | None = None
        self._belief_ro: VehicleState | None = None

    def row_keys(self, replica: int) -> list[tuple[int, int]]:
        """(replica, member) of every row: ``replica`` for all rows unless replicas are stacked."""
        c = int(self.spec.count)
        if self.spec.replicas:
            return [(int(self.spec.replicas[j // c]), j % c) for j in range(self.n)]
        return [(int(replica), i) for i in range(self.n)]

    def set_truth(self, state: VehicleState) -> None:
        """Replace the truth state (rows of inactive entities are kept frozen)."""
        if state.pos.shape != (self.n, 3):
            raise ConfigError(
                f"block {self.name!r}: truth pos must have shape ({self.n}, 3), got {state.pos.shape}"
            )
        if not np.all(self.active):
            keep = ~self.active
            old = self.truth
            state = state.replace(
                pos=np.where(keep[:, None], old.pos, state.pos),
                quat=np.where(keep[:, None], old.quat, state.quat),
                vel=np.where(keep[:, None], old.vel, state.vel),
                ang_vel=np.where(keep[:, None], old.ang_vel, state.ang_vel),
                accel=np.where(keep[:, None], old.accel, state.accel),
            )
        self.truth = state
        self._truth_ro = None

    def set_belief(self, state: VehicleState) -> None:
        """Replace the belief state."""
        self.belief = state
        self._belief_ro = None

    @property
    def truth_ro(self) -> VehicleState:
        """Read-only views of truth."""
        if self._truth_ro is None:
            self._truth_ro = read_only(self.truth)
        return self._truth_ro

    @property
    def belief_ro(self) -> VehicleState:
        """Read-only views of belief (truth when the block has no belief writer)."""
        if self.belief is None:
            return self.truth_ro
        if self._belief_ro is None:
            self._belief_ro = read_only(self.belief)
        return self._belief_ro

    def runtime_state(self) -> dict[str, Any]:
        """Mutable arrays (for snapshots)."""
        return {
            "truth": self.truth,
            "belief": self.belief,
            "active": self.active.copy(),
            "health": self.health.copy(),
            "done": self.done.copy(),
        }

    def set_runtime_state(self, snap: dict[str, Any]) -> None:
        """Restore :meth:`runtime_state`."""
        self.truth = snap["truth"]
        self.belief = snap["belief"]
        self.active = snap["active"].copy()
        self.health = snap["health"].copy()
        self.done = snap["done"].copy()
        self._truth_ro = None
        self._belief_ro = None
