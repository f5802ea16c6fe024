"""``marinesim batch``: replicas and sweeps of a scenario on Dask, with a progress bar over runs.

The work is done by :func:`marinesim.batch.run`; this module only parses options and prints.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from marinesim.cli.options import default_out, deprecated_option, out_folder, out_option, pick_out
from marinesim.cli.progress import Progress
from marinesim.core.errors import ConfigError


def _print_end(res: Any) -> int:
    runs = res.runs
    counts = runs["status"].value_counts().to_dict()
    shown = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
    typer.echo(f"runs: {len(runs)} ({shown}); {res.skipped} found finished (--resume)")
    for _, r in res.failed.head(5).iterrows():
        typer.echo(f"  {r['run_id']}: {r['status']}: {r['error']}")
    if len(res.failed) > 5:
        typer.echo(f"  ... {len(res.failed) - 5} more in runs.parquet")
    typer.echo(f"table: {res.files['runs']}")
    typer.echo(f"summary: {res.files['summary']}")
    if "logs" in res.files:
        typer.echo(f"logs: {res.files['logs']} (Parquet dataset partitioned by run_id)")
    if "mcap" in res.files:
        typer.echo(f"mcap: {res.files['mcap']} (one <run_id>.mcap per run)")
    for p in (res.files.get("figures") or {}).values():
        typer.echo(f"figure: {p}")
    typer.echo(f"wall: {res.wall_s:.1f} s")
    if res.numpy_libm is False:
        typer.echo(
            "note: the workers' numpy is not libm's (AVX-512): a row may differ in its last "
            "digits with another --chunk; start them with NPY_DISABLE_CPU_FEATURES set as "
            "marinesim.core.libm.libm_environment() gives (docs: guide/worlds.md)"
        )
    return 0


def register(app: typer.Typer) -> None:
    """Add ``batch`` to ``app``."""

    @app.command("batch")
    def batch_cmd(
        scenario: str = typer.Argument(
            ..., help="Scenario YAML file (or a bundled scenario name)."
        ),
        out: Path | None = out_option(
            "Output folder (default marinesim-runs/batch-<scenario>, -seed<seed> added with --seed)."
        ),
        outdir: Path | None = deprecated_option("--outdir"),
        replicas: int = typer.Option(
            None,
            "--replicas",
            help="Replicas per design point (default: the scenario's 'replicas').",
        ),
        sweep: Path = typer.Option(
            None, "--sweep", help="YAML file with a sweep (default: the scenario's 'sweep:')."
        ),
        workers: int = typer.Option(
            None, "--workers", help="Local Dask worker processes (default: the CPU count)."
        ),
        chunk: int = typer.Option(
            None,
            "--chunk",
            help="Replicas stacked as the worlds of one simulation, where they stack (default: "
            "about 4 tasks per worker, 16 to 256; a GPU run, MARINESIM_JIT=cuda, wants many "
            "more).",
        ),
        scheduler: str = typer.Option(
            None, "--scheduler", help="Address of a running Dask scheduler, e.g. tcp://host:8786."
        ),
        resume: bool = typer.Option(
            False, "--resume", help="Skip runs already finished in the output folder."
        ),
        seed: int = typer.Option(
            None, "--seed", help="Override the scenario seed (root of all replicas)."
        ),
        var: list[str] = typer.Option(
            None, "--var", help="Template variable NAME=VALUE (repeatable)."
        ),
        set_: list[str] = typer.Option(None, "--set", help="Override PATH=VALUE (repeatable)."),
        log_every: float = typer.Option(
            1.0, "--log-every", help="Interval of the per-run track logs [s]; 0 = every frame."
        ),
        no_logs: bool = typer.Option(False, "--no-logs", help="Do not write per-run logs."),
        log_format: str = typer.Option(
            "parquet",
            "--format",
            help="Track logs: parquet (default) or mcap (also mcap/<run_id>.mcap: ROS 2 "
            "topics per vehicle for Foxglove / ros2 bag).",
            metavar="parquet|mcap",
        ),
        no_plot: bool = typer.Option(False, "--no-plot", help="Do not draw the figures."),
        connect_timeout: float = typer.Option(
            5.0, "--connect-timeout", help="Seconds to reach --scheduler before giving up."
        ),
        no_progress: bool = typer.Option(False, "--no-progress", help="No progress bar."),
    ) -> None:
        """Run replicas and sweeps of a scenario on Dask: runs.parquet, logs, summary, figures."""
        from marinesim.batch import run

        if workers is not None and scheduler is not None:
            raise ConfigError("give --workers or --scheduler, not both", param="--scheduler")
        if chunk is not None and chunk < 1:
            raise ConfigError(f"--chunk must be >= 1, got {chunk}", param="--chunk")
        folder = pick_out(out, outdir=outdir)
        if folder is None:
            label = Path(scenario).name.removesuffix(".yaml").removesuffix(".yml")
            folder = default_out(f"batch-{label}" + (f"-seed{seed}" if seed is not None else ""))
        out_folder(folder)
        state: dict[str, Any] = {}

        def on_plan(plan: Any, todo: int) -> None:
            mode = "stacked replicas" if plan.stackable else "one simulation per run"
            typer.echo(
                f"batch: {len(plan.runs)} runs ({len(plan.points)} point(s) x {plan.replicas} "
                f"replica(s)), seed {plan.source.seed}, {mode}; {todo} to run"
            )
            if not plan.stackable:
                typer.echo(f"  not stacked: {'; '.join(plan.stack_problems)}")
            if todo:
                bar = Progress("runs", todo, enabled=not no_progress)
                state["bar"] = bar.__enter__()

        def progress(done: int, total: int) -> None:
            if "bar" in state:
                state["bar"].update(done, total)

        try:
            res = run(
                scenario,
                outdir=folder,
                replicas=replicas,
                sweep_file=sweep,
                variables=var or None,
                sets=set_ or None,
                seed=seed,
                workers=workers,
                chunk=chunk,
                scheduler=scheduler,
                resume=resume,
                log_every=None if no_logs else log_every,
                log_format=log_format,
                figures=not no_plot,
                connect_timeout=connect_timeout,
                progress=progress,
                on_plan=on_plan,
            )
        finally:
            if "bar" in state:
                state["bar"].close()
        _print_end(res)
