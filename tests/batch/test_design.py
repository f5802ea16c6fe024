"""Sweep designs: grid products, ranges, random draws, units and bad input."""

from __future__ import annotations

import math

import pytest

from marinesim.batch.design import parse_sweep
from marinesim.core.errors import ConfigError


def test_grid_is_the_cartesian_product_last_parameter_fastest() -> None:
    sw = parse_sweep({"parameters": {"a.b": [1, 2], "c": {"start": 0.0, "stop": 1.0, "num": 3}}})
    pts = sw.points()
    assert pts == [
        {"a.b": 1, "c": 0.0},
        {"a.b": 1, "c": 0.5},
        {"a.b": 1, "c": 1.0},
        {"a.b": 2, "c": 0.0},
        {"a.b": 2, "c": 0.5},
        {"a.b": 2, "c": 1.0},
    ]


def test_step_range_includes_stop() -> None:
    sw = parse_sweep({"parameters": {"x": {"start": 1.0, "stop": 2.0, "step": 0.25}}})
    assert [p["x"] for p in sw.points()] == [1.0, 1.25, 1.5, 1.75, 2.0]


def test_random_design_is_reproducible_and_parameters_draw_independently() -> None:
    one = {"a": {"distribution": "uniform", "low": 0.0, "high": 1.0}}
    two = {**one, "b": {"distribution": "normal", "mean": 5.0, "std": 1.0}}
    p1 = parse_sweep({"design": "random", "samples": 50, "seed": 3, "parameters": one}).points()
    p2 = parse_sweep({"design": "random", "samples": 50, "seed": 3, "parameters": two}).points()
    assert [p["a"] for p in p1] == [p["a"] for p in p2]  # adding b leaves a's draws alone
    assert all(0.0 <= p["a"] < 1.0 for p in p1)
    p3 = parse_sweep({"design": "random", "samples": 50, "seed": 4, "parameters": one}).points()
    assert [p["a"] for p in p3] != [p["a"] for p in p1]


def test_random_distributions_have_the_requested_moments() -> None:
    n = 4000
    sw = parse_sweep(
        {
            "design": "random",
            "samples": n,
            "seed": 1,
            "parameters": {
                "u": {"distribution": "uniform", "low": 2.0, "high": 4.0},
                "g": {"distribution": "normal", "mean": -1.0, "std": 0.5},
                "k": {"distribution": "integers", "low": 1, "high": 3},
                "c": {"distribution": "choice", "values": ["x", "y"]},
                "l": {"distribution": "loguniform", "low": 1.0, "high": 100.0},
            },
        }
    )
    pts = sw.points()
    u = [p["u"] for p in pts]
    g = [p["g"] for p in pts]
    # 5-sigma bounds of the sample mean
    assert abs(sum(u) / n - 3.0) < 5 * (2 / math.sqrt(12)) / math.sqrt(n)
    assert abs(sum(g) / n + 1.0) < 5 * 0.5 / math.sqrt(n)
    assert {p["k"] for p in pts} == {1, 2, 3}
    assert {p["c"] for p in pts} == {"x", "y"}
    logs = [math.log10(p["l"]) for p in pts]
    assert abs(sum(logs) / n - 1.0) < 5 * (2 / math.sqrt(12)) / math.sqrt(n)


def test_units_convert_to_the_declared_unit() -> None:
    sw = parse_sweep(
        {"parameters": {"v": {"values": [1.0, 2.0], "unit": "knot"}}}, units=lambda p: "m/s"
    )
    assert [p["v"] for p in sw.points()] == pytest.approx([1852 / 3600, 2 * 1852 / 3600])
    with pytest.raises(ConfigError, match=r"'km' \(length\) does not fit .*'m/s' \(speed\)"):
        parse_sweep({"parameters": {"v": {"values": [1.0], "unit": "km"}}}, units=lambda p: "m/s")
    with pytest.raises(ConfigError, match="unknown unit 'knots'.*did you mean 'knot'"):
        parse_sweep(
            {"parameters": {"v": {"values": [1.0], "unit": "knots"}}}, units=lambda p: "m/s"
        )
    with pytest.raises(ConfigError, match="declares no unit"):
        parse_sweep({"parameters": {"v": {"values": [1.0], "unit": "m"}}}, units=lambda p: None)


@pytest.mark.parametrize(
    ("sweep", "message"),
    [
        ({"parameters": {}}, "the sweep is empty"),
        ({}, "the sweep is empty"),
        (
            {"design": "gird", "parameters": {"a": [1]}},
            "unknown design 'gird' \\(did you mean 'grid'\\?\\)",
        ),
        (
            {
                "design": "random",
                "parameters": {"a": {"distribution": "unifrom", "low": 0, "high": 1}},
                "samples": 2,
            },
            "unknown distribution 'unifrom' \\(did you mean 'uniform'\\?\\)",
        ),
        (
            {
                "design": "random",
                "parameters": {"a": {"distribution": "uniform", "low": 0}},
                "samples": 2,
            },
            "uniform needs 'high'",
        ),
        ({"design": "random", "parameters": {"a": [1]}}, "needs 'samples' >= 1"),
        (
            {"parameters": {"a": {"distribution": "uniform", "low": 0, "high": 1}}},
            "needs 'design: random'",
        ),
        ({"parameters": {"a": {"values": []}}}, "non-empty list"),
        ({"parameters": {"replicas": [1, 2]}}, "cannot sweep 'replicas'"),
        (
            {"parameters": {"a": [1]}, "sampels": 3},
            "unknown sweep key 'sampels' \\(did you mean 'samples'\\?\\)",
        ),
        (
            {
                "design": "random",
                "samples": 2,
                "parameters": {"a": {"distribution": "normal", "mean": 0, "std": float("nan")}},
            },
            "'std' must be a finite number",
        ),
    ],
)
def test_bad_sweeps_are_config_errors(sweep: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_sweep(sweep)
