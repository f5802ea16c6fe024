"""Timed event scripts for ``marinesim usm run --script`` (uTimerScript syntax).

Format: one event per line, as in uTimerScript's configuration block::

    // comments and blank lines are ignored
    event = var=DESIRED_THRUST, val=50, time=0
    event = var=DESIRED_RUDDER, val=-20, time=5.5
    event = var=DRIFT_VECTOR_ADD, val="90,0.5", time=20
    event = var=USM_SIM_PAUSED, val=true, time=30, source=operator

* ``time`` [s] is the simulation time from start-up (t = 0); an event at t is delivered before
  the first iteration at or after t (the replay rule of spec §2.1) and acts over that step.
* Typing follows MOOS: a quoted value is a *string* message; an unquoted value that reads as a
  finite number is a *double* message; any other unquoted text is a string.  ``nan`` and
  ``inf`` are rejected (they would poison the model).
* ``source`` (optional) names the sender (default ``uTimerScript``).
* The file may also be a ``.moos`` file: the ``event`` lines of its blocks (normally
  ``ProcessConfig = uTimerScript``) are used and other lines are ignored.

Events are returned sorted by time (stable: equal times keep file order).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from marinesim.core.errors import ConfigError, suggest
from marinesim.core.textio import split_quoted

__all__ = ["ScriptEvent", "parse_script", "read_script"]

# possessive quantifiers: a failed match costs time linear in the text, not quadratic
_NUM_RE = re.compile(r"[+-]?(?:\d++(?:\.\d*+)?|\.\d++)(?:[eE][+-]?\d++)?+")
_NONFINITE = re.compile(r"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)


@dataclass(frozen=True)
class ScriptEvent:
    """One timed message.

    Attributes
    ----------
    t : float
        Delivery time [s] from start-up.
    var : str
        MOOS variable.
    value : float or str
        The value; ``kind`` says which.
    kind : {"double", "string"}
        Message type.
    source : str
        Sender name.
    line : int
        Line in the script file.
    """

    t: float
    var: str
    value: float | str
    kind: str
    source: str
    line: int


def _strip_comment(line: str) -> str:
    # '//' outside quotes starts a comment
    quoted = False
    for i, ch in enumerate(line):
        if ch == '"':
            quoted = not quoted
        elif not quoted and line.startswith("//", i):
            return line[:i].strip()
    return line.strip()


def parse_script(text: str, *, file: str | Path | None = None) -> list[ScriptEvent]:
    """Parse the text of an event script (see the module docstring).

    Raises
    ------
    ConfigError
        A malformed event line (missing var/val/time, bad time, non-finite value, unknown
        key), naming file, line and the offending item.
    """
    events: list[ScriptEvent] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = _strip_comment(raw)
        if not line:
            continue
        key, sep, rest = line.partition("=")
        if key.strip().lower() != "event":
            low = line.lower()
            k = key.strip().lower()
            looks_like_event = sep and "var=" in rest.replace(" ", "").lower()
            if (
                sep
                and not low.startswith("processconfig")
                and (looks_like_event or suggest(k, ["event"]))
            ):
                raise ConfigError(
                    f"unknown key {key.strip()!r} (did you mean 'event'?); the line would be "
                    "ignored",
                    file=file,
                    line=lineno,
                    param=key.strip(),
                )
            if low.startswith("processconfig") or line in ("{", "}") or sep:
                continue  # .moos structure or another key of a uTimerScript block
            raise ConfigError(
                f"expected 'event = var=NAME, val=VALUE, time=T', got {line!r}",
                file=file,
                line=lineno,
            )
        fields: dict[str, str] = {}
        quoted_val = False
        for item in split_quoted(rest):
            k, s, v = item.partition("=")
            k, v = k.strip().lower(), v.strip()
            if not item.strip():
                continue
            if not s:
                raise ConfigError(
                    f"item {item.strip()!r} is not key=value", file=file, line=lineno, param="event"
                )
            if k not in ("var", "val", "time", "source"):
                raise ConfigError(
                    f"unknown event key {k!r} (known: var, val, time, source)",
                    file=file,
                    line=lineno,
                    param="event",
                )
            if k == "val" and len(v) >= 2 and v[0] == '"' and v[-1] == '"':
                quoted_val = True
                v = v[1:-1]
            fields[k] = v
        for need in ("var", "val", "time"):
            if need not in fields:
                raise ConfigError(f"event has no {need}=", file=file, line=lineno, param="event")
        var = fields["var"]
        if not var or any(c.isspace() for c in var):
            raise ConfigError(
                f"bad variable name {var!r}", file=file, line=lineno, param="event.var"
            )
        ttext = fields["time"]
        if ":" in ttext:
            raise ConfigError(
                f"time ranges ({ttext!r}) are not supported yet; give one time",
                file=file,
                line=lineno,
                param="event.time",
            )
        if not _NUM_RE.fullmatch(ttext) or not math.isfinite(float(ttext)) or float(ttext) < 0:
            raise ConfigError(
                f"time {ttext!r} is not a finite number >= 0",
                file=file,
                line=lineno,
                param="event.time",
            )
        val = fields["val"]
        value: float | str
        if quoted_val:
            value, kind = val, "string"
        elif _NONFINITE.fullmatch(val):
            raise ConfigError(
                f"value {val!r} of {var} is not a finite number (quote it to send a string)",
                file=file,
                line=lineno,
                param="event.val",
            )
        elif _NUM_RE.fullmatch(val):
            num = float(val)
            if not math.isfinite(num):
                raise ConfigError(
                    f"value {val!r} of {var} overflows to infinity",
                    file=file,
                    line=lineno,
                    param="event.val",
                )
            value, kind = num, "double"
        else:
            value, kind = val, "string"
        events.append(
            ScriptEvent(
                float(ttext), var, value, kind, fields.get("source") or "uTimerScript", lineno
            )
        )
    events.sort(key=lambda e: e.t)
    return events


def read_script(path: str | Path) -> list[ScriptEvent]:
    """Read and parse an event script file.

    Raises
    ------
    ConfigError
        Missing or unreadable file, or a malformed line.
    """
    from marinesim.core.textio import read_input_text

    p = Path(path)
    text = read_input_text(p, what="script file")
    return parse_script(text, file=p)
