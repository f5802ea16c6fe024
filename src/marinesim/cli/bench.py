"""``marinesim bench``: throughput measurements of the models.

``marinesim bench usm --vehicles N --steps K [--json]`` runs
:func:`marinesim.models.kinematic.measure_throughput` and prints vehicle-steps per second of
the batched uSimMarine model, with the per-vehicle Python loop of the same model measured in
the same process for comparison.
"""

from __future__ import annotations

import json

import typer


def register(app: typer.Typer) -> None:
    """Add the ``bench`` command group to ``app``."""
    bench_app = typer.Typer(
        help="Measure model throughput (vehicle-steps per second).", no_args_is_help=True
    )

    @bench_app.command("usm")
    def bench_usm(
        vehicles: int = typer.Option(
            10_000, "--vehicles", "-n", help="Number of vehicles N (>= 1)."
        ),
        steps: int = typer.Option(50, "--steps", "-k", help="Timed steps (>= 1)."),
        dt: float = typer.Option(0.1, "--dt", help="Step [s]."),
        loop: bool = typer.Option(
            True, "--loop/--no-loop", help="Also time a per-vehicle Python loop (50 vehicles)."
        ),
        mail: bool = typer.Option(
            True,
            "--mail/--no-mail",
            help="Deliver DESIRED_THRUST and DESIRED_RUDDER every step, or time iterate() alone.",
        ),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    ) -> None:
        """uSimMarine (`usm`): batched iterate() vs a per-vehicle loop, same process."""
        from marinesim.models.kinematic import measure_throughput

        res = measure_throughput(vehicles, steps, dt=dt, loop=loop, mail=mail)
        if as_json:
            typer.echo(json.dumps(res))
            return
        typer.echo(
            f"usm  N={res['vehicles']}  steps={res['steps']}  "
            f"{res['vehicle_steps_per_s']:.4g} vehicle-steps/s  "
            f"({res['seconds_per_step'] * 1e3:.3g} ms/step, best of 3 rounds, "
            f"{'mail + iterate' if mail else 'iterate only'})"
        )
        if loop:
            typer.echo(
                f"per-vehicle loop: {res['loop_vehicle_steps_per_s']:.4g} vehicle-steps/s  "
                f"ratio {res['ratio']:.3g}x"
            )

    app.add_typer(bench_app, name="bench")
