"""``marinesim verify [PATH ...]``: replay reference cases and print a table."""

from __future__ import annotations

from pathlib import Path

import typer

from marinesim.core.errors import MarinesimError


class VerifyFailed(MarinesimError):
    """At least one reference case failed (exit code 1)."""


def register(app: typer.Typer) -> None:
    """Add the ``verify`` command to ``app``."""

    @app.command("verify")
    def verify_cmd(
        paths: list[Path] = typer.Argument(None, help="Case files or folders (default: the shipped cases)."),
        verbose: bool = typer.Option(False, "--verbose", "-v", help="Show every column of every case."),
    ) -> None:
        """Replay reference cases from the real peer programs and compare within tolerance."""
        from rich.console import Console
        from rich.table import Table

        from marinesim.reference.runner import verify

        results = verify(paths or None)
        table = Table(title="marinesim verify")
        for col in ("kind", "case", "column", "largest error", "tolerance", "pass"):
            table.add_column(col)
        for r in results:
            rows = r.columns if verbose else ([r.worst] if r.worst else [])
            if r.error or not rows:
                table.add_row(r.kind, r.case, "-", "-", "-", f"FAIL: {r.message}")
                continue
            for c in rows:
                table.add_row(
                    r.kind, r.case, c.column, f"{c.max_error:.3g}", f"{c.tolerance:.3g}",
                    "ok" if c.passed else "FAIL" + (f" ({c.note})" if c.note else ""),
                )
        Console(width=160).print(table)
        n_fail = sum(not r.passed for r in results)
        typer.echo(f"{len(results) - n_fail} passed, {n_fail} failed")
        if not results:
            raise VerifyFailed("no reference cases found")
        if n_fail:
            raise VerifyFailed(f"{n_fail} reference case(s) failed")
