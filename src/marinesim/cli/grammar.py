"""One grammar for every ``marinesim`` command, applied to the built click tree.

The sub-command modules declare their own options; :func:`polish` then walks the command tree
once and makes it uniform, so no module can drift:

* ``-h`` and ``--help`` on every command (inherited from the root context);
* ``-q/--quiet`` and ``-v/--verbose`` on every command (and on ``marinesim`` itself), meaning
  the same everywhere: ``-q`` turns off progress bars and status lines on stderr, ``-v`` adds
  detail on stderr (marinesim's INFO log records, per-item lines where a command has them,
  and the command's wall time);
  results, errors and warnings are printed either way.  A command that declared its own
  ``-q``/``-v`` keeps it (``sitl -q``, ``verify -v``), with the same meaning;
* help without placeholders: a value shows as ``INT``, ``FLOAT``, ``TEXT``, ``PATH`` (not
  ``<int>`` or ``<list[str]>``), an argument as its name in capitals;
* command lists show each command's whole first sentence (click cuts them with "...").

``--version`` is an option of ``marinesim`` itself and of the MOOS app face
(``marinesim moos --version``), nowhere else.
"""

from __future__ import annotations

import copy
import inspect
import logging
import re
import sys
import types
from typing import Any

from typer.core import TyperArgument, TyperOption

__all__ = ["VERBOSITY", "polish", "progress_wanted", "quiet", "reset", "verbose"]

#: -1 quiet, 0 normal, 1 verbose (``-q``/``-v`` of the command line being run).
VERBOSITY = {"level": 0}

HELP_NAMES = ["-h", "--help"]
QUIET_HELP = "No progress bars or status lines on stderr (results and errors still print)."
VERBOSE_HELP = "More detail on stderr: log records, per-item lines, the wall time."

_TYPE_WORDS = {
    "int": "INT",
    "integer": "INT",
    "text": "TEXT",
    "integer range": "INT",
    "float range": "FLOAT",
    "boolean": "BOOL",
    "float": "FLOAT",
    "str": "TEXT",
    "path": "PATH",
    "Path": "PATH",
    "bool": "BOOL",
    "file": "FILE",
    "directory": "DIR",
}


def reset() -> None:
    """Back to normal verbosity (each command line starts here)."""
    VERBOSITY["level"] = 0


def quiet() -> bool:
    """``-q`` was given."""
    return VERBOSITY["level"] < 0


def verbose() -> bool:
    """``-v`` was given."""
    return VERBOSITY["level"] > 0


def progress_wanted(stream: Any = None) -> str:
    """How to show progress: ``"bar"`` (a live bar on a terminal), ``"lines"`` (a plain line
    every 10 % when stderr is not a terminal, e.g. a CI log) or ``"off"`` (``-q``)."""
    if quiet():
        return "off"
    s = stream if stream is not None else sys.stderr
    try:
        tty = bool(s.isatty())
    except (AttributeError, ValueError):
        tty = False
    return "bar" if tty else "lines"


def _set_quiet(ctx: Any, param: Any, value: bool) -> None:
    if value:
        VERBOSITY["level"] = -1


def _set_verbose(ctx: Any, param: Any, value: bool) -> None:
    if value and VERBOSITY["level"] >= 0:
        VERBOSITY["level"] = 1
        log = logging.getLogger("marinesim")
        if not any(getattr(h, "_marinesim_cli", False) for h in log.handlers):
            h = logging.StreamHandler(sys.stderr)
            h.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
            h._marinesim_cli = True  # type: ignore[attr-defined]
            log.addHandler(h)
        log.setLevel(logging.INFO)


def _flag(template: Any, names: list[str], help_text: str, callback: Any) -> Any:
    """A boolean flag of typer's own option class, built like ``template`` (a bool flag)."""
    sig = inspect.signature(TyperOption.__init__).parameters
    kw: dict[str, Any] = {
        "param_decls": names, "is_flag": True, "default": False, "expose_value": False,
        "is_eager": True, "callback": callback, "help": help_text,
    }  # fmt: skip
    if "type_descriptor" in sig:  # typer >= 0.2x: typer's own parameter classes
        kw["type_descriptor"] = template.type_descriptor
    else:  # pragma: no cover - older typer on click
        kw["type"] = getattr(template, "type", None)
    return TyperOption(**kw)


_TYPE_LABEL = re.compile(r"<([^>]*)>")


def _word(param: Any, ctx: Any) -> str:
    """A plain metavar for a parameter that has none (from typer's ``<type>`` label, or the
    click type's name on typer versions that run on click)."""
    ptype = getattr(param, "type", None)
    choices = getattr(ptype, "choices", None)
    if choices:
        return "|".join(str(c) for c in choices)
    tname = str(getattr(ptype, "name", "") or "").lower()
    if tname:
        return _TYPE_WORDS.get(tname, tname.upper())
    raw = ""
    display = getattr(param, "display_type", None)
    if callable(display):
        try:
            raw = str(display(ctx))
        except Exception:  # pragma: no cover - typer internals differ between versions
            raw = ""
    m = _TYPE_LABEL.search(raw)
    inner = (m.group(1) if m else raw).replace("list[", "").replace("]", "")
    inner = inner.replace(" range", "").strip()
    if "|" in inner:
        return inner
    return _TYPE_WORDS.get(inner, _TYPE_WORDS.get(inner.lower(), "TEXT"))


def _no_type(self: Any, ctx: Any) -> None:
    return None


def _polish_params(cmd: Any, ctx: Any) -> None:
    for p in cmd.params:
        if isinstance(p, TyperArgument):
            if p.metavar is None:
                base = (p.name or "arg").upper()
                p.metavar = f"{base}..." if p.nargs != 1 else base
            # typer prints "<type>" after an argument's name whatever its metavar
            p.display_type_rich = types.MethodType(_no_type, p)  # type: ignore[method-assign]
        elif isinstance(p, TyperOption) and not p.is_flag and not p.count and p.metavar is None:
            p.metavar = _word(p, ctx)


def _first_sentence(text: str) -> str:
    text = " ".join(text.strip().split("\n\n", 1)[0].split())
    m = re.search(r"(?<=[.!?])\s", text)
    return text[: m.start()] if m else text


def _polish(cmd: Any, template: Any, ctx: Any, *, root: bool) -> None:
    names = {o for p in cmd.params for o in (*p.opts, *getattr(p, "secondary_opts", ()))}
    if "-q" not in names and "--quiet" not in names:
        cmd.params.append(_flag(template, ["-q", "--quiet"], QUIET_HELP, _set_quiet))
    if "-v" not in names and "--verbose" not in names:
        cmd.params.append(_flag(template, ["-v", "--verbose"], VERBOSE_HELP, _set_verbose))
    _polish_params(cmd, ctx)
    if cmd.help and not cmd.short_help:
        cmd.short_help = _first_sentence(cmd.help)
    for sub in getattr(cmd, "commands", {}).values():
        _polish(sub, template, ctx, root=False)


def polish(root: Any) -> Any:
    """Apply the grammar to ``root`` and every command below it (idempotent).

    ``root`` must hold a boolean flag (``--debug``): the new flags are built like it.
    """
    if getattr(root, "_marinesim_polished", False):
        return root
    template = next(p for p in root.params if isinstance(p, TyperOption) and p.is_flag)
    root.context_settings.setdefault("help_option_names", HELP_NAMES)
    ctx = copy.copy(root.context_class(root, info_name="marinesim"))
    _polish(root, template, ctx, root=True)
    root._marinesim_polished = True  # type: ignore[attr-defined]
    return root
