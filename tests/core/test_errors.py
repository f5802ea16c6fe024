"""Typed errors carry and format their location."""

from __future__ import annotations

from marinesim.core.errors import (
    ConfigError,
    ConfigWarning,
    DataError,
    DependencyNotInstalled,
    NumericalError,
    UnknownNameError,
    format_location,
    suggest,
)


def test_config_error_formats_file_line_column_param() -> None:
    err = ConfigError("must be >= 0", file="m.yaml", line=12, column=5, param="time.dt")
    assert str(err) == "m.yaml:12:5: time.dt: must be >= 0"
    assert (err.file, err.line, err.column, err.param) == ("m.yaml", 12, 5, "time.dt")


def test_location_parts_are_optional() -> None:
    assert format_location() == ""
    assert format_location(param="a.b") == "a.b: "
    assert format_location(file="f", line=3) == "f:3: "


def test_unknown_name_suggests_close_matches() -> None:
    err = UnknownNameError("motion model", "fosen6dof", ["fossen6dof", "usm", "usm_v22"])
    text = str(err)
    assert text.startswith("unknown motion model 'fosen6dof'; did you mean 'fossen6dof'?")
    assert "(known: fossen6dof, usm, usm_v22)" in text
    assert isinstance(err, ConfigError)


def test_unknown_name_without_match_lists_known() -> None:
    text = str(UnknownNameError("sensor", "zzz", ["gps", "imu"]))
    assert "did you mean" not in text
    assert text.endswith("(known: gps, imu)")


def test_suggest_is_case_insensitive() -> None:
    assert suggest("Turn_Rate", ["turn_rate", "rotate_speed"]) == ["turn_rate"]


def test_other_errors_format() -> None:
    assert str(DataError("bad number", file="t.csv", line=4, column=2)) == "t.csv:4:2: bad number"
    assert str(NumericalError("nu is NaN", entity="auv[1]", t=2.5)) == "auv[1]: t=2.5 s: nu is NaN"
    assert "pip install 'marinesim[dask]'" in str(DependencyNotInstalled("dask", "dask"))
    w = ConfigWarning("x", file="a.moos", line=3, param="turn_loss")
    assert str(w) == "a.moos:3: turn_loss: x"
