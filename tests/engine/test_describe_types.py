"""`marinesim plugins show` names parameter types as a user reads them (issue 9 §3)."""

from __future__ import annotations

import re

import pytest

from marinesim.core import registry
from marinesim.engine.describe import PLUGIN_KINDS, find_plugin, param_rows, plugin_info


def _all_plugins() -> list[tuple[str, str]]:
    return [(kind, name) for kind in PLUGIN_KINDS for name in registry.names(kind)]


@pytest.mark.parametrize(("kind", "name"), _all_plugins())
def test_no_internal_type_names(kind: str, name: str) -> None:
    params = plugin_info(name, kind).split("parameters:", 1)[-1]
    assert "marinesim." not in params
    assert not re.search(r"\bNoneType\b|\bOptional\b|typing\.", params)


def test_optional_nested_block_reads_as_table() -> None:
    _, cls = find_plugin("fossen6dof")
    rows = {r[0]: r[1] for r in param_rows(cls)}
    assert rows["model"] == "table, optional"
    assert rows["preset"] == "str, optional"
    assert rows["integrator"].startswith("one of ")
