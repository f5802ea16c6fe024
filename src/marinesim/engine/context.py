"""What a plugin hook sees: :class:`HookContext` and the read-only block views (engine spec §3.1).

The access matrix of engine spec §2.3 is enforced here: truth only for the kinds allowed to read
it (or oracles declaring ``uses_truth``), belief writes only by the block's belief writer,
publications only on declared topics.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from marinesim.core.errors import EngineError
from marinesim.core.params import ParamsBase
from marinesim.core.state import VehicleState
from marinesim.engine.bus import Inbox
from marinesim.engine.entity import EntityBlock
from marinesim.engine.env import Environment
from marinesim.engine.results import Event

if TYPE_CHECKING:
    from marinesim.engine.schedule import Slot
    from marinesim.engine.simulation import Simulation

__all__ = ["BlockView", "HookContext", "TruthView"]

_SEVERITIES = frozenset(("debug", "info", "warning", "error", "critical"))


class _Events:
    def __init__(self, sim: Simulation, block: EntityBlock | None, source: str) -> None:
        self._sim = sim
        self._block = block
        self._source = source
        self.t = 0.0

    def emit(self, kind: str, text: str, severity: str = "info", rows: Any = None) -> None:
        """Record an event (per entity row, or for the world when the plugin has no block)."""
        if severity not in _SEVERITIES:
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

    def __init__(self, sim: Simulation, slot: Slot) -> None:
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
        # fixed for the context's life (a reset builds new contexts): looked up once here
        self._bus = sim.bus
        self._recorder = sim._recorder
        self._block_name = slot.block.name if slot.block is not None else ""
        self._signal_names: dict[str, str] = {}
        self._active_src: NDArray[np.bool_] | None = None
        self._active_ro: NDArray[np.bool_] | None = None
        # local topic → wanted, valid while the bus has this many subscriptions
        self._wants_local: dict[str, bool] = {}
        self._wants_subs = -1

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
    def world(self) -> NDArray[np.int64]:
        """(N,) world (stacked replica position 0..R-1) of every row; all 0 for one world."""
        return self._ro(self._block.world)

    @property
    def n_worlds(self) -> int:
        """Worlds R stacked in the simulation (1 unless replicas are stacked)."""
        return int(self._sim.n_worlds)

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
        a = self._block.active
        if a is not self._active_src:  # a view follows in-place changes; a new array: new view
            self._active_ro = self._ro(a)
            self._active_src = a
        return self._active_ro  # type: ignore[return-value]

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
        if scope != "local":
            return self._bus.wanted(topic, self._block_name, scope)
        cache = self._wants_local
        n = len(self._bus.subscriptions)
        if n != self._wants_subs:
            cache.clear()
            self._wants_subs = n
        hit = cache.get(topic)
        if hit is None:
            hit = cache[topic] = self._bus.wanted(topic, self._block_name, "local")
        return hit

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
        publishes = plugin.publishes
        if topic not in publishes and "*" not in publishes:
            raise EngineError(
                f"plugin {plugin.name!r} publishes {topic!r}, which is not in its declared "
                f"publishes ({', '.join(sorted(publishes)) or 'none'})"
            )
        block = self._block
        bus = self._bus
        if not bus.wanted(topic, self._block_name, scope):
            bus.unheard[topic] = bus.unheard.get(topic, 0) + 1
            return
        if rows is None:
            r = np.arange(block.n)
        else:
            r = np.asarray(rows, dtype=np.int64)
            if r.ndim == 0:
                r = r.reshape(1)
        if isinstance(value, str):
            payload: NDArray[Any] = np.empty(len(r), dtype=object)
            payload[:] = value
        else:
            arr = np.asarray(value)
            kind = arr.dtype.kind
            if kind in "US":
                payload = arr.astype(object)
            elif kind == "O":
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
        if scope == "local" and delay == 0.0 and t_stamp is None:  # the usual message
            t = float(self.t)
            sender = np.asarray(block.ids[r], dtype=np.int64)
            bus.enqueue(
                topic, self._block_name, r, sender, payload, t, t, t + 0.0, scope, plugin.name
            )
            return
        bus.publish(
            topic,
            self._block_name,
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
        full = self._signal_names.get(name)
        if full is None:
            full = self._signal_names[name] = f"{self._slot.plugin.name}.{name}"
        self._recorder.log(self._block_name, full, values, unit, tuple(labels) if labels else None)

    # world plugins --------------------------------------------------------------------------
    @property
    def blocks(self) -> list[BlockView]:
        """Read-only views of every entity block (world plugins: interaction, metric)."""
        if self._slot.plugin.kind not in ("interaction", "metric", "network"):
            raise EngineError(
                f"{self._slot.plugin.kind} plugin {self._slot.plugin.name!r} sees its own block only"
            )
        return [BlockView(b, self.replica) for b in self._sim.blocks]

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
        return [TruthView(b, self.replica) for b in self._sim.blocks]

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


def _row_replica(block: EntityBlock, replica: int) -> tuple[NDArray[np.int64], bool]:
    """(N,) read-only replica of every row and whether the block stacks replicas."""
    rows = getattr(block, "row_replica", None)
    if rows is None:
        return HookContext._ro(np.full(block.n, int(replica), dtype=np.int64)), False
    return HookContext._ro(rows), True


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
    replica : ndarray of int, shape (N,)
        Replica of every row (stacked replicas, §10.5; else the simulation's replica).
    stacked : bool
        Whether the block holds stacked replicas.
    world : ndarray of int, shape (N,)
        World (stack position 0..R-1) of every row.
    """

    def __init__(self, block: EntityBlock, replica: int = 0) -> None:
        self.name = block.name
        self.n = block.n
        self.names = list(block.names)
        self.ids = HookContext._ro(block.ids)
        self.replica, self.stacked = _row_replica(block, replica)
        self.world = HookContext._ro(block.world)
        self.team = HookContext._ro(block.team)
        self.active = HookContext._ro(block.active)
        self.truth = block.truth_ro


class BlockView(TruthView):
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
    replica : ndarray of int, shape (N,)
        Replica of every row (stacked replicas, §10.5; else the simulation's replica).
    stacked : bool
        Whether the block holds stacked replicas.
    """

    def __init__(self, block: EntityBlock, replica: int = 0) -> None:
        super().__init__(block, replica)
        self.belief = block.belief_ro
        self.perfect_navigation = block.belief is None
        #: Topics published by the block's plugins (their ``publishes`` declarations).
        self.publishes: frozenset[str] = frozenset(
            t for spec in block.spec.plugins() for t in spec.plugin.publishes
        )
