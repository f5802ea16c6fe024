"""``marinesim surftrak run|suite|plot`` through the real entry point, the .params reader, the
CTUN merge against the stored SITL runs and the figure titles (SURFTRAK spec §9, §13, §14)."""

from __future__ import annotations

import csv
import warnings
from pathlib import Path

import numpy as np
import pytest

from marinesim.cli.main import main
from marinesim.core.errors import ConfigError
from marinesim.interop.ardupilot import parse_params_text, read_params, surftrak_params
from marinesim.io.ctun import figure_title, merge_ordered, read_table
from marinesim.io.surftrak_plot import PANEL_YLABELS, PANELS

SHARED = Path(__file__).resolve().parents[3].joinpath("shared", "data", "surftrak")
SITL = SHARED / "sitl_results"
needs_shared = pytest.mark.skipif(not SITL.exists(), reason="../shared not present")
#: a copy of ../shared/data/surftrak/params/sitl.params (975 bytes) so the CLI tests run offline
SITL_PARAMS = Path(__file__).resolve().parents[1] / "data" / "surftrak" / "sitl.params"


@needs_shared
@pytest.mark.parametrize(
    ("name", "title", "rows"),
    [
        ("sawtooth", "CRt var: 700.35, RF error sum: 923.240", 3315),
        ("trapezoid", "CRt var: 475.34, RF error sum: 703.540", 3329),
    ],
)
def test_merge_reproduces_sitl_merged_and_titles(name, title, rows):
    d = SITL / name
    merged = merge_ordered(read_table(d / "ctun.csv"), read_table(d / "stamped_terrain.csv"))
    stored = read_table(d / "merged.csv")
    assert list(merged) == list(stored) and len(merged["TimeUS"]) == rows
    for k, v in stored.items():
        assert np.array_equal(np.isnan(v), np.isnan(merged[k])), k
        ok = ~np.isnan(v)
        assert np.max(np.abs(v[ok] - merged[k][ok])) <= 1e-6, k
    log_dir = f"results/sitl/surftrak/{name}"
    assert figure_title(log_dir, merged) == f"{log_dir}, {title}"


@needs_shared
def test_plot_command_titles_equal_stored(tmp_path, capsys):
    out = tmp_path / "saw.png"
    rc = main(["surftrak", "plot", str(SITL / "sawtooth" / "merged.csv"), "-o", str(out),
               "--log-dir", "results/sitl/surftrak/sawtooth"])  # fmt: skip
    assert rc == 0 and out.stat().st_size > 10_000
    assert (
        "results/sitl/surftrak/sawtooth, CRt var: 700.35, RF error sum: 923.240"
        in capsys.readouterr().out
    )


def test_run_writes_logs_and_figure(tmp_path, capsys):
    out = tmp_path / "run.csv"
    png = tmp_path / "run.png"
    rc = main(["surftrak", "run", "--terrain", "zeros", "--duration", "8", "--seed", "3",
               "-o", str(out), "--plot"])  # fmt: skip
    assert rc == 0
    text = capsys.readouterr().out
    assert "rangefinder target is" in text and "KPv 0.80" in text
    with out.open() as fh:
        header = next(csv.reader(fh))
    assert header == ["t", "terrain", "true_altitude", "DAlt", "Alt", "TAlt", "DSAlt", "SAlt",
                      "DCRt", "CRt", "healthy", "mode_state"]  # fmt: skip
    log = read_table(out)
    assert len(log["t"]) == 80 and log["DSAlt"][-1] > 0
    msgs = (tmp_path / "run.messages.csv").read_text()
    assert "INFO,rangefinder target is" in msgs
    merged = read_table(tmp_path / "run.merged.csv")
    # stamped times (t_j - delay) fall on CTUN rows here: equal TimeUS merge into one row
    assert len(merged["TimeUS"]) == len(log["t"]) and "rf_cm" in merged
    assert png.stat().st_size > 10_000
    # `surftrak plot RUN.merged.csv` re-draws the --plot figure with the same title
    rc = main(["surftrak", "plot", str(tmp_path / "run.merged.csv"), "-o", str(tmp_path / "p.png")])
    assert rc == 0
    assert capsys.readouterr().out.splitlines()[0].startswith(f"{tmp_path / 'run'}, CRt var: ")
    import matplotlib.image as mpimg

    assert np.array_equal(mpimg.imread(png), mpimg.imread(tmp_path / "p.png"))
    # the figure of a marinesim run: same panels, series and labels
    from marinesim.interop.surftrak_runner import run_surftrak
    from marinesim.io.surftrak_plot import plot_result

    fig = plot_result(run_surftrak("zeros", duration=3.0), "runs/zeros")
    labels = [[t.get_text() for t in ax.get_legend().get_texts()] for ax in fig.axes]
    assert labels == [[label for label, _, _ in series] for _, series in PANELS]
    # every legend names the CTUN series or the harness truth it shows; every panel has units
    assert all("(CTUN." in lb or "(harness)" in lb for row in labels for lb in row)
    assert [ax.get_ylabel() for ax in fig.axes] == list(PANEL_YLABELS)
    assert all(ax.get_xlabel() == "time [s]" for ax in fig.axes)
    assert all("[" in ax.get_ylabel() and "]" in ax.get_ylabel() for ax in fig.axes)
    # legends sit beside the axes (anchored right of the plotting area), never over the data
    for ax in fig.axes:
        assert ax.get_legend().get_bbox_to_anchor().x0 >= ax.get_window_extent().x1 - 1
    assert fig.get_size_inches().tolist() == [8.5, 11.0]
    assert fig._suptitle.get_text().startswith("runs/zeros, CRt var: ")


def test_run_with_params_file_overrides_and_pilot(tmp_path, capsys):
    pilot = tmp_path / "pilot.txt"
    pilot.write_text("3 climb 50\n5 climb 0\n")
    out = tmp_path / "p.csv"
    rc = main(["surftrak", "run", "--terrain", "zeros", "--duration", "7", "-o", str(out),
               "--params", str(SITL_PARAMS), "--param", "PILOT_ACCEL_Z=200",
               "--pilot", str(pilot)])  # fmt: skip
    assert rc == 0
    text = capsys.readouterr().out
    assert "KPv 2.00" in text and text.count("rangefinder target is") == 2


def test_run_into_a_directory_default_png(tmp_path, capsys):
    rc = main(["surftrak", "run", "--terrain", "zeros", "--duration", "2", "-o", str(tmp_path / "d"),
               "--plot"])  # fmt: skip
    assert rc == 0
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == [
        "run.csv", "run.ctun.csv", "run.merged.csv", "run.messages.csv", "run.png",
        "run.stamped.csv",
    ]  # fmt: skip


def test_suite_prints_a_row_per_terrain(tmp_path, capsys):
    # the old spellings --out-dir and --format still work, with a deprecation warning
    rc = main(
        ["surftrak", "suite", "--duration", "3", "--out-dir", str(tmp_path), "--format", "png"]
    )
    assert rc == 0
    cap = capsys.readouterr()
    assert "--out-dir is deprecated; use -o/--out" in cap.err
    assert "--format is deprecated; use --fig-format" in cap.err
    text = cap.out
    for name in ("zeros", "trapezoid", "sawtooth", "square", "stress", "test_signal_quality"):
        assert any(line.startswith(name) for line in text.splitlines())
        assert (tmp_path / f"{name}.png").exists() and (tmp_path / f"{name}.csv").exists()


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (
            "1 1 SURFTRAK_DEPHT -100 4\n",
            "bad.params:1:5: SURFTRAK_DEPHT: unknown ArduSub parameter; did you mean 'SURFTRAK_DEPTH'?",
        ),
        ("# c\n1 1 PSC_JERK_Z abc 9\n", "bad.params:2:5: PSC_JERK_Z: value 'abc' is not a number"),
        ("\n\n1 1 PILOT_ACCEL_Z\n", "bad.params:3"),
        ("1 1 PILOT_ACCEL_Z -5 4\n", "bad.params:1:5: PILOT_ACCEL_Z"),
    ],
)
def test_bad_params_file_errors_name_file_line(tmp_path, capsys, content, needle):
    bad = tmp_path / "bad.params"
    bad.write_text(content)
    rc = main(["surftrak", "run", "--terrain", "zeros", "--duration", "1", "-o",
               str(tmp_path / "x.csv"), "--params", str(bad)])  # fmt: skip
    assert rc == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and needle in err


def test_bad_inputs_exit_2(tmp_path, capsys):
    for opt, val, needle in [("--delay", "-1", "delay"), ("--noise", "-0.1", "noise_std"),
                             ("--start-z", "-30", "below the seafloor"), ("--seed", "-3", "seed"),
                             ("--duration", "0", "duration"), ("--duration", "nan", "duration"),
                             ("--duration", "inf", "duration")]:  # fmt: skip
        rc = main(
            ["surftrak", "run", "--terrain", "zeros", "-o", str(tmp_path / "x.csv"), opt, val]
        )
        err = capsys.readouterr().err
        assert rc == 2 and needle in err and "Traceback" not in err, (opt, err)
    terr = tmp_path / "t.csv"
    terr.write_text("0.1\n-20\n5.0\n")
    rc = main(["surftrak", "run", "--terrain", str(terr), "-o", str(tmp_path / "x.csv")])
    assert rc == 2 and f"{terr}:3" in capsys.readouterr().err
    rc = main(["surftrak", "run", "--terrain", "sawtoth", "-o", str(tmp_path / "x.csv")])
    assert rc == 2 and "did you mean 'sawtooth'" in capsys.readouterr().err
    for args, needle in [
        (["surftrak", "suite", "--format", "jpgx", "--out-dir", str(tmp_path)], "format 'jpgx'"),
        (["surftrak", "suite", "--duration", "nan", "--out-dir", str(tmp_path)], "duration"),
        (["surftrak", "run", "--terrain", "zeros", "-o", str(tmp_path / "x.csv"),
          "--plot", "--fig-format", "xyz"], "format 'xyz'"),
        (["surftrak", "plot", str(tmp_path), "-o", str(tmp_path / "f.jpgx")], "format 'jpgx'"),
    ]:  # fmt: skip
        rc = main(args)
        err = capsys.readouterr().err
        assert rc == 2 and needle in err and "Traceback" not in err, (args, err)
    pilot = tmp_path / "p.txt"
    pilot.write_text("1 climb 10\nnope\n")
    rc = main(["surftrak", "run", "--terrain", "zeros", "-o", str(tmp_path / "x.csv"),
               "--pilot", str(pilot)])  # fmt: skip
    assert rc == 2 and f"{pilot}:2" in capsys.readouterr().err


def test_params_reader_aliases_and_ignored():
    text = "1 1 PSC_D_ACC_P 0.05 9\n1 1 RNGFND1_MAX 50 9\n1 1 LOG_BITMASK 1 4\nSIM_BARO_RND,0.01\n"
    pf = parse_params_text(text, file="m.params")
    with pytest.warns(FutureWarning, match="PSC_ACCZ_P"):
        p, ignored = surftrak_params(pf)
    assert p.PSC_ACCZ_P == pytest.approx(0.5) and p.RNGFND1_MAX_CM == pytest.approx(5000.0)
    assert ignored == ["LOG_BITMASK", "SIM_BARO_RND"]
    with pytest.raises(ConfigError):
        surftrak_params({"RNGFND1_TYPE": 10.5})


@pytest.mark.skipif(
    not (SHARED / "params").exists(), reason="../shared not present"
)
def test_shipped_sitl_params_is_the_shared_file():
    assert SITL_PARAMS.read_bytes() == (SHARED / "params" / "sitl.params").read_bytes()


def test_sitl_params_file():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p, ignored = read_params(SITL_PARAMS)
    assert (p.RNGFND1_MIN_CM, p.RNGFND1_MAX_CM, p.SURFTRAK_DEPTH) == (50.0, 5000.0, -100.0)
    assert (p.PSC_JERK_Z, p.PILOT_ACCEL_Z, p.kpv) == (8.0, 500.0, 0.8)
    assert "SIM_BARO_RND" in ignored and "LOG_BITMASK" in ignored


def test_run_over_gridded_bathymetry(tmp_path, capsys):
    """2-D run: a straight track over a grid; the truth floor and altitude come from the grid."""
    grid = tmp_path / "grid.csv"
    # depth 20 m along north = 0..40, rising to 18 m at north = 80 (a 2 m ridge), 3 east columns
    rows = ["north\\east,-50,0,50"] + [
        f"{n},{d},{d},{d}" for n, d in [(0, 20), (40, 20), (80, 18), (200, 18)]
    ]
    grid.write_text("\n".join(rows) + "\n")
    out = tmp_path / "b.csv"
    rc = main(["surftrak", "run", "--bathymetry", str(grid), "--track", "0,0,0,1.0",
               "--duration", "60", "--seed", "3", "-o", str(out)])  # fmt: skip
    assert rc == 0, capsys.readouterr().err
    with out.open() as f:
        log = list(csv.DictReader(f))
    t = np.array([float(r["t"]) for r in log])
    ter = np.array([float(r["terrain"]) for r in log])
    alt = np.array([float(r["true_altitude"]) for r in log])
    ds = np.array([float(r["DSAlt"]) for r in log])
    # the floor under the vehicle at t: bilinear along north = t (1 m/s), sampled per 0.1 s row
    tau = np.floor((t + 1e-9) / 0.1) * 0.1
    expect = -np.interp(tau, [0, 40, 80, 200], [20, 20, 18, 18])
    np.testing.assert_allclose(ter, expect, atol=1e-9)
    # SURFTRAK follows the ridge: the altitude stays near the target on the 0.05 m/s slope
    sel = t > 5.0
    assert np.abs(alt[sel] - ds[sel]).max() <= 0.15
    for bad, needle in [(["--track", "0,0,x"], "--track expects"), ([], "exactly one of")]:
        args = ["surftrak", "run", "-o", str(out)]
        args += ["--bathymetry", str(grid), *bad] if bad else []
        rc = main(args)
        err = capsys.readouterr().err
        assert rc == 2 and needle in err and "Traceback" not in err


def test_run_ekf3_reads_ek3_params_and_changes_the_height_seen(tmp_path, capsys):
    params = tmp_path / "ek.params"
    params.write_text(SITL_PARAMS.read_text() + "EK3_HGT_DELAY,60\nEK3_TAU_OUTPUT,25\n")
    runs = {}
    for key, extra in (("truth", []), ("ekf3", ["--ekf3", "--param", "EK3_HGT_DELAY=0"])):
        out = tmp_path / f"{key}.csv"
        rc = main(["surftrak", "run", "--terrain", "sawtooth", "--duration", "12", "-o",
                   str(out), "--params", str(params), *extra])  # fmt: skip
        assert rc == 0
        cap = capsys.readouterr()
        text = cap.out
        no_effect = " ".join(ln for ln in cap.err.splitlines() if "no effect" in ln)
        # without --ekf3 the EK3_* names have no effect (and say so); with it they are read
        assert ("EK3_HGT_DELAY" in no_effect) == (key == "truth"), cap.err
        assert ("EKF3 height, EK3_HGT_DELAY 0 ms" in text) == (key == "ekf3"), text
        runs[key] = read_table(out.with_suffix(".ctun.csv"))
    alt_t, alt_e = runs["truth"]["Alt"], runs["ekf3"]["Alt"]
    assert alt_t.shape == alt_e.shape
    d = np.abs(alt_t - alt_e)
    assert 0.0 < np.nanmax(d) < 0.1  # the estimate differs from the truth by centimetres


def test_run_ekf3_bad_value_names_the_parameter(tmp_path, capsys):
    rc = main(["surftrak", "run", "--terrain", "zeros", "--duration", "1", "-o",
               str(tmp_path / "x.csv"), "--ekf3", "--param", "EK3_HGT_DELAY=300"])  # fmt: skip
    assert rc == 2
    err = capsys.readouterr().err
    assert "--param:1:1: EK3_HGT_DELAY" in err and "250" in err
