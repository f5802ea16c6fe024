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
        paths: list[Path] = typer.Argument(
            None, help="Case files or folders (default: the shipped cases)."
        ),
        verbose: bool = typer.Option(
            False, "--verbose", "-v", help="Show every column of every case."
        ),
    ) -> None:
        """Replay reference cases from the real peer programs and compare within tolerance."""
        from rich.console import Console
        from rich.table import Table

        from marinesim.cli import grammar
        from marinesim.reference.runner import ignored_manifests, verify

        verbose = verbose or grammar.verbose()  # `marinesim -v verify` as `verify -v`
        if verbose:
            grammar.VERBOSITY["level"] = max(grammar.VERBOSITY["level"], 1)
        results = verify(paths or None)
        for m in ignored_manifests(paths or []):
            typer.echo(f"note: {m}: not a reference-case format that verify replays; skipped")
        table = Table(title="marinesim verify")
        for col in ("kind", "case", "columns", "largest error", "tolerance", "pass"):
            table.add_column(col)
        for r in results:
            if r.error or not r.columns:
                table.add_row(
                    r.kind, r.case, "-", "-", "-", f"FAIL: {r.message or 'no column compared'}"
                )
                continue
            if verbose:
                rows = [(c.column, c) for c in r.columns]
            else:
                w = r.worst
                assert w is not None
                n_bad = sum(not c.passed for c in r.columns)
                # the column closest to (or furthest over) its own tolerance stands for the case
                label = f"{len(r.columns)} (worst: {w.column}" + (
                    f"; {n_bad} over tolerance)" if n_bad else ")"
                )
                rows = [(label, w)]
            for label, c in rows:
                table.add_row(
                    r.kind,
                    r.case,
                    label,
                    f"{c.max_error:.3g}",
                    f"{c.tolerance:.3g}",
                    "ok" if c.passed else "FAIL" + (f" ({c.note})" if c.note else ""),
                )
        Console(width=160).print(table)
        n_fail = sum(not r.passed for r in results)
        typer.echo(f"{len(results) - n_fail} passed, {n_fail} failed")
        if not results:
            raise VerifyFailed("no reference cases found")
        if n_fail:
            raise VerifyFailed(f"{n_fail} reference case(s) failed")
