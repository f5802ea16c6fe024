"""The guide pages on units and RL training have runnable blocks and their figure.

The blocks themselves run in ``tests/test_readme.py`` (every docs page).
"""

from __future__ import annotations

import sys
from pathlib import Path

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
