"""Registry: lazy entries, duplicates, did-you-mean."""

from __future__ import annotations

import pytest

from marinesim.core import registry
from marinesim.core.errors import ConfigError, UnknownNameError


def test_register_object_and_get() -> None:
    sentinel = object()
    registry.register("test_kind", "alpha", sentinel)
    assert registry.get("test_kind", "alpha") is sentinel
    assert "alpha" in registry.names("test_kind")


def test_register_string_is_lazy() -> None:
    registry.register("test_kind", "lazy_frames", "marinesim.core.frames:angle360")
    from marinesim.core.frames import angle360

    assert registry.get("test_kind", "lazy_frames") is angle360


def test_duplicate_raises() -> None:
    registry.register("test_kind", "dup", object())
    with pytest.raises(ConfigError, match="duplicate test_kind name 'dup'"):
        registry.register("test_kind", "dup", object())


def test_unknown_name_has_suggestion() -> None:
    registry.register("test_kind2", "fossen6dof", object())
    with pytest.raises(UnknownNameError, match="did you mean 'fossen6dof'"):
        registry.get("test_kind2", "fosen6dof", label="motion model")
