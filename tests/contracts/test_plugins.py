"""``check_plugin`` over every plugin the registry knows (built-in table and entry points):
a plugin added to the registry is checked without touching this file."""

from __future__ import annotations

from typing import Any

import pytest

from marinesim.core import registry
from marinesim.testing import check_plugin, check_registered, registered_plugins

#: Harness settings a plugin needs, with the reason (the plugin is still checked).
OPTIONS: dict[tuple[str, str], dict[str, Any]] = {
    # the ArduSub SURFTRAK loop runs at its 400 Hz rate only (0.5 s of it)
    ("controller", "surftrak"): {"dt": 0.0025, "ticks": 200},
    # a vehicle's contacts and the fleet's separation depend on the other vehicles by design
    ("sensor", "contacts"): {"couples_rows": True},
    ("metric", "min_separation"): {"couples_rows": True},
}


def test_every_engine_plugin_kind_is_covered() -> None:
    entries = set(registered_plugins())
    assert {
        ("motion", "usm"),
        ("motion", "usm_v22"),
        ("motion", "fossen6dof"),
        ("controller", "heading_speed_depth_pid"),
        ("controller", "station_keeping_pid"),
        ("autonomy", "waypoints"),
        ("autonomy", "event_script"),
        ("sensor", "gps"),
        ("metric", "energy"),
    } <= entries
    assert set(OPTIONS) <= entries, "OPTIONS names a plugin that is not registered"


def test_a_plugin_registered_at_run_time_is_listed() -> None:
    from typing import ClassVar

    from marinesim.engine.plugin import Plugin

    class Probe(Plugin):
        kind: ClassVar[str] = "autonomy"

        def autonomy(self, ctx: Any, rng: Any) -> None:
            pass

    registry.register("autonomy", "_contract_probe", Probe, replace=True)
    assert ("autonomy", "_contract_probe") in registered_plugins()
    assert isinstance(check_registered(("autonomy",))[("autonomy", "_contract_probe")], list)


@pytest.mark.parametrize(("kind", "name"), registered_plugins())
def test_check_plugin(kind: str, name: str) -> None:
    if name.startswith("_"):
        pytest.skip("test-only plugin registered by another test")
    opts = OPTIONS.get((kind, name), {})
    passed = check_plugin(registry.get(kind, name), **opts)
    want = {"unknown_key_rejected", "deterministic", "signal_shapes"}
    if not opts.get("couples_rows"):
        want.add("batch_equals_single")
    assert want <= set(passed)


def test_check_plugin_catches_a_nondeterministic_plugin() -> None:
    from typing import ClassVar

    import numpy as np

    from marinesim.engine.plugin import Plugin

    counter = {"n": 0}

    class Leaky(Plugin):
        kind: ClassVar[str] = "autonomy"

        def autonomy(self, ctx: Any, rng: Any) -> None:
            counter["n"] += 1  # hidden state outside ctx.state
            ctx.log("n", np.full(ctx.n, counter["n"]), "")

    with pytest.raises(AssertionError, match="not deterministic"):
        check_plugin(Leaky)


def _all_plugin_entries() -> list[tuple[str, str]]:
    kinds = ("motion", "sensor", "controller", "autonomy", "interaction", "metric", "network")
    return [(kind, name) for kind in kinds for name in registry.names(kind)]


@pytest.mark.parametrize(("kind", "name"), _all_plugin_entries())
def test_generated_example_is_valid(kind: str, name: str) -> None:
    import yaml

    from marinesim.engine.describe import plugin_example
    from marinesim.testing import build_params

    doc = yaml.safe_load(plugin_example(name, kind))
    section = next(iter(doc.values()))
    entry = section if isinstance(section, dict) else section[0]
    assert entry["plugin"] == name
    cls = registry.get(kind, name)
    params = build_params(cls, entry.get("params", {}))
    assert isinstance(params, cls.Params)
