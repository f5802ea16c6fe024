"""Scenario templating: ``${name=default}`` variables, ``--var`` values and ``--set`` overrides.

Variables are substituted in the YAML text before parsing (so line numbers stay right); the
value is pasted as written, so ``${speed=1.5}`` becomes the number 1.5.  ``--set a.b=c``
changes the parsed data afterwards (list items may be addressed by index or by ``name``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from marinesim.core.errors import ConfigError, suggest

__all__ = ["VAR_RE", "apply_sets", "parse_assignments", "substitute", "template_variables"]

VAR_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:=([^}]*))?\}")


def template_variables(text: str) -> dict[str, str | None]:
    """Variables of a template and their defaults (None when required)."""
    out: dict[str, str | None] = {}
    for m in VAR_RE.finditer(text):
        if m.group(1) not in out or out[m.group(1)] is None:
            out[m.group(1)] = m.group(2)
    return out


def substitute(
    text: str, values: Mapping[str, Any] | None = None, *, file: str | Path | None = None
) -> str:
    """Fill ``${name=default}`` placeholders.

    Parameters
    ----------
    text : str
        Scenario text.
    values : mapping, optional
        ``--var`` values (take precedence over defaults).
    file : str or Path, optional
        For messages.

    Raises
    ------
    ConfigError
        A variable without default and without value (file:line:column), or a ``--var``
        naming no variable of the file (with a suggestion).
    """
    vals = {k: str(v) for k, v in (values or {}).items()}
    known = template_variables(text)
    for k in vals:
        if k not in known:
            close = suggest(k, known)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            names = ", ".join(sorted(known)) or "none"
            raise ConfigError(
                f"--var {k}: the scenario has no variable {k!r}{hint} (variables: {names})",
                file=file,
            )

    def repl(m: re.Match[str]) -> str:
        name, default = m.group(1), m.group(2)
        if name in vals:
            return vals[name]
        if default is not None:
            return default
        line = text.count("\n", 0, m.start()) + 1
        col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
        raise ConfigError(
            f"template variable {name!r} has no default and no value; pass --var {name}=VALUE",
            file=file,
            line=line,
            column=col,
        )

    return VAR_RE.sub(repl, text)


def parse_assignments(items: Sequence[str] | None, *, option: str) -> dict[str, Any]:
    """Parse ``key=value`` strings (values as YAML scalars) into a dict, in order."""
    out: dict[str, Any] = {}
    for item in items or ():
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"{option} {item!r}: expected KEY=VALUE")
        if option == "--var":
            out[key] = raw
            continue
        try:
            out[key] = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError as exc:
            raise ConfigError(f"{option} {item!r}: value is not valid YAML ({exc})") from None
    return out


def apply_sets(data: Any, sets: Mapping[str, Any]) -> list[str]:
    """Apply ``--set`` overrides in place; return the index paths changed.

    Raises
    ------
    ConfigError
        A path through a missing list item or a scalar.
    """
    changed = []
    for path, value in sets.items():
        parts = path.split(".")
        node = data
        idx_path: list[str] = []
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            if isinstance(node, list):
                pos = _list_index(node, part, path)
                idx_path.append(str(pos))
                if last:
                    node[pos] = value
                else:
                    node = node[pos]
            elif isinstance(node, dict):
                idx_path.append(part)
                if last:
                    node[part] = value
                else:
                    if part not in node or node[part] is None:
                        node[part] = {}
                    node = node[part]
            else:
                raise ConfigError(f"--set {path}: {'.'.join(parts[:i])!r} is not a mapping or list")
        changed.append(".".join(idx_path))
    return changed


def _list_index(node: list[Any], part: str, path: str) -> int:
    if part.lstrip("-").isdigit():
        pos = int(part)
        if not -len(node) <= pos < len(node):
            raise ConfigError(f"--set {path}: index {pos} out of range (0..{len(node) - 1})")
        return pos % len(node)
    names = [item.get("name") for item in node if isinstance(item, dict)]
    if part in names:
        return names.index(part)
    close = suggest(part, [str(n) for n in names if n is not None])
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise ConfigError(f"--set {path}: no list item named {part!r}{hint}")
