"""Constructor arguments of the PythonVehicleSimulator fleet, validated (units and ranges).

One :class:`~marinesim.core.params.ParamsBase` model per vehicle class; the field names are the
upstream constructor's parameter names (``controlSystem`` is ``control_system``), the ranges
are the upstream checks (which call ``sys.exit``) plus the physical ones (positive length,
water deeper than the draft).  :func:`check` turns a violation into the usual
``file:line:col: param: message`` :class:`~marinesim.core.errors.ConfigError` listing the
allowed values.

Source: ``cybergalactic/PythonVehicleSimulator`` @ c717e07, ``vehicles/*.py`` constructors.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from marinesim.core.params import Marks, ParamsBase, field, validate

__all__ = [
    "ARGS",
    "DPArgs",
    "DSRVArgs",
    "FrigateArgs",
    "ROVzefakkelArgs",
    "ShipClarke83Args",
    "TankerArgs",
    "TorpedoArgs",
    "check",
]


class DSRVArgs(ParamsBase):
    """``DSRV(controlSystem, r)``."""

    control_system: Literal["stepInput", "depthAutopilot"] = field(
        "stepInput", description="control mode"
    )
    r: float = field(0.0, unit="m", description="desired depth, positive down")


class FrigateArgs(ParamsBase):
    """``frigate(controlSystem, U, r)``: the speed table spans 6-12 m/s, upstream accepts 5-12."""

    control_system: Literal["stepInput", "headingAutopilot"] = field(
        "stepInput", description="control mode"
    )
    U: float = field(5.0, unit="m/s", ge=5.0, le=12.0, description="cruise speed")
    r: float = field(0.0, unit="deg", description="desired heading")


class ROVzefakkelArgs(ParamsBase):
    """``ROVzefakkel(controlSystem, U, r)``: upstream accepts 1-7 m/s (table 2-6.2 m/s)."""

    control_system: Literal["stepInput", "headingAutopilot"] = field(
        "stepInput", description="control mode"
    )
    U: float = field(3.0, unit="m/s", ge=1.0, le=7.0, description="cruise speed")
    r: float = field(0.0, unit="deg", description="desired heading")


class ShipClarke83Args(ParamsBase):
    """``shipClarke83(controlSystem, r, L, B, T, Cb, V_current, beta_current, tau_X)``."""

    control_system: Literal["stepInput", "headingAutopilot"] = field(
        "stepInput", description="control mode"
    )
    r: float = field(0.0, unit="deg", description="desired heading")
    L: float = field(50.0, unit="m", gt=0.0, description="length")
    B: float = field(7.0, unit="m", gt=0.0, description="beam")
    T: float = field(5.0, unit="m", gt=0.0, description="draft")
    Cb: float = field(0.7, unit="", gt=0.0, le=1.0, description="block coefficient")
    V_current: float = field(0.0, unit="m/s", ge=0.0, description="current speed")
    beta_current: float = field(0.0, unit="deg", description="current direction")
    tau_X: float = field(1e5, unit="N", description="surge force (pilot input)")


class TankerArgs(ParamsBase):
    """``tanker(controlSystem, r, V_current, beta_current, depth, rpm)``."""

    control_system: Literal["stepInput", "headingAutopilot"] = field(
        "stepInput", description="control mode"
    )
    r: float = field(0.0, unit="deg", description="desired heading")
    V_current: float = field(0.0, unit="m/s", ge=0.0, description="current speed")
    beta_current: float = field(0.0, unit="deg", description="current direction")
    depth: float = field(
        20.0, unit="m", gt=18.46, description="water depth, deeper than the draft 18.46 m"
    )
    rpm: float = field(80.0, unit="rpm", ge=10.0, le=90.0, description="propeller shaft speed")


class DPArgs(ParamsBase):
    """``semisub`` / ``supply(controlSystem, r_x, r_y, r_n, V_current, beta_current)``."""

    control_system: Literal["stepInput", "DPcontrol"] = field(
        "stepInput", description="control mode"
    )
    r_x: float = field(0.0, unit="m", description="desired north position")
    r_y: float = field(0.0, unit="m", description="desired east position")
    r_n: float = field(0.0, unit="deg", description="desired heading")
    V_current: float = field(0.0, unit="m/s", ge=0.0, description="current speed")
    beta_current: float = field(0.0, unit="deg", description="current direction")


class TorpedoArgs(ParamsBase):
    """``torpedo(controlSystem, r_z, r_psi, r_rpm, V_current, beta_current)``."""

    control_system: Literal["stepInput", "depthHeadingAutopilot"] = field(
        "stepInput", description="control mode"
    )
    r_z: float = field(0.0, unit="m", ge=0.0, le=100.0, description="desired depth")
    r_psi: float = field(0.0, unit="deg", description="desired heading")
    r_rpm: float = field(0.0, unit="rpm", ge=0.0, le=1525.0, description="propeller speed")
    V_current: float = field(0.0, unit="m/s", ge=0.0, description="current speed")
    beta_current: float = field(0.0, unit="deg", description="current direction")


#: PythonVehicleSimulator class name → its argument model.
ARGS: dict[str, type[ParamsBase]] = {
    "DSRV": DSRVArgs,
    "frigate": FrigateArgs,
    "ROVzefakkel": ROVzefakkelArgs,
    "semisub": DPArgs,
    "shipClarke83": ShipClarke83Args,
    "supply": DPArgs,
    "tanker": TankerArgs,
    "torpedo": TorpedoArgs,
}


def check(
    vehicle: str,
    data: Mapping[str, Any],
    *,
    file: str | Path | None = None,
    marks: Marks | None = None,
    prefix: str = "",
) -> Any:
    """Validated constructor arguments of ``vehicle`` (a located ConfigError otherwise)."""
    return validate(ARGS[vehicle], data, file=file, marks=marks, prefix=prefix)
