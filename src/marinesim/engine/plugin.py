"""Plugin base class, plugin kinds, hooks and the phase order of a tick (engine spec §3, §4.2).

A plugin is a class with a ``kind``, a ``Params`` model (:class:`~marinesim.core.params.ParamsBase`),
``publishes``/``subscribes`` declarations (topic → message type name) and the hooks it needs.
Hooks it does not override are detected when the simulation is built and never called.
"""

from __future__ import annotations

from typing import Any, ClassVar

from marinesim.core.errors import ConfigError, EngineError
from marinesim.core.params import ParamsBase, field

__all__ = [
    "ENTITY_KINDS",
    "HOOKS",
    "KINDS",
    "PHASES",
    "WORLD_KINDS",
    "NoParams",
    "Plugin",
    "RateParams",
    "overridden_hooks",
]

#: The order of one tick, t_k → t_{k+1} (engine spec §4.2). ``boundary`` delivers messages
#: (at t_k before ``physics``, at t_{k+1} after it). The control phase also delivers after each
#: controller chain position. The tick is compiled from this tuple when a simulation is built
#: (:class:`marinesim.engine.tick.TickLoop`): reordering it reorders the tick.
PHASES: tuple[str, ...] = (
    "spawn",
    "boundary",
    "autonomy",
    "boundary",
    "control",
    "physics",
    "check",
    "interact",
    "boundary",
    "sense",
    "boundary",
    "estimate",
    "boundary",
    "metric",
    "log",
)

#: Hooks each kind may override, in the order they can fire in a tick.
HOOKS: dict[str, tuple[str, ...]] = {
    "motion": ("start", "substep", "stop"),
    "sensor": ("start", "sense", "estimate", "stop"),
    "controller": ("start", "control", "substep_control", "stop"),
    "autonomy": ("start", "autonomy", "stop"),
    "interaction": ("start", "interact", "stop"),
    "metric": ("start", "metric", "summary", "stop"),
    "network": ("start", "route", "stop"),
}
KINDS: tuple[str, ...] = tuple(HOOKS)
ENTITY_KINDS: tuple[str, ...] = ("motion", "sensor", "controller", "autonomy")
WORLD_KINDS: tuple[str, ...] = ("interaction", "metric", "network")


class NoParams(ParamsBase):
    """Parameters of a plugin that takes none."""


class RateParams(ParamsBase):
    """Scheduling of an entity plugin (the scenario entry keys beside ``params``)."""

    rate_hz: float | None = field(
        None, unit="Hz", description="update rate; default every tick", gt=0
    )
    offset_ticks: int = field(0, unit="", description="first tick of the schedule", ge=0)


class Plugin:
    """Base class of every engine plugin.

    Subclasses set the class attributes and override only the hooks they need; every hook
    has the signature ``hook(self, ctx, rng) -> None`` where ``ctx`` is a
    :class:`~marinesim.engine.simulation.HookContext` over the plugin's entity block (arrays
    with a leading axis N) and ``rng`` the block's per-entity random streams
    (:class:`~marinesim.core.rng.BlockRNG`).

    Class attributes
    ----------------
    kind : str
        One of :data:`KINDS`.
    Params : type of ParamsBase
        Validated parameters (``extra="forbid"``, frozen).
    publishes, subscribes : dict of str to str
        Topic → message type name (``"double"``, ``"string"``, ``"array"``).
    writes_belief : bool
        The plugin writes the entity's belief state (at most one per entity; sensors only).
    reads_truth : bool
        A controller or autonomy that reads truth; needs ``uses_truth: true`` in the scenario.
    writes_truth : bool
        The plugin writes truth (motion plugins implicitly; world interactions may correct it).
        Any other kind declaring it is rejected when the simulation is built.
    reads_all_truth : bool
        A sensor that observes every block's truth in ``sense`` (``ctx.world_truth``), e.g.
        ``contacts``; recorded in the manifest. Other kinds declaring it are rejected at build.
    reports_done : bool
        An autonomy that reports ``done`` (counts for the ``all_done`` end condition).

    Parameters
    ----------
    name : str
        Instance name (unique within its entity block).
    params : ParamsBase
        Validated parameters (an instance of ``Params``).
    """

    kind: ClassVar[str] = ""
    Params: ClassVar[type[ParamsBase]] = NoParams
    publishes: ClassVar[dict[str, str]] = {}
    subscribes: ClassVar[dict[str, str]] = {}
    writes_belief: ClassVar[bool] = False
    reads_truth: ClassVar[bool] = False
    writes_truth: ClassVar[bool] = False
    reads_all_truth: ClassVar[bool] = False
    reports_done: ClassVar[bool] = False

    def __init__(self, name: str, params: ParamsBase | None = None) -> None:
        if self.kind not in KINDS:
            raise EngineError(
                f"plugin class {type(self).__name__} declares unknown kind {self.kind!r}"
            )
        self.name = name
        if params is None:
            params = self.Params()
        if not isinstance(params, self.Params):
            raise ConfigError(
                f"plugin {name!r} expects parameters of type {self.Params.__name__}, "
                f"got {type(params).__name__}"
            )
        self.params = params

    # Hook placeholders; overriding one makes it scheduled. -------------------------------
    def start(self, ctx: Any, rng: Any) -> None:
        """Called once when the run starts (after all plugins are built)."""

    def stop(self, ctx: Any, rng: Any) -> None:
        """Called once when the run ends (also after an error)."""

    def substep(self, ctx: Any, rng: Any) -> None:
        """Motion: integrate truth over one physics substep of length ``ctx.h``."""

    def control(self, ctx: Any, rng: Any) -> None:
        """Controller: read setpoints and belief, publish commands."""

    def substep_control(self, ctx: Any, rng: Any) -> None:
        """Controller: optional inner loop run before each physics substep."""

    def autonomy(self, ctx: Any, rng: Any) -> None:
        """Autonomy: read belief and messages, publish setpoints."""

    def sense(self, ctx: Any, rng: Any) -> None:
        """Sensor: sample truth at t_{k+1} and publish measurements."""

    def estimate(self, ctx: Any, rng: Any) -> None:
        """Sensor (belief writer): update and write belief."""

    def interact(self, ctx: Any, rng: Any) -> None:
        """Interaction (world): correct truth, deactivate entities, emit events."""

    def metric(self, ctx: Any, rng: Any) -> None:
        """Metric: compute per-tick values."""

    def summary(self, ctx: Any, rng: Any) -> None:
        """Metric: end-of-run summary."""

    def route(self, batch: Any, ctx: Any, rng: Any) -> Any:  # pragma: no cover - not used yet
        """Network: delivery decisions."""
        return None

    def done(self, ctx: Any) -> Any:
        """Autonomy: (N,) bool array, True where the entity's task is finished."""
        return None

    @classmethod
    def describe(cls) -> str:
        """One-line description (first docstring line)."""
        doc = (cls.__doc__ or "").strip().splitlines()
        return doc[0] if doc else ""

    @classmethod
    def topic_docs(cls) -> dict[str, tuple[str, str]]:
        """Unit and description of the topics the plugin subscribes to or publishes.

        Returns
        -------
        dict
            Topic name → (unit, description); used by ``marinesim plugins show NAME
            --interface``.  Topics left out are listed with their type only.
        """
        return {}


def overridden_hooks(cls: type[Plugin]) -> tuple[str, ...]:
    """Hooks of ``cls``'s kind that ``cls`` overrides (the others are never called).

    Parameters
    ----------
    cls : type of Plugin

    Returns
    -------
    tuple of str
        Hook names in the kind's order.
    """
    if cls.kind not in HOOKS:
        raise EngineError(f"plugin class {cls.__name__} declares unknown kind {cls.kind!r}")
    return tuple(h for h in HOOKS[cls.kind] if getattr(cls, h) is not getattr(Plugin, h))
