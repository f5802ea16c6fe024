"""The ```bash / ```python blocks of the guide pages on units and RL training run as written.

Same conventions and runner as ``tests/test_readme.py`` (a fresh copy of the repository per
block, directives in an HTML comment above the fence); the copy's own ``src`` is put first on
``PYTHONPATH`` so the blocks test this tree, whatever package the interpreter has installed.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import test_readme as tr  # noqa: E402

PAGES = ("docs/guide/units.md", "docs/guide/rl-training.md")
BLOCKS = [
    (page, b)
    for page in PAGES
    for b in tr.extract_blocks((tr.ROOT / page).read_text(encoding="utf-8"))
]


def test_pages_have_blocks_and_their_figure() -> None:
    assert {p for p, _ in BLOCKS} == set(PAGES)
    rl = (tr.ROOT / "docs/guide/rl-training.md").read_text(encoding="utf-8")
    png = tr.ROOT / "docs/assets/ppo_waypoint_learning_curve.png"
    assert "../assets/ppo_waypoint_learning_curve.png" in rl
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000


@pytest.mark.parametrize("page,block", BLOCKS, ids=[f"{p}:{b.line}-{b.lang}" for p, b in BLOCKS])
def test_guide_block(page: str, block: tr.Block, tmp_path: Path) -> None:
    if block.skip:
        pytest.skip(f"{page}:{block.line}: {block.skip}")
    absent = [m for m in block.needs_module if importlib.util.find_spec(m) is None]
    if absent:
        pytest.skip(f"{page}:{block.line}: needs the package(s) {', '.join(absent)}")
    repo = tr._copy_repo(tmp_path)
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["MPLBACKEND"] = "Agg"
    env["PYTHONPATH"] = str(repo / "src")
    suffix = "py" if block.lang == "python" else "sh"
    script = repo / f"guide_block_{block.line}.{suffix}"
    code = block.code if block.lang == "python" else "set -e -o pipefail\n" + block.code
    script.write_text(code, encoding="utf-8")
    cmd = [sys.executable, str(script)] if block.lang == "python" else ["bash", str(script)]
    try:
        proc = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True,
                              timeout=block.timeout, stdin=subprocess.DEVNULL)  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail(f"{page}:{block.line}: {block.lang} block ran past {block.timeout:g} s")
    assert proc.returncode == 0, (
        f"{page}:{block.line}: exited {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    )
    out = proc.stdout
    if page.endswith("units.md") and block.lang == "bash":  # the table it printed
        assert "column,unit,signal" in out.splitlines()
        assert "t,s," in out
    if page.endswith("units.md") and block.lang == "python":
        assert "b'm'" in out and "b'%'" in out
        assert "'t': 's'" in out and "'truth.heading': 'deg'" in out
        assert "'usm.actuators.rudder': '%'" in out
    if "waypoint_frame.png" in block.code:
        assert "(480, 480, 3) uint8 waypoint reached: True" in out
        assert (repo / "waypoint_frame.png").stat().st_size > 2_000
    if "ppo-tiny" in block.code:
        rows = (repo / "ppo-tiny" / "evaluation.csv").read_text().splitlines()
        assert rows[0] == "policy,episodes,mean_return,std_return,success_rate"
        assert [r.split(",")[0] for r in rows[1:]] == ["ppo", "random", "heading_controller"]
        assert (repo / "ppo-tiny" / "learning_curve.png").stat().st_size > 10_000
