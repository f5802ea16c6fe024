"""`marinesim run` commands (being written)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add the commands of this module to ``app``."""
