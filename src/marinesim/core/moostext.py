"""MOOS-IvP's reading of numbers in text (lib_mbutil ``isNumber`` and C ``atof``).

Shared by every part that parses MOOS-style text: ``.moos`` configuration values, mail
strings, thrust maps and ``.cfd`` current-field files.
"""

from __future__ import annotations

import re

__all__ = ["is_moos_number", "moos_atof"]

_ATOF_RE = re.compile(r"\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")


def is_moos_number(text: str) -> bool:
    """MOOS-IvP ``isNumber`` (blank ends allowed): digits, one '.', leading '-', no exponent.

    Parameters
    ----------
    text : str
        The candidate.

    Returns
    -------
    bool
        True when the program accepts the text as a number.
    """
    s = text.strip(" \t")
    if not s:
        return False
    if len(s) > 1 and s[0] == "+":
        s = s[1:]
    digits = dots = 0
    for ch in s:
        if "0" <= ch <= "9":
            digits += 1
        elif ch == ".":
            dots += 1
            if dots > 1:
                return False
        elif ch == "-":
            if digits or dots:
                return False
        else:
            return False
    return digits > 0


def moos_atof(text: str) -> float:
    """C ``atof``: the longest numeric prefix, 0.0 when there is none ("12abc" → 12)."""
    m = _ATOF_RE.match(text)
    if not m:
        return 0.0
    try:
        return float(m.group(1))
    except ValueError:  # pragma: no cover - the regex only matches float literals
        return 0.0
