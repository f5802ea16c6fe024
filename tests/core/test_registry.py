"""Registry: lazy entries, duplicates, did-you-mean."""

from __future__ import annotations

from pathlib import Path

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


_FAKE = iter(range(10**6))


def _fake_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, declarations: dict[str, str]
) -> str:
    """A fresh package (name returned) whose subpackages carry the given ``registry.toml``
    texts (``{root}`` in them stands for the package name)."""
    name = f"fake_registry_root_{next(_FAKE)}"
    root = tmp_path / name
    root.mkdir()
    (root / "__init__.py").write_text("")
    for sub, text in declarations.items():
        (root / sub).mkdir()
        (root / sub / "__init__.py").write_text("")
        (root / sub / "mod.py").write_text("VALUE = 42\n")
        (root / sub / registry.DECLARATIONS).write_text(text.replace("{root}", name))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_ROOT", name)
    monkeypatch.setattr(registry, "_TARGETS", {})
    monkeypatch.setattr(registry, "_LOADED", {})
    monkeypatch.setattr(registry, "_DISCOVERED", False)
    monkeypatch.setattr(registry, "_read_entry_points", lambda found: None)
    return name


def test_each_package_declares_its_own_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_root(
        tmp_path,
        monkeypatch,
        {
            "low": '[thing]\nanswer = "{root}.low.mod:VALUE"\n',
            "high": '[loader]\nyaml = "{root}.high.mod"\n',
            "plain": "",
        },
    )
    assert registry.known() == {"loader": ["yaml"], "thing": ["answer"]}
    assert registry.get("thing", "answer") == 42
    assert registry.get("loader", "yaml").VALUE == 42


def test_a_package_may_not_declare_another_packages_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_root(tmp_path, monkeypatch, {"low": '[thing]\nup = "{root}.high.mod:VALUE"\n'})
    with pytest.raises(ConfigError, match=r"low/registry.toml: thing 'up'.*only its own modules"):
        registry.names("thing")


def test_duplicate_declarations_raise(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_root(
        tmp_path,
        monkeypatch,
        {
            "a": '[thing]\nsame = "{root}.a.mod:VALUE"\n',
            "b": '[thing]\nsame = "{root}.b.mod:VALUE"\n',
        },
    )
    with pytest.raises(
        ConfigError, match=r"b/registry.toml: thing name 'same'.*already registered"
    ):
        registry.names("thing")


def test_malformed_declarations_name_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_root(tmp_path, monkeypatch, {"a": "[thing\n"})
    with pytest.raises(ConfigError, match=r"\.a/registry.toml: cannot read"):
        registry.names("thing")
    with pytest.raises(ConfigError, match=r"\.a/registry.toml: cannot read"):  # every time
        registry.names("thing")
