"""``marinesim bench usm`` through the real entry point (JSON keys, mail modes, bad input)."""

from __future__ import annotations

import json

import pytest

from marinesim.cli.main import main


@pytest.mark.parametrize("mail_flag, mail", [("--mail", True), ("--no-mail", False)])
def test_bench_usm_json(capsys, mail_flag: str, mail: bool) -> None:
    rc = main(["bench", "usm", "--vehicles", "4", "--steps", "3", "--no-loop", mail_flag, "--json"])
    assert rc == 0
    res = json.loads(capsys.readouterr().out)
    assert res["model"] == "usm" and res["vehicles"] == 4 and res["mail"] is mail
    assert res["vehicle_steps_per_s"] > 0
    # vehicle-steps per second is N / seconds per step
    assert res["vehicle_steps_per_s"] == pytest.approx(4 / res["seconds_per_step"], rel=1e-12)
    assert "ratio" not in res  # no loop timed


def test_bench_usm_text_with_loop(capsys) -> None:
    rc = main(["bench", "usm", "-n", "2", "-k", "3", "--no-mail"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "usm  N=2" in out and "iterate only" in out and "per-vehicle loop" in out


@pytest.mark.parametrize(
    "args, param",
    [(["--vehicles", "0"], "vehicles"), (["--steps", "0"], "steps"), (["--dt", "-1"], "dt")],
)
def test_bench_usm_bad_numbers_are_named(capsys, args: list[str], param: str) -> None:
    rc = main(["bench", "usm", "-n", "2", *args])
    assert rc == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {param}:") and "Traceback" not in err
