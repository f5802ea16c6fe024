"""The simulation: entities, plugins, the tick of engine spec §4.2, end conditions, snapshots.

Build a :class:`Simulation` from :class:`~marinesim.engine.entity.BlockSpec` objects (the
scenario layer does this from YAML: ``marinesim.scenario.load_simulation``), then call
:meth:`Simulation.run` or :meth:`Simulation.step`.  ``PHASES`` (re-exported from
:mod:`marinesim.engine.plugin`) is the single source of the phase order.
"""

from __future__ import annotations

import contextlib
import copy
import platform
import sys
import time as _time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from marinesim.core.errors import ConfigError, EngineError
from marinesim.core.params import ParamsBase
from marinesim.core.registry import get as registry_get
from marinesim.core.rng import BlockRNG, check_seed, entity_key, generator, name_hash, world_key
from marinesim.core.state import VehicleState
from marinesim.engine.bus import Bus, Inbox, Subscription
from marinesim.engine.clock import Clock, period_ticks
from marinesim.engine.entity import BlockSpec, EntityBlock, PluginSpec
from marinesim.engine.env import Environment
from marinesim.engine.plugin import PHASES, WORLD_KINDS, overridden_hooks
from marinesim.engine.results import Event, Recorder, RunResult

__all__ = [
    "END_CONDITIONS",
    "PHASES",
    "BlockView",
    "HookContext",
    "MetricCondition",
    "Simulation",
    "Snapshot",
    "TruthView",
]

#: Named end conditions (plus :class:`MetricCondition`).
END_CONDITIONS = ("time", "all_inactive", "all_done", "one_team")

_OPS = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


@dataclass(frozen=True)
class MetricCondition:
    """End the run when a world metric value compares true: ``{metric, op, value}``."""

    metric: str
    op: str
    value: float

    def __post_init__(self) -> None:
        if self.op not in _OPS:
            raise ConfigError(
                f"unknown operator {self.op!r} (use one of {', '.join(_OPS)})",
                param="end_conditions.op",
            )


@dataclass(frozen=True)
class Snapshot:
    """Immutable copy of everything that changes during a run (restore with Simulation.restore)."""

    k: int
    data: Any = field(repr=False)


def _heading_deg(q: NDArray[np.float64]) -> NDArray[np.float64]:
    """(N,) marine heading [deg, 0..360) of quaternions (N, 4), scalar first (yaw of ZYX Euler)."""
    w, x, y, z = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
    yaw = np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return np.mod(np.degrees(yaw), 360.0)


class _Events:
    def __init__(self, sim: Simulation, block: EntityBlock | None, source: str) -> None:
        self._sim = sim
        self._block = block
        self._source = source
        self.t = 0.0

    def emit(self, kind: str, text: str, severity: str = "info", rows: Any = None) -> None:
        """Record an event (per entity row, or for the world when the plugin has no block)."""
        if severity not in ("debug", "info", "warning", "error", "critical"):
            raise EngineError(f"unknown event severity {severity!r}")
        if self._block is None:
            self._sim._events.append(Event(self.t, "", severity, kind, f"{self._source}: {text}"))
            return
        idx = range(self._block.n) if rows is None else np.atleast_1d(np.asarray(rows, dtype=int))
        for i in idx:
            self._sim._events.append(Event(self.t, self._block.names[int(i)], severity, kind, text))


class HookContext:
    """What a hook may see and do (engine spec §3.1, access matrix §2.3).

    Attributes
    ----------
    t : float
        Sim time of the hook [s] (t_k for autonomy and control, the substep start for motion,
        t_{k+1} for sense, estimate and metric).
    dt, h : float
        Control tick and physics substep [s].
    t_next : float
        Time t_{k+1} = start + (k+1)·dt at the end of the current tick [s].
    tick : int
        Tick index k.
    substep : int
        Substep index s (physics phase).
    n : int
        Entities in the block.
    params : ParamsBase
        The plugin's parameters.
    state : dict
        The plugin's own state (arrays with a leading axis N); snapshotted by the engine.
    env : Environment
    events : object with ``emit(kind, text, severity="info", rows=None)``
    """

    def __init__(self, sim: Simulation, slot: _Slot) -> None:
        self._sim = sim
        self._slot = slot
        self._block = slot.block
        self.params: ParamsBase = slot.plugin.params
        self.state: dict[str, Any] = slot.state
        self.env: Environment = sim.env
        self.events = _Events(sim, slot.block, slot.plugin.name)
        self.t = 0.0
        self.t_next = 0.0
        self.tick = 0
        self.substep = 0
        self.dt = sim.clock.dt
        self.h = sim.clock.h
        self.seed = sim.seed
        self.replica = sim.replica

    # entity data --------------------------------------------------------------------------
    @property
    def period(self) -> float:
        """Schedule period of the plugin [s] (ticks between its calls × dt; dt for motion)."""
        return float(self._slot.period) * float(self.dt)

    @property
    def period_ticks(self) -> int:
        """Schedule period of the plugin in ticks (≥ 1)."""
        return int(self._slot.period)

    @property
    def n(self) -> int:
        """Rows of the block."""
        return self._block.n if self._block is not None else 0

    @property
    def ids(self) -> NDArray[np.int64]:
        """(N,) entity ids."""
        return self._ro(self._block.ids)

    @property
    def names(self) -> list[str]:
        """Entity names ``block[i]``."""
        return list(self._block.names)

    @property
    def block_name(self) -> str:
        """Name of the entity block."""
        return self._block.name

    @property
    def active(self) -> NDArray[np.bool_]:
        """(N,) active flags (read-only)."""
        return self._ro(self._block.active)

    @staticmethod
    def _ro(a: NDArray[Any]) -> NDArray[Any]:
        v = a.view()
        v.flags.writeable = False
        return v

    @property
    def truth(self) -> VehicleState:
        """Read-only truth (motion, sensors' ``sense``, world kinds, or ``uses_truth`` oracles)."""
        kind = self._slot.plugin.kind
        allowed = (
            kind in ("motion", "interaction", "metric", "network")
            or (kind == "sensor" and self._slot.phase != "estimate")
            or self._slot.uses_truth
        )
        if not allowed:
            raise EngineError(
                f"{kind} plugin {self._slot.plugin.name!r} of block {self._block.name!r} may not "
                "read truth; set 'uses_truth: true' in its scenario entry for an oracle"
            )
        return self._block.truth_ro

    @property
    def belief(self) -> VehicleState:
        """Read-only belief (truth alias under perfect navigation); not for motion plugins."""
        if self._slot.plugin.kind == "motion":
            raise EngineError(f"motion plugin {self._slot.plugin.name!r} may not read belief")
        return self._block.belief_ro

    def set_truth(self, state: VehicleState) -> None:
        """Write truth (motion plugins only)."""
        if self._slot.plugin.kind != "motion":
            raise EngineError(
                f"{self._slot.plugin.kind} plugin {self._slot.plugin.name!r} may not write truth"
            )
        self._block.set_truth(state)

    def set_belief(self, state: VehicleState) -> None:
        """Write belief (the block's single belief writer, in ``estimate``)."""
        if not self._slot.plugin.writes_belief:
            raise EngineError(f"plugin {self._slot.plugin.name!r} does not declare writes_belief")
        self._block.set_belief(state)

    # bus -----------------------------------------------------------------------------------
    @property
    def inbox(self) -> Inbox:
        """Messages delivered since the plugin's previous hook."""
        return self._slot.current_inbox

    def wants(self, topic: str, scope: str = "local") -> bool:
        """True when a subscriber would receive ``topic`` from this block (skip work otherwise)."""
        return self._sim.bus.wanted(topic, self._block.name, scope)

    def publish(
        self,
        topic: str,
        value: Any,
        *,
        rows: Any = None,
        t_stamp: float | None = None,
        delay: float = 0.0,
        scope: str = "local",
    ) -> None:
        """Publish ``value`` on ``topic`` for ``rows`` (default: every entity of the block).

        Parameters
        ----------
        topic : str
            Declared in the plugin's ``publishes`` (or ``"*"`` declared).
        value : float, str or array of shape (len(rows),)
            Payload; strings make a string message (MOOS typing).
        rows : array of int, optional
            Block rows of the senders.
        t_stamp : float, optional
            Time the data describes [s] (default: now).
        delay : float
            Extra delivery delay [s].
        scope : {"local", "global"}
        """
        plugin = self._slot.plugin
        if topic not in plugin.publishes and "*" not in plugin.publishes:
            raise EngineError(
                f"plugin {plugin.name!r} publishes {topic!r}, which is not in its declared "
                f"publishes ({', '.join(sorted(plugin.publishes)) or 'none'})"
            )
        block = self._block
        bus = self._sim.bus
        if not bus.wanted(topic, block.name, scope):
            bus.unheard[topic] = bus.unheard.get(topic, 0) + 1
            return
        r = np.arange(block.n) if rows is None else np.atleast_1d(np.asarray(rows, dtype=np.int64))
        if isinstance(value, str):
            payload: NDArray[Any] = np.empty(len(r), dtype=object)
            payload[:] = value
        else:
            arr = np.asarray(value)
            if arr.dtype.kind in "US":
                payload = arr.astype(object)
            elif arr.dtype == object:
                payload = arr
            else:
                payload = arr.astype(float)
            if payload.ndim == 0:
                payload = np.broadcast_to(payload, (len(r),)).copy()
            if payload.shape[0] != len(r):
                raise EngineError(
                    f"plugin {plugin.name!r}: {topic!r} payload has {payload.shape[0]} rows for {len(r)} senders"
                )
        if len(r) == 0:
            return
        self._sim.bus.publish(
            topic,
            block.name,
            r,
            block.ids[r],
            payload,
            t_pub=self.t,
            t_stamp=t_stamp,
            delay=delay,
            scope=scope,
            source=plugin.name,
        )

    # logging -------------------------------------------------------------------------------
    def log(
        self, name: str, values: Any, unit: str = "", labels: Sequence[str] | None = None
    ) -> None:
        """Add/refresh a named signal ``<plugin>.<name>``, (N,) or (N, k), recorded every frame."""
        self._sim._recorder.log(
            self._block.name,
            f"{self._slot.plugin.name}.{name}",
            values,
            unit,
            tuple(labels) if labels else None,
        )

    # world plugins --------------------------------------------------------------------------
    @property
    def blocks(self) -> list[BlockView]:
        """Read-only views of every entity block (world plugins: interaction, metric)."""
        if self._slot.plugin.kind not in ("interaction", "metric", "network"):
            raise EngineError(
                f"{self._slot.plugin.kind} plugin {self._slot.plugin.name!r} sees its own block only"
            )
        return [BlockView(b) for b in self._sim.blocks]

    @property
    def world_truth(self) -> list[TruthView]:
        """Read-only truth of every entity block, for sensors declaring ``reads_all_truth``.

        Only in ``sense`` (and ``start``/``stop``): a sensor such as ``contacts`` observes the
        other vehicles through it. Belief is never exposed here.
        """
        p = self._slot.plugin
        if p.kind != "sensor" or not getattr(p, "reads_all_truth", False):
            raise EngineError(
                f"{p.kind} plugin {p.name!r} does not declare reads_all_truth; it sees its own "
                "block's truth only"
            )
        if self._slot.phase == "estimate":
            raise EngineError(f"sensor {p.name!r} may not read truth in estimate")
        return [TruthView(b) for b in self._sim.blocks]

    def log_block(
        self,
        block: str,
        name: str,
        values: Any,
        unit: str = "",
        labels: Sequence[str] | None = None,
    ) -> None:
        """World plugins: log ``<plugin>.<name>`` for the entities of ``block``, (N,) or (N, k)."""
        self._sim._recorder.log(
            block,
            f"{self._slot.plugin.name}.{name}",
            values,
            unit,
            tuple(labels) if labels else None,
        )

    def add_summary(
        self, entity: str, metric: str, value: float, unit: str = "", team: int | None = None
    ) -> None:
        """Add a row to the run's metric summary table (``RunResult.metrics``)."""
        self._sim._metric_rows.append(
            {
                "plugin": self._slot.plugin.name,
                "entity": entity,
                "team": team,
                "metric": metric,
                "value": float(value),
                "unit": unit,
            }
        )

    def metric_value(self, name: str, value: float) -> None:
        """Set a world metric value (for ``{metric: name, op, value}`` end conditions)."""
        self._sim._metric_values[name] = float(value)


class BlockView:
    """Read-only view of an entity block for world plugins.

    Attributes
    ----------
    name : str
    names : list of str
        Entity names ``block[i]``.
    ids, team : ndarray of int, shape (N,)
    active : ndarray of bool, shape (N,)
    truth, belief : VehicleState
        Read-only (belief is truth under perfect navigation).
    """

    def __init__(self, block: EntityBlock) -> None:
        self.name = block.name
        self.n = block.n
        self.names = list(block.names)
        self.ids = HookContext._ro(block.ids)
        self.team = HookContext._ro(block.team)
        self.active = HookContext._ro(block.active)
        self.truth = block.truth_ro
        self.belief = block.belief_ro
        self.perfect_navigation = block.belief is None
        #: Topics published by the block's plugins (their ``publishes`` declarations).
        self.publishes: frozenset[str] = frozenset(
            t for spec in block.spec.plugins() for t in spec.plugin.publishes
        )


class TruthView:
    """Read-only truth of one entity block for sensors that declare ``reads_all_truth``.

    Attributes
    ----------
    name : str
    n : int
    names : list of str
    ids, team : ndarray of int, shape (N,)
    active : ndarray of bool, shape (N,)
    truth : VehicleState
        Read-only views.
    """

    def __init__(self, block: EntityBlock) -> None:
        self.name = block.name
        self.n = block.n
        self.names = list(block.names)
        self.ids = HookContext._ro(block.ids)
        self.team = HookContext._ro(block.team)
        self.active = HookContext._ro(block.active)
        self.truth = block.truth_ro


class _Slot:
    """One plugin instance in the schedule."""

    def __init__(self, spec: PluginSpec, block: EntityBlock | None, clock: Clock) -> None:
        self.spec = spec
        self.plugin = spec.plugin
        self.block = block
        self.hooks = frozenset(overridden_hooks(type(spec.plugin)))
        self.period = (
            1
            if spec.plugin.kind == "motion"
            else period_ticks(spec.rate_hz, clock.dt, name=spec.plugin.name)
        )
        self.offset = int(spec.offset_ticks)
        self.uses_truth = bool(spec.uses_truth)
        self.state: dict[str, Any] = {}
        self.calls: dict[str, int] = {}
        self.done: NDArray[np.bool_] | None = None
        self.phase = ""
        self.sub: Subscription | None = None
        self.world_subs: list[Subscription] = []  # world metric taps, one per entity block
        self.current_inbox = Inbox([], block.n if block is not None else 0)
        self.rng: BlockRNG | None = None
        self.ctx: HookContext | None = None


class Simulation:
    """One scenario, one seed: entity blocks, world plugins, clock, bus and recorder.

    Parameters
    ----------
    blocks : sequence of BlockSpec
        Entity blocks in scenario order (ids follow this order).
    dt : float
        Control tick [s].
    substeps : int
        Physics substeps per tick.
    start, end : float
        Start time and end time [s] (end None: another end condition must end the run).
    time_warp : float
        0 = as fast as possible; w > 0 = w × real time (results never depend on it).
    seed : int or None
        Root seed; None draws one from OS entropy once (stored in the manifest).
    end_conditions : sequence of str or MetricCondition
        OR-ed: ``time``, ``all_inactive``, ``all_done``, ``one_team``, metric conditions.
    on_nonfinite : {"stop", "deactivate"}
        Policy for non-finite truth (engine spec §4.5).
    env : Environment, optional
    world : sequence of PluginSpec
        World plugins (interaction, metric).
    name : str
        Scenario name.
    replica : int
        Replica index (stream keys start with it).
    manifest : dict, optional
        Extra manifest entries (scenario file, SHA-256, ...).
    resolved_scenario : str, optional
        The resolved scenario text (saved with the results).
    """

    def __init__(
        self,
        blocks: Sequence[BlockSpec],
        *,
        dt: float,
        substeps: int = 1,
        start: float = 0.0,
        end: float | None = None,
        time_warp: float = 0.0,
        seed: int | None = None,
        end_conditions: Sequence[str | MetricCondition] = ("time",),
        on_nonfinite: str = "stop",
        env: Environment | None = None,
        world: Sequence[PluginSpec] = (),
        name: str = "simulation",
        replica: int = 0,
        manifest: dict[str, Any] | None = None,
        resolved_scenario: str | None = None,
    ) -> None:
        self.block_specs = tuple(blocks)
        self.world_specs = tuple(world)
        self._clock_args = {
            "dt": dt,
            "substeps": substeps,
            "start": start,
            "end": end,
            "time_warp": time_warp,
        }
        self.clock = Clock(**self._clock_args)  # type: ignore[arg-type]
        self.end_conditions = tuple(end_conditions)
        self.on_nonfinite = on_nonfinite
        self.env = env or Environment()
        self.name = name
        self.replica = int(replica)
        self.extra_manifest = dict(manifest or {})
        self.resolved_scenario = resolved_scenario
        self.seed_drawn = seed is None
        self.seed = (
            check_seed(seed)
            if seed is not None
            else int(np.random.SeedSequence().entropy % (2**63 - 1))
        )
        self.result: RunResult | None = None
        self.error: BaseException | None = None
        self._validate()
        self._init_runtime()

    @classmethod
    def from_file(cls, path: str | Path, **kwargs: Any) -> Simulation:
        """Load a YAML scenario (delegates to ``marinesim.scenario.load_simulation``).

        The scenario layer sits above the engine; it is resolved lazily through the registry
        entry ``("scenario_loader", "yaml")`` so the engine never imports it.
        """
        loader = registry_get("scenario_loader", "yaml")
        return loader(path, **kwargs)

    # build -----------------------------------------------------------------------------
    def _validate(self) -> None:
        if self.on_nonfinite not in ("stop", "deactivate"):
            raise ConfigError(
                f"on_nonfinite must be 'stop' or 'deactivate', got {self.on_nonfinite!r}",
                param="on_nonfinite",
            )
        names = [b.name for b in self.block_specs]
        seen: dict[int, str] = {}
        for b in self.block_specs:
            if names.count(b.name) > 1:
                raise ConfigError(f"duplicate entity block name {b.name!r}", param="entities")
            h = name_hash(b.name)
            if h in seen and seen[h] != b.name:
                raise ConfigError(
                    f"block names {b.name!r} and {seen[h]!r} have the same CRC-32; rename one",
                    param="entities",
                )
            seen[h] = b.name
            if b.count < 0:
                raise ConfigError(
                    f"count must be >= 0, got {b.count}", param=f"entities.{b.name}.count"
                )
            if b.motion.plugin.kind != "motion":
                raise ConfigError(
                    f"block {b.name!r}: motion entry is a {b.motion.plugin.kind} plugin",
                    param=f"entities.{b.name}.motion",
                )
            pnames: list[str] = []
            writers = []
            for spec in b.plugins():
                p = spec.plugin
                if p.name in pnames:
                    raise ConfigError(
                        f"block {b.name!r}: two plugins named {p.name!r}; give one a 'name:'",
                        param=f"entities.{b.name}",
                    )
                pnames.append(p.name)
                clash = [q for q in pnames[:-1] if name_hash(q) == name_hash(p.name)]
                if clash:
                    raise ConfigError(
                        f"block {b.name!r}: plugin names {p.name!r} and {clash[0]!r} have the same "
                        "CRC-32 (their random streams would coincide); rename one",
                        param=f"entities.{b.name}",
                    )
                if p.kind in WORLD_KINDS:
                    raise ConfigError(
                        f"{p.kind} plugin {p.name!r} is a world plugin, not an entity plugin",
                        param=f"entities.{b.name}",
                    )
                if p.writes_belief:
                    if p.kind != "sensor":
                        raise ConfigError(
                            f"{p.kind} plugin {p.name!r} declares writes_belief; only a sensor "
                            "(estimator or noisy-state sensor) may write belief",
                            param=f"entities.{b.name}.{p.name}",
                        )
                    writers.append(p.name)
                if getattr(p, "writes_truth", False) and p.kind != "motion":
                    raise ConfigError(
                        f"{p.kind} plugin {p.name!r} declares writes_truth; only the motion plugin "
                        "(and world interactions) may write truth",
                        param=f"entities.{b.name}.{p.name}",
                    )
                if getattr(p, "reads_all_truth", False) and p.kind != "sensor":
                    raise ConfigError(
                        f"{p.kind} plugin {p.name!r} declares reads_all_truth; only sensors may "
                        "observe other entities' truth",
                        param=f"entities.{b.name}.{p.name}",
                    )
                if p.reads_truth and not spec.uses_truth:
                    raise ConfigError(
                        f"{p.kind} plugin {p.name!r} reads truth; set 'uses_truth: true' in its entry "
                        "to use it as an oracle",
                        param=f"entities.{b.name}.{p.name}.uses_truth",
                    )
                if spec.uses_truth and p.kind not in ("controller", "autonomy"):
                    raise ConfigError(
                        f"uses_truth applies to controllers and autonomies, not {p.kind} {p.name!r}",
                        param=f"entities.{b.name}.{p.name}.uses_truth",
                    )
                if p.kind != "motion":
                    period_ticks(spec.rate_hz, self.clock.dt, name=f"entities.{b.name}.{p.name}")
            if len(writers) > 1:
                raise ConfigError(
                    f"block {b.name!r} has {len(writers)} belief writers ({', '.join(writers)}); at most one is allowed",
                    param=f"entities.{b.name}.sensors",
                )
            for spec in b.controllers:
                if spec.plugin.kind != "controller":
                    raise ConfigError(
                        f"{spec.plugin.name!r} in controllers is a {spec.plugin.kind} plugin",
                        param=f"entities.{b.name}.controllers",
                    )
            for spec in b.autonomy:
                if spec.plugin.kind != "autonomy":
                    raise ConfigError(
                        f"{spec.plugin.name!r} in autonomy is a {spec.plugin.kind} plugin",
                        param=f"entities.{b.name}.autonomy",
                    )
            for spec in b.sensors:
                if spec.plugin.kind != "sensor":
                    raise ConfigError(
                        f"{spec.plugin.name!r} in sensors is a {spec.plugin.kind} plugin",
                        param=f"entities.{b.name}.sensors",
                    )
        for spec in self.world_specs:
            if spec.plugin.kind not in ("interaction", "metric"):
                raise ConfigError(
                    f"world plugin {spec.plugin.name!r} has kind {spec.plugin.kind!r}; only interaction and metric are supported yet"
                )
            wp = spec.plugin
            if wp.kind == "metric" and (wp.writes_belief or getattr(wp, "writes_truth", False)):
                raise ConfigError(
                    f"metric plugin {wp.name!r} declares writes_truth/writes_belief; metrics "
                    "only read truth and belief",
                    param=f"metrics.{wp.name}",
                )
        for c in self.end_conditions:
            if isinstance(c, MetricCondition):
                if not any(s.plugin.kind == "metric" for s in self.world_specs):
                    raise ConfigError(
                        f"end condition on metric {c.metric!r} but the scenario has no metric plugin",
                        param="end_conditions",
                    )
            elif c not in END_CONDITIONS:
                raise ConfigError(
                    f"unknown end condition {c!r} (known: {', '.join(END_CONDITIONS)}, or {{metric, op, value}})",
                    param="end_conditions",
                )
        if not self.end_conditions:
            raise ConfigError(
                "end_conditions is empty: the run could never end", param="end_conditions"
            )
        if self.clock.end is None and all(c == "time" for c in self.end_conditions):
            raise ConfigError(
                "the scenario can never end: no time.end and no other end condition",
                param="time.end",
            )
        if "all_done" in self.end_conditions and not any(
            s.plugin.reports_done for b in self.block_specs for s in b.autonomy
        ):
            raise ConfigError(
                "end condition 'all_done' but no autonomy plugin reports done",
                param="end_conditions",
            )

    def _init_runtime(self) -> None:
        self.clock = Clock(**self._clock_args)  # type: ignore[arg-type]
        self.bus = Bus()
        self.blocks: list[EntityBlock] = []
        first = 0
        for spec in self.block_specs:
            blk = EntityBlock(spec, first)
            first += blk.n
            pose = spec.spawn.draw(self.seed, self.replica, spec.name, blk.n)
            blk.truth = VehicleState.from_pose(
                pose[:, 0],
                pose[:, 1],
                pose[:, 2],
                pose[:, 3],
                speed=np.full(blk.n, spec.spawn.speed),
                t=self.clock.t,
            )
            self.blocks.append(blk)
        self._recorder = Recorder({b.name: b.n for b in self.blocks})
        self._events: list[Event] = []
        self._metric_values: dict[str, float] = {}
        self._metric_rows: list[dict[str, Any]] = []
        self._last_finite: dict[str, NDArray[np.float64]] = {}
        self.slots: list[_Slot] = []
        self._by_block: dict[str, dict[str, list[_Slot]]] = {}
        for blk in self.blocks:
            groups: dict[str, list[_Slot]] = {
                "motion": [],
                "sensor": [],
                "controller": [],
                "autonomy": [],
            }
            for spec in blk.spec.plugins():
                slot = self._make_slot(spec, blk)
                groups[spec.plugin.kind].append(slot)
            self._by_block[blk.name] = groups
        self.world_slots = [self._make_slot(spec, None) for spec in self.world_specs]
        self._schedule()
        self._started = False
        self._finished = False
        self._paused = False
        self.status = "built"
        self.ended_by: str | None = None
        self.ended_tick: int | None = None
        self._wall = 0.0
        self.result = None
        self.error = None

    def _make_slot(self, spec: PluginSpec, blk: EntityBlock | None) -> _Slot:
        slot = _Slot(spec, blk, self.clock)
        if blk is not None:
            slot.rng = BlockRNG(
                [
                    generator(self.seed, entity_key(self.replica, blk.name, m, spec.plugin.name))
                    for m in range(blk.n)
                ]
            )
        else:
            slot.rng = BlockRNG([generator(self.seed, world_key(self.replica, spec.plugin.name))])
        topics = frozenset(spec.plugin.subscribes)
        if topics and blk is not None:
            slot.sub = self.bus.subscribe(
                Subscription(f"{blk.name}.{spec.plugin.name}", blk.name, topics)
            )
        elif topics and spec.plugin.kind == "metric":  # world metric: tap every block's topics
            slot.world_subs = [
                self.bus.subscribe(
                    Subscription(f"world.{spec.plugin.name}@{b.name}", b.name, topics)
                )
                for b in self.blocks
            ]
        slot.ctx = HookContext(self, slot)
        self.slots.append(slot)
        return slot

    # running -------------------------------------------------------------------------------
    def _call(self, slot: _Slot, hook: str, t: float, phase: str = "") -> None:
        if hook not in slot.hooks or (slot.block is not None and slot.block.n == 0):
            return  # not overridden, or an empty block (count: 0): nothing to run over
        ctx = slot.ctx
        assert ctx is not None
        ctx.t = t
        ctx.tick = self.clock.k
        ctx.t_next = self.clock.time_of(self.clock.k + 1)
        ctx.events.t = t
        slot.phase = phase or hook
        if slot.sub is not None:
            slot.current_inbox = Inbox(slot.sub.inbox, ctx.n)
            slot.sub.inbox = []
        elif slot.world_subs:  # messages of every block (Message.block names the sender block)
            msgs = [m for sub in slot.world_subs for m in sub.inbox]
            for sub in slot.world_subs:
                sub.inbox = []
            slot.current_inbox = Inbox(msgs, 0)
        slot.calls[hook] = slot.calls.get(hook, 0) + 1
        getattr(slot.plugin, hook)(ctx, slot.rng)
        if hook == "autonomy" and slot.plugin.reports_done:
            d = slot.plugin.done(ctx)
            if d is not None:
                slot.done = np.asarray(d, dtype=bool).reshape(ctx.n)

    def _deliver(self, t: float) -> None:
        self.bus.deliver(t)

    def _schedule(self) -> None:
        """Per-hook slot lists in block order (only slots that override the hook, non-empty)."""

        def having(kind: str, hook: str) -> list[_Slot]:
            return [
                slot
                for blk in self.blocks
                if blk.n > 0
                for slot in self._by_block[blk.name][kind]
                if hook in slot.hooks
            ]

        self._sched = {
            ("autonomy", "autonomy"): having("autonomy", "autonomy"),
            ("sensor", "sense"): having("sensor", "sense"),
            ("sensor", "estimate"): having("sensor", "estimate"),
        }
        depth = max((len(g["controller"]) for g in self._by_block.values()), default=0)
        self._chain = [
            [
                self._by_block[b.name]["controller"][pos]
                for b in self.blocks
                if b.n > 0
                and pos < len(self._by_block[b.name]["controller"])
                and "control" in self._by_block[b.name]["controller"][pos].hooks
            ]
            for pos in range(depth)
        ]
        self._subctrl = having("controller", "substep_control")
        self._motion = having("motion", "substep")

    def _entity_phase(self, kind: str, hook: str, t: float, k: int) -> None:
        clock = self.clock
        for slot in self._sched[(kind, hook)]:
            if slot.period == 1 or clock.due(slot.period, slot.offset, k):
                self._call(slot, hook, t)

    def _begin(self) -> None:
        self._started = True
        self.status = "running"
        self._wall0 = _time.perf_counter()
        t0 = self.clock.t
        for slot in self.slots:
            self._call(slot, "start", t0)
        self._deliver(t0)
        self._log_frame(t0)
        self._entity_phase("sensor", "sense", t0, 0)
        self._deliver(t0)
        self._entity_phase("sensor", "estimate", t0, 0)
        self._deliver(t0)

    def _tick(self) -> None:
        clock = self.clock
        k = clock.k
        t = clock.t
        t1 = clock.time_of(k + 1)
        # 1 spawn (runtime generation: not supported yet), 2 boundary
        self._deliver(t)
        # 3 autonomy, 4 boundary
        self._entity_phase("autonomy", "autonomy", t, k)
        self._deliver(t)
        # 5 control: chain positions with a boundary after each
        for chain in self._chain:
            for slot in chain:
                if slot.period == 1 or clock.due(slot.period, slot.offset, k):
                    self._call(slot, "control", t)
            self._deliver(t)
        # 6 physics
        h = clock.h
        for s in range(clock.substeps):
            ts = t + s * h
            for slot in self._subctrl:
                if slot.period == 1 or clock.due(slot.period, slot.offset, k):
                    slot.ctx.substep = s  # type: ignore[union-attr]
                    self._call(slot, "substep_control", ts)
            if s > 0:
                self._deliver(t)
            for slot in self._motion:
                slot.ctx.substep = s  # type: ignore[union-attr]
                self._call(slot, "substep", ts)
        for blk in self.blocks:
            st = blk.truth
            blk.truth = VehicleState(st.pos, st.quat, st.vel, st.ang_vel, st.accel, t1, st.cov)
            blk._truth_ro = None
        # 7 check
        if self._check_finite(t1):
            clock.k += 1
            self._log_frame(t1)
            return
        # 8 interact, 9 boundary
        for slot in self.world_slots:
            if slot.plugin.kind == "interaction" and clock.due(slot.period, slot.offset, k):
                self._call(slot, "interact", t1)
        self._deliver(t1)
        # 10 sense, 11 boundary, 12 estimate, 13 boundary
        self._entity_phase("sensor", "sense", t1, k + 1)
        self._deliver(t1)
        self._entity_phase("sensor", "estimate", t1, k + 1)
        self._deliver(t1)
        # 14 metric
        for slot in self.world_slots:
            if slot.plugin.kind == "metric" and clock.due(slot.period, slot.offset, k + 1):
                self._call(slot, "metric", t1)
        # 15 log, advance
        clock.k += 1
        self._log_frame(t1)

    def _check_finite(self, t1: float) -> bool:
        """Apply the non-finite policy; True when the run must stop (diverged)."""
        stop = False
        for blk in self.blocks:
            st = blk.truth
            if blk.n == 0 or np.isfinite(
                st.pos.sum() + st.quat.sum() + st.vel.sum() + st.ang_vel.sum()
            ):
                continue  # fast path: everything finite (a sum overflowing to inf is re-checked below)
            bad_fields = {
                "pos": ~np.all(np.isfinite(st.pos), axis=1),
                "quat": ~np.all(np.isfinite(st.quat), axis=1),
                "vel": ~np.all(np.isfinite(st.vel), axis=1),
                "ang_vel": ~np.all(np.isfinite(st.ang_vel), axis=1),
            }
            bad = np.zeros(blk.n, dtype=bool)
            for v in bad_fields.values():
                bad |= v
            bad &= blk.active
            if not np.any(bad):
                continue
            last = self._last_finite.get(blk.name)
            for i in np.flatnonzero(bad):
                fields = ", ".join(f for f, v in bad_fields.items() if v[i])
                prev = (
                    "unknown"
                    if last is None
                    else (
                        f"north={last[i, 0]:.6g} m, east={last[i, 1]:.6g} m, depth={last[i, 2]:.6g} m"
                    )
                )
                text = (
                    f"NumericalError: {blk.names[i]}: t={t1:.6g} s: non-finite truth {fields}; "
                    f"last finite state: {prev}"
                )
                self._events.append(Event(t1, blk.names[i], "error", "NumericalError", text))
            if self.on_nonfinite == "deactivate":
                blk.active = blk.active & ~bad
                if last is not None:
                    keep = bad
                    pos = np.where(keep[:, None], last, blk.truth.pos)
                    blk.truth = blk.truth.replace(pos=pos)
                    blk._truth_ro = None
            else:
                stop = True
        if stop:
            self.status = "diverged"
            self.ended_by = "nonfinite"
            self.ended_tick = self.clock.k + 1
        return stop

    def _log_frame(self, t: float) -> None:
        rec = self._recorder
        for blk in self.blocks:
            st = blk.truth
            rec.log(blk.name, "truth.pos", st.pos, "m", ("north", "east", "down"))
            rec.log(blk.name, "truth.heading", _heading_deg(st.quat), "deg")
            rec.log(blk.name, "truth.speed", st.vel[:, 0], "m/s")
            rec.log(blk.name, "active", blk.active.astype(float), "")
            if blk.belief is not None:
                rec.log(blk.name, "belief.pos", blk.belief.pos, "m", ("north", "east", "down"))
                rec.log(blk.name, "belief.heading", _heading_deg(blk.belief.quat), "deg")
            prev = self._last_finite.get(blk.name)
            if prev is None or np.isfinite(st.pos.sum()):
                self._last_finite[blk.name] = st.pos.copy()
            else:
                fin = np.all(np.isfinite(st.pos), axis=1)
                self._last_finite[blk.name] = np.where(fin[:, None], st.pos, prev)
        rec.frame(t)

    def _end_reason(self) -> str | None:
        clock = self.clock
        for c in self.end_conditions:
            if isinstance(c, MetricCondition):
                v = self._metric_values.get(c.metric)
                if v is not None and _OPS[c.op](v, c.value):
                    return f"metric {c.metric} {c.op} {c.value:g}"
            elif c == "time":
                if clock.end is not None and clock.t >= clock.end - 1e-9 * clock.dt:
                    return "time"
            elif c == "all_inactive":
                if all(not np.any(b.active) for b in self.blocks):
                    return "all_inactive"
            elif c == "one_team":
                teams = set()
                for b in self.blocks:
                    teams.update(int(x) for x in b.team[b.active])
                if len(teams) <= 1:
                    return "one_team"
            elif c == "all_done":
                ok = True
                for slot in self.slots:
                    if slot.plugin.reports_done and slot.block is not None:
                        d = (
                            slot.done
                            if slot.done is not None
                            else np.zeros(slot.block.n, dtype=bool)
                        )
                        if not np.all(d | ~slot.block.active):
                            ok = False
                if ok:
                    return "all_done"
        return None

    def step(self, n: int = 1) -> int:
        """Advance up to ``n`` ticks (fewer if an end condition holds); return ticks done.

        Errors raised by hooks propagate after the partial result has been finalised
        (``exc.result`` and ``sim.result`` hold it).  Call :meth:`run` to finish the run (it
        returns at once when an end condition already holds) and get the :class:`RunResult`.
        """
        if self._finished:
            return 0
        done = 0
        t_wall = _time.perf_counter()
        try:
            if not self._started:
                self._begin()
            for _ in range(int(n)):
                if self._end_reason() is not None or self.status == "diverged":
                    break
                self._tick()
                done += 1
                if self.status == "diverged":
                    break
                self.clock.pace()
        except BaseException as exc:
            self._wall += _time.perf_counter() - t_wall
            self._fail(exc)
            raise
        self._wall += _time.perf_counter() - t_wall
        return done

    def run(self, progress: Any = None) -> RunResult:
        """Run until an end condition holds (or :meth:`pause`), then finalise.

        Parameters
        ----------
        progress : callable, optional
            ``progress(t, t_end)`` called after every tick (e.g. a progress bar).

        Returns
        -------
        RunResult
            Status ``completed`` (ended by a condition), ``diverged`` or ``paused``.

        Raises
        ------
        MarinesimError or other exceptions raised by hooks
            After the partial result is finalised (status ``failed``; ``exc.result``).
        """
        if self._finished:
            assert self.result is not None
            return self.result
        self._paused = False
        self.clock.pace_reset()
        t_wall = _time.perf_counter()
        try:
            if not self._started:
                self._begin()
            while True:
                reason = self._end_reason()
                if reason is not None:
                    self.ended_by = reason
                    self.ended_tick = self.clock.k
                    self.status = "completed"
                    break
                if self.status == "diverged":
                    break
                if self._paused:
                    self._wall += _time.perf_counter() - t_wall
                    return self._finalise(final=False)
                self._tick()
                if progress is not None:
                    progress(self.clock.t, self.clock.end)
                self.clock.pace()
        except BaseException as exc:
            self._wall += _time.perf_counter() - t_wall
            self._fail(exc)
            raise
        self._wall += _time.perf_counter() - t_wall
        return self._finish()

    def pause(self) -> None:
        """Stop :meth:`run` at the next tick boundary (it returns a partial result)."""
        self._paused = True

    def resume(self) -> RunResult:
        """Continue a paused run (same as :meth:`run`)."""
        return self.run()

    def _fail(self, exc: BaseException) -> None:
        if self._finished:
            return
        self.status = "failed"
        self.error = exc
        self._events.append(Event(self.clock.t, "", "error", type(exc).__name__, str(exc)))
        try:
            self._stop_hooks()
        except Exception as exc2:  # the first error is the one reported
            self._events.append(
                Event(self.clock.t, "", "error", type(exc2).__name__, f"in stop hooks: {exc2}")
            )
        result = self._finalise(final=True)
        with contextlib.suppress(Exception):  # exotic exception types without a __dict__
            exc.result = result  # type: ignore[attr-defined]

    def _stop_hooks(self) -> None:
        t = self.clock.t
        for slot in self.world_slots:
            if slot.plugin.kind == "metric":
                self._call(slot, "summary", t)
        for slot in self.slots:
            self._call(slot, "stop", t)

    def _finish(self) -> RunResult:
        self._stop_hooks()
        return self._finalise(final=True)

    def _finalise(self, *, final: bool) -> RunResult:
        if final:
            self._finished = True
        status = self.status if final or self.status != "running" else "paused"
        entities = []
        for blk in self.blocks:
            for i in range(blk.n):
                entities.append(
                    {
                        "id": int(blk.ids[i]),
                        "name": blk.names[i],
                        "block": blk.name,
                        "index": i,
                        "team": int(blk.team[i]),
                    }
                )
        result = RunResult(
            t=np.asarray(self._recorder.times, dtype=float),
            signals=self._recorder.signals([b.name for b in self.blocks]),
            entities=entities,
            events=list(self._events),
            metrics=self._collect_metrics(),
            manifest=self.manifest(status),
            resolved_scenario=self.resolved_scenario,
        )
        self.result = result
        return result

    def _collect_metrics(self) -> list[dict[str, Any]]:
        rows = [dict(r) for r in self._metric_rows]
        for slot in self.world_slots:  # plugins that keep their rows in state["summary"]
            for r in slot.state.get("summary", []) or []:
                if isinstance(r, dict):
                    rows.append({"plugin": slot.plugin.name, **r})
        return rows

    def manifest(self, status: str | None = None) -> dict[str, Any]:
        """Run manifest (versions, seed, plugins, status, ending, wall time, lag)."""
        from marinesim import __version__

        perfect = [
            n
            for b in self.blocks
            if b.belief is None and not any(s.plugin.writes_belief for s in b.spec.sensors)
            for n in b.names
        ]
        oracle = [
            f"{b.name}.{s.plugin.name}"
            for b in self.blocks
            for s in b.spec.plugins()
            if s.uses_truth
        ]
        plugins = []
        for slot in self.slots:
            plugins.append(
                {
                    "block": slot.block.name if slot.block is not None else "",
                    "name": slot.plugin.name,
                    "plugin": slot.spec.registry_name or type(slot.plugin).__name__,
                    "class": f"{type(slot.plugin).__module__}:{type(slot.plugin).__qualname__}",
                    "kind": slot.plugin.kind,
                    "rate_hz": slot.spec.rate_hz,
                    "hooks": sorted(slot.hooks),
                    "calls": dict(slot.calls),
                    "reads_all_truth": bool(getattr(slot.plugin, "reads_all_truth", False)),
                }
            )
        man: dict[str, Any] = {
            "marinesim_version": __version__,
            "python": sys.version.split()[0],
            "numpy": np.__version__,
            "platform": platform.platform(),
            "scenario": self.name,
            "seed": self.seed,
            "seed_drawn_from_entropy": self.seed_drawn,
            "replica": self.replica,
            "status": status or self.status,
            "ended_by": self.ended_by,
            "ended_tick": self.ended_tick,
            "ticks": self.clock.k,
            "t_end": self.clock.t,
            "dt": self.clock.dt,
            "substeps": self.clock.substeps,
            "time_warp": self.clock.time_warp,
            "time_warp_lag": {"late_ticks": self.clock.lag_ticks, "max_lag_s": self.clock.lag_max},
            "wall_time_s": self._wall,
            "perfect_navigation": perfect,
            "oracle": oracle,
            "plugins": plugins,
            "bus": self.bus.stats(),
            "phases": list(PHASES),
        }
        if self.error is not None:
            man["error"] = f"{type(self.error).__name__}: {self.error}"
            man["error_type"] = type(self.error).__name__
        try:
            import scipy

            man["scipy"] = scipy.__version__
        except Exception:  # pragma: no cover
            pass
        man.update(self.extra_manifest)
        return man

    # snapshots -----------------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        """Immutable copy of the run state (between ticks)."""
        if not self._started:
            self._begin()
        data = {
            "k": self.clock.k,
            "blocks": [b.runtime_state() for b in self.blocks],
            "slots": [
                (
                    s.state,
                    s.calls,
                    s.done,
                    s.sub.inbox if s.sub else None,
                    s.current_inbox.messages,
                    s.rng.state() if s.rng else None,
                )
                for s in self.slots
            ],
            "bus": (self.bus.pending, self.bus._seq, self.bus.published, self.bus.delivered),
            "recorder": self._recorder.state(),
            "events": list(self._events),
            "metrics": dict(self._metric_values),
            "metric_rows": list(self._metric_rows),
            "world_subs": [[w.inbox for w in s.world_subs] for s in self.slots],
            "last_finite": self._last_finite,
            "status": (self.status, self.ended_by, self.ended_tick),
        }
        return Snapshot(self.clock.k, copy.deepcopy(data))

    def restore(self, snap: Snapshot) -> None:
        """Return to a snapshot; the run continues bit-identically from there."""
        data = copy.deepcopy(snap.data)
        self.clock.k = data["k"]
        for blk, st in zip(self.blocks, data["blocks"], strict=True):
            blk.set_runtime_state(st)
        for slot, (state, calls, done, inbox, cur, rng) in zip(
            self.slots, data["slots"], strict=True
        ):
            slot.state.clear()
            slot.state.update(state)
            slot.calls = calls
            slot.done = done
            if slot.sub is not None:
                slot.sub.inbox = inbox
            slot.current_inbox = Inbox(cur, slot.current_inbox.n)
            if rng is not None and slot.rng is not None:
                slot.rng.set_state(rng)
        self.bus.pending, self.bus._seq, self.bus.published, self.bus.delivered = data["bus"]
        self._recorder.set_state(data["recorder"])
        self._events = data["events"]
        self._metric_values = data["metrics"]
        self._metric_rows = data["metric_rows"]
        for slot, inboxes in zip(self.slots, data.get("world_subs", []), strict=False):
            for w, box in zip(slot.world_subs, inboxes, strict=False):
                w.inbox = box
        self._last_finite = data["last_finite"]
        self.status, self.ended_by, self.ended_tick = data["status"]
        self._finished = False
        self._started = True
        self.result = None
        self.error = None

    def reset(self, seed: int | None = None) -> None:
        """Start over (new spawn draws and streams if ``seed`` is given)."""
        if seed is not None:
            self.seed = check_seed(seed)
            self.seed_drawn = False
        self._init_runtime()

    # introspection -------------------------------------------------------------------------
    @property
    def t(self) -> float:
        """Current sim time [s]."""
        return self.clock.t

    def block(self, name: str) -> EntityBlock:
        """Runtime block by name."""
        for b in self.blocks:
            if b.name == name:
                return b
        from marinesim.core.errors import UnknownNameError

        raise UnknownNameError("entity block", name, [b.name for b in self.blocks])

    def hook_calls(self) -> dict[str, dict[str, int]]:
        """Calls per hook of every plugin, keyed ``block.plugin``."""
        return {
            f"{s.block.name if s.block else 'world'}.{s.plugin.name}": dict(s.calls)
            for s in self.slots
        }
