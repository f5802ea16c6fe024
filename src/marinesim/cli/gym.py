"""``marinesim gym list`` / ``gym show ENV`` / ``gym check ENV``: the RL environments.

Glue only: the environments, their documentation and the checks live in
:mod:`marinesim.gym` and :mod:`marinesim.gym.checks`.
"""

from __future__ import annotations

import json

import typer


def register(app: typer.Typer) -> None:
    """Add the ``gym`` command group to ``app``."""
    gym = typer.Typer(
        help="Gymnasium and PettingZoo environments: list, show, check.", no_args_is_help=True
    )

    @gym.command("list")
    def list_cmd(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
        """List the environments with their observation/action sizes and step."""
        from marinesim.gym.checks import list_envs

        rows = list_envs()
        if as_json:
            typer.echo(json.dumps(rows, indent=2))
            return
        typer.echo(f"{'id':40s} {'obs':>4s} {'act':>4s} {'dt [s]':>7s} {'steps':>6s}  kind")
        for r in rows:
            typer.echo(
                f"{r['id']:40s} {r['obs']:4d} {r['act']:4d} {r['dt']:7g} {r['max_steps']:6d}  {r['kind']}"
            )

    @gym.command("show")
    def show_cmd(
        env: str = typer.Argument(..., help="Environment id, e.g. marinesim/UsmWaypoint-v0."),
    ) -> None:
        """Observation and action components with units, and the reward."""
        from marinesim.gym.checks import PETTINGZOO, describe

        _known(env, PETTINGZOO)
        typer.echo(describe(env))

    @gym.command("check")
    def check_cmd(
        env: str = typer.Argument(..., help="Environment id (see `marinesim gym list`)."),
        steps: int = typer.Option(60, "--steps", min=1, help="Steps of the comparisons."),
        num_envs: int = typer.Option(4, "--num-envs", min=1, help="Sub-environments compared."),
        seed: int = typer.Option(0, "--seed", help="Seed."),
    ) -> None:
        """Gymnasium's check_env (or PettingZoo's parallel_api_test), determinism, vector == sync."""
        from marinesim.gym.checks import PETTINGZOO, check

        _known(env, PETTINGZOO)
        results = check(env, steps=steps, num_envs=num_envs, seed=seed)
        for r in results:
            typer.echo(f"{'PASS' if r.passed else 'FAIL'}  {r.name}: {r.detail}")
        if not all(r.passed for r in results):
            raise typer.Exit(1)

    app.add_typer(gym, name="gym")


def _known(env: str, extra: dict) -> None:
    from marinesim.core.errors import UnknownNameError
    from marinesim.gym import ENV_IDS

    if env not in ENV_IDS and env not in extra:
        raise UnknownNameError("gym environment", env, [*ENV_IDS, *extra], param="ENV")
