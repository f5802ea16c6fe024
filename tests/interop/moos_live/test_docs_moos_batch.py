"""The runnable blocks of docs/guide/moos-batch.md, with tests/test_readme.py's conventions."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "guide" / "moos-batch.md"
_spec = importlib.util.spec_from_file_location("_readme_conv", ROOT / "tests" / "test_readme.py")
assert _spec is not None and _spec.loader is not None
_conv = importlib.util.module_from_spec(_spec)
sys.modules["_readme_conv"] = _conv  # dataclasses look their module up
_spec.loader.exec_module(_conv)
BLOCKS = _conv.extract_blocks(PAGE.read_text(encoding="utf-8"))


def test_page_has_blocks() -> None:
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("block", BLOCKS, ids=[f"moos-batch.md:{b.line}" for b in BLOCKS])
def test_block(block, tmp_path: Path) -> None:  # noqa: ANN001
    if block.skip:
        pytest.skip(block.skip)
    if block.needs_shared and not _conv.SHARED.is_dir():
        pytest.skip("../shared not present")
    if [v for v in block.needs_env if not os.environ.get(v)]:
        pytest.skip(f"needs {block.needs_env}")
    try:
        proc = _conv.run_block(block, tmp_path)
    except subprocess.TimeoutExpired:
        pytest.fail(f"block ran past {block.timeout:g} s")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    if "NODE_REPORT_LOCAL" in block.code:
        assert "NAME=uSimMarine" in proc.stdout and "LOGSTART" in proc.stdout
        assert "DESIRED_THRUST" in proc.stdout
    if "--interface" in block.code:
        assert "USM_PITCH" in proc.stdout and "SIMULATION_MODE" in proc.stdout
