"""``marinesim vehicles``: list the vehicle presets; ``vehicles show NAME [--json]``;
``vehicles actuators FILE`` imports the thrusters and fins of a UUV Simulator file.

Glue only: the data and the builders live in :mod:`marinesim.models.presets`, the importer in
:mod:`marinesim.interop.uuv`.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import typer


def _jsonable(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (np.floating, np.integer)):
        return v.item()
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    return v


def preset_info(name: str) -> dict[str, Any]:
    """Everything ``vehicles show`` prints: the preset file and the derived model values."""
    from marinesim.models import presets

    p = presets.get(name)
    info: dict[str, Any] = {k: v for k, v in p.data.items()}
    info["source"] = p.source
    model = presets.build(p.name)
    if p.model == "fossen6dof":
        info["derived"] = {
            "M": model.m,
            "M_A": model.m_a,
            "inertia_about_cg": model.i_g,
            "D_L": model.d_l,
            "D_Q": model.d_q,
        }
    else:
        info["derived"] = model.constants()
    return _jsonable(info)


def actuators_info(path: str, *, strict: bool = False) -> dict[str, Any]:
    """The actuators of a UUV Simulator XML / URDF or marinesim YAML file, in marinesim's YAML
    format (FRD about CO, radians) with UUV Simulator's replacement rules applied: a swapped
    or empty clamp or thrust range becomes ``null`` (no limit), an efficiency outside [0, 1]
    becomes 1.0, so the output reloads without warnings."""
    from marinesim.actuators import thruster as th
    from marinesim.interop.uuv import load_actuators

    acts = load_actuators(path, strict=strict)
    out = acts.model_dump(mode="json", exclude_none=True)

    def lim(v: float) -> float | None:
        return None if not np.isfinite(v) else float(v)

    for params, row in zip(acts.thrusters, out["thrusters"], strict=True):
        eff = th.effective(params)
        for key in ("clamp_min", "clamp_max", "thrust_min", "thrust_max"):
            row.pop(key, None)
            if lim(getattr(eff, key)) is not None:
                row[key] = lim(getattr(eff, key))
        row["thrust_efficiency"] = eff.thrust_efficiency
        row["propeller_efficiency"] = eff.propeller_efficiency
    return out


def _layout_line(name: str) -> str:
    """Thruster count and the layout's own note (first sentence)."""
    from marinesim.allocation.vehicles import get_layout

    lay = get_layout(name)
    note = " ".join(str(lay.notes or "").split())
    first = note.split(". ")[0].rstrip(".")
    return f"{len(lay.thrusters)} thrusters" + (f"; {first}" if first else "")


def register(app: typer.Typer) -> None:
    """Add the ``vehicles`` command group to ``app``."""
    group = typer.Typer(
        name="vehicles",
        help="Vehicle presets (6-DOF parameter sets with sources): list, show NAME; actuators FILE.",
        invoke_without_command=True,
        no_args_is_help=False,
        pretty_exceptions_enable=False,
    )

    def _list() -> None:
        from marinesim.allocation.vehicles import vehicle_names
        from marinesim.models import presets

        typer.echo("Vehicle presets (scenario motion.params.preset, vehicles show NAME):")
        for name in presets.names():
            p = presets.get(name)
            flag = " [unverified]" if p.unverified and "[unverified]" not in p.description else ""
            typer.echo(f"{name:30s} {p.model:10s} {p.description}{flag}")
            also = presets.aliases_of(name)
            if also:
                typer.echo(f"{'':30s} also named: {', '.join(also)}")
            typer.echo(f"{'':30s} source: {p.source}")
            if p.data.get("fidelity"):  # PythonVehicleSimulator vehicles: exact or adapted
                modes = ", ".join(p.data.get("control_modes") or ())
                typer.echo(f"{'':30s} fidelity: {p.data['fidelity']}; modes: {modes}")
        typer.echo("")
        typer.echo("Thruster layouts (alloc report NAME, scenario thrusters.layout):")
        for name in vehicle_names():
            typer.echo(f"{name:30s} {_layout_line(name)}")

    @group.callback(invoke_without_command=True)
    def vehicles_main(ctx: typer.Context) -> None:
        """List the presets (as `vehicles list`) when no sub-command is given."""
        if ctx.invoked_subcommand is None:
            _list()

    @group.command("list")
    def vehicles_list() -> None:
        """List the presets with a one-line description and their source."""
        _list()

    @group.command("show")
    def vehicles_show(
        name: str = typer.Argument(..., help="Preset name (see `marinesim vehicles`)."),
        as_json: bool = typer.Option(False, "--json", help="Print machine-readable JSON."),
    ) -> None:
        """Print every parameter of a preset, with the derived matrices."""
        info = preset_info(name)
        if as_json:
            typer.echo(json.dumps(info, indent=1))
            return
        import yaml

        typer.echo(
            yaml.safe_dump(
                info, sort_keys=False, width=100, default_flow_style=None, allow_unicode=True
            ).rstrip()
        )

    @group.command("actuators")
    def vehicles_actuators(
        path: str = typer.Argument(
            ..., help="UUV Simulator <plugin> XML, xacro-expanded URDF, or actuator YAML."
        ),
        strict: bool = typer.Option(
            False, "--strict", help="UUV Simulator's silent replacements become errors."
        ),
        as_json: bool = typer.Option(False, "--json", help="Print machine-readable JSON."),
    ) -> None:
        """Import thrusters and fins and print them in marinesim's actuator YAML (FRD)."""
        info = actuators_info(path, strict=strict)
        if as_json:
            typer.echo(json.dumps(info, indent=1))
            return
        import yaml

        typer.echo(
            yaml.safe_dump(info, sort_keys=False, width=100, default_flow_style=None).rstrip()
        )

    app.add_typer(group, name="vehicles")
