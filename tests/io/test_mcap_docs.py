"""Every ```bash / ```python block of docs/guide/mcap-foxglove.md runs (test_readme's rules),
and the Foxglove layout shipped with it is valid JSON naming topics the writer produces."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "guide" / "mcap-foxglove.md"
_spec = importlib.util.spec_from_file_location("_readme_rules", ROOT / "tests" / "test_readme.py")
assert _spec is not None and _spec.loader is not None
rules = importlib.util.module_from_spec(_spec)
sys.modules["_readme_rules"] = rules  # its dataclasses look their module up
_spec.loader.exec_module(rules)
BLOCKS = rules.extract_blocks(PAGE.read_text(encoding="utf-8"))


def test_page_has_runnable_blocks() -> None:
    assert len([b for b in BLOCKS if not b.skip]) >= 5


@pytest.mark.parametrize("block", BLOCKS, ids=[f"mcap-foxglove.md:{b.line}" for b in BLOCKS])
def test_page_block(block: object, tmp_path: Path) -> None:
    if block.skip:  # type: ignore[attr-defined]
        pytest.skip(block.skip)  # type: ignore[attr-defined]
    pytest.importorskip("mcap")
    pytest.importorskip("foxglove")
    pytest.importorskip("rosbags")
    repo = rules._copy_repo(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(repo / "src"), "MPLBACKEND": "Agg"}
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    lang, code = block.lang, block.code  # type: ignore[attr-defined]
    script = repo / f"block.{'py' if lang == 'python' else 'sh'}"
    script.write_text(code if lang == "python" else "set -e -o pipefail\n" + code)
    cmd = [sys.executable, str(script)] if lang == "python" else ["bash", str(script)]
    proc = subprocess.run(
        cmd,
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=block.timeout,
        stdin=subprocess.DEVNULL,
    )  # type: ignore[attr-defined]
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    if "--format mcap" in code and lang == "bash":
        assert "log.mcap" in proc.stdout
    if "marinesim plot" in code:
        assert (repo / "runs/auv/figures/trajectory.png").stat().st_size > 10_000
    if "--live" in code:
        assert "live: Foxglove WebSocket on ws://127.0.0.1:" in proc.stdout


def test_layout_is_valid_and_names_written_topics() -> None:
    layout = json.loads((ROOT / "docs" / "assets" / "foxglove-layout.json").read_text())
    assert set(layout["configById"]) >= {"3D!marinesim", "map!marinesim"}
    assert layout["configById"]["3D!marinesim"]["followTf"] == "map"
    assert set(layout["configById"]["3D!marinesim"]["topics"]) == {"/scene", "/scene/tracks"}
    page = PAGE.read_text(encoding="utf-8")
    for cfg in layout["configById"].values():
        for p in cfg.get("paths", []):
            topic = p["value"].split(".")[0]
            kind = "/" + "/".join(topic.strip("/").split("/")[1:])
            assert f"/<v>{kind}`" in page, kind
