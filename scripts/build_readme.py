"""Assemble README.md from the section files in docs/readme/ (run from the repository root).

The order is fixed below; the contents list is generated from each section's first heading.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PARTS = ROOT / "docs" / "readme"
ORDER = [
    "usm_model.md",
    "usm_moos.md",
    "engine.md",
    "sensors.md",
    "sixdof.md",
    "actuators.md",
    "in_the_loop.md",
    "allocation.md",
    "surftrak.md",
    "ardusub.md",
    "moos_live.md",
    "logs.md",
    "batch.md",
    "gym.md",
    "backends.md",
    "pvs_fleet.md",
    "limits.md",
    "_cli.md",
    "_bench.md",
    "_dev.md",
]


def anchor(title: str) -> str:
    """GitHub's anchor of a heading."""
    text = title.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def main() -> None:
    top = (PARTS / "_top.md").read_text(encoding="utf-8").rstrip() + "\n"
    sections = [(PARTS / name).read_text(encoding="utf-8").strip() + "\n" for name in ORDER]
    contents = ["## Contents", ""]
    for i, text in enumerate(sections, 1):
        title = text.splitlines()[0].lstrip("#").strip()
        contents.append(f"{i}. [{title.replace('`', '')}](#{anchor(title)})")
    out = top + "\n" + "\n".join(contents) + "\n\n" + "\n".join(sections)
    (ROOT / "README.md").write_text(out, encoding="utf-8")


if __name__ == "__main__":
    main()
