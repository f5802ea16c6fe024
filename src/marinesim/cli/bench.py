"""``marinesim bench``: throughput measurements of the models.

``marinesim bench usm --vehicles N --steps K [--json]`` runs
:func:`marinesim.models.usm.measure_throughput` and prints vehicle-steps per second of
the batched uSimMarine model, with the per-vehicle Python loop of the same model measured in
the same process for comparison.

``marinesim bench fossen --vehicles N --steps K [--json]`` runs
:func:`marinesim.cli.bench_sixdof.measure`: PythonVehicleSimulator's REMUS 100 loop on
the compiled 6-DOF kernels (and the generic ``fossen6dof`` model), against a per-vehicle
Python loop of the same step measured in the same process.

``marinesim bench laws SCENARIO [--set PATH=VALUE] [--ticks K] [--json]`` runs the scenario
with each law call of its generated tick timed inside the tick
(:func:`marinesim.engine.compiled.profile.law_costs`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

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

    @bench_app.command("laws")
    def bench_laws(
        scenario: str = typer.Argument(
            ..., help="Scenario YAML file (or a bundled scenario name).", metavar="SCENARIO"
        ),
        set_: list[str] = typer.Option(
            None,
            "--set",
            help="Override PATH=VALUE, e.g. entities.0.count=10000 (repeatable).",
            metavar="PATH=VALUE",
        ),
        var: list[str] = typer.Option(
            None, "--var", help="Template variable NAME=VALUE (repeatable).", metavar="NAME=VALUE"
        ),
        warm: int = typer.Option(
            10, "--warm", min=1,
            help="Ticks run first, not timed (more until one has run compiled).",
        ),
        ticks: int = typer.Option(
            0, "--ticks", "-k", min=0,
            help="Ticks timed after them (0: the rest of the run, as marinesim run runs it).",
        ),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    ) -> None:
        """Where the generated tick's time goes: each law call timed inside the tick
        (microseconds per tick, nanoseconds per vehicle and tick), the compiled calls and the
        wall clock around them.  The run waits for its tick to compile."""
        from marinesim.core.errors import MarinesimError
        from marinesim.engine.compiled.profile import law_costs, step_until_compiled
        from marinesim.scenario import load_simulation

        try:
            sim = load_simulation(scenario, variables=var, sets=set_)
            sim.compiled = True  # (the tick compiles here, not in the background)
            step_until_compiled(sim, warm)
            prof = law_costs(sim, ticks or None)
        except MarinesimError as exc:
            typer.echo(f"marinesim: error: {exc}", err=True)
            raise typer.Exit(2) from None
        if as_json:
            typer.echo(json.dumps({"scenario": scenario, **prof.to_dict()}))
            return
        typer.echo(f"{scenario}: {prof.ticks} ticks from tick {sim.clock.k - prof.ticks}")
        typer.echo(prof.table())

    @bench_app.command("warmup")
    def bench_warmup(
        scenarios: list[str] = typer.Argument(
            None,
            help="Scenario files or bundled names whose generated tick to compile (default: "
            "every bundled scenario, and the 6-DOF kernels).",
            show_default=False,
        ),
        parallel: bool = typer.Option(
            True, "--parallel/--no-parallel", help="Also the multi-threaded kernels."
        ),
        jobs: int = typer.Option(
            0, "--jobs", "-j", min=0,
            help="Processes compiling scenarios' ticks at once (0: one per CPU).",
        ),
    ) -> None:
        """Compile the 6-DOF kernels and the generated tick of every bundled scenario it covers
        (the REMUS 100 and SURFTRAK blocks among them) into numba's cache, ahead of time (later
        processes load them in about a second).  With scenarios: their ticks only (e.g. a
        mission's own file on every machine of a cluster before a batch).  The ticks compile
        in --jobs processes at once, the largest first."""
        import time

        from marinesim.cli.bench_sixdof import warm_up
        from marinesim.core.errors import MarinesimError

        procs = jobs or os.cpu_count() or 1
        t0 = time.perf_counter()
        t: dict[str, float | str] = {}
        try:
            if not scenarios:
                t.update(warm_up(parallel=parallel))
            t.update(warm_compiled_ticks(scenarios or None, jobs=procs))
        except MarinesimError as exc:
            typer.echo(f"marinesim: error: {exc}", err=True)
            raise typer.Exit(2) from None
        for k, v in t.items():
            typer.echo(f"{k:24s} {v:6.2f} s" if isinstance(v, float) else f"{k:24s} {v}")
        total = sum(v for v in t.values() if isinstance(v, float))
        wall = time.perf_counter() - t0
        typer.echo(f"total {total:.2f} s of runs, {wall:.2f} s wall ({procs} processes)")

    app.add_typer(bench_app, name="bench")


def warm_compiled_ticks(
    scenarios: list[str] | None = None, jobs: int = 1
) -> dict[str, float | str]:
    """Compile the generated tick (:mod:`marinesim.engine.compiled`) of every bundled scenario
    it covers, or of the given scenarios (files or bundled names): a short run of each.

    Parameters
    ----------
    scenarios : list of str, optional
        Scenario files or bundled names (default: every bundled scenario).
    jobs : int
        Processes that compile at once (``spawn``ed, the largest ticks first); 1: each in
        this process, one after the other.

    Returns
    -------
    dict
        ``tick <scenario>`` → seconds of the run that compiled (or loaded) it, in the order of
        the scenarios; for a given scenario whose ticks run through the plugins, the reason
        (``compiled_why_not``).

    Raises
    ------
    MarinesimError
        A given scenario that does not load (its file, line and parameter).
    """
    # compile here, waiting (not in a background process the warm-up would not wait for);
    # spawned workers inherit the setting
    mode = os.environ.get("MARINESIM_COMPILE")
    os.environ["MARINESIM_COMPILE"] = "wait"
    try:
        names, todo, why = _warm_plan(scenarios)
        given = [bool(scenarios)] * len(todo)
        if jobs > 1 and len(todo) > 1:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            ctx = multiprocessing.get_context("spawn")  # (numba's threads do not survive a fork)
            with ProcessPoolExecutor(max_workers=min(jobs, len(todo)), mp_context=ctx) as pool:
                done = dict(zip(todo, pool.map(_warm_job, todo, given), strict=True))
        else:
            done = {name: _warm_one(name, g) for name, g in zip(todo, given, strict=True)}
    finally:
        if mode is None:
            os.environ.pop("MARINESIM_COMPILE", None)
        else:
            os.environ["MARINESIM_COMPILE"] = mode
    out: dict[str, float | str] = {}
    for name in names:  # the scenarios' order
        value = why.get(name, done.get(name))
        if value is not None:
            out[_label(name)] = value
    return out


def _label(name: str) -> str:
    return f"tick {Path(name).stem if name.endswith(('.yaml', '.yml')) else name}"


def _warm_plan(scenarios: list[str] | None) -> tuple[list[str], list[str], dict[str, str]]:
    """The scenarios :func:`warm_compiled_ticks` looks at, those whose tick it compiles (the
    largest first: the most arrays in its tick), and why the given ones it does not compile
    run through the plugins."""
    import marinesim.interop.sitl  # noqa: F401 - registers sitl_servo (the SITL scenarios)
    from marinesim.engine.compiled.generate import tick_source
    from marinesim.engine.compiled.route import plan
    from marinesim.scenario.build import builtin_names, load_simulation

    names = list(scenarios or builtin_names())
    sized: list[tuple[int, int, str]] = []
    why: dict[str, str] = {}
    for i, name in enumerate(names):
        try:
            sim = load_simulation(name, sets={"end_conditions": ["time"]})
        except Exception:
            if scenarios:
                raise  # the user's own scenario: its error says where
            continue  # a bundled scenario needing a peer program: not compiled here
        reason: str | None = None
        entries: list = []
        if not any(hasattr(s.plugin, "compiled_laws") for s in sim.slots):
            reason = "no plugin of this scenario declares compiled laws"
        else:
            reason, entries, _sparse = plan(sim)
        if reason:
            if scenarios:
                why[name] = f"runs through the plugins: {reason}"
            continue
        size = len(tick_source([laws for _s, laws in entries])[1])
        sized.append((-size, i, name))
    return names, [name for _size, _i, name in sorted(sized)], why


def _warm_job(name: str, given: bool) -> float | str | None:
    """:func:`_warm_one` in a worker process: its plugins registered as in this one, and an
    error raised as a plain :class:`MarinesimError` (its message), which crosses back."""
    import marinesim.interop.sitl  # noqa: F401 - registers sitl_servo (the SITL scenarios)
    from marinesim.core.errors import MarinesimError

    try:
        return _warm_one(name, given)
    except MarinesimError as exc:
        raise MarinesimError(f"scenario {name!r}: {exc}") from None


def _warm_one(name: str, given: bool) -> float | str | None:
    """A few ticks of scenario ``name`` (the plugins run the first, the generated tick the
    others): the seconds of the run, or why its ticks went through the plugins (``given``: a
    scenario the user named; else None)."""
    import time

    from marinesim.interop.sitl.plugin import SitlServo
    from marinesim.scenario.build import load_simulation

    sim = load_simulation(name, sets={"end_conditions": ["time"]})
    end = max(2.0, 5 * float(sim.clock.dt))
    stepped = any(isinstance(s.plugin, SitlServo) for s in sim.slots)  # an ArduSub SITL drives it
    sim = load_simulation(name, sets={"end_conditions": ["time"], "time.end": end})
    t0 = time.perf_counter()
    res = sim.run()
    if res.manifest["compiled_ticks"] == 0:  # e.g. a reason that shows once started
        return f"runs through the plugins: {res.manifest['compiled_why_not']}" if given else None
    if stepped:
        _warm_stepped(name)
    return time.perf_counter() - t0


def _warm_stepped(name: str, frames: int = 200) -> None:
    """``frames`` servo frames of scenario ``name`` (one a ``sitl_servo`` controller drives)
    through the SITL backend's plant, as ``marinesim sitl`` runs them, which compiles what a
    stepped run calls (the tick with its state's save copies, ``tick_loop``) besides the
    run's tick."""
    from marinesim.interop.sitl.plant import EnginePlant
    from marinesim.interop.sitl.protocol import encode_servo
    from marinesim.scenario.build import load_simulation

    sim = load_simulation(name, sets={"end_conditions": ["time"]})
    plant = EnginePlant(sim)
    rate = round(1.0 / float(sim.clock.dt))
    for f in range(frames):
        plant.step_raw(encode_servo(rate, f, [1500] * 16))
