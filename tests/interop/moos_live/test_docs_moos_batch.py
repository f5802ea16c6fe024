"""docs/guide/moos-batch.md: its blocks run in ``tests/test_readme.py`` (as every docs page's);
here, what the quick ``.alog`` block writes is read back: pNodeReporter's vehicle reports, a
real ``LOGSTART``, the model's inputs and the ``DB_TIME`` that names the vehicle, and the V22 interface lists the depth publications."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "guide" / "moos-batch.md"
_spec = importlib.util.spec_from_file_location("_readme_conv", ROOT / "tests" / "test_readme.py")
assert _spec is not None and _spec.loader is not None
_conv = importlib.util.module_from_spec(_spec)
sys.modules["_readme_conv"] = _conv  # dataclasses look their module up
_spec.loader.exec_module(_conv)
BLOCKS = _conv.extract_blocks(PAGE.read_text(encoding="utf-8"), "docs/guide/moos-batch.md")


def test_page_has_blocks() -> None:
    assert len(BLOCKS) >= 3


def test_alog_block_output(tmp_path: Path) -> None:
    (block,) = [b for b in BLOCKS if "NODE_REPORT_LOCAL" in b.code and not b.needs_env]
    proc = _conv.run_block(block, tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "NAME=uSimMarine" in proc.stdout and "LOGSTART" in proc.stdout
    assert "DESIRED_THRUST" in proc.stdout
    assert "DB_TIME              MOOSDB_uSimMarine" in proc.stdout  # alogview's vehicle name


def test_interface_block_output(tmp_path: Path) -> None:
    (block,) = [b for b in BLOCKS if "--interface" in b.code]
    proc = _conv.run_block(block, tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "USM_PITCH" in proc.stdout and "SIMULATION_MODE" in proc.stdout
