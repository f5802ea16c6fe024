"""Issue 22 §2: one CLI grammar — -h/--help, -q/-v, -o/--out and its default, plain help,
progress with an ETA, one list of vehicle names."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest
import typer

from marinesim.cli import grammar
from marinesim.cli.main import app, main
from marinesim.cli.options import default_out, out_file, out_folder
from marinesim.cli.progress import Progress
from marinesim.core.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "docs" / "examples"


def _tree() -> list[tuple[list[str], object]]:
    """Every command of the polished click tree as (argv path, command)."""
    root = grammar.polish(typer.main.get_command(app))
    out: list[tuple[list[str], object]] = []

    def walk(cmd: object, path: list[str]) -> None:
        out.append((path, cmd))
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            if not sub.hidden:
                walk(sub, [*path, name])

    walk(root, [])
    return out


def test_every_command_has_h_q_v_and_version_only_where_documented() -> None:
    tree = _tree()
    assert len(tree) > 40
    for path, cmd in tree:
        opts = {o for p in cmd.params for o in (*p.opts, *getattr(p, "secondary_opts", ()))}
        assert {"-q", "--quiet", "-v", "--verbose"} <= opts, path
        visible_version = any(
            "--version" in p.opts and not getattr(p, "hidden", False) for p in cmd.params
        )
        assert visible_version == (path in ([], ["moos"])), path


@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_help_everywhere_without_placeholders_or_cut_sentences(
    capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    for path, _cmd in _tree():
        assert main([*path, flag]) == 0, path
        text = capsys.readouterr().out
        assert "Usage:" in text, path
        for bad in ("<str>", "<int>", "<float>", "<path>", "<list[", "list[str]"):
            assert bad not in text, (path, bad, text)
        commands = text.partition("Commands:")[2]
        assert not any(ln.rstrip().endswith("...") for ln in commands.splitlines()), text
        assert "-q, --quiet" in text and "-v, --verbose" in text, path


def test_usm_version_is_deprecated_and_v_is_verbose(capsys: pytest.CaptureFixture[str]) -> None:
    from marinesim import __version__

    assert main(["usm", "--version"]) == 0
    cap = capsys.readouterr()
    assert __version__ in cap.out and "deprecated; use `marinesim --version`" in cap.err
    assert main(["usm", "-v"]) == 0  # verbose, no sub-command: the help
    out = capsys.readouterr().out
    assert "Usage:" in out and __version__ not in out
    assert main(["moos", "--version"]) == 0
    assert __version__ in capsys.readouterr().out


def test_output_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert default_out("demo_survey-seed7") == Path("marinesim-runs/demo_survey-seed7")
    assert default_out("a b/c") == Path("marinesim-runs/a_b_c")
    # default: created with its parents, under marinesim-runs/
    f = out_file(None, label="x", name="log.csv", suffixes=(".csv",))
    assert f == Path("marinesim-runs/x/log.csv") and f.parent.is_dir()
    # a folder is created; missing parents too, with a warning naming them
    assert out_folder(Path("new")).is_dir()
    assert capsys.readouterr().err == ""
    assert out_folder(Path("missing/deeper/still")).is_dir()
    assert capsys.readouterr().err == (
        "warning: -o/--out: created the missing folder 'missing' for 'missing/deeper/still' "
        "(check the path)\n"
    )
    out_folder(Path("marinesim-runs/a/b"))
    assert capsys.readouterr().err == ""
    # a named file; an existing directory named like a file is ambiguous
    assert out_file(Path("new/r.csv"), label="x", name="log.csv", suffixes=(".csv",)) == Path(
        "new/r.csv"
    )
    Path("d.csv").mkdir()
    with pytest.raises(ConfigError, match="'d.csv' is a directory"):
        out_file(Path("d.csv"), label="x", name="log.csv", suffixes=(".csv",))
    Path("afile").write_text("x")
    with pytest.raises(ConfigError, match="'afile' is an existing file, not a folder"):
        out_folder(Path("afile"))
    with pytest.raises(ConfigError, match="cannot create 'afile/x/y': 'afile' is a file"):
        out_folder(Path("afile/x/y"))


def test_usm_run_output_rule_and_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    mission = str(EXAMPLES / "mission.moos")
    assert main(["usm", "run", mission, "--duration", "20"]) == 0
    cap = capsys.readouterr()
    log = tmp_path / "marinesim-runs" / "mission" / "log.csv"
    df = pd.read_csv(log)
    assert len(df) == 201 and df["t"].iloc[-1] == pytest.approx(20.0)
    assert all(df[c].dtype.kind == "f" for c in ("x", "y", "heading", "speed"))
    lines = [ln for ln in cap.err.splitlines() if ln.startswith("mission.moos:")]
    assert lines[-1].startswith("mission.moos: 100% (200/200 steps)"), cap.err
    assert "ETA" in lines[0]
    # -q: no progress
    assert main(["usm", "run", mission, "--duration", "20", "-q", "-o", "q"]) == 0
    assert "mission.moos:" not in capsys.readouterr().err
    # onto a directory named like a file; into a missing folder
    (tmp_path / "d.csv").mkdir()
    assert main(["usm", "run", mission, "--duration", "1", "-o", "d.csv"]) == 2
    err = capsys.readouterr().err
    assert "'d.csv' is a directory" in err and "Traceback" not in err
    assert main(["usm", "run", mission, "--duration", "1", "-o", "nope/sub/x.csv"]) == 0
    assert "created the missing folder 'nope' for 'nope/sub'" in capsys.readouterr().err
    assert len(pd.read_csv(tmp_path / "nope" / "sub" / "x.csv")) == 11


def test_progress_lines_off_and_eta() -> None:
    s = io.StringIO()
    grammar.reset()
    with Progress("runs", 20, stream=s) as bar:
        for k in range(1, 21):
            bar.update(k)
    lines = s.getvalue().splitlines()
    assert len(lines) == 10 and lines[0].startswith("runs:  10% (2/20)")
    assert "ETA" in lines[0] and lines[-1].startswith("runs: 100% (20/20)")
    assert "ETA" not in lines[-1]
    grammar.VERBOSITY["level"] = -1
    try:
        s = io.StringIO()
        with Progress("runs", 5, stream=s) as bar:
            bar.update(5)
        assert s.getvalue() == ""
    finally:
        grammar.reset()
    s = io.StringIO()
    with Progress("runs", 5, stream=s, enabled=False) as bar:
        bar.update(5)
    assert s.getvalue() == ""


def test_batch_chunks_let_the_bar_move() -> None:
    from marinesim.batch.plan import chunk_size

    assert chunk_size(100, 2) == 16  # 7 tasks for 2 workers, not 2
    assert chunk_size(10_000, 2) == 256  # the stacking cap
    assert chunk_size(3, 2) == 2 and chunk_size(1, 4) == 1


def test_batch_out_alias_and_progress(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scen = str(REPO / "tests" / "data" / "batch" / "mc_small.yaml")
    out = tmp_path / "b"
    argv = ["batch", scen, "--replicas", "2", "--workers", "1", "--set", "time.end=2",
            "--no-plot", "--no-logs", "--outdir", str(out)]  # fmt: skip
    assert main(argv) == 0
    cap = capsys.readouterr()
    assert "--outdir is deprecated; use -o/--out" in cap.err
    assert "runs: 100% (2/2)" in cap.err
    runs = pd.read_parquet(out / "runs.parquet")
    assert len(runs) == 2 and set(runs["status"]) == {"completed"}


def test_vehicle_names_one_list(capsys: pytest.CaptureFixture[str]) -> None:
    from marinesim.allocation.vehicles import vehicle_names
    from marinesim.models import presets

    assert main(["vehicles", "list"]) == 0
    listed = capsys.readouterr().out
    for name in [*presets.names(include_aliases=True), *vehicle_names()]:
        assert f"\n{name} " in listed or f" {name}\n" in listed or f" {name}," in listed, name
    assert "also named: bluerov2_heavy" in listed
    assert "Thruster layouts" in listed and "bluerov2_heavy_hippo" in listed
    assert main(["vehicles", "show", "dsrvv"]) == 2
    err = capsys.readouterr().err
    assert "did you mean 'dsrv'?" in err and "DSRV" not in err and "shipClarke83" not in err
    assert main(["vehicles", "show", "DSRV", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["name"] == "dsrv"


def test_quiet_and_verbose_mean_the_same_everywhere(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["alloc", "report", "bluerov2_heavy", "--fast", "-q"]) == 0
    cap = capsys.readouterr()
    assert "axis maxima" not in cap.err and cap.out.startswith("vehicle bluerov2_heavy  at 16 V")
    assert main(["-q", "alloc", "report", "bluerov2_heavy", "--fast"]) == 0
    assert "axis maxima" not in capsys.readouterr().err
    for argv in (["vehicles", "list", "-v"], ["-v", "scenarios"], ["gym", "list", "--verbose"]):
        assert main(argv) == 0, argv
        assert "wall time: " in capsys.readouterr().err, argv
    assert main(["scenarios"]) == 0  # the state does not leak into the next command line
    assert "wall time" not in capsys.readouterr().err
