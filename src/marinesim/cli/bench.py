"""``marinesim bench``: throughput measurements of the models.

``marinesim bench usm --vehicles N --steps K [--json]`` runs
:func:`marinesim.models.usm.measure_throughput` and prints vehicle-steps per second of
the batched uSimMarine model, with the per-vehicle Python loop of the same model measured in
the same process for comparison.

``marinesim bench fossen --vehicles N --steps K [--json]`` runs
:func:`marinesim.cli.bench_sixdof.measure`: PythonVehicleSimulator's REMUS 100 loop on
the compiled 6-DOF kernels (and the generic ``fossen6dof`` model), against a per-vehicle
Python loop of the same step measured in the same process.
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
        from marinesim.models.usm import measure_throughput

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

    @bench_app.command("fossen")
    def bench_fossen(
        vehicles: int = typer.Option(
            10_000, "--vehicles", "-n", help="Number of vehicles N (>= 1)."
        ),
        steps: int = typer.Option(50, "--steps", "-k", help="Timed steps per round (>= 1)."),
        backend: str = typer.Option(
            "cpu", "--backend", help="Backend: cpu (compiled, default), python or cuda."
        ),
        generic: bool = typer.Option(
            True, "--generic/--no-generic", help="Also time the generic fossen6dof model."
        ),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    ) -> None:
        """REMUS 100 (exact PythonVehicleSimulator loop) on the compiled 6-DOF kernels."""
        from marinesim.cli.bench_sixdof import measure

        res = measure(vehicles, steps, backend=backend, generic=generic)
        if as_json:
            typer.echo(json.dumps(res))
            return
        typer.echo(
            f"remus100  N={res['vehicles']}  steps={res['steps']}  backend={res['backend']}  "
            f"{res['vehicle_steps_per_s']:.4g} vehicle-steps/s "
            f"(CPU time: {res['vehicle_steps_per_s_cpu']:.4g}); one vehicle "
            f"{res['single_steps_per_s']:.4g} steps/s"
        )
        typer.echo(
            f"per-vehicle loop: {res['loop_vehicle_steps_per_s']:.4g} vehicle-steps/s  "
            f"ratio {res['ratio_vs_loop']:.3g}x; first call {res['first_call_s']:.2f} s"
        )
        if generic:
            typer.echo(
                f"fossen6dof (RK4): {res['fossen6dof_vehicle_steps_per_s']:.4g} vehicle-steps/s"
            )

    @bench_app.command("engine")
    def bench_engine(
        ticks: int = typer.Option(2000, "--ticks", "-k", help="Ticks per timed round (>= 1)."),
        rounds: int = typer.Option(3, "--rounds", help="Rounds; the best is kept (>= 1)."),
        cpu: bool = typer.Option(
            False, "--cpu", help="Time with the process's CPU time, not the wall clock."
        ),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    ) -> None:
        """Engine fixed cost per tick (1 vehicle, 3 plugins) vs the bare usm model step."""
        from marinesim.engine.speed import measure_tick_cost

        if ticks < 1 or rounds < 1:
            typer.echo("marinesim: error: --ticks and --rounds must be >= 1", err=True)
            raise typer.Exit(2)
        res = measure_tick_cost(ticks, rounds, cpu=cpu)
        if as_json:
            typer.echo(json.dumps(res))
            return
        typer.echo(
            f"engine fixed cost: {res['engine_us_per_tick']:.1f} us/tick "
            f"(1 vehicle, 3 plugins with empty hooks; {res['clock']} time)"
        )
        typer.echo(
            f"usm + pid + waypoints: {res['usm_us_per_tick']:.1f} us/tick = hooks "
            f"{res['usm_hooks_us_per_tick']:.1f} + engine {res['usm_engine_us_per_tick']:.1f}; "
            f"bare model step {res['model_step_us']:.1f} us "
            f"(tick/step {res['usm_tick_over_model_step']:.2f}x)"
        )

    @bench_app.command("warmup")
    def bench_warmup(
        parallel: bool = typer.Option(
            True, "--parallel/--no-parallel", help="Also the multi-threaded kernels."
        ),
    ) -> None:
        """Compile the 6-DOF kernels and the generated tick of every bundled scenario it covers
        (the REMUS 100 and SURFTRAK blocks among them) into numba's cache, ahead of time (later
        processes load them in about a second)."""
        from marinesim.cli.bench_sixdof import warm_up

        t = warm_up(parallel=parallel)
        t.update(warm_compiled_ticks())
        for k, v in t.items():
            typer.echo(f"{k:24s} {v:6.2f} s")
        typer.echo(f"total {sum(t.values()):.2f} s")

    app.add_typer(bench_app, name="bench")


def warm_compiled_ticks() -> dict[str, float]:
    """Compile the generated tick (:mod:`marinesim.engine.compiled`) of every bundled scenario
    it covers: a short run of each; name → seconds (``tick <scenario>``)."""
    import time

    from marinesim.engine.compiled.route import plan
    from marinesim.scenario.build import builtin_names, load_simulation

    out: dict[str, float] = {}
    for name in builtin_names():
        try:
            sim = load_simulation(name, sets={"end_conditions": ["time"]})
        except Exception:  # noqa: BLE001 - a scenario needing a peer program: not compiled here
            continue
        if not any(hasattr(s.plugin, "compiled_laws") for s in sim.slots) or plan(sim)[0]:
            continue
        sim = load_simulation(name, sets={"end_conditions": ["time"], "time.end": 2.0})
        sim.compiled = True
        t0 = time.perf_counter()
        sim.run()
        out[f"tick {name}"] = time.perf_counter() - t0
    return out
