"""``marinesim verify`` through the real entry point: table, exit codes, a tampered case."""

from __future__ import annotations

import gzip
import io
import shutil
from pathlib import Path

import pandas as pd
import pytest

from marinesim.cli.main import main
from marinesim.reference.runner import shipped_root

CASE = shipped_root() / "usm" / "pause_resume.scenario.json"
EXPECTED = shipped_root() / "usm" / "pause_resume.expected.csv.gz"


def _copy_case(dst: Path) -> Path:
    dst.mkdir(parents=True, exist_ok=True)
    shutil.copy(CASE, dst / CASE.name)
    shutil.copy(EXPECTED, dst / EXPECTED.name)
    return dst / CASE.name


def _header(out: str) -> list[str]:
    line = next(ln for ln in out.splitlines() if "largest error" in ln)
    return [c.strip() for c in line.strip("┃│ ").replace("│", "┃").split("┃") if c.strip()]


def test_passing_case_prints_the_table_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = _copy_case(tmp_path / "good")
    assert main(["verify", str(case)]) == 0
    out = capsys.readouterr().out
    assert _header(out) == ["kind", "case", "columns", "largest error", "tolerance", "pass"]
    row = next(ln for ln in out.splitlines() if "pause_resume" in ln)
    assert " ok " in row and "(worst:" in row
    assert "1 passed, 0 failed" in out


def test_tampered_case_fails_with_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = _copy_case(tmp_path / "bad")
    exp = pd.read_csv(io.BytesIO(gzip.decompress(EXPECTED.read_bytes())))
    # 2e-6 m on one position cell: twice the 1e-6 m tolerance
    exp.loc[len(exp) // 2, "x"] += 2e-6
    (tmp_path / "bad" / EXPECTED.name).write_bytes(
        gzip.compress(exp.to_csv(index=False, float_format="%.17g", na_rep="").encode())
    )
    assert main(["verify", str(case)]) == 1
    captured = capsys.readouterr()
    row = next(ln for ln in captured.out.splitlines() if "pause_resume" in ln)
    assert "FAIL" in row and "worst: x" in row and "over tolerance" in row
    assert "0 passed, 1 failed" in captured.out
    assert "1 reference case(s) failed" in captured.err and "Traceback" not in captured.err
    # -v lists every column; only x fails
    assert main(["verify", "-v", str(case)]) == 1
    rows = [ln for ln in capsys.readouterr().out.splitlines() if "pause_resume" in ln]
    assert len(rows) > 10 and [r for r in rows if "FAIL" in r] == [r for r in rows if "│ x " in r]


def test_good_and_bad_together_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _copy_case(tmp_path / "good")
    bad = tmp_path / "broken.scenario.json"
    bad.write_text('{"provenance": {"program": "uSimMarineX"}, "time": {"dt": 0.1}}')
    assert main(["verify", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "1 passed, 1 failed" in out and "uSimMarineX" in out


def test_bad_paths(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert "no such file or folder" in err and "Traceback" not in err
    (tmp_path / "empty").mkdir()
    assert main(["verify", str(tmp_path / "empty")]) == 1
    assert "no reference cases found" in capsys.readouterr().err
    note = tmp_path / "notes.txt"
    note.write_text("x")
    assert main(["verify", str(note)]) == 2
    assert "not a reference case" in capsys.readouterr().err


def test_foreign_manifest_is_noted_not_replayed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A recording folder with its own manifest (file list, no case kinds) beside real cases:
    a note, not 40 failing 'actuator' cases."""
    rec = tmp_path / "recording"
    rec.mkdir()
    (rec / "manifest.json").write_text(
        '{"title": "SITL sessions", "files": {"README.md": {"bytes": 3}, "a/log.csv.gz": {}}}'
    )
    _copy_case(tmp_path / "usm")
    assert main(["verify", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"note: {rec / 'manifest.json'}: not a reference-case format" in out
    assert "1 passed, 0 failed" in out and "README" not in out.split("note:")[-1].split("\n", 1)[1]
