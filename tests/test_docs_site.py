"""The documentation site's structure: a page and a figure per bundled scenario, nav entries,
an offline-safe theme, the front page's size and figure."""

from __future__ import annotations

from pathlib import Path

import yaml

from marinesim.scenario import builtin_names

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
MAX_FIGURE_BYTES = 200_000


def _config() -> dict:
    # mkdocs.yml has no python tags; a plain safe load reads it
    return yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))


def _nav_files(nav: object) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [f for item in nav for f in _nav_files(item)]
    if isinstance(nav, dict):
        return [f for value in nav.values() for f in _nav_files(value)]
    return []


def test_every_bundled_scenario_has_a_page_with_its_figure() -> None:
    nav = _nav_files(_config()["nav"])
    for name in builtin_names():
        page = DOCS / "scenarios" / f"{name}.md"
        assert page.is_file(), f"no page for the bundled scenario {name}"
        text = page.read_text(encoding="utf-8")
        assert f"../assets/scenarios/{name}.png" in text, f"{page}: no figure"
        fig = DOCS / "assets" / "scenarios" / f"{name}.png"
        assert fig.is_file(), f"{fig} missing: python scripts/gen_scenario_figures.py {name}"
        assert fig.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", fig
        assert fig.stat().st_size < MAX_FIGURE_BYTES, f"{fig}: {fig.stat().st_size} bytes"
        assert f"scenarios/{name}.md" in nav, f"{name} is not in mkdocs.yml's nav"
        assert f"marinesim check {name}" in text


def test_nav_points_at_existing_pages() -> None:
    missing = [f for f in _nav_files(_config()["nav"]) if not (DOCS / f).is_file()]
    assert not missing, missing


def test_theme_builds_offline_and_api_is_numpy_style() -> None:
    cfg = _config()
    assert cfg["theme"]["name"] == "material"
    assert cfg["theme"]["font"] is False, "Google Fonts would need the network at build time"
    assert cfg.get("strict") is True
    plugins = {next(iter(p)) if isinstance(p, dict) else p: p for p in cfg["plugins"]}
    assert "social" not in plugins and "privacy" not in plugins
    python = plugins["mkdocstrings"]["mkdocstrings"]["handlers"]["python"]
    assert python["paths"] == ["src"]
    assert python["options"]["docstring_style"] == "numpy"


def test_front_page_is_short_and_has_its_figure() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    assert "](docs/assets/demo_survey.png)" in readme
    fig = DOCS / "assets" / "demo_survey.png"
    assert fig.is_file() and fig.stat().st_size < MAX_FIGURE_BYTES
