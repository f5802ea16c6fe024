"""The runnable blocks of docs/guide/sitl-live.md (tests/test_readme.py's conventions)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "guide" / "sitl-live.md"
_spec = importlib.util.spec_from_file_location("_readme_runner", ROOT / "tests" / "test_readme.py")
R = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
sys.modules["_readme_runner"] = R  # dataclasses look their module up
_spec.loader.exec_module(R)  # type: ignore[union-attr]

BLOCKS = R.extract_blocks(PAGE.read_text(encoding="utf-8"))


def test_page_has_runnable_blocks() -> None:
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("block", BLOCKS, ids=[f"line{b.line}" for b in BLOCKS])
def test_sitl_live_block(block, tmp_path) -> None:  # noqa: ANN001
    R.test_readme_block(block, tmp_path)
