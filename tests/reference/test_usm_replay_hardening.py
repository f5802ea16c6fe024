"""Reference-case replays at the boundary: corrupt gzip, wrong types, limits."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from marinesim.cli.main import main
from marinesim.core.errors import DataError
from marinesim.reference.usm import replay_case

CASES = Path(__file__).resolve().parents[2] / "src" / "marinesim" / "reference" / "data" / "usm"
NAME = "straight_default_map"


def _copy(tmp_path: Path) -> Path:
    for suffix in (".scenario.json", ".expected.csv.gz"):
        shutil.copy(CASES / (NAME + suffix), tmp_path / (NAME + suffix))
    return tmp_path / (NAME + ".scenario.json")


def test_corrupt_gzip_exits_2_with_a_message(tmp_path, capsys):
    case = _copy(tmp_path)
    gz = tmp_path / (NAME + ".expected.csv.gz")
    gz.write_bytes(gz.read_bytes()[:200])
    rc = main(["usm", "replay", str(case), "-o", str(tmp_path / "o.csv")])
    err = capsys.readouterr().err
    assert rc == 2 and "truncated" in err and str(gz) in err


@pytest.mark.parametrize(
    ("path", "value", "match"),
    [
        (("time", "steps"), 1e9, "steps"),
        (("time", "dt"), True, "true/false"),
        (("time", "dt"), 1e-12, "dt"),
        (("provenance",), [1, 2], "malformed case"),
        (("config",), [["start_x"]], "malformed case"),
    ],
)
def test_wrong_types_and_limits(tmp_path, path, value, match):
    case = _copy(tmp_path)
    data = json.loads(case.read_text())
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    case.write_text(json.dumps(data))
    with pytest.raises(DataError, match=match) as exc:
        replay_case(case)
    assert str(case) in str(exc.value)


def test_overflowing_replay_exits_1_and_writes_the_rows_before(tmp_path, capsys):
    case = _copy(tmp_path)
    data = json.loads(case.read_text())
    # MOOS hands configuration lines over in reverse file order: the first line wins
    data["config"] = [["drift_x", "1" + "0" * 307], *data["config"]]
    case.write_text(json.dumps(data))
    out = tmp_path / "o.csv"
    rc = main(["usm", "replay", str(case), "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 1 and "Traceback" not in err
    text = out.read_text()  # the rows before the non-finite step, never an inf
    assert len(text.splitlines()) >= 2 and "inf" not in text.lower()
