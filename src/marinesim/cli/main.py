"""The ``marinesim`` command: one entry point, sub-commands from ``marinesim.cli.*``.

Errors derived from :class:`~marinesim.core.errors.MarinesimError` are printed without a
traceback (``--debug`` shows it): exit 2 for configuration and data errors, 1 for a failed or
diverged run.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

from marinesim.core.errors import (
    ConfigError,
    ConfigWarning,
    DataError,
    DependencyNotInstalled,
    MarinesimError,
)

_DEBUG = False
_APP: Any = None


def _build() -> Any:
    """The typer application with every sub-command (built on first use: ``marinesim moos
    MISSION.moos``, as pAntler launches it, starts without it)."""
    global _APP
    if _APP is None:
        _APP = _make_app()
    return _APP


def __getattr__(name: str) -> Any:
    if name == "app":
        return _build()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _root_group() -> Any:
    """The ``marinesim`` group class: applies :mod:`marinesim.cli.grammar` to the whole tree
    before parsing (so ``main()``, the console script and typer's test runner see the same
    grammar) and prints the wall time with ``-v``."""
    from typer.core import TyperGroup

    from marinesim.cli import grammar

    class _RootGroup(TyperGroup):
        def make_context(self, info_name, args, parent=None, **extra):  # noqa: ANN001, ANN201
            grammar.polish(self)
            grammar.reset()
            return super().make_context(info_name, args, parent=parent, **extra)

        def invoke(self, ctx):  # noqa: ANN001, ANN201
            import time

            t0 = time.perf_counter()
            try:
                return super().invoke(ctx)
            finally:
                if grammar.verbose():
                    from marinesim.cli.progress import fmt_seconds

                    print(
                        f"wall time: {fmt_seconds(time.perf_counter() - t0)}", file=sys.stderr
                    )

    return _RootGroup


def _make_app() -> Any:
    import typer

    from marinesim import __version__

    app = typer.Typer(
        name="marinesim",
        cls=_root_group(),
        help="Simulate marine vehicles: uSimMarine-exact kinematics, 6-DOF, actuators, SURFTRAK.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=False,
        # plain help: units in square brackets ([s], [m], [deg]) are shown as written, flags as
        # flags; sub-groups inherit this
        rich_markup_mode=None,
    )

    def _print_version(value: bool) -> None:
        if value:
            typer.echo(f"marinesim {__version__}")
            raise typer.Exit(0)

    @app.callback()
    def _root(
        debug: bool = typer.Option(False, "--debug", help="Show tracebacks of errors."),
        version: bool = typer.Option(
            False,
            "--version",
            help="Print the marinesim version and exit.",
            callback=_print_version,
            is_eager=True,
        ),
    ) -> None:
        global _DEBUG
        _DEBUG = debug

    @app.command("version")
    def version() -> None:
        """Print the marinesim version."""
        typer.echo(f"marinesim {__version__}")

    _add_subcommands(app)
    return app


def _add_subcommands(app: Any) -> None:
    # Each module defines `register(app)`; the import is inside so that a module's own heavy
    # imports load only when the command line is built.
    from marinesim.cli import bench, run, usm, verify

    for module in (usm, verify, run, bench):
        module.register(app)
    for optional in ("vehicles", "surftrak", "alloc", "moos", "sitl", "ardusub", "batch", "gym"):
        try:
            module = __import__(f"marinesim.cli.{optional}", fromlist=["register"])
        except ModuleNotFoundError as exc:
            if exc.name != f"marinesim.cli.{optional}":
                raise
            continue
        module.register(app)


def _show_warning(message, category, filename, lineno, file=None, line=None):  # noqa: ANN001
    stream = file or sys.stderr
    label = "warning" if issubclass(category, ConfigWarning) else category.__name__
    print(f"{label}: {message}", file=stream)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    warnings.showwarning = _show_warning
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        from marinesim.cli.moos_run import fast_argv, run_app

        fast = fast_argv(args)
        if fast is not None:  # the simulator as pAntler launches it: no CLI framework
            return run_app(**fast)
        rc = _build()(args=args, standalone_mode=False)
    except (ConfigError, DataError, DependencyNotInstalled) as exc:
        if _DEBUG:
            raise
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except MarinesimError as exc:
        if _DEBUG:
            raise
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except SystemExit as exc:
        return int(exc.code or 0) if isinstance(exc.code, int) else 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # usage errors of click (or the click that typer vendors)
        kinds = {c.__name__ for c in type(exc).__mro__}
        if "Exit" in kinds:  # typer.Exit
            return int(getattr(exc, "exit_code", 0) or 0)
        if "Abort" in kinds:
            return 130
        if "ClickException" in kinds:
            exc.show()  # type: ignore[attr-defined]
            return int(exc.exit_code)  # type: ignore[attr-defined]
        raise
    return rc if isinstance(rc, int) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
