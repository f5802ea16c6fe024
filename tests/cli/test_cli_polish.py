"""Issue 9 §3: --version, vehicles list, one -o/--out with deprecated aliases, units in help,
--fig-format, a .moos file given to `run`, did-you-mean for bundled scenarios, alloc --plot."""

from __future__ import annotations

from pathlib import Path

import pytest

from marinesim.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


def test_version_and_vehicles_list(capsys: pytest.CaptureFixture[str]) -> None:
    from marinesim import __version__

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"marinesim {__version__}"
    assert main(["vehicles", "list"]) == 0
    listed = capsys.readouterr().out
    assert "bluerov2_heavy" in listed and "source:" in listed
    assert main(["vehicles"]) == 0
    assert capsys.readouterr().out == listed


@pytest.mark.parametrize(
    ("argv", "needles"),
    [
        (["usm", "run", "--help"], ["Simulated time [s].", "-o, --out DIR", "--plot  "]),
        (["bench", "usm", "--help"], ["Step [s]."]),
        (["run", "--help"], ["-o, --out DIR", "--fig-format png|pdf|svg", "--no-plot  "]),
        (["surftrak", "run", "--help"], ["Rangefinder delay [s].", "[m, m, deg, m/s]"]),
    ],
)
def test_help_shows_units_flags_and_no_type_names(
    capsys: pytest.CaptureFixture[str], argv: list[str], needles: list[str]
) -> None:
    assert main(argv) == 0
    text = capsys.readouterr().out
    for n in needles:
        assert n in text, (n, text)
    assert "<bool>" not in text and "list[" not in text and "marinesim." not in text
    assert "--outdir" not in text and "--output" not in text and "--out-dir" not in text


def test_run_rejects_moos_files_and_suggests_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(EXAMPLES / "mission.moos")]) == 2
    err = capsys.readouterr().err
    assert "this is a .moos file: use `marinesim usm run" in err and "Traceback" not in err
    assert main(["run", "demo_survy", "-o", str(tmp_path)]) == 2
    assert "did you mean 'demo_survey'?" in capsys.readouterr().err
    assert main(["run", "demo_survey", "--fig-format", "jpg", "-o", str(tmp_path)]) == 2
    assert "figure format 'jpg' is not supported (use png, pdf, svg)" in capsys.readouterr().err


def test_usm_run_out_dir_plot_and_deprecated_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["usm", "run", str(EXAMPLES / "mission.moos"), "--duration", "20",
            "--script", str(EXAMPLES / "events.txt")]  # fmt: skip
    assert main([*args, "-o", str(tmp_path / "a"), "--plot", "--fig-format", "svg"]) == 0
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == ["log.csv", "timeseries.svg", "trajectory.svg"]
    header = (tmp_path / "a" / "log.csv").read_text().splitlines()[0].split(",")
    assert header[13:16] == ["DESIRED_THRUST", "DESIRED_RUDDER", "DESIRED_ELEVATOR"]
    capsys.readouterr()
    assert main([*args, "--output", str(tmp_path / "b.csv")]) == 0
    assert "--output is deprecated; use -o/--out" in capsys.readouterr().err
    assert (tmp_path / "b.csv").read_text() == (tmp_path / "a" / "log.csv").read_text()


def test_alloc_report_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["alloc", "report", "bluerov2_heavy", "--fast", "--plot", "-o", str(tmp_path)]) == 0
    assert f"figure: {tmp_path / 'alloc_bluerov2_heavy.png'}" in capsys.readouterr().out
    from marinesim.cli.alloc import build_report
    from marinesim.io.alloc_plots import alloc_report_figure

    r = build_report("bluerov2_heavy", 16.0, 15.0, 50.0, [], "ardusub_positive_forward",
                     None, None, False)  # fmt: skip
    fig = alloc_report_figure(r)
    bars, usage = fig.axes[0], fig.axes[1]
    assert bars.get_ylabel().startswith("largest pure-axis wrench")
    assert [t.get_text() for t in bars.get_legend().get_texts()] == [
        "pinv (envelope)", "LP (envelope)", "pinv (current-limited)", "LP (current-limited)"
    ]  # fmt: skip
    heights = [p.get_height() for p in bars.patches]
    assert max(heights) == pytest.approx(
        max(r["max_wrench"]["envelope"][a]["constrained_pos"] for a in "XYZKMN")
    )
    img = usage.get_images()[0].get_array()
    assert img.shape == (8, 6) and float(img.max()) == pytest.approx(1.0)  # a thruster saturates
