"""``marinesim moos MISSION.moos [NAME]`` without the command-line framework.

pAntler launches the simulator as ``EXECUTABLE MISSION.moos [NAME | --alias=NAME]`` and the
mission's timers start at once, so the app must join and post quickly.  :func:`fast_argv`
recognises that calling convention (and the ``run`` options) so that
:func:`marinesim.cli.main.main` can start the app without building the whole command line
(typer and every sub-command's imports); anything else goes through the full CLI, which calls
:func:`run_app` too.  Only the standard library and the MOOS client are imported before the
app starts.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from marinesim.core.errors import ConfigError, DataError

__all__ = ["fast_argv", "run_app"]

_VARIANTS = ("usm", "usm_v22")
_VALUE_OPTS = {
    "-o": "out",
    "--out": "out",
    "--duration": "duration",
    "--connect-timeout": "connect_timeout",
    "--block": "block",
    "--variant": "variant",
    "--alias": "alias",
}
_SUBCOMMANDS = ("run", "replay", "compare", "batch")
_FLAGS = {"--prepare": "prepare"}


def fast_argv(argv: list[str]) -> dict[str, Any] | None:
    """The keyword arguments of :func:`run_app` when ``argv`` (after the program name) is a
    plain ``moos [run] MISSION [NAME] [options]`` line; None for anything else (help, other
    sub-commands, ``--scenario``, unknown or malformed options: the full CLI handles them)."""
    if len(argv) < 2 or argv[0] != "moos":
        return None
    rest = argv[1:]
    if rest[0] == "run":
        rest = rest[1:]
    elif rest[0] in _SUBCOMMANDS:
        return None
    kw: dict[str, Any] = {}
    pos: list[str] = []
    i = 0
    while i < len(rest):
        a = rest[i]
        key, eq, val = a.partition("=")
        if a.startswith("-") and key in _VALUE_OPTS:
            if not eq:
                if i + 1 >= len(rest):
                    return None
                val = rest[i + 1]
                i += 1
            kw[_VALUE_OPTS[key]] = val
        elif a in _FLAGS:
            kw[_FLAGS[a]] = True
        elif a.startswith("-"):
            return None
        else:
            pos.append(a)
        i += 1
    if not 1 <= len(pos) <= 2:
        return None
    try:
        for k in ("duration", "connect_timeout"):
            if k in kw:
                kw[k] = float(kw[k])
    except ValueError:
        return None
    kw["mission"] = Path(pos[0])
    kw["name"] = pos[1] if len(pos) == 2 else None
    if "out" in kw:
        kw["out"] = Path(kw["out"])
    return kw


def _has_block(mission: Path, name: str) -> bool:
    from marinesim.interop.moos.moosfile import read_moos_file

    return read_moos_file(mission).find_block(name) is not None


def _log_path(mission: Path, out: Path | None, name: str) -> Path:
    log = out if out is not None else Path(f"{mission.stem}_{name}.alog")
    if log.suffix.lower() != ".alog":
        raise ConfigError(f"{str(log)!r}: the log is an .alog file", param="--out")
    return log


def _header(s: dict[str, Any], model: Any, log: Path) -> str:
    return (
        f"{s['name']}: MOOSDB {s['host']}:{s['port']}, warp {s['time_warp']:g}, "
        f"AppTick {s['app_tick']:g}, model {model}; log {log}"
    )


def run_app(
    mission: Path,
    name: str | None = None,
    *,
    alias: str | None = None,
    out: Path | None = None,
    duration: float | None = None,
    connect_timeout: float = 30.0,
    block: str | None = None,
    variant: str | None = None,
    scenario: Path | None = None,
    echo: Callable[[str], None] | None = None,
    log_format: str = "alog",
    live: bool = False,
    live_port: int = 8765,
    prepare: bool = False,
) -> int:
    """Join the MOOSDB of ``mission`` as uSimMarine / uSimMarineV22 and log to an ``.alog``.

    ``log_format="mcap"`` also writes the published navigation as ROS 2 topics (``.mcap`` beside
    the ``.alog``; with ``scenario``, the engine's log under ``<log stem>/``) and ``live`` serves
    them over the Foxglove WebSocket protocol on ``live_port``.  ``prepare`` stores the start
    record (:mod:`marinesim.interop.moos.startup`) and returns without joining.

    Returns 0; errors raise :class:`~marinesim.core.errors.MarinesimError`.
    """
    say = echo or (lambda s: print(s, file=sys.stderr, flush=True))
    if variant is not None and variant not in _VARIANTS:
        raise ConfigError(
            f"must be one of {', '.join(_VARIANTS)}, not {variant!r}", param="--variant"
        )
    proc = alias or name
    if proc is not None and proc.startswith("--alias="):
        proc = proc.partition("=")[2]
    if duration is not None and not duration > 0:
        raise ConfigError(f"must be > 0, got {duration:g}", param="--duration")
    if log_format not in ("alog", "mcap"):
        raise ConfigError(f"must be alog or mcap, not {log_format!r}", param="--format")
    if prepare and scenario is not None:
        raise ConfigError("a --scenario vehicle has no start record", param="--prepare")
    retry = None if connect_timeout == 0 else connect_timeout
    # the start record (stdlib and the MOOS client only): join and post the start state
    # before numpy and the model load (marinesim.interop.moos.startup)
    from marinesim.interop.moos import startup

    key = None
    pre = None
    if scenario is None:
        launch = startup.record_key(mission, name=proc, block=block, variant=variant)
        key = launch[0] if launch is not None else None
        record = None if prepare else startup.load_record(key)
        if record is not None and launch is not None:
            s = {**record["settings"], "host": launch[1], "port": launch[2]}
            record = {**record, "settings": s}
            log = _log_path(mission, out, s["name"])
            for w in record.get("warnings", []):
                say(f"warning: {w}")
            say(_header(s, record["model"], log))
            from marinesim.interop.moos.client import MoosClient

            client = MoosClient(s["host"], s["port"], s["name"], time_warp=s["time_warp"], log=say)
            pre = startup.join(client, record, connect_retry=retry)
            pre.hold()
    from marinesim.interop.moos.app import UsmMoosApp, moos_settings
    from marinesim.interop.moos.files import load_usm_config

    loaded = load_usm_config(
        mission,
        compat="moos",
        variant=variant,  # type: ignore[arg-type]
        block=block or (proc if proc and _has_block(mission, proc) else None),
    )
    settings = moos_settings(loaded, alias=proc)
    log = _log_path(mission, out, settings.name)
    if pre is None:
        for w in loaded.warnings:
            say(f"warning: {w}")
        say(_header(vars(settings), loaded.config.variant if scenario is None else scenario, log))
    if scenario is not None:
        from marinesim.interop.moos.scenario_app import ScenarioMoosApp

        app_: UsmMoosApp = ScenarioMoosApp(loaded, settings, scenario, log_path=log)
        say(f"{settings.name}: vehicle from {scenario} (not the usm model)")
    else:
        app_ = UsmMoosApp(
            loaded, settings, log_path=log, client=pre.client if pre is not None else None
        )
        if pre is None or prepare:  # first launch of this mission: the model computes it
            record = app_.start_record()
            stored = startup.save_record(key, {**record, "warnings": list(loaded.warnings)})
            if prepare:
                if not stored:
                    raise DataError(f"cannot store the start record in {startup.cache_dir()}")
                say(f"{settings.name}: start record stored in {startup.cache_dir()}")
                return 0
            pre = startup.join(app_.client, record, connect_retry=retry)
    nav = None
    if log_format == "mcap" or live:
        from marinesim.cli.moos import _nav_stream

        nav = _nav_stream(app_, loaded, settings, mission, log, log_format, live, live_port)
    stop = threading.Event()
    old: dict[int, Any] = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(ValueError):  # not the main thread: no handler
            old[sig] = signal.signal(sig, lambda *_: stop.set())
    try:
        rep = app_.run(duration=duration, stop=stop, connect_retry=retry, prestart=pre)
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)
        if nav is not None:
            nav.close()
            path = getattr(nav.log, "path", nav.log)
            if path is not None:
                say(f"{settings.name}: wrote {path}")
    say(f"{settings.name}: {rep.summary()}")
    for r in app_.client.malformed_reasons[-5:]:
        say(f"  malformed: {r}")
    return 0
