"""Write the CLI reference page (docs/reference/cli.md) from the ``marinesim`` command itself.

Walks the click command tree behind ``marinesim.cli.main.app`` and puts each command's own
``--help`` text on the page, so the page says exactly what the installed command says.

Usage (from the repository root)::

    python scripts/gen_cli_docs.py            # rewrite docs/reference/cli.md
    python scripts/gen_cli_docs.py --check    # exit 1 if the committed page is out of date

``tests/test_cli_docs.py`` runs the check.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import typer

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "reference" / "cli.md"
WIDTH = 100

HEADER = """# CLI reference

One command, `marinesim` (also `python -m marinesim`). This page is generated from the command
itself by `scripts/gen_cli_docs.py` (a test fails when it is out of date); `marinesim COMMAND
--help` prints the same text.

Exit codes: **0** success; **2** a configuration or data error, printed as
`error: file:line:column: param: message` without a traceback (`marinesim --debug COMMAND` shows
one); **1** a run that failed or diverged (its partial log is saved first) or a check that did
not pass (`verify`, `gym check`, `moos replay`). See [Input limits](../limits.md).
"""


def _walk(cmd: Any, path: list[str], parent: Any, out: list[str]) -> None:
    """Append the help of ``cmd`` and of its sub-commands (typer's own click, duck-typed)."""
    ctx = cmd.context_class(
        cmd, info_name=path[-1], parent=parent, terminal_width=WIDTH, max_content_width=WIDTH
    )
    with ctx:
        text = cmd.get_help(ctx).rstrip()
    level = "#" * min(len(path) + 1, 4)
    out += [f"{level} `{' '.join(path)}`", "", "```text", text, "```", ""]
    if hasattr(cmd, "list_commands"):
        for sub in sorted(cmd.list_commands(ctx)):
            child = cmd.get_command(ctx, sub)
            if child is None or child.hidden:
                continue
            _walk(child, [*path, sub], ctx, out)


def render() -> str:
    """The page's Markdown text."""
    from marinesim.cli.main import app

    root = typer.main.get_command(app)
    out = [HEADER]
    _walk(root, ["marinesim"], None, out)
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the page is out of date")
    args = ap.parse_args(argv)
    text = render()
    if args.check:
        if not PAGE.is_file() or PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE.relative_to(ROOT)} is out of date: run python scripts/gen_cli_docs.py")
            return 1
        return 0
    PAGE.parent.mkdir(parents=True, exist_ok=True)
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
