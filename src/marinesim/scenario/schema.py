"""Pydantic models of the scenario YAML layout (engine spec §12.1), version ``marinesim: 1``.

Only the layout is validated here; plugin ``params`` blocks are validated by each plugin's
own ``Params`` when the simulation is built (:mod:`marinesim.scenario.build`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from marinesim.core.params import ParamsBase, field

__all__ = [
    "CurrentField",
    "CurrentUniform",
    "EndMetric",
    "EntityModel",
    "EnvironmentModel",
    "OriginModel",
    "PluginEntry",
    "ScenarioModel",
    "SpawnModel",
    "SpreadModel",
    "TerrainFlat",
    "TerrainGrid",
    "TimeModel",
    "WaterModel",
]


class TimeModel(ParamsBase):
    """``time:`` block."""

    dt: float = field(..., unit="s", gt=0, description="control tick")
    substeps: int = field(1, unit="", ge=1, description="physics steps per tick")
    start: float = field(0.0, unit="s", description="time of tick 0")
    end: float | None = field(None, unit="s", description="end time (the 'time' end condition)")
    time_warp: float = field(
        0.0, unit="", ge=0, description="0 = as fast as possible, 1 = real time"
    )


class OriginModel(ParamsBase):
    """``origin:`` datum of the local frame."""

    latitude_deg: float = field(..., unit="deg", ge=-90, le=90, description="datum latitude")
    longitude_deg: float = field(..., unit="deg", ge=-180, le=180, description="datum longitude")


class WaterModel(ParamsBase):
    """``environment.water``."""

    density: float = field(1025.0, unit="kg/m^3", gt=0, description="water density")
    gravity: float = field(9.81, unit="m/s^2", gt=0, description="gravity")


class CurrentUniform(ParamsBase):
    """A uniform current (the direction the water flows towards, marine degrees)."""

    model: Literal["uniform"] = "uniform"
    speed: float = field(..., unit="m/s", ge=0, description="current speed")
    direction_deg: float = field(..., unit="deg", description="direction the water flows towards")


class CurrentField(ParamsBase):
    """A MOOS-IvP current-field file (``.cfd``), relative to the scenario file."""

    model: Literal["field"] = "field"
    file: str = field(..., description="path of the .cfd file")
    active: bool = field(True, description="apply the field to the vehicles")


class TerrainFlat(ParamsBase):
    """Flat seafloor at one depth."""

    model: Literal["flat"] = "flat"
    depth: float = field(
        ..., unit="m", gt=0, allow_inf_nan=False, description="seafloor depth, positive down"
    )


class TerrainGrid(ParamsBase):
    """Gridded bathymetry CSV (header row: east coordinates; rows: north, depths), relative to
    the scenario file (:func:`marinesim.environment.terrain.parse_bathymetry`)."""

    model: Literal["grid"] = "grid"
    file: str = field(..., description="path of the bathymetry CSV")


class EnvironmentModel(ParamsBase):
    """``environment:`` block."""

    water: WaterModel = Field(default_factory=WaterModel)
    current: CurrentUniform | CurrentField | None = Field(default=None, discriminator="model")
    terrain: TerrainFlat | TerrainGrid | None = Field(default=None, discriminator="model")


class PluginEntry(ParamsBase):
    """One plugin of an entity block."""

    plugin: str = field(..., description="registered plugin name")
    name: str | None = field(None, description="instance name (default: the plugin name)")
    rate_hz: float | None = field(
        None, unit="Hz", gt=0, description="update rate (default every tick)"
    )
    offset_ticks: int = field(0, unit="", ge=0, description="first tick of the schedule")
    uses_truth: bool = field(False, description="oracle: controller/autonomy reads truth")
    params: dict[str, Any] = Field(default_factory=dict)


class SpreadModel(ParamsBase):
    """Random spawn spread (one draw per entity from the block's spawn streams)."""

    distribution: Literal["normal", "uniform"] = "normal"
    north: float = field(0.0, unit="m", ge=0)
    east: float = field(0.0, unit="m", ge=0)
    depth: float = field(0.0, unit="m", ge=0)
    heading_deg: float = field(0.0, unit="deg", ge=0)


class StepModel(ParamsBase):
    """Fixed offset between successive members (member i gets i × step)."""

    north: float = field(0.0, unit="m")
    east: float = field(0.0, unit="m")
    depth: float = field(0.0, unit="m")
    heading_deg: float = field(0.0, unit="deg")


class SpawnModel(ParamsBase):
    """``spawn:`` block (positions north/east/depth, marine heading)."""

    north: float = field(0.0, unit="m")
    east: float = field(0.0, unit="m")
    depth: float = field(0.0, unit="m", ge=0)
    heading_deg: float = field(0.0, unit="deg")
    speed: float = field(0.0, unit="m/s")
    step: StepModel | None = None
    spread: SpreadModel | None = None


class EntityModel(ParamsBase):
    """One ``entities:`` entry (an entity block)."""

    name: str = field(..., description="block name; entities are name[i]")
    count: int = field(1, unit="", ge=0)
    team: int = 1
    radius: float = field(1.0, unit="m", gt=0)
    contact_type: str = "vehicle"
    properties: dict[str, Any] = Field(default_factory=dict)
    spawn: SpawnModel = Field(default_factory=SpawnModel)
    motion: PluginEntry
    controllers: list[PluginEntry] = Field(default_factory=list)
    autonomy: list[PluginEntry] = Field(default_factory=list)
    sensors: list[PluginEntry] = Field(default_factory=list)
    generate: dict[str, Any] | None = None


class EndMetric(ParamsBase):
    """``{metric: name, op: '<', value: x}``."""

    metric: str
    op: Literal["<", "<=", ">", ">="]
    value: float


class ScenarioModel(ParamsBase):
    """The whole scenario file."""

    marinesim: Literal[1] = field(..., description="schema version")
    name: str = "scenario"
    description: str = ""
    seed: int | None = field(None, ge=0, le=2**63 - 1)
    replicas: int = field(1, ge=1, description="Monte-Carlo replicas (replica r: keys start with r)")
    sweep: dict[str, Any] | None = Field(
        default=None, description="parameter sweep for 'marinesim batch' (marinesim.batch.design)"
    )
    time: TimeModel
    end_conditions: list[Literal["time", "all_inactive", "all_done", "one_team"] | EndMetric] = (
        Field(default_factory=lambda: ["time"])
    )
    on_nonfinite: Literal["stop", "deactivate"] = "stop"
    log_rate: float | None = field(
        None, unit="Hz", gt=0, allow_inf_nan=False, description="frames logged per sim second"
    )
    log_columns: list[str] | None = Field(
        default=None, description="signals to log (glob patterns; truth.* and active always)"
    )
    strict: bool = False
    origin: OriginModel | None = None
    environment: EnvironmentModel = Field(default_factory=EnvironmentModel)
    networks: list[dict[str, Any]] = Field(default_factory=list)
    interactions: list[PluginEntry] = Field(default_factory=list)
    metrics: list[PluginEntry] = Field(default_factory=list)
    entity_defaults: dict[str, Any] = Field(default_factory=dict)
    entities: list[EntityModel] = Field(..., min_length=1)
    script: list[Any] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique_names(self) -> ScenarioModel:
        names = [e.name for e in self.entities]
        for n in names:
            if names.count(n) > 1:
                raise ValueError(f"duplicate entity block name {n!r}")
        return self
