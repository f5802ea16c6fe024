"""``check_plugin`` over the engine plugins registered by the engine area (motion, controller,
autonomy entries whose module lives in ``marinesim.engine.plugins`` and is one of ours)."""

from __future__ import annotations

import pytest

from marinesim.core import registry
from marinesim.testing import check_plugin

OURS = ("usm", "pid", "waypoints", "script", "wrench")


def _engine_entries() -> list[tuple[str, str]]:
    out = []
    for kind in ("motion", "controller", "autonomy"):
        for name in registry.names(kind):
            target = registry._BUILTIN.get((kind, name), "")
            module = target.partition(":")[0]
            if module.startswith("marinesim.engine.plugins.") and module.rsplit(".", 1)[1] in OURS:
                out.append((kind, name))
    return out


def test_registry_has_the_engine_plugins() -> None:
    assert set(_engine_entries()) >= {
        ("motion", "usm"),
        ("motion", "usm_v22"),
        ("controller", "heading_speed_depth_pid"),
        ("autonomy", "waypoints"),
        ("autonomy", "event_script"),
    }


@pytest.mark.parametrize(("kind", "name"), _engine_entries())
def test_check_plugin(kind: str, name: str) -> None:
    cls = registry.get(kind, name)
    passed = check_plugin(cls)
    assert {"unknown_key_rejected", "deterministic", "batch_equals_single"} <= set(passed)


def test_check_plugin_catches_a_nondeterministic_plugin() -> None:
    from typing import Any, ClassVar

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


def test_check_plugin_fossen6dof_batch_within_kernel_rounding() -> None:
    """``fossen6dof``: the one-vehicle path of ``models.hydro`` evaluates the same kernels on
    Python floats and the batch on (N,) arrays, so sums may round differently in the last bit;
    engine spec §10.5 allows 1e-12 relative for such a kernel (named here: models.hydro)."""
    cls = registry.get("motion", "fossen6dof")
    passed = check_plugin(cls, batch_rtol=1e-12)
    assert {"unknown_key_rejected", "deterministic", "batch_equals_single"} <= set(passed)
