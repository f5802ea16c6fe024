"""Build-time validation of a simulation and its end conditions (engine spec §3, §4.4, §4.5).

Everything here runs once, when a :class:`~marinesim.engine.simulation.Simulation` is built;
nothing of it is repeated per tick.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from marinesim.core.errors import ConfigError
from marinesim.core.rng import name_hash
from marinesim.engine.clock import Clock, period_ticks
from marinesim.engine.entity import BlockSpec, PluginSpec
from marinesim.engine.plugin import WORLD_KINDS

__all__ = ["END_CONDITIONS", "OPS", "MetricCondition", "validate_build"]

#: Named end conditions (plus :class:`MetricCondition`).
END_CONDITIONS = ("time", "all_inactive", "all_done", "one_team")

OPS = {
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
        if self.op not in OPS:
            raise ConfigError(
                f"unknown operator {self.op!r} (use one of {', '.join(OPS)})",
                param="end_conditions.op",
            )


def validate_build(
    block_specs: Sequence[BlockSpec],
    world_specs: Sequence[PluginSpec],
    end_conditions: Sequence[str | MetricCondition],
    on_nonfinite: str,
    clock: Clock,
) -> None:
    """Check a simulation's build description before anything runs (engine spec §3, §4.5).

    Parameters
    ----------
    block_specs, world_specs : sequence of BlockSpec, PluginSpec
    end_conditions : sequence of str or MetricCondition
    on_nonfinite : str
    clock : Clock
        The run's clock (dt for the plugin rates, end for the end conditions).

    Raises
    ------
    ConfigError
        Naming the parameter path (``entities.<block>.<plugin>``, ``end_conditions``, ...).
    """
    if on_nonfinite not in ("stop", "deactivate"):
        raise ConfigError(
            f"on_nonfinite must be 'stop' or 'deactivate', got {on_nonfinite!r}",
            param="on_nonfinite",
        )
    names = [b.name for b in block_specs]
    seen: dict[int, str] = {}
    for b in block_specs:
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
                period_ticks(spec.rate_hz, clock.dt, name=f"entities.{b.name}.{p.name}")
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
    for spec in world_specs:
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
    for c in end_conditions:
        if isinstance(c, MetricCondition):
            if not any(s.plugin.kind == "metric" for s in world_specs):
                raise ConfigError(
                    f"end condition on metric {c.metric!r} but the scenario has no metric plugin",
                    param="end_conditions",
                )
        elif c not in END_CONDITIONS:
            raise ConfigError(
                f"unknown end condition {c!r} (known: {', '.join(END_CONDITIONS)}, or {{metric, op, value}})",
                param="end_conditions",
            )
    if not end_conditions:
        raise ConfigError(
            "end_conditions is empty: the run could never end", param="end_conditions"
        )
    if clock.end is None and all(c == "time" for c in end_conditions):
        raise ConfigError(
            "the scenario can never end: no time.end and no other end condition",
            param="time.end",
        )
    if "all_done" in end_conditions and not any(
        s.plugin.reports_done for b in block_specs for s in b.autonomy
    ):
        raise ConfigError(
            "end condition 'all_done' but no autonomy plugin reports done",
            param="end_conditions",
        )
