"""The committed CLI reference (docs/reference/cli.md) is what the command says today."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _gen():  # noqa: ANN202
    spec = importlib.util.spec_from_file_location("gen_cli_docs", ROOT / "scripts" / "gen_cli_docs.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_cli_reference_is_up_to_date() -> None:
    gen = _gen()
    text = gen.render()
    page = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    assert page == text, "docs/reference/cli.md is out of date: run python scripts/gen_cli_docs.py"


def test_cli_reference_covers_every_command() -> None:
    """Each sub-command of every group has its own section with its usage line."""
    text = _gen().render()
    for name in ("marinesim run", "marinesim demo", "marinesim moos replay", "marinesim bench usm",
                 "marinesim surftrak suite", "marinesim gym check", "marinesim vehicles show"):
        assert f"`{name}`" in text, name
        assert f"Usage: {name} " in text, name
