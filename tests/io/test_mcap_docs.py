"""docs/guide/mcap-foxglove.md has runnable blocks (``tests/test_readme.py`` runs them, as every
docs page's), and the Foxglove layout shipped with it is valid JSON naming topics the writer
produces."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

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
