"""The ```bash blocks of docs/guide/cli-grammar.md run, as written, from a copy of the
repository, with the copy's own ``src`` first on the path (so the page is checked against the
tree that ships it)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location(
    "_readme_conventions", ROOT / "tests" / "test_readme.py"
)
_readme = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
sys.modules["_readme_conventions"] = _readme  # dataclasses look their module up
_spec.loader.exec_module(_readme)  # type: ignore[union-attr]
Block, _copy_repo, extract_blocks = _readme.Block, _readme._copy_repo, _readme.extract_blocks

PAGE = ROOT / "docs" / "guide" / "cli-grammar.md"
BLOCKS = extract_blocks(PAGE.read_text(encoding="utf-8"))


def test_page_has_blocks() -> None:
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("block", BLOCKS, ids=[f"cli-grammar.md:{b.line}" for b in BLOCKS])
def test_page_block(block: Block, tmp_path: Path) -> None:
    assert not block.skip and not block.needs_shared
    repo = _copy_repo(tmp_path)
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = str(repo / "src")
    env["MPLBACKEND"] = "Agg"
    script = repo / f"block_{block.line}.sh"
    script.write_text("set -e -o pipefail\n" + block.code, encoding="utf-8")
    proc = subprocess.run(
        ["bash", str(script)], cwd=repo, env=env, capture_output=True, text=True,
        timeout=block.timeout, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.returncode == 0, f"{block.code}\n--- stdout ---\n{proc.stdout[-3000:]}" + (
        f"\n--- stderr ---\n{proc.stderr[-3000:]}"
    )
