"""Parameter models: unknown keys with suggestions, locations, units."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from marinesim.core.errors import ConfigError
from marinesim.core.params import ParamsBase, field, field_units, validate


class _Inner(ParamsBase):
    gain: float = field(1.0, unit="1", description="gain")


class _Demo(ParamsBase):
    turn_rate: float = field(70.0, unit="%", description="turn rate", ge=0, le=100)
    speed: float = field(..., unit="m/s", description="speed")
    inner: _Inner = _Inner()


def test_valid() -> None:
    p = validate(_Demo, {"speed": 1.5})
    assert p.turn_rate == 70.0 and p.speed == 1.5
    assert field_units(_Demo)["speed"] == "m/s"


def test_unknown_key_suggests_and_locates() -> None:
    marks = {"entities.0.params.turn_rat": (7, 9)}
    with pytest.raises(ConfigError) as exc:
        validate(_Demo, {"speed": 1, "turn_rat": 3}, file="s.yaml", marks=marks, prefix="entities.0.params")
    assert str(exc.value) == (
        "s.yaml:7:9: entities.0.params.turn_rat: extra field not permitted (did you mean 'turn_rate'?)"
    )


def test_nested_unknown_key() -> None:
    with pytest.raises(ConfigError, match=r"inner.gian: extra field not permitted \(did you mean 'gain'\?\)"):
        validate(_Demo, {"speed": 1, "inner": {"gian": 2}})


def test_missing_and_out_of_range() -> None:
    with pytest.raises(ConfigError, match="speed: required value missing"):
        validate(_Demo, {})
    with pytest.raises(ConfigError, match="turn_rate: .*less than or equal to 100"):
        validate(_Demo, {"speed": 1, "turn_rate": 120})


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "fast"])
def test_non_finite_or_non_numeric_rejected(bad: object) -> None:
    with pytest.raises(ConfigError, match="speed"):
        validate(_Demo, {"speed": bad})


def test_frozen() -> None:
    p = validate(_Demo, {"speed": 1})
    with pytest.raises(ValidationError, match="frozen"):
        p.speed = 2  # type: ignore[misc]


class _Thruster(ParamsBase):
    position: tuple[float, float, float] = field((0.0, 0.0, 0.0), unit="m")


class _Vehicle(ParamsBase):
    thrusters: list[_Thruster] = field(default_factory=list)
    spare: _Thruster | None = None


def test_unknown_key_inside_list_and_optional_suggests() -> None:
    with pytest.raises(ConfigError, match=r"thrusters.1.positon: .*did you mean 'position'"):
        validate(_Vehicle, {"thrusters": [{}, {"positon": [1, 2, 3]}]})
    with pytest.raises(ConfigError, match=r"spare.positon: .*did you mean 'position'"):
        validate(_Vehicle, {"spare": {"positon": [1, 2, 3]}})
